"""A three-node cluster's shared metadata (issue 16): topics, their
partitions' placement and the cluster id go through the controller log and
every node applies them, so that any node answers the same Metadata and a
client that knows one node reaches every partition.

One cluster is shared by the file's tests, in order. Clients: Debian's
kafka-python (admin, producer, consumer; it routes each partition to its
leader), raw requests where a test needs to aim at one node, Kafka's own
kafka-topics (Java, 4.x) for --describe, and the newest confluent-kafka,
franz-go and kafkajs (producer and group member on different nodes).
"""

import os
import struct

import pytest

import kafka_fixture
import kafka_wire as kw
from cluster_fixture import EddyCluster
from eddy_fixture import wait_until


# Every node snapshots its metadata after each KiB of records (Kafka's key,
# 1 MiB by default), so that every test below also runs across snapshots and
# the wiped node of the last one catches up from the leader's snapshot.
SNAPSHOT_BYTES = 1024


@pytest.fixture(scope="module")
def cluster():
    with EddyCluster(3, overrides={"metadata.log.max.record.bytes.between.snapshots": str(SNAPSHOT_BYTES)}) as c:
        c.start_all()
        c.wait_for_leader(timeout=30)
        yield c


def bootstrap(cluster, i):
    return "127.0.0.1:%d" % cluster.client_ports[i]


def metadata(cluster, i, topics=None):
    """kafka-python's view of node i's Metadata: (cluster id, controller id,
    {node id: port}, {topic: {partition: (leader, replicas)}})."""
    with kw.Connection(cluster.client_ports[i]) as conn:
        payload = conn.request(3, 5, _metadata_v5_body(topics))
    return _parse_metadata_v5(payload)


def _metadata_v5_body(topics):
    if topics is None:
        return struct.pack(">i", -1) + b"\x00"
    return kw.array([kw.string(t) for t in topics]) + b"\x00"


def parse_metadata_v5(data):
    """A Metadata v5 answer: {"cluster_id", "controller", "brokers": {id:
    port}, "topics": {name: {"error", "partitions": {index: {"error",
    "leader", "replicas", "isr", "offline"}}}}}."""
    pos = 4  # throttle

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from(fmt, data, pos)
        pos += struct.calcsize(fmt)
        return v[0] if len(v) == 1 else v

    def string():
        nonlocal pos
        n = take(">h")
        if n < 0:
            return None
        s = data[pos:pos + n].decode()
        pos += n
        return s

    def ints():
        return [take(">i") for _ in range(take(">i"))]

    brokers = {}
    for _ in range(take(">i")):
        node = take(">i")
        string()
        port = take(">i")
        string()  # rack
        brokers[node] = port
    cluster_id = string()
    controller = take(">i")
    topics = {}
    for _ in range(take(">i")):
        error = take(">h")
        name = string()
        take(">b")  # internal
        parts = {}
        for _ in range(take(">i")):
            perror, index, leader = take(">hii")
            parts[index] = {"error": perror, "leader": leader, "replicas": ints(), "isr": ints(), "offline": ints()}
        topics[name] = {"error": error, "partitions": parts}
    return {"cluster_id": cluster_id, "controller": controller, "brokers": brokers, "topics": topics}


def _parse_metadata_v5(data):
    m = parse_metadata_v5(data)
    topics = {name: (t["error"], {i: (p["leader"], p["replicas"], p["error"]) for i, p in t["partitions"].items()})
              for name, t in m["topics"].items()}
    return m["cluster_id"], m["controller"], m["brokers"], topics


def create_topic_at(cluster, i, name, partitions, replication=1):
    """CreateTopics v1 sent to node i; returns (error code, message)."""
    with kw.Connection(cluster.client_ports[i], timeout=30) as conn:
        payload = conn.request(19, 1, kw.create_topics_v1(name, partitions, replication, timeout_ms=20000))
    count = struct.unpack_from(">i", payload, 0)[0]
    assert count == 1
    n = struct.unpack_from(">h", payload, 4)[0]
    pos = 6 + n
    error = struct.unpack_from(">h", payload, pos)[0]
    m = struct.unpack_from(">h", payload, pos + 2)[0]
    message = payload[pos + 4:pos + 4 + m].decode() if m > 0 else None
    return error, message


def followers(cluster):
    leader = cluster.wait_for_leader(timeout=30)
    return leader, [i for i in cluster.ids if i != leader]


def test_every_node_answers_one_cluster_with_all_its_nodes(cluster):
    leader, _ = followers(cluster)
    def same():
        views = [metadata(cluster, i) for i in cluster.ids]
        ids = {v[0] for v in views}
        return views if len(ids) == 1 and all(len(v[2]) == 3 for v in views) else None
    views = wait_until(same, 20, "one cluster id and three registered nodes on every node")
    for _cluster_id, controller, brokers, _topics in views:
        assert brokers == {i: cluster.client_ports[i] for i in cluster.ids}
        assert controller == leader  # Kafka's controller id: the active controller


def test_a_topic_created_on_a_follower_is_on_every_node_spread_over_them(cluster):
    _leader, (follower, _) = followers(cluster)
    assert create_topic_at(cluster, follower, "shared", 6) == (0, None)
    def everywhere():
        views = [metadata(cluster, i, ["shared"])[3].get("shared") for i in cluster.ids]
        return views if all(v is not None and v[0] == 0 and len(v[1]) == 6 for v in views) else None
    views = wait_until(everywhere, 20, "the topic on every node")
    assert all(v == views[0] for v in views), "every node answers the same placement"
    leaders = [views[0][1][p][0] for p in range(6)]
    assert sorted(set(leaders)) == [1, 2, 3], "partitions spread over the three nodes: %s" % leaders
    assert all(views[0][1][p][1] == [leaders[p]] for p in range(6))
    # The same name again, on another node: Kafka's answer.
    assert create_topic_at(cluster, 3 if follower != 3 else 1, "shared", 6)[0] == 36  # TOPIC_ALREADY_EXISTS


def test_clients_reach_every_partition_through_any_node(cluster):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    producer = KafkaProducer(bootstrap_servers=bootstrap(cluster, 1), acks=1, linger_ms=5)
    sent = {}
    for n in range(300):
        p = n % 6
        producer.send("shared", value=b"m%d" % n, partition=p).get(timeout=30)
        sent.setdefault(p, []).append(b"m%d" % n)
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap(cluster, 3), consumer_timeout_ms=10000,
                             auto_offset_reset="earliest", enable_auto_commit=False)
    consumer.assign([TopicPartition("shared", p) for p in range(6)])
    got = {}
    for m in consumer:
        got.setdefault(m.partition, []).append(m.value)
        if sum(len(v) for v in got.values()) == 300:
            break
    consumer.close()
    assert got == sent


def test_a_node_that_does_not_hold_a_partition_says_not_leader(cluster):
    parts = metadata(cluster, 1, ["shared"])[3]["shared"][1]
    p = next(p for p, v in parts.items() if v[0] != 1)
    batch = kw.record_batch([(None, b"x", ())])
    with kw.Connection(cluster.client_ports[1]) as conn:
        error, _offset = kw.produce(conn, "shared", p, batch, acks=1)
    assert error == 6  # NOT_LEADER_OR_FOLLOWER: the client refreshes and goes to the leader


def test_kafka_topics_describes_the_placement_and_alters_it(cluster):
    boot = bootstrap(cluster, 2)
    out = kafka_fixture.java_tool("org.apache.kafka.tools.TopicCommand",
                                  ["--bootstrap-server", boot, "--describe", "--topic", "shared"])
    text = out.stdout.decode()
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    assert "PartitionCount: 6" in text
    for line in text.splitlines():
        if "Partition:" in line:
            assert "Leader: " in line and "Replicas: " in line
    out = kafka_fixture.java_tool("org.apache.kafka.tools.TopicCommand",
                                  ["--bootstrap-server", boot, "--alter", "--topic", "shared", "--partitions", "9"])
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    wait_until(lambda: all(len(metadata(cluster, i, ["shared"])[3]["shared"][1]) == 9 for i in cluster.ids), 20,
               "nine partitions on every node")
    out = kafka_fixture.java_tool("org.apache.kafka.tools.TopicCommand",
                                  ["--bootstrap-server", boot, "--delete", "--topic", "shared"])
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    wait_until(lambda: all(metadata(cluster, i, ["shared"])[3]["shared"][0] == 3 for i in cluster.ids), 20,
               "the topic gone from every node")  # UNKNOWN_TOPIC_OR_PARTITION


def topic_config_at(cluster, i, topic, key):
    """DescribeConfigs v0 of one topic config, asked of node i."""
    body = kw.array([struct.pack(">b", 2) + kw.string(topic) + kw.array([kw.string(key)])])
    with kw.Connection(cluster.client_ports[i]) as conn:
        data = conn.request(32, 0, body)
    pos = 4 + 4  # throttle, one resource
    error = struct.unpack_from(">h", data, pos)[0]
    assert error == 0, error
    pos += 2
    n = struct.unpack_from(">h", data, pos)[0]
    pos += 2 + max(n, 0) + 1
    n = struct.unpack_from(">h", data, pos)[0]
    pos += 2 + n + 4  # name, one config
    n = struct.unpack_from(">h", data, pos)[0]
    pos += 2 + n
    n = struct.unpack_from(">h", data, pos)[0]
    return data[pos + 2:pos + 2 + n].decode() if n >= 0 else None


def test_a_topic_config_changed_through_any_node_is_changed_on_all(cluster):
    assert create_topic_at(cluster, 1, "configured", 2) == (0, None)
    wait_until(lambda: all(metadata(cluster, i, ["configured"])[3]["configured"][0] == 0 for i in cluster.ids), 20,
               "the topic on every node")
    _leader, (follower, _) = followers(cluster)
    out = kafka_fixture.java_tool("org.apache.kafka.tools.ConfigCommand",
                                  ["--bootstrap-server", bootstrap(cluster, follower), "--alter", "--entity-type",
                                   "topics", "--entity-name", "configured", "--add-config", "retention.ms=123456"])
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    wait_until(lambda: all(topic_config_at(cluster, i, "configured", "retention.ms") == "123456" for i in cluster.ids),
               20, "the new retention.ms on every node")


def test_one_consumer_group_across_nodes(cluster):
    """Members that bootstrap from different nodes find one coordinator (the
    controller leader) and share the partitions as one group."""
    import threading
    from kafka import KafkaConsumer, KafkaProducer
    assert create_topic_at(cluster, 1, "grouped", 6) == (0, None)
    wait_until(lambda: all(metadata(cluster, i, ["grouped"])[3]["grouped"][0] == 0 for i in cluster.ids), 20,
               "the topic on every node")
    producer = KafkaProducer(bootstrap_servers=bootstrap(cluster, 2), acks=1)
    for n in range(120):
        producer.send("grouped", value=b"g%d" % n, partition=n % 6)
    producer.flush(timeout=30)
    producer.close()
    consumers = [KafkaConsumer("grouped", bootstrap_servers=bootstrap(cluster, i), group_id="across",
                               auto_offset_reset="earliest", enable_auto_commit=False,
                               session_timeout_ms=10000, heartbeat_interval_ms=500) for i in (1, 3)]
    seen = [[] for _ in consumers]
    stop = threading.Event()
    def run(k):
        c = consumers[k]
        while not stop.is_set():
            for records in c.poll(timeout_ms=200).values():
                seen[k].extend(r.value for r in records)
            if seen[k]:
                c.commit()
    threads = [threading.Thread(target=run, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    try:
        wait_until(lambda: len(seen[0]) + len(seen[1]) >= 120 and
                   all(c.assignment() for c in consumers) and
                   len(consumers[0].assignment()) + len(consumers[1].assignment()) == 6, 60,
                   "both members to share the six partitions and read everything")
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert sorted(seen[0] + seen[1]) == sorted(b"g%d" % n for n in range(120)), "each message once, in one group"
    for c in consumers:
        c.close()


def test_committed_offsets_survive_the_loss_of_the_coordinator(cluster):
    """The offsets of the group above were committed through the controller
    log: after the leader (the coordinator) is killed, the new one serves
    them, and the group resumes after what it had read."""
    from kafka import KafkaConsumer, KafkaProducer
    leader = cluster.wait_for_leader(timeout=30)
    cluster.nodes[leader].kill()
    survivor = next(i for i in cluster.ids if i != leader)
    cluster.wait_for_leader(timeout=30, other_than=leader)
    producer = KafkaProducer(bootstrap_servers=bootstrap(cluster, survivor), acks=1)
    for n in range(120, 150):
        # Only to partitions on running nodes: the killed node's are down with it.
        parts = metadata(cluster, survivor, ["grouped"])[3]["grouped"][1]
        live = [p for p, v in parts.items() if v[0] != leader]
        producer.send("grouped", value=b"g%d" % n, partition=live[n % len(live)])
    producer.flush(timeout=30)
    producer.close()
    cluster.start(leader)
    wait_until(lambda: cluster.leader() is not None and len(cluster.running()) == 3, 30, "all three running")
    consumer = KafkaConsumer("grouped", bootstrap_servers=bootstrap(cluster, survivor), group_id="across",
                             auto_offset_reset="earliest", enable_auto_commit=False, consumer_timeout_ms=8000)
    got = [m.value for m in consumer]
    consumer.close()
    assert sorted(got) == sorted(b"g%d" % n for n in range(120, 150)), "resumed after the committed offsets"


def test_commits_that_change_nothing_do_not_grow_the_controller_log(cluster):
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata
    leader = cluster.wait_for_leader(timeout=30)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap(cluster, leader), group_id="idle",
                             enable_auto_commit=False)
    tp = TopicPartition("grouped", 0)
    consumer.commit({tp: OffsetAndMetadata(5, "")})
    end = cluster.quorum(leader)["high_watermark"]
    for _ in range(5):
        consumer.commit({tp: OffsetAndMetadata(5, "")})
    assert cluster.quorum(leader)["high_watermark"] == end, "the same offset again is not logged"
    consumer.commit({tp: OffsetAndMetadata(6, "")})
    wait_until(lambda: cluster.quorum(leader)["high_watermark"] == end + 1, 10, "a changed offset logged once")
    consumer.close()


def test_a_deleted_group_stays_deleted_after_a_failover(cluster):
    from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata
    leader = cluster.wait_for_leader(timeout=30)
    tp = TopicPartition("grouped", 1)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap(cluster, leader), group_id="doomed", enable_auto_commit=False)
    consumer.commit({tp: OffsetAndMetadata(7, "")})
    consumer.close()
    admin = KafkaAdminClient(bootstrap_servers=bootstrap(cluster, leader))
    ((_group, error),) = admin.delete_consumer_groups(["doomed"])
    assert error.errno == 0, error
    admin.close()
    cluster.nodes[leader].kill()
    survivor = next(i for i in cluster.ids if i != leader)
    cluster.wait_for_leader(timeout=30, other_than=leader)
    probe = KafkaConsumer(bootstrap_servers=bootstrap(cluster, survivor), group_id="doomed", enable_auto_commit=False)
    assert probe.committed(tp) is None, "the new coordinator still had the deleted group's offsets"
    probe.close()
    cluster.start(leader)
    wait_until(lambda: cluster.leader() is not None and len(cluster.running()) == 3, 30, "all three running")


def test_a_producer_auto_creates_through_a_follower(cluster):
    from kafka import KafkaProducer
    _leader, (follower, _) = followers(cluster)
    producer = KafkaProducer(bootstrap_servers=bootstrap(cluster, follower), acks=1)
    producer.send("auto-made", value=b"hello").get(timeout=30)
    producer.close()
    wait_until(lambda: all(metadata(cluster, i, ["auto-made"])[3]["auto-made"][0] == 0 for i in cluster.ids), 20,
               "the auto-created topic on every node")


# Every producer id a node of the cluster handed out in this file's tests.
HANDED_OUT = []

COORDINATOR_LOAD_IN_PROGRESS = 14


def producer_ids(cluster, i, count):
    """count InitProducerId v0 answers of node i on one connection, each
    retried while the node answers COORDINATOR_LOAD_IN_PROGRESS (its next
    block of ids on its way, as with Kafka); returns (ids, retries)."""
    ids, retries = [], 0
    with kw.Connection(cluster.client_ports[i]) as conn:
        while len(ids) < count:
            data = conn.request(22, 0, kw.string(None) + struct.pack(">i", 60000))
            _throttle, error, producer_id, epoch = struct.unpack_from(">ihqh", data, 0)
            if error == COORDINATOR_LOAD_IN_PROGRESS and retries < 200:
                retries += 1
                import time
                time.sleep(0.05)
                continue
            assert (error, epoch) == (0, 0), "InitProducerId on node %d: error %d" % (i, error)
            ids.append(producer_id)
    HANDED_OUT.extend(ids)
    return ids, retries


def test_idempotent_producers_get_ids_no_other_node_gives(cluster):
    for i in cluster.ids:
        producer_ids(cluster, i, 3)
    assert len(set(HANDED_OUT)) == len(HANDED_OUT), "producer ids handed out twice: %s" % HANDED_OUT


def test_a_node_moves_on_to_its_next_block_of_ids(cluster):
    """Each node hands out blocks of 1 000 ids the controller log gave it
    (Kafka's AllocateProducerIds and block size), asking for the next one
    before the current one runs out; 2 500 ids on a follower cross two
    blocks, every id once on every node."""
    _leader, (follower, _) = followers(cluster)
    ids, retries = producer_ids(cluster, follower, 2500)
    assert ids == sorted(ids), "a node's ids increase"
    assert len({n // 1000 for n in ids}) >= 3, "three blocks of 1 000 ids at least"
    assert len(set(HANDED_OUT)) == len(HANDED_OUT), "producer ids handed out twice"
    # The next block is asked for when a tenth of the current one is left:
    # nothing, or next to nothing, waits for it.
    assert retries <= 5, retries


def allocate_producer_ids(cluster, i, broker_id, body=None):
    """AllocateProducerIds v0 (a node asking the controller leader for a
    block) sent to node i's controller listener: (error, start, len)."""
    if body is None:
        body = struct.pack(">iq", broker_id, -1) + b"\x00"
    with kw.Connection(cluster.controller_ports[i]) as conn:
        data = conn.request(67, 0, body, flexible=True)
    _throttle, error, start, length = struct.unpack_from(">ihqi", data, 0)
    return error, start, length


def test_only_the_leader_gives_blocks_of_ids_and_only_to_voters(cluster):
    leader, (follower, _) = followers(cluster)
    assert allocate_producer_ids(cluster, follower, follower)[0] == 41  # NOT_CONTROLLER
    assert allocate_producer_ids(cluster, leader, 9)[0] == 102  # BROKER_ID_NOT_REGISTERED: not a voter
    error, start, length = allocate_producer_ids(cluster, leader, follower)
    assert (error, length) == (0, 1000)
    assert not set(range(start, start + length)) & set(HANDED_OUT), "a block overlapping ids handed out"
    # A truncated request closes its connection; the leader goes on giving blocks.
    with kw.Connection(cluster.controller_ports[leader]) as conn:
        conn.send(67, 0, struct.pack(">i", follower), flexible=True)
        assert conn.closed_by_peer()
    error, later, _length = allocate_producer_ids(cluster, leader, follower)
    assert error == 0 and later >= start + length
    ids, _retries = producer_ids(cluster, follower, 3)
    assert min(ids) >= later + 1000 or max(ids) < start, "the follower never uses a block it did not ask for"


@pytest.mark.parametrize("which", ["confluent-kafka", "franz-go", "kafkajs"])
def test_the_newest_clients_produce_and_consume_in_a_group_across_nodes(cluster, tmp_path, which):
    """confluent-kafka (its own librdkafka), franz-go and kafkajs, current
    releases: an idempotent producer bootstrapped from one node, a group
    member from another reading every record once and committing, then a
    second member run from the third node resuming after the commits. Each
    routes partitions by Metadata and finds the coordinator through
    FindCoordinator."""
    import types
    import newest_clients as nc
    if which == "confluent-kafka":
        client, env = [nc.provision("confluent-kafka %s (venv)" % nc.CONFLUENT_KAFKA, nc.venv_python),
                       os.path.join(nc.CLIENTS, "confluent_client.py")], None
    elif which == "franz-go":
        client, env = [nc.provision("franz-go %s" % nc.FRANZ_GO, nc.franz_go)], None
    else:
        node, env = nc.provision("kafkajs %s" % nc.KAFKAJS, nc.kafkajs)
        client = [node, os.path.join(nc.CLIENTS, "kafkajs", "kafkajs_client.js")]
    topic, group = "newest-" + which, "newest-group-" + which
    assert create_topic_at(cluster, 1, topic, 6) == (0, None)
    wait_until(lambda: all(metadata(cluster, i, [topic])[3][topic][0] == 0 for i in cluster.ids), 20,
               "the topic on every node")
    node_at = {i: types.SimpleNamespace(bootstrap=bootstrap(cluster, i)) for i in cluster.ids}
    a, b, c = cluster.ids
    nc.produce_step(client, env, node_at[a], str(tmp_path), which + " produce 1", topic, 0, 200)
    nc.consume_step(client, env, node_at[b], str(tmp_path), which + " consume 1", group, topic,
                    [nc.value_of(i) for i in range(200)])
    nc.produce_step(client, env, node_at[c], str(tmp_path), which + " produce 2", topic, 200, 60)
    nc.consume_step(client, env, node_at[c], str(tmp_path), which + " consume 2 (resumes)", group, topic,
                    [nc.value_of(i) for i in range(200, 260)])


def test_a_restarted_node_and_a_wiped_node_have_every_topic(cluster):
    assert create_topic_at(cluster, 1, "kept", 3) == (0, None)
    wait_until(lambda: all("kept" in metadata(cluster, i, ["kept"])[3] and
                           metadata(cluster, i, ["kept"])[3]["kept"][0] == 0 for i in cluster.ids), 20,
               "the topic on every node")
    _leader, (a, b) = followers(cluster)
    cluster.nodes[a].kill()
    cluster.start(a)
    cluster.nodes[b].kill()
    import shutil
    shutil.rmtree(cluster.nodes[b].data_dir)
    cluster.start(b, wiped=True)
    for i in (a, b):
        wait_until(lambda: metadata(cluster, i, ["kept"])[3]["kept"][0] == 0, 30, "node %d to know the topic" % i)
    ids = {metadata(cluster, i)[0] for i in cluster.ids}
    assert len(ids) == 1, "the wiped node adopted the cluster's id: %s" % ids
    # The committed offsets came with the leader's snapshot (or the log after it).
    wait_until(lambda: cluster.committed_offsets(b) == cluster.committed_offsets(_leader), 30,
               "the wiped node to hold the leader's committed offsets")
    assert ("across", "grouped") in {(g, t) for g, t, _p, _o in cluster.committed_offsets(b)}
    # Producer ids: the wiped node's blocks come from the controller log,
    # past every block it or another node had; the restarted node skips
    # what was left of its last block.
    before = set(HANDED_OUT)
    for i in (b, a, _leader):
        ids, _retries = producer_ids(cluster, i, 5)
        assert not before & set(ids), "node %d handed out ids again: %s" % (i, sorted(before & set(ids)))
    assert len(set(HANDED_OUT)) == len(HANDED_OUT)


def snapshots(cluster, i):
    return sorted(os.listdir(os.path.join(cluster.nodes[i].data_dir, "controller", "snapshots")))


def test_every_node_snapshots_its_metadata_and_its_log_starts_there(cluster):
    """After more than a few KiB of records each node keeps one snapshot
    (KRaft's file name: end offset, epoch) and its controller log starts at
    it; a restarted node starts from it with everything it held."""
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata
    leader = cluster.wait_for_leader(timeout=30)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap(cluster, leader), group_id="snapshotted",
                             enable_auto_commit=False)
    tp = TopicPartition("grouped", 2)
    for n in range(3 * SNAPSHOT_BYTES // 40):
        consumer.commit({tp: OffsetAndMetadata(n + 1, "")})
    consumer.close()
    end = cluster.quorum(leader)["high_watermark"]
    def snapshotted(i):
        names = snapshots(cluster, i)
        if len(names) != 1 or not names[0].endswith(".checkpoint"):
            return False
        start_file = os.path.join(cluster.nodes[i].data_dir, "controller", "__cluster_metadata-0",
                                  "log-start-offset.checkpoint")
        return os.path.exists(start_file) and int(names[0].split("-")[0]) > 0
    wait_until(lambda: all(snapshotted(i) for i in cluster.ids), 30, "one snapshot per node")
    for i in cluster.ids:
        offset = int(snapshots(cluster, i)[0].split("-")[0])
        assert 0 < offset <= end, (i, offset, end)
    follower = next(i for i in cluster.ids if i != leader)
    wait_until(lambda: cluster.committed_offsets(follower) == cluster.committed_offsets(leader), 20,
               "the follower to have applied every commit")
    before = cluster.committed_offsets(follower)
    cluster.nodes[follower].kill()
    cluster.start(follower)
    wait_until(lambda: cluster.leader() is not None and len(cluster.running()) == 3, 30, "all three running")
    assert cluster.committed_offsets(follower) == before
    assert metadata(cluster, follower, ["grouped"])[3]["grouped"][0] == 0
    # The snapshot carries where the next block of producer ids starts.
    ids, _retries = producer_ids(cluster, follower, 3)
    assert not set(ids) & set(HANDED_OUT[:-3]), "ids handed out again after a restart from a snapshot"


def test_a_node_behind_the_leaders_snapshot_loads_it_over_what_it_held(cluster):
    """A node down while topics were deleted, extended and reconfigured, and
    while the others snapshotted past its log end: it catches up from the
    leader's snapshot, which removes the deleted topic, adds the partitions
    and sets the config on what it held, and its offsets are the leader's."""
    from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
    from kafka.admin import ConfigResource, ConfigResourceType, NewPartitions
    from kafka.structs import OffsetAndMetadata
    leader, (down, _other) = followers(cluster)
    assert create_topic_at(cluster, leader, "doomed-later", 2) == (0, None)
    wait_until(lambda: all("doomed-later" in metadata(cluster, i, ["doomed-later"])[3] and
                           metadata(cluster, i, ["doomed-later"])[3]["doomed-later"][0] == 0 for i in cluster.ids),
               20, "the topic on every node")
    cluster.nodes[down].kill()
    start_before = int(snapshots(cluster, leader)[0].split("-")[0])
    admin = KafkaAdminClient(bootstrap_servers=bootstrap(cluster, leader), request_timeout_ms=20000)
    admin.delete_topics(["doomed-later"])
    admin.create_partitions({"configured": NewPartitions(4)})
    admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "configured", {"retention.ms": "654321"})])
    admin.close()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap(cluster, leader), group_id="while-down",
                             enable_auto_commit=False)
    for n in range(3 * SNAPSHOT_BYTES // 40):
        consumer.commit({TopicPartition("grouped", 3): OffsetAndMetadata(n + 1, "")})
    consumer.close()
    wait_until(lambda: int(snapshots(cluster, leader)[0].split("-")[0]) > start_before, 20,
               "the leader to snapshot past the stopped node")
    cluster.start(down)
    node = cluster.nodes[down]
    wait_until(lambda: "fetching its snapshot" in node.log_text() and "loaded the snapshot" in node.log_text(), 30,
               "the restarted node to load the leader's snapshot")
    wait_until(lambda: "doomed-later" not in metadata(cluster, down)[3], 20, "the deleted topic gone there")
    assert len(metadata(cluster, down, ["configured"])[3]["configured"][1]) == 4, "the added partitions"
    assert topic_config_at(cluster, down, "configured", "retention.ms") == "654321", "the new config"
    wait_until(lambda: cluster.committed_offsets(down) == cluster.committed_offsets(leader), 20,
               "the leader's committed offsets")
    assert ("while-down", "grouped", 3, 3 * SNAPSHOT_BYTES // 40) in cluster.committed_offsets(down)
