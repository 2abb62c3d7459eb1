"""kcat (librdkafka) against Eddy: 100,000 keyed messages produced to a
3-partition topic come back identical, each key in one partition, every
partition in production order with contiguous offsets from 0."""

import subprocess

import pytest
from kafka.protocol.admin import CreateTopicsResponse

import kafka_wire

TOPIC = "kcat-keyed"
PARTITIONS = 3
COUNT = 100_000
KEYS = 997


def kcat(broker, *args, stdin=None, timeout=120):
    return subprocess.run(["kcat", "-b", broker.bootstrap] + list(args), input=stdin, capture_output=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def produced(eddy):
    """The topic, created and filled by kcat: [(key, value)] in production order."""
    with kafka_wire.Connection(eddy.port) as conn:
        response = conn.request(19, 1, kafka_wire.create_topics_v1(TOPIC, PARTITIONS),
                                response_class=CreateTopicsResponse[1])
        assert [(t[0], t[1]) for t in response.topic_errors] == [(TOPIC, 0)], "create topic with 3 partitions"
    listing = kcat(eddy, "-L", "-t", TOPIC)
    assert b"3 partitions" in listing.stdout, "kcat -L sees 3 partitions: %r" % (listing.stdout + listing.stderr)
    produced = []
    lines = []
    for i in range(COUNT):
        key = "key-%03d" % (i % KEYS)
        value = "value-%06d-%s" % (i, "x" * (i % 50))
        produced.append((key, value))
        lines.append("%s\t%s" % (key, value))
    result = kcat(eddy, "-P", "-t", TOPIC, "-K", "\t", "-X", "acks=all", "-X", "linger.ms=20",
                  stdin=("\n".join(lines) + "\n").encode())
    assert result.returncode == 0, "kcat producer exit code: %r" % result.stderr[-2000:]
    assert b"fail" not in result.stderr.lower(), "kcat producer reports a delivery failure: %r" % result.stderr[-2000:]
    return produced


@pytest.fixture(scope="module")
def consumed(eddy, produced):
    """{partition: [[partition, offset, key, value]]} read back by kcat."""
    consumed = {}
    for p in range(PARTITIONS):
        out = kcat(eddy, "-C", "-t", TOPIC, "-p", str(p), "-o", "beginning", "-e", "-f", "%p\t%o\t%k\t%s\n")
        assert out.returncode == 0, "kcat consumer exit code, partition %d" % p
        consumed[p] = [line.split("\t") for line in out.stdout.decode().splitlines()]
    return consumed


@pytest.mark.parametrize("p", range(PARTITIONS))
def test_partition_in_production_order(produced, consumed, p):
    rows = consumed[p]
    index_of = {value: i for i, (_, value) in enumerate(produced)}
    assert [int(r[1]) for r in rows] == list(range(len(rows))), "partition %d: offsets contiguous from 0" % p
    assert all(r[0] == str(p) for r in rows), "partition %d: partition field" % p
    order = [index_of.get(r[3], -1) for r in rows]
    assert -1 not in order and all(a < b for a, b in zip(order, order[1:])), \
        "partition %d: messages in production order" % p
    assert len(rows) > COUNT // 5, "partition %d: holds a fair share (%d messages)" % (p, len(rows))


def test_keys_and_values_as_produced(produced, consumed):
    index_of = {value: i for i, (_, value) in enumerate(produced)}
    key_partition = {}
    key_errors = []
    for p, rows in consumed.items():
        for r in rows:
            i = index_of.get(r[3])
            if i is None or produced[i][0] != r[2]:
                key_errors.append(r)
            if key_partition.setdefault(r[2], p) != p:
                key_errors.append(("key in two partitions", r))
    assert key_errors[:5] == [], "every key and value exactly as produced"
    all_values = sorted(r[3] for rows in consumed.values() for r in rows)
    assert len(all_values) == COUNT, "consumed count"
    assert all_values == sorted(v for _, v in produced), "consumed set equals produced set, no duplicates"
    assert len(key_partition) == KEYS, "every key seen"


def test_consumer_from_the_middle(eddy, consumed):
    mid = len(consumed[0]) // 2
    out = kcat(eddy, "-C", "-t", TOPIC, "-p", "0", "-o", str(mid), "-c", "5", "-f", "%o\t%k\t%s\n")
    rows = [line.split("\t") for line in out.stdout.decode().splitlines()]
    assert rows == [[str(mid + j), consumed[0][mid + j][2], consumed[0][mid + j][3]] for j in range(5)], \
        "kcat -o %d -c 5 on partition 0" % mid


@pytest.mark.parametrize("p", range(PARTITIONS))
def test_end_offsets_are_message_counts(eddy, consumed, p):
    """Offsets as kcat's query mode sees them (ListOffsets)."""
    q = kcat(eddy, "-Q", "-t", "%s:%d:-1" % (TOPIC, p))
    assert ("%s [%d] offset %d" % (TOPIC, p, len(consumed[p]))).encode() in q.stdout, \
        "kcat -Q end offset of partition %d: %r" % (p, q.stdout + q.stderr)
