"""read_committed against Eddy without transactions in the log (the
transaction coordinator lands separately, issue 17): librdkafka (kcat) reads
everything under both isolation levels; on the wire, Fetch v4 answers the
last stable offset (the high watermark here), an aborted-transactions list
(empty) for read_committed and null for read_uncommitted, and ListOffsets v2
answers latest with the LSO."""

import struct
import subprocess

import pytest

import kafka_wire

TOPIC = "committed"
COUNT = 500


def kcat(broker, *args, stdin=None, timeout=120):
    return subprocess.run(["kcat", "-b", broker.bootstrap] + list(args), input=stdin, capture_output=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def produced(eddy):
    """The topic, filled by kcat (one partition, COUNT messages)."""
    produce(eddy)
    return eddy


def produce(broker):
    lines = "".join("m-%04d\n" % i for i in range(COUNT)).encode()
    result = kcat(broker, "-P", "-t", TOPIC, "-p", "0", "-X", "acks=all", stdin=lines)
    assert result.returncode == 0, "kcat producer: %r" % result.stderr[-2000:]


def consume(broker, isolation):
    result = kcat(broker, "-C", "-t", TOPIC, "-p", "0", "-o", "beginning", "-e", "-q", "-f", "%s\n",
                  "-X", "isolation.level=%s" % isolation)
    assert result.returncode == 0, "kcat consumer (%s): %r" % (isolation, result.stderr[-2000:])
    return result.stdout.decode().split()


def fetch_v4(conn, isolation, offset=0):
    """(error, high watermark, last stable offset, aborted count or -1, records length)."""
    body = (struct.pack(">iiiib", -1, 0, 0, 1 << 20, isolation) +
            kafka_wire.array([kafka_wire.string(TOPIC) + kafka_wire.array([struct.pack(">iqi", 0, offset, 1 << 20)])]))
    payload = conn.request(1, 4, body)
    pos = 4 + 4 + 2 + len(TOPIC) + 4 + 4  # throttle, 1 topic (name), 1 partition: index
    error, hw, lso, aborted = struct.unpack_from(">hqqi", payload, pos)
    pos += 2 + 8 + 8 + 4 + 16 * max(aborted, 0)
    length = struct.unpack_from(">i", payload, pos)[0]
    return error, hw, lso, aborted, length


def list_latest_v2(conn, isolation):
    body = (struct.pack(">ib", -1, isolation) +
            kafka_wire.array([kafka_wire.string(TOPIC) + kafka_wire.array([struct.pack(">iq", 0, -1)])]))
    payload = conn.request(2, 2, body)
    pos = 4 + 4 + 2 + len(TOPIC) + 4  # throttle, 1 topic (name), 1 partition
    return struct.unpack_from(">ihqq", payload, pos)  # index, error, timestamp, offset


def test_both_isolation_levels_read_everything_without_transactions(produced):
    eddy = produced
    expected = ["m-%04d" % i for i in range(COUNT)]
    assert consume(eddy, "read_committed") == expected, "read_committed: every message, in order"
    assert consume(eddy, "read_uncommitted") == expected, "read_uncommitted: every message, in order"


def test_fetch_and_list_offsets_answer_the_stable_offset(produced):
    eddy = produced
    with kafka_wire.Connection(eddy.port) as conn:
        error, hw, lso, aborted, length = fetch_v4(conn, 1)
        assert (error, hw, lso) == (0, COUNT, COUNT), "read_committed: LSO == HW without transactions"
        assert aborted == 0, "read_committed: an empty aborted-transactions list, not null (as Kafka)"
        assert length > 0, "read_committed returns the records"
        error, hw, lso, aborted, length_uncommitted = fetch_v4(conn, 0)
        assert (error, hw, lso) == (0, COUNT, COUNT)
        assert aborted == -1, "read_uncommitted: a null aborted-transactions list (as Kafka)"
        assert length_uncommitted == length, "both read the same bytes"
        for isolation in (0, 1):
            partition, error, _timestamp, offset = list_latest_v2(conn, isolation)
            assert (partition, error, offset) == (0, 0, COUNT), "ListOffsets v2 latest, isolation %d" % isolation
