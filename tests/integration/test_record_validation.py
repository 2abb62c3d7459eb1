"""Record validation (issue 21) against Apache Kafka, the reference: the
same hand-built Produce v8 requests to a real Kafka 4.x broker and to Eddy,
and their answers compared.

- Batches whose header and CRC-32C are right but whose records are not
  (garbage bytes, a varint too long, a key length past the end, a record
  count that does not match, bad header counts, ...), uncompressed and
  compressed with each codec: Eddy refuses each with the error code Kafka
  gives for the same bytes, and stores nothing.
- Records stamped outside message.timestamp.before/after.max.ms:
  INVALID_TIMESTAMP with record_errors naming the bad records, as Kafka.
- The batch of issue 21 (valid CRC, 24 bytes of 0xff as its one record)
  followed by a good message: kcat and kafka-python read the good message.
- A zstd batch of about 1 KiB that decompresses to 1 GiB is refused without
  Eddy's RSS growing more than a few MiB.
- A client id with newlines and control characters is logged on one line,
  escaped."""

import gzip
import io
import struct
import subprocess
import time

import lz4.frame
import snappy
import zstandard
from kafka import KafkaConsumer

import pytest

import eddy_fixture
import kafka_fixture
import kafka_wire as w

TOPIC = "validated"
# Where Eddy answers otherwise than Kafka 4.4 on purpose (record_validator.h):
# Kafka stores these (reading a length below -1 as null; an uncompressed
# batch's offset deltas as they are, so consumers see offsets that are not
# the log's), or re-compresses them; Eddy never rewrites a batch and refuses
# them with INVALID_RECORD. The value is what Kafka answers, checked too, so
# that a Kafka that changes shows here.
STRICTER = {
    ("negative key length -2", 0): 0,
    ("offset deltas 0, 2", 0): 0,
    ("offset deltas 1, 0", 0): 0,
}
for _codec in (1, 2, 3, 4):
    STRICTER[("negative key length -2", _codec)] = 0
    STRICTER[("record body shorter than its fields", _codec)] = 0
    # Kafka fails rebuilding the batch (UNKNOWN_SERVER_ERROR).
    STRICTER[("offset deltas 0, 2", _codec)] = -1
    STRICTER[("offset deltas 1, 0", _codec)] = -1

NONE, CORRUPT_MESSAGE, INVALID_TIMESTAMP, INVALID_RECORD = 0, 2, 32, 87
CODECS = {1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}


def compress(codec, data):
    if codec == 1:
        out = io.BytesIO()
        with gzip.GzipFile(fileobj=out, mode="wb") as f:
            f.write(data)
        return out.getvalue()
    if codec == 2:
        return snappy.compress(data)
    if codec == 3:
        return lz4.frame.compress(data)
    if codec == 4:
        return zstandard.ZstdCompressor().compress(data)
    return data


def raw_batch(records_bytes, count, last_offset_delta=None, codec=0, base_timestamp=None, max_timestamp=None,
              attributes=0):
    """A RecordBatch v2 around records_bytes (compressed with codec), with a
    correct CRC-32C whatever the records are."""
    if base_timestamp is None:
        base_timestamp = int(time.time() * 1000)
    if max_timestamp is None:
        max_timestamp = base_timestamp
    if last_offset_delta is None:
        last_offset_delta = count - 1
    body = compress(codec, records_bytes)
    after_crc = struct.pack(">hiqqqhii", attributes | codec, last_offset_delta, base_timestamp, max_timestamp,
                            -1, -1, -1, count) + body
    return struct.pack(">qiibI", 0, 4 + 1 + 4 + len(after_crc), 0, 2, w.crc32c(after_crc)) + after_crc


def body(*fields):
    """A record from its already encoded fields: length varint + bytes."""
    b = b"".join(fields)
    return w.varint(len(b)) + b


V = w.varint
GOOD = w.record(0, b"k", b"v")

# name -> (records bytes, declared record count, lastOffsetDelta or None)
FAULTS = {
    "garbage record (24 x 0xff)": (b"\xff" * 24, 1, None),
    "record length varint too long": (b"\xff" * 5 + b"\x01" + b"\x00" * 8, 1, None),
    "timestamp delta varint too long": (body(b"\x00", b"\xff" * 10 + b"\x01", V(0), V(-1), V(1), b"v", V(0)), 1, None),
    "record length past the batch end": (V(200) + b"\x00" * 10, 1, None),
    "key length past the end": (body(b"\x00", V(0), V(0), V(100), b"k", V(1), b"v", V(0)), 1, None),
    "negative key length -2": (body(b"\x00", V(0), V(0), V(-2), V(1), b"v", V(0)), 1, None),
    "value length past the end": (body(b"\x00", V(0), V(0), V(1), b"k", V(50), b"v", V(0)), 1, None),
    "record body longer than its fields": (body(b"\x00", V(0), V(0), V(1), b"k", V(1), b"v", V(0), b"\x00\x00"), 1,
                                           None),
    "record body shorter than its fields": (V(5) + b"\x00" + V(0) + V(0) + V(1) + b"k" + V(1) + b"v" + V(0), 1, None),
    "negative header count": (body(b"\x00", V(0), V(0), V(1), b"k", V(1), b"v", V(-1)), 1, None),
    "header count larger than the rest": (body(b"\x00", V(0), V(0), V(1), b"k", V(1), b"v", V(30)), 1, None),
    "negative header key length": (body(b"\x00", V(0), V(0), V(1), b"k", V(1), b"v", V(1), V(-1), V(1), b"x"), 1,
                                   None),
    "header value past the end": (body(b"\x00", V(0), V(0), V(1), b"k", V(1), b"v", V(1), V(1), b"h", V(40)), 1,
                                  None),
    "fewer records than recordCount": (GOOD, 2, None),
    "more records than recordCount": (GOOD + w.record(1, b"k", b"v"), 1, None),
    "trailing bytes after the last record": (GOOD + b"\x00\x00\x00", 1, None),
    "lastOffsetDelta not recordCount - 1": (GOOD + w.record(1, b"k", b"v"), 2, 5),
    "recordCount 0": (b"", 0, 0),
}
# Faults where Kafka and Eddy may answer differently on purpose.
OFFSET_FAULTS = {
    "offset deltas 0, 2": (GOOD + w.record(2, b"k", b"v"), 2, 1),
    "offset deltas 1, 0": (w.record(1, b"k", b"v") + w.record(0, b"k", b"v"), 2, 1),
}


def decode_produce_v8(data):
    """(error code, error message, [(index, message)]) of the one partition
    of a Produce v8 response (kafka-python 2.0's v8 schema lacks
    record_errors and error_message)."""
    pos = [0]

    def take(fmt):
        v = struct.unpack_from(fmt, data, pos[0])
        pos[0] += struct.calcsize(fmt)
        return v[0] if len(v) == 1 else v

    def string():
        n = take(">h")
        if n < 0:
            return None
        s = data[pos[0]:pos[0] + n].decode("utf-8", "replace")
        pos[0] += n
        return s

    assert take(">i") == 1
    string()
    assert take(">i") == 1
    _index, code, _offset, _ts, _start = take(">ihqqq")
    errors = []
    for _ in range(take(">i")):
        i = take(">i")
        errors.append((i, string()))
    return code, string(), errors


def produce_v8(port, records, client_id="eddy-it"):
    return produce_to(port, TOPIC, records, client_id)


def end_offset(port):
    with w.Connection(port) as conn:
        from kafka.protocol.offset import OffsetResponse
        response = conn.request(2, 1, w.list_offsets_v1(TOPIC, 0, -1), response_class=OffsetResponse[1])
    (_t, ((_p, _code, _ts, offset),)), = response.topics
    return offset


def compare(kafka_port, eddy_port, name, records, count, last_delta, codec=0):
    batch = raw_batch(records, count, last_delta, codec)
    k = produce_v8(kafka_port, batch)
    e = produce_v8(eddy_port, batch)
    label = "%s%s" % (name, " (%s)" % CODECS[codec] if codec else "")
    print("  %-48s kafka %3d %-5s eddy %3d %r" % (label, k[0], bool(k[2]), e[0], e[1]))
    if (name, codec) in STRICTER:
        assert k[0] == STRICTER[(name, codec)], "%s: Kafka answers %d" % (label, STRICTER[(name, codec)])
        assert e[0] == INVALID_RECORD, "%s: Eddy refuses it (INVALID_RECORD)" % label
    elif k[0] == -1:
        # An exception Kafka does not catch: Eddy answers as Kafka does for
        # the same fault in a compressed batch.
        assert e[0] == INVALID_RECORD, "%s: Eddy answers INVALID_RECORD (Kafka: UNKNOWN_SERVER_ERROR)" % label
    else:
        assert e[0] == k[0], "%s: Eddy answers as Kafka (%d)" % (label, k[0])
    assert bool(e[2]) == bool(k[2]), "%s: record_errors where Kafka has them" % label
    if e[0] != NONE:
        assert bool(e[1]), "%s: %s" % ("%s: Eddy says why" % label, e)
    return k, e


def create_topic(port, name, configs=()):
    with w.Connection(port) as conn:
        # v2: Kafka 4 speaks CreateTopics v2+ (the same body as v1).
        conn.request(19, 2, w.create_topics_v1(name, 1, 1, configs))


# A topic Kafka has just created may have no leader yet: its first produce
# can be answered NOT_LEADER_OR_FOLLOWER or UNKNOWN_TOPIC_OR_PARTITION, which
# a client retries. Every topic here exists on both brokers, so these two
# answers are retried (as a client would) until the partition has a leader.
RETRIABLE_WHILE_CREATED = (3, 6)


def produce_to(port, topic, batch, client_id="eddy-it", timeout=30):
    def answer():
        with w.Connection(port) as conn:
            cid = conn.send(0, 8, w.produce_v3(topic, 0, batch), client_id=client_id)
            got, data = conn.receive()
            assert got == cid
        decoded = decode_produce_v8(data)
        return None if decoded[0] in RETRIABLE_WHILE_CREATED else decoded
    return eddy_fixture.wait_until(answer, timeout, "%s to have a leader (produce answered)" % topic, interval=0.2)


def test_timestamps(ports):
    kport, eport = ports
    """message.timestamp.before/after.max.ms per record: INVALID_TIMESTAMP
    with record_errors naming exactly the bad records, as Kafka."""
    topic = "stamped"
    configs = [("message.timestamp.before.max.ms", "3600000"), ("message.timestamp.after.max.ms", "60000")]
    for port in (kport, eport):
        create_topic(port, topic, configs)
    now = int(time.time() * 1000)
    # Offsets 0 and 2 good, 1 two hours old, 3 ten minutes ahead: the batch's
    # maxTimestamp (the base) says nothing of them.
    deltas = [0, -2 * 3600 * 1000, 1000, 10 * 60 * 1000]
    recs = b"".join(w.record(i, b"k", b"v", timestamp_delta=d) for i, d in enumerate(deltas))
    for codec in (0, 4):
        batch = raw_batch(recs, len(deltas), None, codec, base_timestamp=now, max_timestamp=now)
        k = produce_to(kport, topic, batch)
        e = produce_to(eport, topic, batch)
        label = "records out of message.timestamp.before/after.max.ms (%s)" % CODECS.get(codec, "none")
        print("  %s\n    kafka %s\n    eddy  %s" % (label, k, e))
        assert (k[0], e[0]) == (INVALID_TIMESTAMP, INVALID_TIMESTAMP), label + ": INVALID_TIMESTAMP from both"
        assert ([i for i, _ in e[2]], [i for i, _ in k[2]]) == ([1, 3], [1, 3]), \
            label + ": record_errors name records 1 and 3, as Kafka's"
        assert all("out of range" in m for _, m in e[2]), "%s: %s" % (label + ": each record error says why", e[2])
    # The same records within the bounds are taken.
    recs = b"".join(w.record(i, b"k", b"v", timestamp_delta=i) for i in range(4))
    e = produce_to(eport, topic, raw_batch(recs, 4, None, 0, base_timestamp=now - 600000))
    assert e[0] == NONE, "records inside the bounds: accepted"


def test_max_decompressed_record(ports):
    kport, eport = ports
    """max.decompressed.message.bytes (Kafka 4.4) bounds one record of a
    compressed batch: INVALID_RECORD from both."""
    topic = "bounded-records"
    for port in (kport, eport):
        create_topic(port, topic, [("max.decompressed.message.bytes", "100")])
    recs = w.record(0, b"k", b"x" * 50) + w.record(1, b"k", b"y" * 300)
    for codec in (1, 4):
        batch = raw_batch(recs, 2, None, codec)
        k = produce_to(kport, topic, batch)
        e = produce_to(eport, topic, batch)
        label = "a 300-byte record, max.decompressed.message.bytes=100 (%s)" % CODECS[codec]
        print("  %s: kafka %s eddy %s" % (label, k, e))
        assert e[0] == k[0], label + ": Eddy answers as Kafka"
        assert e[0] == INVALID_RECORD, label + ": INVALID_RECORD"


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        fields = dict(line.split(":", 1) for line in f)
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


@pytest.fixture(scope="module")
def eddy_topic(eddy):
    """Eddy's port, with TOPIC created."""
    create_topic(eddy.port, TOPIC)
    return eddy.port


def test_zstd_bomb(eddy, eddy_topic):
    broker = eddy
    """A zstd batch of a few KiB that decompresses to 1 GiB (one record
    claiming a 1 GiB value, then zeros): MESSAGE_TOO_LARGE after
    eddy.max.decompressed.batch.bytes of work, RSS (and its peak) up by no
    more than a few MiB."""
    giant = 1 << 30
    prefix = b"\x00" + V(0) + V(0) + V(-1) + V(giant)
    head = V(len(prefix) + giant + 1) + prefix
    c = zstandard.ZstdCompressor(level=3).compressobj()
    parts = [c.compress(head)]
    chunk = bytes(1 << 20)
    for _ in range(giant >> 20):
        parts.append(c.compress(chunk))
    parts.append(c.compress(V(0)))
    parts.append(c.flush())
    batch = raw_batch(b"", 1, None, 0)  # header template, replaced below
    compressed = b"".join(parts)
    now = int(time.time() * 1000)
    after_crc = struct.pack(">hiqqqhii", 4, 0, now, now, -1, -1, -1, 1) + compressed
    batch = struct.pack(">qiibI", 0, 4 + 1 + 4 + len(after_crc), 0, 2, w.crc32c(after_crc)) + after_crc
    rss0, peak0 = rss_kib(broker.proc.pid)
    started = time.monotonic()
    e = produce_to(broker.port, TOPIC, batch)
    took = time.monotonic() - started
    rss1, peak1 = rss_kib(broker.proc.pid)
    print("zstd bomb: %d bytes -> 1 GiB; answer %s in %.2f s; RSS %d -> %d KiB, peak %d -> %d KiB" % (
        len(batch), e, took, rss0, rss1, peak0, peak1))
    assert e[0] == 10, "zstd bomb (%d bytes, 1 GiB decompressed): MESSAGE_TOO_LARGE" % len(batch)
    assert "eddy.max.decompressed.batch.bytes" in (e[1] or ""), "zstd bomb: the answer names the bound: %r" % (e,)
    assert peak1 - peak0 < 8192, \
        "%s: %s" % ("zstd bomb: peak RSS grew by less than 8 MiB (%d KiB)" % (peak1 - peak0), (peak0, peak1))


def test_poison_then_good(eddy):
    broker = eddy
    """Issue 21's batch (valid CRC, 24 bytes of 0xff as its record) is
    refused; a good message produced after it is read by kcat and by
    kafka-python."""
    topic = "poison"
    create_topic(broker.port, topic)
    time.sleep(1.1)  # refusals are logged at most once a second
    forged = "x\n2026-12-01T00:00:00.000Z ERROR forged line from a client\x1b[31m"
    e = produce_to(broker.port, topic, raw_batch(b"\xff" * 24, 1, None, 0), client_id=forged)
    assert e[0] == INVALID_RECORD, "garbage records behind a good CRC: INVALID_RECORD"
    run = subprocess.run(["kcat", "-b", broker.bootstrap, "-P", "-t", topic, "-p", "0"], input=b"good message\n",
                         capture_output=True, timeout=60)
    assert run.returncode == 0, "kcat produces a good message after it: %r" % (run.stderr,)
    run = subprocess.run(["kcat", "-b", broker.bootstrap, "-C", "-t", topic, "-o", "beginning", "-c", "1", "-e",
                          "-f", "%o %s\n"], capture_output=True, timeout=60)
    assert run.stdout.decode().strip() == "0 good message", "kcat reads the good message at offset 0"
    consumer = KafkaConsumer(topic, bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest",
                             consumer_timeout_ms=10000, enable_auto_commit=False)
    values = [m.value for m in consumer]
    consumer.close()
    assert values == [b"good message"], "kafka-python reads the good message"
    log = broker.log_text()
    lines = [line for line in log.splitlines() if "forged line" in line]
    print("the refusal in the log: %r" % lines)
    assert len(lines) == 1, "the forged client id is logged on one line"
    assert (lines and "x\\n2026-12-01T00:00:00.000Z ERROR forged" in lines[0] and "\\x1b" in lines[0]
                 and "poison-0" in lines[0]), \
        "... escaped (\\n, \\x1b), naming the client and the topic: %r" % (lines,)
    assert not any(line.startswith("2026-12-01T00:00:00.000Z ERROR") for line in log.splitlines()), \
        "no log line starts as the client wrote it"


@pytest.fixture(scope="module")
def ports(kafka, eddy_topic):
    """(Kafka's port, Eddy's port), each with TOPIC created."""
    kport = kafka.ports[1]
    create_topic(kport, TOPIC)
    return kport, eddy_topic


@pytest.fixture(scope="module")
def faulty_batches_sent(eddy_topic):
    """Every faulty batch of test_faulty_records_answered_as_kafka, with each
    codec, produced to Eddy's TOPIC (and refused): what that test leaves,
    whether or not it ran."""
    for codec in (0, 1, 2, 3, 4):
        for name, (records, count, last_delta) in list(FAULTS.items()) + list(OFFSET_FAULTS.items()):
            if codec and name == "recordCount 0":
                continue
            e = produce_v8(eddy_topic, raw_batch(records, count, last_delta, codec))
            assert e[0] != NONE, "%s (%s): Eddy refuses it" % (name, CODECS.get(codec, "none"))


@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4], ids=lambda c: CODECS.get(c, "none"))
def test_faulty_records_answered_as_kafka(ports, codec):
    """The same faulty bytes to Kafka and Eddy."""
    kport, eport = ports
    print("faulty records, same bytes to Kafka %s and Eddy:" % kafka_fixture.KAFKA_VERSION)
    for name, (records, count, last_delta) in FAULTS.items():
        if codec and name == "recordCount 0":
            continue
        compare(kport, eport, name, records, count, last_delta, codec)
    for name, (records, count, last_delta) in OFFSET_FAULTS.items():
        compare(kport, eport, name, records, count, last_delta, codec)


def test_no_faulty_batch_stored(ports, faulty_batches_sent):
    assert end_offset(ports[1]) == 0, "Eddy stored none of the faulty batches"


@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4], ids=lambda c: CODECS.get(c, "none"))
def test_good_batches_accepted(ports, codec):
    """Good batches still go in, compressed or not."""
    kport, eport = ports
    good = GOOD + w.record(1, b"k2", b"v2", headers=[("h", b"x")])
    k = produce_v8(kport, raw_batch(good, 2, None, codec))
    e = produce_v8(eport, raw_batch(good, 2, None, codec))
    assert (k[0], e[0]) == (0, 0), "good batch (%s): accepted by both" % CODECS.get(codec, "none")
