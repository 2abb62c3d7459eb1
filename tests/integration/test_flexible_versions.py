"""The flexible (KIP-482) versions no client in this suite speaks: Java
clients use Produce v9, Fetch v12, Metadata v12, ListOffsets v7. Requests are
built by hand from Kafka's message definitions and responses decoded field
by field, down to the last byte (a stray or missing byte in a tagged-field
section or a compact length would fail here), and the data produced with v9
is read back with v12 and with the older v4. The tests share one connection
to one eddy; what a test needs from before (the topic, the batches produced
with v9) comes from a module fixture (`topic`, `produced`), so that each
passes alone as well as in file order."""

import struct

import pytest

import kafka_wire as w

TOPIC = "flexible"


class Reader:
    """Decodes one flexible response body; done() asserts nothing is left."""

    def __init__(self, data):
        self.data = data
        self.pos = 0

    def take(self, n):
        if self.pos + n > len(self.data):
            raise ValueError("response ends at %d, need %d more bytes" % (len(self.data), self.pos + n - len(self.data)))
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def i8(self):
        return struct.unpack(">b", self.take(1))[0]

    def i16(self):
        return struct.unpack(">h", self.take(2))[0]

    def i32(self):
        return struct.unpack(">i", self.take(4))[0]

    def i64(self):
        return struct.unpack(">q", self.take(8))[0]

    def uuid(self):
        return self.take(16)

    def uvarint(self):
        shift = result = 0
        while True:
            b = self.take(1)[0]
            result |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return result

    def compact_string(self):
        n = self.uvarint()
        return None if n == 0 else self.take(n - 1).decode()

    def compact_bytes(self):
        n = self.uvarint()
        return None if n == 0 else self.take(n - 1)

    def compact_array(self, item):
        n = self.uvarint()
        return None if n == 0 else [item() for _ in range(n - 1)]

    def tagged_fields(self):
        fields = {}
        for _ in range(self.uvarint()):
            tag = self.uvarint()
            fields[tag] = self.take(self.uvarint())
        return fields

    def done(self):
        if self.pos != len(self.data):
            raise ValueError("%d unread bytes at the end of the response" % (len(self.data) - self.pos))


def compact_array(items):
    return w.uvarint(len(items) + 1) + b"".join(items)


TAGS = b"\x00"  # an empty tagged-field section


def api_versions_v3(conn):
    r = Reader(conn.request(18, 3, w.compact_string("eddy-it") + w.compact_string("1.0") + TAGS, flexible=True))
    error_code = r.i16()
    apis = r.compact_array(lambda: (r.i16(), r.i16(), r.i16(), r.tagged_fields())[:3])
    r.i32()
    r.tagged_fields()
    r.done()
    return error_code, {a[0]: (a[1], a[2]) for a in apis}


def metadata_v12(conn, names, allow_auto_create, trailing=b"", ids=()):
    """names None: all topics (a null array). ids: topic ids asked for with
    an empty name, as the Java client does. trailing: bytes sent after the
    request's last field (current librdkafka sends 3 after this request)."""
    if names is None:
        topics = w.uvarint(0)
    else:
        topics = compact_array([b"\0" * 16 + w.compact_string(n) + TAGS for n in names] +
                               [i + w.compact_string("") + TAGS for i in ids])
    r = Reader(conn.request(3, 12, topics + bytes([allow_auto_create, 0]) + TAGS + trailing, flexible=True))
    r.i32()
    brokers = r.compact_array(lambda: (r.i32(), r.compact_string(), r.i32(), r.compact_string(), r.tagged_fields())[:4])
    cluster_id = r.compact_string()
    controller = r.i32()

    def partition():
        out = (r.i16(), r.i32(), r.i32(), r.i32(), r.compact_array(r.i32), r.compact_array(r.i32),
               r.compact_array(r.i32))
        r.tagged_fields()
        return out

    def topic():
        out = (r.i16(), r.compact_string(), r.uuid(), r.i8(), r.compact_array(partition), r.i32())
        r.tagged_fields()
        return out

    topics = r.compact_array(topic)
    r.tagged_fields()
    r.done()
    return brokers, cluster_id, controller, topics


def produce_v9(conn, records, partition=0, acks=-1):
    body = (w.compact_string(None) + struct.pack(">hi", acks, 10000) +
            compact_array([w.compact_string(TOPIC) +
                           compact_array([struct.pack(">i", partition) + w.uvarint(len(records) + 1) + records +
                                          TAGS]) + TAGS]) + TAGS)
    r = Reader(conn.request(0, 9, body, flexible=True))

    def partition_response():
        out = (r.i32(), r.i16(), r.i64(), r.i64(), r.i64(),
               r.compact_array(lambda: (r.i32(), r.compact_string(), r.tagged_fields())[:2]), r.compact_string())
        r.tagged_fields()
        return out

    def topic_response():
        out = (r.compact_string(), r.compact_array(partition_response))
        r.tagged_fields()
        return out

    responses = r.compact_array(topic_response)
    r.i32()
    r.tagged_fields()
    r.done()
    (name, ((index, error_code, base_offset, _append_time, log_start, record_errors, message),)), = responses
    return error_code, base_offset, log_start, record_errors, message


def fetch_v12(conn, offset, partition=0, max_bytes=1 << 20):
    body = (struct.pack(">iiiibii", -1, 0, 0, max_bytes, 0, 0, -1) +
            compact_array([w.compact_string(TOPIC) +
                           compact_array([struct.pack(">iiqiqi", partition, -1, offset, -1, -1, max_bytes) + TAGS]) +
                           TAGS]) +
            compact_array([]) + w.compact_string("") + TAGS)
    r = Reader(conn.request(1, 12, body, flexible=True))
    r.i32()
    top_error = r.i16()
    session = r.i32()

    def partition_data():
        out = (r.i32(), r.i16(), r.i64(), r.i64(), r.i64(),
               r.compact_array(lambda: (r.i64(), r.i64(), r.tagged_fields())[:2]), r.i32(), r.compact_bytes())
        r.tagged_fields()
        return out

    def topic():
        out = (r.compact_string(), r.compact_array(partition_data))
        r.tagged_fields()
        return out

    responses = r.compact_array(topic)
    r.tagged_fields()
    r.done()
    (name, ((index, error_code, hw, lso, log_start, aborted, preferred, records),)), = responses
    return top_error, session, error_code, hw, lso, log_start, preferred, records


def list_offsets_v7(conn, timestamp, partition=0):
    body = (struct.pack(">ib", -1, 0) +
            compact_array([w.compact_string(TOPIC) +
                           compact_array([struct.pack(">iiq", partition, -1, timestamp) + TAGS]) + TAGS]) + TAGS)
    r = Reader(conn.request(2, 7, body, flexible=True))
    r.i32()

    def partition_response():
        out = (r.i32(), r.i16(), r.i64(), r.i64(), r.i32())
        r.tagged_fields()
        return out

    def topic():
        out = (r.compact_string(), r.compact_array(partition_response))
        r.tagged_fields()
        return out

    topics = r.compact_array(topic)
    r.tagged_fields()
    r.done()
    (_name, ((_p, error_code, ts, offset, epoch),)), = topics
    return error_code, ts, offset


@pytest.fixture(scope="module")
def conn(eddy):
    with w.Connection(eddy.port) as conn:
        yield conn


@pytest.fixture(scope="module")
def topic(conn):
    """TOPIC exists (created by Metadata v12 with auto-create, as
    test_metadata_v12 creates it; when that test ran first, the same topic)."""
    _b, _c, _ctl, topics = metadata_v12(conn, [TOPIC], allow_auto_create=True)
    assert topics[0][:2] == (0, TOPIC), "Metadata v12 with auto-create: the topic"
    return TOPIC


@pytest.fixture(scope="module")
def produced(conn, topic):
    """Four batches of three records produced with Produce v9 to the empty
    TOPIC: {"batches": [batch], "answers": [(error code, base offset, log
    start, record errors, message)]}; test_produce_v9 checks the answers."""
    batches, answers = [], []
    for j in range(4):
        batch = w.record_batch([(b"k%d" % r, b"flexible %d %d" % (j, r), [("v", b"9")]) for r in range(3)])
        batches.append(batch)
        answers.append(produce_v9(conn, batch))
    return {"batches": batches, "answers": answers}


def test_api_versions_v3(conn):
    error_code, apis = api_versions_v3(conn)
    assert error_code == 0, "ApiVersions v3: no error"
    assert (apis.get(0, (0, 0))[1] >= 9 and apis.get(1, (0, 0))[1] >= 12 and apis.get(3, (0, 0))[1] >= 12
            and apis.get(2, (0, 0))[1] >= 7), \
        "ApiVersions v3 advertises Produce v9, Fetch v12, Metadata v12, ListOffsets v7: %r" % (apis,)


def test_metadata_v12(eddy, conn):
    brokers, cluster_id, controller, topics = metadata_v12(conn, [TOPIC], allow_auto_create=False)
    assert topics[0][:2] == (3, TOPIC), "Metadata v12 without auto-create: UNKNOWN_TOPIC_OR_PARTITION"
    assert [(b[1], b[2]) for b in brokers] == [("127.0.0.1", eddy.port)], "Metadata v12: this broker"
    assert cluster_id and controller == 1, \
        "Metadata v12: a cluster id and controller 1: %r" % ((cluster_id, controller),)
    _b, _c, _ctl, topics = metadata_v12(conn, [TOPIC], allow_auto_create=True)
    error_code, name, topic_id, internal, partitions, _ops = topics[0]
    assert (error_code, name, internal, [(p[0], p[1], p[2], p[4], p[5]) for p in partitions]) == \
        (0, TOPIC, 0, [(0, 0, 1, [1], [1])]), \
        "Metadata v12 with auto-create: the topic, 1 partition led by node 1"
    assert topic_id != b"\0" * 16, "Metadata v12: a topic id"
    _b, _c, _ctl, topics = metadata_v12(conn, [TOPIC], allow_auto_create=False)
    assert topics[0][2] == topic_id, "Metadata v12 again: the same topic id"
    # Kafka ignores bytes after a request's last field; so must Eddy
    # (librdkafka >= 2.x asks for all topics with 3 stray bytes).
    _b, _c, _ctl, topics = metadata_v12(conn, None, allow_auto_create=False, trailing=b"\0\0\0")
    assert [t[1] for t in topics] == [TOPIC], \
        "Metadata v12 for all topics with 3 trailing bytes: answered, lists the topic"
    _b, _c, _ctl, topics = metadata_v12(conn, [TOPIC], allow_auto_create=False)
    assert topics[0][2] == topic_id, "the connection stays usable after a request with trailing bytes"
    unknown_id = b"\x01" * 16
    _b, _c, _ctl, topics = metadata_v12(conn, [], allow_auto_create=False, ids=[topic_id, unknown_id])
    assert [(t[0], t[1], t[2]) for t in topics] == [(0, TOPIC, topic_id), (100, None, unknown_id)], \
        "Metadata v12 by topic id (empty name): the topic; an unknown id: UNKNOWN_TOPIC_ID, null name"


def test_produce_v9(conn, produced):
    batches = produced["batches"]
    for j, (error_code, base, log_start, record_errors, message) in enumerate(produced["answers"]):
        assert (error_code, base, log_start, record_errors) == (0, 3 * j, 0, []), \
            "Produce v9 batch %d: offset %d" % (j, 3 * j)
    corrupt = bytearray(batches[0])
    corrupt[-1] ^= 1
    error_code, base, _ls, _re, message = produce_v9(conn, bytes(corrupt))
    assert error_code == 2 and base == -1, \
        "Produce v9 with a bad CRC: CORRUPT_MESSAGE, no offset: %r" % ((error_code, base, message),)


def test_fetch_v12_and_v4(conn, produced):
    batches = produced["batches"]
    top_error, session, error_code, hw, lso, log_start, preferred, records = fetch_v12(conn, 0)
    assert (top_error, session, error_code, hw, lso, log_start, preferred) == (0, 0, 0, 12, 12, 0, -1), \
        "Fetch v12: no error, session 0, hw 12, lso 12, log start 0, no preferred replica"
    stored = w.parse_batches(records)
    assert [b"\0" * 8 + b[2][8:12] + b"\0" * 4 + b[2][16:] for b in stored] == batches, \
        "Fetch v12 returns the Produce v9 batches byte for byte"
    assert [b[0] for b in
                 w.parse_batches(fetch_v12(conn, 4)[7])] == [3, 6, 9], \
        "Fetch v12 from offset 4 (inside batch 1) starts with batch 1"
    assert fetch_v12(conn, 12)[2:4] + (fetch_v12(conn, 12)[7] or b"",) == (0, 12, b""), \
        "Fetch v12 at the high watermark: no error, no records"
    assert fetch_v12(conn, 13)[2] == 1, "Fetch v12 past the high watermark: OFFSET_OUT_OF_RANGE"
    error_code, _hw, records_v4 = w.fetch(conn, TOPIC, 0, 0)
    assert (error_code, records_v4) == (0, records), "Fetch v4 returns the same bytes as v12"


def test_list_offsets_v7(conn, produced):
    assert list_offsets_v7(conn, -1)[::2] == (0, 12), "ListOffsets v7 latest"
    assert list_offsets_v7(conn, -2)[::2] == (0, 0), "ListOffsets v7 earliest"

