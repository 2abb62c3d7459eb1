"""Store-and-forward test rig: Apache Kafka (kafka_fixture.KafkaCluster,
KRaft, 1 or 3 nodes) is the central cluster, one fault proxy stands in front
of each Kafka node, and an edge eddy's link "central" is bootstrapped
through the proxies.

    rig = ForwardRig(edge_overrides={...}, central_nodes=1, central_configs={...})
    rig.start()
    rig.create_central_topic("numbers", 4)
    rig.link_down() / rig.link_up()
    rig.status()                     # `eddy forward status --json` of the edge
    rig.wait_drained("numbers", 4)
    assert_numbers(rig.kafka, "numbers", count, 4)   # Kafka's Java consumer
    rig.close()

In tests the forward_rig fixture (conftest.py) makes, starts and finishes
rigs: forward_rig(edge_overrides=..., ...).

Every Kafka node has two client listeners (kafka_fixture, external=): the
EXTERNAL one is advertised as the address of that node's proxy, so every
connection the link opens (bootstrap, then each partition leader it learns
from metadata) crosses a proxy and link_down() cuts all of them; the
INTERNAL one carries replication between the nodes and the tests' own
tools and checks (rig.kafka.bootstrap), which a link cut never touches.
"""

import json
import subprocess
import time

import eddy_fixture
import kafka_fixture
import kafka_wire as w
from fault_proxy import FaultProxy

LINK = "central"
# The link's client id on the central cluster (src/forward/link.cc,
# Link::connect): what a client quota names.
CLIENT_ID = "eddy-forward-" + LINK


class CentralProxy(FaultProxy):
    """A FaultProxy that can also swallow everything the broker sends back
    while still relaying what the client sends (drop_responses): requests
    are written centrally but never acknowledged, as when a link dies with
    Produce requests in flight."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self._drop_responses = False
        self.dropped_bytes = 0

    def drop_responses(self, on):
        with self._lock:
            self._drop_responses = bool(on)

    def _relay(self, pair, src, dst_buffer):
        if self._drop_responses and src is pair.upstream:
            try:
                data = src.recv(65536)
            except (BlockingIOError, InterruptedError):
                return True
            except OSError:
                return False
            if not data:
                pair.closing = True
            self.dropped_bytes += len(data)
            return True
        return super()._relay(pair, src, dst_buffer)


def edge_link_overrides(bootstrap, topics, link=LINK):
    """The link settings every rig edge uses (short timeouts and backoffs so
    that faults are noticed and recovered from within seconds)."""
    return {
        "eddy.forward.links": link,
        "eddy.forward.%s.bootstrap.servers" % link: bootstrap,
        "eddy.forward.%s.topics" % link: topics,
        "eddy.forward.%s.retry.backoff.max.ms" % link: "1000",
        "eddy.forward.%s.request.timeout.ms" % link: "5000",
        "eddy.forward.%s.socket.connection.setup.timeout.ms" % link: "2000",
        "eddy.forward.%s.paused.retry.ms" % link: "1000",
        "eddy.forward.%s.linger.ms" % link: "10",
    }


class ForwardRig:
    """central_nodes: Kafka nodes (0: no central cluster at all, for
    configuration checks). central_configs (or, as before, central_overrides):
    extra server.properties for every Kafka node."""

    def __init__(self, edge_overrides=None, central_configs=None, topics="numbers", central_nodes=1,
                 central_overrides=None, tmp_path_factory=None):
        central_configs = dict(central_overrides or {}, **(central_configs or {}))
        self.proxies = {i: CentralProxy(upstream_port=1).start() for i in range(1, central_nodes + 1)}
        self.kafka = None
        if central_nodes:
            self.kafka = kafka_fixture.KafkaCluster(
                central_nodes, broker_configs=central_configs, external={i: p.port for i, p in self.proxies.items()},
                tmp=tmp_path_factory.mktemp("kafka") if tmp_path_factory else None)
            for i, proxy in self.proxies.items():
                proxy.set_upstream(self.kafka.external_ports[i])
        bootstrap = ",".join("127.0.0.1:%d" % p.port for p in self.proxies.values()) or "127.0.0.1:1"
        edge = edge_link_overrides(bootstrap, topics)
        edge.update(edge_overrides or {})
        self.edge = eddy_fixture.Broker(overrides=edge,
                                        tmp=tmp_path_factory.mktemp("edge") if tmp_path_factory else None)
        self.down = False
        self.central_stopped = set()  # Kafka nodes a scenario stopped on purpose

    def start(self):
        if self.kafka is not None:
            self.kafka.start()
        self.edge.start()

    def close(self):
        self.edge.close()
        if self.kafka is not None:
            self.kafka.close()
        for proxy in self.proxies.values():
            proxy.close()

    # -- the central cluster ----------------------------------------------

    def restart_central(self, sig, node=1):
        """Stops Kafka node `node` with sig (SIGKILL: a crash; its log.dirs
        stay as they are) and starts it again on the same data directory and
        ports; returns when the cluster lists it again."""
        self.kafka.stop_node(node, sig)
        self.kafka.start_node(node)

    def kill_central(self, node):
        """SIGKILLs Kafka node `node` and leaves it down."""
        self.kafka.kill(node)
        self.central_stopped.add(node)

    def admin(self):
        from kafka.admin import KafkaAdminClient
        return KafkaAdminClient(bootstrap_servers=self.kafka.bootstrap, request_timeout_ms=30000)

    def create_central_topic(self, name, partitions, replication=None, configs=None):
        """Creates the central topic (kafka-python's admin client on the
        INTERNAL listener) and waits until every partition has its full ISR
        and a leader that acts as one."""
        from kafka.admin import NewTopic
        # kafka-python speaks CreateTopics v3 at most: no -1 for "the
        # cluster's default" (v4), so the default is spelled out.
        rf = replication if replication is not None else min(3, len(self.kafka.ports))
        admin = self.admin()
        try:
            admin.create_topics([NewTopic(name, partitions, rf, topic_configs=dict(configs or {}))], timeout_ms=30000)
        finally:
            admin.close()

        # Kafka's metadata names a new partition's leader a moment before
        # that broker acts as its leader (Produce then gets
        # NOT_LEADER_OR_FOLLOWER): a set-up step waits until ListOffsets on
        # the leader answers, so that a scenario starts from a writable topic.
        def leads(leader, topic, partition):
            from kafka.protocol.offset import OffsetResponse
            try:
                with w.Connection(self.kafka.ports[leader]) as conn:
                    response = conn.request(2, 1, w.list_offsets_v1(topic, partition), response_class=OffsetResponse[1])
            except (OSError, w.Closed):
                return False
            (_t, ((_p, error_code, _ts, _offset),)), = response.topics
            return error_code == 0

        def ready():
            md = self.central_metadata(name)
            return md is not None and len(md) == partitions and all(
                leader >= 0 and isr == rf for leader, _replicas, isr in md.values()) and all(
                leads(leader, name, p) for p, (leader, _r, _i) in md.items())
        eddy_fixture.wait_until(ready, 30, "central topic %s to have leaders that answer and %d in-sync replicas"
                                % (name, rf), interval=0.1)

    def central_metadata(self, topic):
        """{partition: (leader, replicas, isr count)} of a central topic (None
        when it does not exist), from a node the scenario did not stop."""
        return central_metadata(self.kafka, topic, skip=self.central_stopped)

    def central_leader(self, topic, partition):
        md = self.central_metadata(topic)
        return md[partition][0] if md and partition in md else -1

    def central_end_offsets(self, topic, partitions):
        """The central log end offsets (ListOffsets latest through Kafka's
        leaders, kafka-python)."""
        from kafka import KafkaConsumer, TopicPartition
        consumer = KafkaConsumer(bootstrap_servers=self.kafka.bootstrap, enable_auto_commit=False,
                                 request_timeout_ms=30000)
        try:
            tps = [TopicPartition(topic, p) for p in range(partitions)]
            ends = consumer.end_offsets(tps)
            return [ends[tp] for tp in tps]
        finally:
            consumer.close()

    def central_topic_config(self, topic, key):
        from kafka.admin import ConfigResource, ConfigResourceType
        admin = self.admin()
        try:
            response, = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
        finally:
            admin.close()
        for _error, _message, _type, _name, entries in response.resources:
            for entry in entries:
                if entry[0] == key:
                    return entry[1]
        return None

    # -- the edge ---------------------------------------------------------

    def create_topic(self, broker, name, partitions, configs=()):
        """Creates a topic on an eddy (the edge) with CreateTopics v1."""
        create_eddy_topic(broker, name, partitions, configs)

    def create_edge_topic(self, name, partitions, configs=()):
        create_eddy_topic(self.edge, name, partitions, configs)

    # -- the link ---------------------------------------------------------

    def cut_all(self):
        for proxy in self.proxies.values():
            proxy.cut_all()

    def refuse(self, seconds):
        for proxy in self.proxies.values():
            proxy.refuse(seconds)

    def drop_responses(self, on):
        for proxy in self.proxies.values():
            proxy.drop_responses(on)

    def proxy_cuts(self):
        return sum(p.cuts for p in self.proxies.values())

    def open_link_connections(self):
        return sum(p.open_connections() for p in self.proxies.values())

    def link_down(self):
        """The uplink is gone: open connections to every Kafka node are
        reset, new ones refused. Returns once every open connection is cut
        (the proxies do it within 50 ms; until then a batch produced
        meanwhile could still go through)."""
        self.refuse(10 ** 6)
        self.cut_all()
        self.down = True
        eddy_fixture.wait_until(lambda: self.open_link_connections() == 0, 10, "the proxies to cut the link")

    def link_up(self):
        self.refuse(0)
        self.down = False

    def status(self, json_output=True):
        return forward_status(self.edge, json_output)

    def link_status(self):
        links = self.status()["links"]
        return links[0] if links else None

    def partition_status(self, topic, partition):
        link = self.link_status()
        for p in link["partitions"]:
            if p["topic"] == topic and p["partition"] == partition:
                return p
        return None

    def wait_connected(self, timeout=60):
        eddy_fixture.wait_until(lambda: (self.link_status() or {}).get("state") == "connected", timeout,
                                "the link to connect", interval=0.1)

    def local_ends(self, topic, partitions):
        return local_ends(self.edge, topic, partitions)

    def wait_drained(self, topic, partitions, timeout=120):
        wait_drained(self.edge, topic, partitions, timeout)


def central_metadata(kafka, topic, skip=()):
    """{partition: (leader, replicas, isr count)} of a topic of a
    KafkaCluster from a Metadata v1 request to the first node not in skip
    that answers (None when the topic does not exist)."""
    from kafka.protocol.metadata import MetadataResponse
    for i in sorted(kafka.ports):
        if i in skip:
            continue
        try:
            with w.Connection(kafka.ports[i]) as conn:
                response = conn.request(3, 1, w.metadata_v1([topic]), response_class=MetadataResponse[1])
        except (OSError, w.Closed):
            continue
        for error, name, _internal, partitions in response.topics:
            if name != topic or error:
                return None
            return {p: (leader, list(replicas), len(isr)) for _e, p, leader, replicas, isr in partitions}
    return None


def create_eddy_topic(broker, name, partitions, configs=()):
    """Creates a topic on an eddy (CreateTopics v1)."""
    from kafka.protocol.admin import CreateTopicsResponse
    with w.Connection(broker.port) as conn:
        response = conn.request(19, 1, w.create_topics_v1(name, partitions, configs=configs),
                                response_class=CreateTopicsResponse[1])
    (_name, code, message), = response.topic_errors
    if code:
        raise eddy_fixture.FixtureError("create %s: error %d %s" % (name, code, message))


def forward_status(edge, json_output=True):
    """`eddy forward status [--json]` of an edge (through its data directory).
    Just after a (re)start the edge logs its port before its control socket
    is there (or while a killed predecessor's stale one still is): for up to
    10 s that is waited out, as long as the edge is alive."""
    args = [edge.bin, "forward", "status", "--data-dir", edge.data_dir]
    if json_output:
        args.append("--json")

    def answered():
        r = subprocess.run(args, capture_output=True, text=True, timeout=20)
        if r.returncode == 0:
            return r
        if "no eddy is running" not in r.stderr or not edge.alive():
            raise eddy_fixture.FixtureError("eddy forward status: exit %d: %s" % (r.returncode, r.stderr))
        return None  # the control socket is not up yet (eddy is starting)
    r = eddy_fixture.wait_until(answered, 10, "eddy forward status to answer", interval=0.05)
    return json.loads(r.stdout) if json_output else r.stdout


def local_ends(edge, topic, partitions):
    """The edge's log end offsets (ListOffsets latest), read directly."""
    from kafka.protocol.offset import OffsetResponse
    ends = []
    with w.Connection(edge.port) as conn:
        for p in range(partitions):
            response = conn.request(2, 1, w.list_offsets_v1(topic, p), response_class=OffsetResponse[1])
            (_t, ((_p, error_code, _ts, offset),)), = response.topics
            if error_code:
                raise eddy_fixture.FixtureError("ListOffsets %s-%d: error %d" % (topic, p, error_code))
            ends.append(offset)
    return ends


def wait_drained(edge, topic, partitions, timeout=120, paused_for=5.0):
    """Until every partition of topic is forwarded up to the edge's actual
    log end (not the link's possibly older view of it). A partition found
    paused that has not moved for paused_for seconds cannot drain (a pause
    is retried every paused.retry.ms and may show "resumed" in between):
    that fails at once, with the reason, instead of at the deadline."""
    progress = {}  # partition -> (forwarded offset, since when)

    def drained():
        links = forward_status(edge)["links"]
        if not links:
            return False
        now = time.monotonic()
        for p in links[0]["partitions"]:
            if p["topic"] != topic:
                continue
            offset, since = progress.get(p["partition"], (None, now))
            if offset != p["forwarded_offset"]:
                progress[p["partition"]] = (p["forwarded_offset"], now)
            elif p["paused"] and now - since >= paused_for:
                raise eddy_fixture.FixtureError("%s-%d is paused (%s) and has not moved for %.0f s: it cannot drain"
                                                % (topic, p["partition"], p["paused"], now - since))
        forwarded = {p["partition"]: p["forwarded_offset"] for p in links[0]["partitions"] if p["topic"] == topic}
        return [forwarded.get(p, -1) for p in range(partitions)] == local_ends(edge, topic, partitions)
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
    return proc.returncode, out.strip().splitlines()[-1:], err.strip().splitlines()[-5:]


def assert_numbers(target, topic, count, partitions, label=None):
    """Every number 0..count-1 of rdkafka_idempotence exactly once, in order,
    in its partition (number % partitions). target: the central
    KafkaCluster (read with Kafka's Java consumer, NumberedCheck.java) or an
    eddy Broker (the edge, read with raw fetches)."""
    if isinstance(target, eddy_fixture.Broker):
        eddy_fixture.assert_numbered_log(target.port, topic, count, partitions, label or "edge")
        return None
    label = label or "central"
    result = kafka_fixture.numbered_check(target.bootstrap, topic, count, partitions)
    print(result["text"])
    parts = result["partitions"]
    assert sum(p["duplicates"] for p in parts) == 0, "%s: no number twice" % label
    assert sum(p["out_of_order"] for p in parts) == 0, "%s: numbers in order in each partition" % label
    assert sum(p["gaps"] for p in parts) == 0, "%s: no gap in any partition" % label
    assert sum(p["misplaced"] for p in parts) == 0, "%s: each number in its partition" % label
    assert result["distinct"] == count, \
        "%s: every number present (missing e.g. %s)" % (label, result["missing_examples"][:5])
    assert result["records"] == count, "%s: records in the topic" % label
    return result


def finish_rig_problems(rig):
    """What the end of a test requires of a rig, as a list of problems:
    every Kafka node the test did not stop still runs, the edge still runs
    and stops cleanly on SIGTERM. Closes the rig."""
    problems = []
    try:
        if rig.kafka is not None and rig.kafka.started:
            for i, proc in sorted(rig.kafka.procs.items()):
                if i not in rig.central_stopped and proc.poll() is not None:
                    problems.append("kafka node %d was not running at the end:\n%s"
                                    % (i, rig.kafka.log_text(i)[-2000:]))
        if rig.edge.proc is not None:
            if not rig.edge.alive():
                problems.append("the edge was not running at the end:\n" + rig.edge.log_text()[-3000:])
            else:
                try:
                    rc = rig.edge.stop()
                    if rc != 0:
                        problems.append("the edge exited with %s on SIGTERM, want 0" % rc)
                except eddy_fixture.FixtureError as e:
                    problems.append("the edge did not stop: %s" % e)
    finally:
        rig.close()
    return problems
