"""The batch a partition group's new leader writes at the start of its
epoch (issue #16: Raft's "commit an entry of your own term first"), read by
every client of the test matrix. Two candidates (src/raft/README.md,
"Partition groups"), each appended by append_leader_change (--program) to
a stopped eddy's partition directory between two halves of records:
  control  KRaft's LeaderChange control batch: clients are meant to skip
           control batches, and all of them do but Debian's kafka-python
           2.0.2, which hands its record to the application as a message
           (it skips no control batch: test_kafka_python_2_0_delivers_...)
           -- so partition groups do not use it;
  empty    a data batch of no records spanning one offset, what Kafka's
           compaction leaves of a batch whose records all went: every
           client reads past it, and a consumer whose last batch it is
           still moves its position past it.

One eddy. For each kind a topic lc-KIND (1 partition): confluent-kafka
(newest) produces 50 records (v-000000..v-000049), eddy stops, the batch
goes in at offset 50 (epoch 0: a single node's partitions are all in epoch
0, which Metadata says too), eddy starts, 50 more records follow (offsets
51..100). Then each client reads the partition from the start: every value
once, in order, offset 50 never delivered, and a group member's committed
position is the log end (101):
  - librdkafka 2.0 (Debian's kcat), kafka-python 2.0.2 (Debian's, in this
    process), Kafka's Java consumer 4.x (kafka_fixture.dump_records);
  - confluent-kafka, kafka-python, franz-go and kafkajs, the newest
    releases (newest_clients.consume_step, each in its own group).
Topic lc-trailing ends with an empty batch (nothing after it): kcat, kafka-
python 2.0.2 and the Java consumer must reach the log end (51), not stall
at 50."""

import os
import subprocess

import pytest

import eddy_fixture
import kafka_fixture
import newest_clients as nc

SEGMENT_BYTES = 1 << 20
BEFORE, AFTER = 50, 50
SPECIAL = BEFORE  # the offset of the epoch's first batch
VALUES = [nc.value_of(i) for i in range(BEFORE + AFTER)]
OFFSETS = list(range(0, BEFORE)) + list(range(BEFORE + 1, BEFORE + 1 + AFTER))
END = BEFORE + 1 + AFTER
KINDS = ("control", "empty")
TRAILING = "lc-trailing"


@pytest.fixture(scope="module")
def confluent():
    python = nc.provision("confluent-kafka %s (venv)" % nc.CONFLUENT_KAFKA, nc.venv_python)
    return [python, os.path.join(nc.CLIENTS, "confluent_client.py")]


@pytest.fixture(scope="module")
def topics(eddy, confluent, program):
    """lc-control and lc-empty with their batch between the two halves,
    lc-trailing with an empty batch last."""
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic
    names = ["lc-" + k for k in KINDS] + [TRAILING]
    admin = KafkaAdminClient(bootstrap_servers=eddy.bootstrap, request_timeout_ms=10000)
    try:
        admin.create_topics([NewTopic(n, 1, 1, topic_configs={"segment.bytes": str(SEGMENT_BYTES)}) for n in names])
    finally:
        admin.close()
    for name in names:
        nc.produce_step(confluent, None, eddy, eddy.tmp, "produce before " + name, name, 0, BEFORE)
    port = eddy.port
    assert eddy.stop() == 0
    for name, kind in [("lc-" + k, k) for k in KINDS] + [(TRAILING, "empty")]:
        appended = subprocess.run([program, os.path.join(eddy.data_dir, name + "-0"), str(SEGMENT_BYTES), "0", kind,
                                   "1", "1", "2", "3"], capture_output=True, text=True, timeout=60)
        assert appended.returncode == 0, appended.stderr
        assert int(appended.stdout.strip()) == SPECIAL, "%s: the %s batch is at offset %d" % (name, kind, SPECIAL)
    eddy.start(port=port)
    for kind in KINDS:
        nc.produce_step(confluent, None, eddy, eddy.tmp, "produce after " + kind, "lc-" + kind, BEFORE, AFTER)
        assert nc.end_offsets(eddy, "lc-" + kind, 1) == {0: END}
    assert nc.end_offsets(eddy, TRAILING, 1) == {0: BEFORE + 1}
    return {k: "lc-" + k for k in KINDS}


def assert_read(label, records, values=VALUES, offsets=OFFSETS):
    """records: [(offset, value)] as a client delivered them."""
    assert [v for _o, v in records] == values, "%s: every value once, in order" % label
    assert [o for o, _v in records] == offsets, "%s: the offsets, %d not among them" % (label, SPECIAL)


def kcat_read(eddy, topic):
    """-e: kcat exits once it reached the log end (it would hang at a
    batch it cannot read past)."""
    out = subprocess.run(["kcat", "-C", "-b", eddy.bootstrap, "-t", topic, "-p", "0", "-o", "beginning", "-e",
                          "-q", "-f", "%o %s\n"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return [(int(o), v) for o, v in (line.split(" ", 1) for line in out.stdout.splitlines())]


def kafka_python_read(eddy, topic, group, end):
    """Debian's kafka-python 2.0.2 in this process: every record until its
    position reaches end (or 15 s), then commits."""
    import time
    from kafka import KafkaConsumer, TopicPartition
    consumer = KafkaConsumer(bootstrap_servers=eddy.bootstrap, group_id=group, enable_auto_commit=False,
                             auto_offset_reset="earliest", fetch_max_wait_ms=100)
    tp = TopicPartition(topic, 0)
    records = []
    try:
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        deadline = time.monotonic() + 15
        while consumer.position(tp) < end and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=200).values():
                records += [(m.offset, m.value.decode("utf-8", "replace")) for m in batch]
        position = consumer.position(tp)
        consumer.commit()
    finally:
        consumer.close()
    return records, position


@pytest.mark.parametrize("kind", KINDS)
def test_librdkafka_2_0_kcat(eddy, topics, kind):
    assert_read("kcat (librdkafka 2.0), %s batch" % kind, kcat_read(eddy, topics[kind]))


def test_kafka_python_2_0_reads_past_an_empty_batch(eddy, topics):
    records, position = kafka_python_read(eddy, topics["empty"], "lc-kafka-python-debian", END)
    assert_read("kafka-python 2.0 (Debian), empty batch", records)
    assert position == END, "kafka-python 2.0: its position after the last record is the log end"


def test_kafka_python_2_0_delivers_a_leader_change_control_batch(eddy, topics):
    """Why partition groups do not use KRaft's LeaderChange batch: Debian's
    kafka-python 2.0.2 skips no control batch (kafka/consumer/fetcher.py
    _unpack_message_set), so its application would get the
    LeaderChangeMessage as a record after every leader change. (The same
    client hands transaction markers to applications; kafka-python 3.0
    skips control batches, test_newest_client_in_a_group.)"""
    records, _position = kafka_python_read(eddy, topics["control"], "lc-kafka-python-debian-control", END)
    assert [o for o, _v in records] == list(range(END)), \
        "kafka-python 2.0.2 delivers the control batch's record at offset %d too" % SPECIAL
    assert [v for o, v in records if o != SPECIAL] == VALUES


@pytest.mark.parametrize("kind", KINDS)
def test_java_consumer(eddy, topics, kind):
    records = kafka_fixture.dump_records(eddy.bootstrap, {topics[kind]: 1}, eddy.tmp)
    assert_read("Java consumer, %s batch" % kind, [(r["offset"], r["value"].decode()) for r in records])


NEWEST = {
    "confluent-kafka": lambda: ([nc.venv_python(), os.path.join(nc.CLIENTS, "confluent_client.py")], None),
    "kafka-python": lambda: ([nc.venv_python(), os.path.join(nc.CLIENTS, "kafka_python_client.py")], None),
    "franz-go": lambda: ([nc.franz_go()], None),
    "kafkajs": lambda: (lambda node_env: ([node_env[0], os.path.join(nc.CLIENTS, "kafkajs", "kafkajs_client.js")],
                                          node_env[1]))(nc.kafkajs()),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", sorted(NEWEST))
def test_newest_client_in_a_group(eddy, topics, name, kind):
    client, env = nc.provision(name, NEWEST[name])
    group = "lc-%s-%s" % (name, kind)
    result = nc.consume_step(client, env, eddy, eddy.tmp, "%s, %s batch" % (name, kind), group, topics[kind], VALUES)
    assert_read("%s, %s batch" % (name, kind), [(r[2], r[3]) for r in result["records"]])
    assert nc.committed_offsets(eddy, group) == {(topics[kind], 0): END}, \
        "%s: the committed position is the log end, past the %s batch" % (name, kind)


def test_an_empty_batch_at_the_end_is_read_past(eddy, topics):
    values, offsets = VALUES[:BEFORE], list(range(BEFORE))
    assert_read("kcat, trailing empty batch", kcat_read(eddy, TRAILING), values, offsets)
    records, position = kafka_python_read(eddy, TRAILING, "lc-trailing-kafka-python", BEFORE + 1)
    assert_read("kafka-python 2.0, trailing empty batch", records, values, offsets)
    assert position == BEFORE + 1, "kafka-python 2.0 moves past a trailing empty batch"
    records = kafka_fixture.dump_records(eddy.bootstrap, {TRAILING: 1}, eddy.tmp)
    assert_read("Java consumer, trailing empty batch", [(r["offset"], r["value"].decode()) for r in records],
                values, offsets)


def test_no_connection_closed_as_bad_request(eddy, topics):
    eddy_fixture.assert_no_closed_connection(eddy)
