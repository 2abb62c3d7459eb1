"""A cluster of eddy nodes on 127.0.0.1: each with its own data directory,
a client listener (PLAINTEXT) and a controller listener (CONTROLLER) on
ports chosen up front, and the same controller.quorum.voters.

    with EddyCluster(3) as c:
        c.start_all()
        leader = c.wait_for_leader(timeout=15)

EddyCluster(3, partitionable=True) runs the Raft traffic through a network
that can be cut: each node gets its own controller.quorum.voters, in which
every other node's address is a FaultProxy for that directed pair (node i
reaches node j through the proxy of (i, j) only; the proxies run in a child
process, so that the test's own Python work does not slow the replication
down). isolate(j) cuts node j off the other nodes (both directions), heal()
joins it again; clients (and the fixture's own requests) still reach every
node directly. Without the flag the cluster is exactly as before (one
voters line, direct connections). binary: another eddy executable for the
nodes (e.g. eddy-power-cut).

describe_quorum(port) sends DescribeQuorum v0 (hand-built, flexible) to a
node and decodes the answer, so that the tests read the quorum as a Kafka
admin client would, without a JVM. quorum(i) asks node i's controller
listener, where (as on Kafka's controllers) only the leader answers without
NOT_LEADER_OR_FOLLOWER; a client listener forwards to the leader.
"""

import multiprocessing
import re
import struct

import metrics_fixture
from eddy_fixture import Broker, FixtureError, wait_until
from fault_proxy import FaultProxy
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


def _links_main(routes, conn):
    """The child process of Links: one FaultProxy per directed pair,
    commands from conn until "close" (or the parent goes away)."""
    proxies = {}
    try:
        for pair, (listen, upstream) in routes.items():
            proxies[pair] = FaultProxy(upstream_port=upstream, listen_port=listen).start()
    except OSError as e:
        conn.send(("error", "a link's proxy cannot listen: %s" % e))
        return
    conn.send(("ready", None))
    while True:
        try:
            command, arg = conn.recv()
        except (EOFError, OSError):
            break
        if command == "isolate":
            node, mode = arg
            for (i, j), proxy in proxies.items():
                if node in (i, j):
                    if mode == "drop":
                        proxy.stall(float("inf"))  # nothing relayed, connections stay open
                    else:
                        proxy.refuse(float("inf"))  # new connections reset at once
                        proxy.cut_all()             # open ones reset
            conn.send(("ok", None))
        elif command == "heal":
            for proxy in proxies.values():
                proxy.accept_again()
                proxy.resume()
            conn.send(("ok", None))
        elif command == "stats":
            conn.send(("ok", {pair: (p.connections, p.cuts, p.refused, p.bytes) for pair, p in proxies.items()}))
        elif command == "close":
            break
    for proxy in proxies.values():
        proxy.close()
    conn.send(("ok", None))


class Links:
    """The Raft links between the nodes of a partitionable cluster: a
    FaultProxy per directed pair (i, j), listening on ports[(i, j)] and
    relaying to node j's controller port, all in one child process."""

    MODES = ("reset", "drop")

    def __init__(self, ports, controller_ports):
        self.ports = ports
        routes = {(i, j): (port, controller_ports[j]) for (i, j), port in ports.items()}
        context = multiprocessing.get_context("fork")
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_links_main, args=(routes, child), name="eddy-links", daemon=True)
        self._process.start()
        child.close()
        self.isolated = None
        self._call_reply("starting the links' proxies")

    def _call_reply(self, what, timeout=10):
        if not self._conn.poll(timeout):
            raise FixtureError("the links' process did not answer (%s)" % what)
        status, value = self._conn.recv()
        if status != "ok" and status != "ready":
            raise FixtureError("links: %s" % value)
        return value

    def _call(self, command, arg=None):
        self._conn.send((command, arg))
        return self._call_reply(command)

    def isolate(self, node, mode="reset"):
        """Cuts node off every other node, both ways. mode "reset": open
        connections are reset and new ones refused at once (a peer that is
        gone); "drop": nothing is relayed any more, connections stay open and
        new ones are accepted but carry nothing (packets lost: requests time
        out), and what was held back is delivered on heal()."""
        if mode not in self.MODES:
            raise ValueError("mode: one of %s" % (self.MODES,))
        self._call("isolate", (node, mode))
        self.isolated = node

    def heal(self):
        self._call("heal")
        self.isolated = None

    def stats(self):
        """{(i, j): (connections, cuts, refused, bytes)}"""
        return self._call("stats")

    def close(self):
        if self._process.is_alive():
            try:
                self._call("close")
            except (FixtureError, OSError, EOFError):
                pass
        self._process.join(5)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()


class EddyCluster:
    def __init__(self, size=3, overrides=None, partitionable=False, binary=None):
        self.size = size
        self.ids = list(range(1, size + 1))
        self.client_ports = {i: free_port() for i in self.ids}
        self.controller_ports = {i: free_port() for i in self.ids}
        self.metrics_ports = {i: free_port() for i in self.ids}
        self.links = None
        if partitionable:
            self.links = Links({(i, j): free_port() for i in self.ids for j in self.ids if i != j},
                               self.controller_ports)
        self.nodes = {}
        for i in self.ids:
            voters = ",".join("%d@127.0.0.1:%d" % (j, self.controller_ports[j] if self.links is None or i == j
                                                   else self.links.ports[(i, j)]) for j in self.ids)
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
            if binary is not None:
                self.nodes[i].bin = binary

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

    def bootstrap_of(self, ids=None):
        """bootstrap.servers naming the client listeners of nodes ids
        (default: the running ones), e.g. the survivors of a kill."""
        return ",".join("127.0.0.1:%d" % self.client_ports[i] for i in (self.running() if ids is None else ids))

    def crashed(self):
        """The nodes whose process ended without the test stopping it
        (a node stopped through kill()/stop() is not running, not crashed):
        [(id, exit code)]."""
        return [(i, n.proc.returncode) for i, n in self.nodes.items()
                if n.proc is not None and n.proc.poll() is not None]

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

    def isolate(self, i, mode="reset"):
        """Node i cut off the other nodes (Links.isolate); clients still
        reach it. REQUIRES partitionable=True."""
        self.links.isolate(i, mode)

    def heal(self):
        self.links.heal()

    def close(self):
        for node in self.nodes.values():
            node.close()
        if self.links is not None:
            self.links.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
