"""A cluster of eddy nodes on 127.0.0.1: each with its own data directory,
a client listener (PLAINTEXT) and a controller listener (CONTROLLER) on
ports chosen up front, and the same controller.quorum.voters.

    with EddyCluster(3) as c:
        c.start_all()
        leader = c.wait_for_leader(timeout=15)

describe_quorum(port) sends DescribeQuorum v0 (hand-built, flexible) to a
node and decodes the answer, so that the tests read the quorum as a Kafka
admin client would, without a JVM. quorum(i) asks node i's controller
listener, where (as on Kafka's controllers) only the leader answers without
NOT_LEADER_OR_FOLLOWER; a client listener forwards to the leader.
"""

import re
import struct

import metrics_fixture
from eddy_fixture import Broker, wait_until
from kafka_fixture import free_port
import kafka_wire as kw


def _compact_string(s):
    b = s.encode()
    return kw.uvarint(len(b) + 1) + b


class _Reader:
    def __init__(self, data):
        self.data = data
        self.pos = 0

    def take(self, fmt):
        v = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return v[0] if len(v) == 1 else v

    def uvarint(self):
        shift = value = 0
        while True:
            b = self.data[self.pos]
            self.pos += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7

    def compact_string(self):
        n = self.uvarint() - 1
        s = self.data[self.pos:self.pos + n].decode()
        self.pos += n
        return s

    def skip_tags(self):
        for _ in range(self.uvarint()):
            self.uvarint()
            self.pos += self.uvarint()


def describe_quorum(port, timeout=10):
    """DescribeQuorum v0 for __cluster_metadata-0 on a node's listener at
    port: a dict with error (partition error code), leader, epoch,
    high_watermark and voters {id: log end offset}."""
    body = (kw.uvarint(2) + _compact_string("__cluster_metadata") + kw.uvarint(2) + struct.pack(">i", 0) +
            b"\x00" + b"\x00" + b"\x00")
    with kw.Connection(port, timeout=timeout) as conn:
        payload = conn.request(55, 0, body, flexible=True)
    r = _Reader(payload)
    top_error = r.take(">h")
    assert r.uvarint() == 2, "one topic"
    assert r.compact_string() == "__cluster_metadata"
    assert r.uvarint() == 2, "one partition"
    index, error, leader, epoch, hw = r.take(">ihiiq")
    voters = {}
    for _ in range(r.uvarint() - 1):
        rid, leo = r.take(">iq")
        r.skip_tags()
        voters[rid] = leo
    return {"top_error": top_error, "partition": index, "error": error, "leader": leader, "epoch": epoch,
            "high_watermark": hw, "voters": voters}


class EddyCluster:
    def __init__(self, size=3, overrides=None):
        self.size = size
        self.ids = list(range(1, size + 1))
        self.client_ports = {i: free_port() for i in self.ids}
        self.controller_ports = {i: free_port() for i in self.ids}
        self.metrics_ports = {i: free_port() for i in self.ids}
        voters = ",".join("%d@127.0.0.1:%d" % (i, self.controller_ports[i]) for i in self.ids)
        self.nodes = {}
        for i in self.ids:
            o = {
                "node.id": str(i),
                "listeners": "PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d"
                             % (self.client_ports[i], self.controller_ports[i]),
                "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                "controller.quorum.voters": voters,
                "controller.quorum.election.timeout.ms": "500",
                "controller.quorum.fetch.timeout.ms": "1000",
                "controller.quorum.request.timeout.ms": "1000",
                "eddy.quorum.bootstrap": "true",
                "eddy.metrics.listener": "http://127.0.0.1:%d" % self.metrics_ports[i],
            }
            o.update(overrides or {})
            self.nodes[i] = Broker(overrides=o)

    def start(self, i, wiped=False):
        node = self.nodes[i]
        if wiped:
            node.overrides["eddy.quorum.bootstrap"] = "false"
        node.start(port=self.client_ports[i])

    def start_all(self):
        for i in self.ids:
            self.start(i)

    def running(self):
        return [i for i in self.ids if self.nodes[i].alive()]

    def quorum(self, i):
        try:
            return describe_quorum(self.controller_ports[i], timeout=5)
        except (OSError, kw.Closed):
            return None

    def leader(self):
        """The one running node that answers DescribeQuorum as the leader
        (every other answers NOT_LEADER_OR_FOLLOWER, as Kafka's followers
        do), once its entry is committed and every running node's log has
        reached it; else None."""
        views = {i: self.quorum(i) for i in self.running()}
        if any(v is None for v in views.values()):
            return None
        leaders = [i for i, v in views.items() if v["error"] == 0]
        if len(leaders) != 1 or any(v["error"] != 6 for i, v in views.items() if i != leaders[0]):
            return None
        view = views[leaders[0]]
        if view["leader"] != leaders[0] or view["high_watermark"] < 1:
            return None
        if any(view["voters"].get(i, -1) < view["high_watermark"] for i in views):
            return None
        return leaders[0]

    def committed_offsets(self, i):
        """Node i's committed offsets, as its metrics listener shows them
        (eddy_consumer_group_committed_offset): [(group, topic, partition, offset)]."""
        raw = metrics_fixture.http_exchange(self.metrics_ports[i],
                                            b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        pattern = re.compile(rb'^eddy_consumer_group_committed_offset\{group="([^"]*)",topic="([^"]*)",'
                             rb'partition="(\d+)"\} (\S+)$', re.M)
        return sorted((g.decode(), t.decode(), int(p), int(float(o))) for g, t, p, o in pattern.findall(raw))

    def wait_for_leader(self, timeout=20, other_than=None):
        def found():
            leader = self.leader()
            return leader if leader is not None and leader != other_than else None
        return wait_until(found, timeout, "one leader agreed by every running node")

    def close(self):
        for node in self.nodes.values():
            node.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
