"""Restarts in the middle of a workload. Everything acknowledged with
acks=all before a restart is still there afterwards, at the same offsets,
and new records continue the offsets:
  1. kafka-python producer and consumer keep working across a SIGTERM
     restart (clean stop, exit code 0) on the same port;
  2. the same across a SIGKILL restart;
  3. SIGKILL while a raw client is producing acks=all batches: every
     acknowledged batch is there byte for byte, the log holds exactly a
     prefix of what was sent (no torn or foreign batch), and offsets go on
     from its end."""

import signal
import threading
import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition

import pytest

import eddy_fixture
import kafka_wire

TOPIC = "restart"
PARTITIONS = 2
PER_PHASE = 3000


class Clients:
    """A producer and an assigned consumer that live across restarts (they
    are re-created only when the broker had to change port)."""

    def __init__(self, broker):
        self.broker = broker
        self.port = None
        self.producer = None
        self.consumer = None
        self.tps = [TopicPartition(TOPIC, p) for p in range(PARTITIONS)]
        self.received = []

    def ensure(self):
        if self.port == self.broker.port:
            return
        self.close()
        self.port = self.broker.port
        # retries: a request that meets a closed connection is sent again;
        # no request is in flight at a restart, so no duplicates arise.
        self.producer = KafkaProducer(bootstrap_servers=self.broker.bootstrap, acks="all", retries=5,
                                      linger_ms=5, reconnect_backoff_ms=50, max_in_flight_requests_per_connection=1)
        self.consumer = KafkaConsumer(bootstrap_servers=self.broker.bootstrap, group_id=None,
                                      enable_auto_commit=False, fetch_max_wait_ms=200, reconnect_backoff_ms=50)
        self.consumer.assign(self.tps)
        next_offsets = {}
        for tp in self.tps:
            next_offsets[tp] = 1 + max([r.offset for r in self.received if r.partition == tp.partition], default=-1)
            self.consumer.seek(tp, next_offsets[tp])

    def produce(self, start, count):
        futures = [self.producer.send(TOPIC, key=b"k%d" % i, value=b"message %d" % i, partition=i % PARTITIONS)
                   for i in range(start, start + count)]
        self.producer.flush(timeout=60)
        return [(f.get(timeout=30).partition, f.get(timeout=30).offset) for f in futures]

    def consume(self, want, timeout=60):
        got = []
        deadline = time.monotonic() + timeout
        while len(got) < want and time.monotonic() < deadline:
            for records in self.consumer.poll(timeout_ms=300).values():
                got.extend(records)
        self.received.extend(got)
        return got

    def close(self):
        if self.producer is not None:
            self.producer.close(timeout=10)
            self.consumer.close()


def expected_offsets(start, count):
    """Message i goes to partition i % 2 at offset i // 2."""
    return [(i % PARTITIONS, i // PARTITIONS) for i in range(start, start + count)]


def phase(clients, name, start):
    clients.ensure()
    acked = clients.produce(start, PER_PHASE)
    assert acked == expected_offsets(start, PER_PHASE), \
        "%s: acknowledged offsets continue from %d per partition" % (name, start // PARTITIONS)
    got = clients.consume(PER_PHASE)
    assert sorted((r.partition, r.offset, r.value) for r in got) == \
        sorted((i % PARTITIONS, i // PARTITIONS, b"message %d" % i) for i in range(start, start + PER_PHASE)), \
        "%s: the consumer receives the new records" % name


def check_everything(broker, name, total):
    """A fresh consumer reads the whole topic: exactly messages 0..total-1."""
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=None, enable_auto_commit=False,
                             fetch_max_wait_ms=200)
    tps = [TopicPartition(TOPIC, p) for p in range(PARTITIONS)]
    consumer.assign(tps)
    consumer.seek_to_beginning()
    got = []
    deadline = time.monotonic() + 60
    while len(got) < total and time.monotonic() < deadline:
        for records in consumer.poll(timeout_ms=300).values():
            got.extend(records)
    ends = consumer.end_offsets(tps)
    consumer.close()
    assert [ends[tp] for tp in tps] == [total // PARTITIONS] * PARTITIONS, "%s: end offsets" % name
    assert sorted((r.partition, r.offset, r.key, r.value) for r in got) == \
        sorted((i % PARTITIONS, i // PARTITIONS, b"k%d" % i, b"message %d" % i) for i in range(total)), \
        "%s: all %d records, each at its offset" % (name, total)


def crash_while_producing(broker):
    """SIGKILL in the middle of a stream of acks=all produce requests."""
    topic = "crash"
    sent = []    # batches in send order
    acked = []   # (base offset, batch) acknowledged
    failure = []

    def produce_stream():
        try:
            with kafka_wire.Connection(broker.port) as conn:
                for j in range(100000):
                    batch = kafka_wire.record_batch(
                        [(b"b%d-r%d" % (j, r), (b"batch %d record %d " % (j, r)) * 20, [("j", b"%d" % j)])
                         for r in range(5)])
                    sent.append(batch)
                    error_code, base_offset = kafka_wire.produce(conn, topic, 0, batch)
                    if error_code:
                        failure.append("error %d at batch %d" % (error_code, j))
                        return
                    acked.append((base_offset, batch))
        except (kafka_wire.Closed, OSError):
            return  # the broker was killed

    with kafka_wire.Connection(broker.port) as conn:
        from kafka.protocol.admin import CreateTopicsResponse
        r = conn.request(19, 1, kafka_wire.create_topics_v1(topic, 1), response_class=CreateTopicsResponse[1])
        assert r.topic_errors[0][1] == 0, "create topic crash"
    thread = threading.Thread(target=produce_stream)
    thread.start()
    eddy_fixture.wait_until(lambda: len(acked) >= 300 or failure or not thread.is_alive(), 60,
                            "300 acknowledged batches")
    rc = broker.kill()
    thread.join(30)
    assert failure == [], "no produce error before the kill"
    assert rc == -signal.SIGKILL, "SIGKILL exit code"
    assert [a[0] for a in acked] == [5 * j for j in range(len(acked))], "acknowledged base offsets are 0, 5, 10, ..."
    broker.start()
    with kafka_wire.Connection(broker.port) as conn:
        stored = kafka_wire.fetch_all(conn, topic, 0)
        assert len(acked) <= len(stored) <= len(sent), \
            "after SIGKILL: at least the %d acknowledged batches are stored (%d, sent %d)" \
            % (len(acked), len(stored), len(sent))

        def unpatched(batch):
            # baseOffset and partitionLeaderEpoch are the broker's to set.
            return b"\0" * 8 + batch[8:12] + b"\0" * 4 + batch[16:]

        prefix_ok = all(unpatched(data) == sent[j] and base == 5 * j for j, (base, _last, data) in enumerate(stored))
        assert prefix_ok, "after SIGKILL: the log is exactly a prefix of the sent batches, byte for byte"
        acked_ok = all(j < len(stored) and stored[j][0] == off and unpatched(stored[j][2]) == batch
                       for j, (off, batch) in enumerate(acked))
        assert acked_ok, "after SIGKILL: every acknowledged batch at its acknowledged offset"
        error_code, base_offset = kafka_wire.produce(conn, topic, 0,
                                                     kafka_wire.record_batch([(b"after", b"restart", [])]))
        assert (error_code, base_offset) == (0, 5 * len(stored)), \
            "after SIGKILL: the next batch continues the offsets"
    return topic, 5 * len(stored) + 1


@pytest.fixture(scope="module")
def broker(eddy):
    return eddy


@pytest.fixture(scope="module")
def crash(broker):
    """The crash topic after a SIGKILL while producing (crash_while_producing,
    with its checks): {"topic": name, "end": its end offset}."""
    topic, end = crash_while_producing(broker)
    return {"topic": topic, "end": end}


@pytest.fixture(scope="module")
def kept_data(broker):
    """TOPIC with messages 0..3*PER_PHASE-1, produced and consumed by
    kafka-python across a SIGTERM and a SIGKILL restart, each phase checked
    (acknowledged offsets, the consumer receives the new records). Returns
    the number of messages."""
    from kafka.admin import KafkaAdminClient, NewTopic
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)])
    admin.close()

    clients = Clients(broker)
    try:
        phase(clients, "before any restart", 0)

        old_port = broker.port
        assert broker.restart(signal.SIGTERM) == 0, "SIGTERM: exit code 0"
        print("restarted on %s port" % ("the same" if broker.port == old_port else "a new"))
        phase(clients, "after SIGTERM restart", PER_PHASE)

        assert broker.restart(signal.SIGKILL) == -signal.SIGKILL, "SIGKILL: exit code"
        phase(clients, "after SIGKILL restart", 2 * PER_PHASE)
    finally:
        clients.close()
    return 3 * PER_PHASE


def test_restarts_keep_the_data(broker, kept_data):
    check_everything(broker, "after two restarts", kept_data)


def test_sigkill_while_producing(broker, crash):
    """SIGKILL in the middle of acks=all produce requests (fixture `crash`,
    crash_while_producing: its checks run there)."""
    assert crash["end"] > 0, "the crash topic continues after the SIGKILL"


def test_stop_answers_a_parked_fetch(broker, kept_data, crash):
    """One more clean restart, with a long-poll fetch parked at the end of
    the topic: the broker answers it and stops at once (not after
    max_wait_ms). Afterwards everything, including the crash topic, is
    there."""
    parked = kafka_wire.Connection(broker.port)
    # ApiVersions and the fetch travel in one segment: once ApiVersions is
    # answered the broker has read the fetch too, and parked it.
    fetch = kafka_wire.fetch_v4(TOPIC, 0, kept_data // PARTITIONS, max_wait_ms=60000, min_bytes=1)
    parked.send_raw(kafka_wire.frame(kafka_wire.request_header(18, 0, 1)) +
                    kafka_wire.frame(kafka_wire.request_header(1, 4, 2) + fetch))
    cid = 2
    assert parked.receive()[0] == 1, "ApiVersions before the parked fetch answered"
    started = time.monotonic()
    assert broker.restart(signal.SIGTERM) == 0, "final SIGTERM with a parked fetch: exit code 0"
    try:
        got_cid, _ = parked.receive()
        answered = got_cid == cid
    except kafka_wire.Closed:
        answered = False
    parked.close()
    assert answered, "the parked fetch was answered at shutdown"
    assert time.monotonic() - started < 30, \
        "the stop did not wait for the fetch's max_wait_ms: %r" % (time.monotonic() - started,)
    check_everything(broker, "after the final restart", kept_data)
    with kafka_wire.Connection(broker.port) as conn:
        stored = kafka_wire.fetch_all(conn, crash["topic"], 0)
        assert (stored[-1][1] + 1 if stored else 0) == crash["end"], \
            "after the final restart: the crash topic ends at %d" % crash["end"]

