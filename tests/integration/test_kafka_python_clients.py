"""kafka-python's producer and consumer against Eddy: acks=all with each
compression codec (gzip, lz4, snappy, zstd, none); a manually assigned
consumer (no group) reads back keys, values, headers and timestamps, seeks to
the middle, to the beginning and to the end, is woken by new data while
long-polling, and finds offsets by timestamp."""

import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition

import pytest


COUNT = 1500
CODECS = ["gzip", "lz4", "snappy", "zstd", None]


def poll_records(consumer, want, timeout=30):
    """Polls until `want` records arrived (or the deadline passes)."""
    got = []
    deadline = time.monotonic() + timeout
    while len(got) < want and time.monotonic() < deadline:
        for records in consumer.poll(timeout_ms=500).values():
            got.extend(records)
    return got


@pytest.fixture(scope="module")
def broker(eddy):
    return eddy


BASE_TS = int(time.time() * 1000) - 3_600_000


@pytest.mark.parametrize("codec", CODECS, ids=[c or "none" for c in CODECS])
def test_codec(broker, codec):
    base_ts = BASE_TS + CODECS.index(codec) * 1_000_000
    name = codec or "none"
    topic = "kp-%s" % name
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all", compression_type=codec,
                             linger_ms=5, batch_size=32768, retries=0)
    expected = []
    futures = []
    for i in range(COUNT):
        key = ("k%d" % (i % 17)).encode()
        value = ("%s value %d " % (name, i)).encode() * (1 + i % 7)
        headers = [("seq", str(i).encode()), ("codec", name.encode())]
        if i % 10 == 0:
            headers.append(("empty", b""))
        ts = base_ts + i * 10
        expected.append((key, value, headers, ts))
        futures.append(producer.send(topic, key=key, value=value, headers=headers, timestamp_ms=ts, partition=0))
    producer.flush(timeout=60)
    metadata = [f.get(timeout=30) for f in futures]
    producer.close(timeout=10)
    assert [m.offset for m in metadata] == list(range(COUNT)), \
        "%s: acknowledged offsets are 0..%d in send order" % (name, COUNT - 1)
    assert all(m.timestamp == e[3] for m, e in zip(metadata, expected)), \
        "%s: acknowledged timestamps are the producer's" % name

    tp = TopicPartition(topic, 0)
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=None, enable_auto_commit=False,
                             fetch_max_wait_ms=200, max_poll_records=5000)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    records = poll_records(consumer, COUNT)
    got = [(r.key, r.value, list(r.headers), r.timestamp) for r in records]
    assert len(got) == COUNT, "%s: %d records back" % (name, COUNT)
    assert [r.offset for r in records] == list(range(COUNT)), "%s: offsets 0..N-1" % name
    mismatch = [(i, g, e) for i, (g, e) in enumerate(zip(got, expected)) if g != e]
    assert mismatch[:1] == [], "%s: keys, values, headers, timestamps identical" % name
    assert all(r.timestamp_type == 0 for r in records), "%s: timestamp type is CreateTime" % name

    mid = COUNT // 2 + 3
    consumer.seek(tp, mid)
    records = poll_records(consumer, 10)
    assert records and records[0].offset == mid and records[0].value == expected[mid][1], \
        "%s: %s" % ("%s: seek(%d) starts there" % (name, mid), records[0].offset if records else "nothing")

    consumer.seek_to_beginning(tp)
    assert consumer.position(tp) == 0, "%s: position after seek_to_beginning" % name
    consumer.seek_to_end(tp)
    assert consumer.position(tp) == COUNT, "%s: position after seek_to_end" % name
    assert consumer.end_offsets([tp]) == {tp: COUNT}, "%s: end_offsets" % name
    assert consumer.beginning_offsets([tp]) == {tp: 0}, "%s: beginning_offsets" % name

    # At the end, a poll finds nothing; a new record wakes the consumer.
    assert consumer.poll(timeout_ms=300) == {}, "%s: nothing to read at the end" % name
    late = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all", compression_type=codec)
    late.send(topic, key=b"late", value=b"after seek_to_end", partition=0).get(timeout=30)
    late.close(timeout=10)
    records = poll_records(consumer, 1)
    assert len(records) == 1 and records[0].offset == COUNT and records[0].key == b"late", \
        "%s: %s" % ("%s: the record produced after seek_to_end arrives" % name, [(r.offset, r.key) for r in records])

    # Offsets by timestamp: no record before the answer is at or after the
    # asked time, and the answer is not after the first such record (Eddy
    # answers with the batch's base offset for compressed batches).
    for k in (0, 1, COUNT // 3, COUNT - 1):
        target = expected[k][3]
        found = consumer.offsets_for_times({tp: target})[tp]
        ok = found is not None and found.offset <= k and all(e[3] < target for e in expected[:found.offset])
        if codec is None:
            ok = ok and found.offset == k and found.timestamp == target
        assert ok, "%s: %s" % ("%s: offsets_for_times(ts of record %d)" % (name, k), found)
    after = consumer.offsets_for_times({tp: base_ts + COUNT * 10 + 10 ** 9})[tp]
    assert after is None, "%s: offsets_for_times after the newest record" % name
    consumer.close()


def test_large_records(broker):

    # A record larger than the default batch size, sent alone.
    topic = "kp-large"
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all", compression_type="gzip",
                             max_request_size=1_000_000)
    big = bytes(range(256)) * 3000  # 768000 bytes, compresses well
    incompressible = __import__("os").urandom(900_000)
    producer.send(topic, key=b"big", value=big, partition=0)
    producer.send(topic, key=b"random", value=incompressible, partition=0)
    producer.flush(timeout=60)
    producer.close(timeout=10)
    tp = TopicPartition(topic, 0)
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=None, enable_auto_commit=False,
                             fetch_max_wait_ms=200)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    records = poll_records(consumer, 2)
    assert [(r.key, r.value) for r in records] == [(b"big", big), (b"random", incompressible)], \
        "large records (768 KB gzip, 900 KB incompressible) come back intact: %r" \
        % ([(r.key, len(r.value)) for r in records],)
    consumer.close()


def test_acks_0(broker):
    # acks=0: no response at all; the records still arrive.
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks=0, compression_type="lz4")
    for i in range(200):
        producer.send("kp-acks0", value=b"fire and forget %d" % i, partition=0)
    producer.flush(timeout=30)
    producer.close(timeout=10)
    tp = TopicPartition("kp-acks0", 0)
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=None, enable_auto_commit=False,
                             fetch_max_wait_ms=200)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    records = poll_records(consumer, 200)
    assert [r.value for r in records] == [b"fire and forget %d" % i for i in range(200)], \
        "acks=0: all 200 records stored in order"
    consumer.close()


def test_log_append_time(broker):
    # A LogAppendTime topic: the broker stamps its own time into compressed
    # batches (rewriting maxTimestamp and the CRC) and reports it in the ack.
    from kafka.admin import KafkaAdminClient, NewTopic
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    admin.create_topics([NewTopic("kp-logtime", 1, 1, topic_configs={"message.timestamp.type": "LogAppendTime"})])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all", compression_type="gzip")
    before = int(time.time() * 1000)
    futures = [producer.send("kp-logtime", value=b"stamped %d" % i, timestamp_ms=1000 + i, partition=0)
               for i in range(100)]
    producer.flush(timeout=30)
    after = int(time.time() * 1000)
    acked = [f.get(timeout=10) for f in futures]
    producer.close(timeout=10)
    assert all(before - 1000 <= m.timestamp <= after + 1000 for m in acked), \
        "LogAppendTime: acks carry the broker's time: %r" % ([m.timestamp for m in acked[:3]],)
    tp = TopicPartition("kp-logtime", 0)
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=None, enable_auto_commit=False,
                             fetch_max_wait_ms=200, check_crcs=True)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    records = poll_records(consumer, 100)
    assert (len(records) == 100 and all(r.timestamp_type == 1 and r.timestamp == a.timestamp
                                             and r.value == b"stamped %d" % i
                                             for i, (r, a) in enumerate(zip(records, acked)))), \
        "LogAppendTime: records read back (CRC valid) with type LogAppendTime and the acked time: %r" \
        % ([(r.timestamp_type, r.timestamp) for r in records[:3]],)
    consumer.close()
