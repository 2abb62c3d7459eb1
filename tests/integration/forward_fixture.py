"""Store-and-forward test rig: a central eddy (standing in for the central
Kafka cluster; it speaks the same protocol), a fault proxy in front of it,
and an edge eddy whose link "central" goes through the proxy.

    rig = ForwardRig(edge_overrides={...})
    rig.start()
    rig.create_central_topic("numbers", 4)
    rig.link_down() / rig.link_up()
    rig.status()                     # `eddy forward status --json` of the edge
    rig.wait_forwarded("numbers", 4, count)
    rig.close()

The central broker advertises the proxy's address, so every connection of
the edge's link (bootstrap and leader) crosses the proxy.
"""

import json
import os
import subprocess
import time

import eddy_fixture
import kafka_wire as w
from fault_proxy import FaultProxy

LINK = "central"


class ForwardRig:
    def __init__(self, edge_overrides=None, central_overrides=None, topics="numbers"):
        self.proxy = FaultProxy(upstream_port=1)
        self.proxy.start()
        central = {"advertised.listeners": "PLAINTEXT://127.0.0.1:%d" % self.proxy.port,
                   "auto.create.topics.enable": "false"}
        central.update(central_overrides or {})
        self.central = eddy_fixture.Broker(overrides=central)
        edge = {
            "eddy.forward.links": LINK,
            "eddy.forward.%s.bootstrap.servers" % LINK: "127.0.0.1:%d" % self.proxy.port,
            "eddy.forward.%s.topics" % LINK: topics,
            "eddy.forward.%s.retry.backoff.max.ms" % LINK: "1000",
            "eddy.forward.%s.request.timeout.ms" % LINK: "5000",
            "eddy.forward.%s.socket.connection.setup.timeout.ms" % LINK: "2000",
            "eddy.forward.%s.paused.retry.ms" % LINK: "1000",
            "eddy.forward.%s.linger.ms" % LINK: "10",
        }
        edge.update(edge_overrides or {})
        self.edge = eddy_fixture.Broker(overrides=edge)
        self.down = False

    def start(self):
        self.central.start()
        self.proxy.set_upstream(self.central.port)
        self.edge.start()

    def close(self):
        self.edge.close()
        self.central.close()
        self.proxy.close()

    def restart_central(self, sig):
        self.central.restart(sig)
        self.proxy.set_upstream(self.central.port)

    def create_topic(self, broker, name, partitions, configs=()):
        from kafka.protocol.admin import CreateTopicsResponse
        with w.Connection(broker.port) as conn:
            response = conn.request(19, 1, w.create_topics_v1(name, partitions, configs=configs),
                                    response_class=CreateTopicsResponse[1])
        (_name, code, message), = response.topic_errors
        if code:
            raise eddy_fixture.FixtureError("create %s: error %d %s" % (name, code, message))

    def create_central_topic(self, name, partitions):
        self.create_topic(self.central, name, partitions)

    def link_down(self):
        """The uplink is gone: open connections are reset, new ones refused.
        Returns once every open connection is cut (the proxy does it within
        50 ms; until then a batch produced meanwhile could still go through)."""
        self.proxy.refuse(10 ** 6)
        self.proxy.cut_all()
        self.down = True
        eddy_fixture.wait_until(lambda: self.proxy.open_connections() == 0, 10, "the proxy to cut the link")

    def link_up(self):
        self.proxy.refuse(0)
        self.down = False

    def status(self, json_output=True):
        args = [self.edge.bin, "forward", "status", "--data-dir", self.edge.data_dir]
        if json_output:
            args.append("--json")
        r = subprocess.run(args, capture_output=True, text=True, timeout=20)
        if r.returncode != 0:
            raise eddy_fixture.FixtureError("eddy forward status: exit %d: %s" % (r.returncode, r.stderr))
        return json.loads(r.stdout) if json_output else r.stdout

    def link_status(self):
        links = self.status()["links"]
        return links[0] if links else None

    def partition_status(self, topic, partition):
        link = self.link_status()
        for p in link["partitions"]:
            if p["topic"] == topic and p["partition"] == partition:
                return p
        return None

    def local_ends(self, topic, partitions):
        """The edge's log end offsets (ListOffsets latest), read directly."""
        from kafka.protocol.offset import OffsetResponse
        ends = []
        with w.Connection(self.edge.port) as conn:
            for p in range(partitions):
                response = conn.request(2, 1, w.list_offsets_v1(topic, p), response_class=OffsetResponse[1])
                (_t, ((_p, error_code, _ts, offset),)), = response.topics
                if error_code:
                    raise eddy_fixture.FixtureError("ListOffsets %s-%d: error %d" % (topic, p, error_code))
                ends.append(offset)
        return ends

    def wait_drained(self, topic, partitions, timeout=120):
        """Until every partition of topic is forwarded up to the edge's
        actual log end (not the link's possibly older view of it)."""
        def drained():
            link = self.link_status()
            if link is None:
                return False
            forwarded = {p["partition"]: p["forwarded_offset"] for p in link["partitions"] if p["topic"] == topic}
            return [forwarded.get(p, -1) for p in range(partitions)] == self.local_ends(topic, partitions)
        eddy_fixture.wait_until(drained, timeout, "the link to drain %s" % topic, interval=0.2)


def produce_numbers(program, bootstrap, topic, count, partitions, rate=0):
    """Starts rdkafka_idempotence (numbered values %09d, message i to
    partition i % partitions); returns the Popen."""
    args = [program, bootstrap, topic, str(count), str(partitions)]
    if rate:
        args.append(str(rate))
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish_producer(proc, timeout=300):
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out.strip().splitlines()[-1:] , err.strip().splitlines()[-5:]


def check_numbers(checks, broker, topic, count, partitions, label="central"):
    eddy_fixture.check_numbered_log(checks, broker.port, topic, count, partitions, label)


def run(body, **rig_args):
    """Runs body(rig, checks) on a started rig; both brokers must survive and
    stop cleanly. Exits with the checks' verdict."""
    checks = eddy_fixture.Checks()
    rig = ForwardRig(**rig_args)
    try:
        rig.start()
        body(rig, checks)
    except Exception as e:  # noqa: BLE001 - any escape is a test failure
        import traceback
        traceback.print_exc()
        checks.fail("test body completed", "%s: %s" % (type(e).__name__, e))
        print("---- edge stderr ----\n" + rig.edge.log_text()[-5000:])
        print("---- central stderr ----\n" + rig.central.log_text()[-3000:])
    finally:
        for name, broker in (("edge", rig.edge), ("central", rig.central)):
            if broker.proc is not None:
                alive = broker.alive()
                checks.check("%s still running at the end" % name, alive, broker.log_text()[-3000:])
                if alive:
                    try:
                        rc = broker.stop()
                        checks.equal("%s stops cleanly on SIGTERM (exit code)" % name, rc, 0)
                    except eddy_fixture.FixtureError as e:
                        checks.fail("%s stops cleanly on SIGTERM" % name, e)
        rig.close()
    checks.finish()
