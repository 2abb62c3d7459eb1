"""Bad input from a raw-socket client (frames built by hand with struct).
Each case gets the error Kafka prescribes or a closed connection; meanwhile
a well-behaved client keeps producing and fetching on its own connection,
another keeps being answered between the cases, stored data does not change,
and the broker survives and stops cleanly.

The broker runs with socket.request.max.bytes=65536."""

import struct
import threading
import time
import types

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.protocol.admin import ApiVersionResponse, CreateTopicsResponse
from kafka.protocol.metadata import MetadataResponse
from kafka.protocol.produce import ProduceResponse

import pytest

import eddy_fixture
import kafka_wire as w

MAX_FRAME = 65536
STABLE = "stable"
LIVE = "live"

# Kafka error codes.
CORRUPT_MESSAGE = 2
UNKNOWN_TOPIC_OR_PARTITION = 3
INVALID_TOPIC = 17
INVALID_REQUIRED_ACKS = 21
UNSUPPORTED_VERSION = 35
UNSUPPORTED_FOR_MESSAGE_FORMAT = 43
INVALID_RECORD = 87


class LiveClient(threading.Thread):
    """Produces one batch and fetches it back, over and over, on its own
    connection, until stopped; any error or mismatch is recorded."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port = port
        self.stop = threading.Event()
        self.rounds = 0
        self.errors = []
        self.acked = []

    def run(self):
        try:
            with w.Connection(self.port) as conn:
                while not self.stop.is_set():
                    batch = w.record_batch([(b"live", b"round %d" % self.rounds, [])])
                    error_code, offset = w.produce(conn, LIVE, 0, batch)
                    if error_code or offset != self.rounds:
                        self.errors.append("produce round %d: error %d offset %d" % (self.rounds, error_code, offset))
                        return
                    error_code, _hw, records = w.fetch(conn, LIVE, 0, offset)
                    got = w.parse_batches(records)
                    if error_code or not got or got[0][0] != offset or got[0][2][16:] != batch[16:]:
                        self.errors.append("fetch round %d: error %d, %r" % (self.rounds, error_code, got[:1]))
                        return
                    self.acked.append(offset)
                    self.rounds += 1
        except Exception as e:  # noqa: BLE001
            self.errors.append("%s: %s" % (type(e).__name__, e))


@pytest.fixture(scope="module")
def eddy_overrides():
    return {"socket.request.max.bytes": MAX_FRAME}


@pytest.fixture(scope="module")
def world(eddy):
    """The topics and the data that must not change, a kafka-python consumer
    of them, a live client producing and fetching all along, and a
    long-lived good connection; .still_served(case) after each bad input."""
    broker = eddy
    port = broker.port
    # -- setup: the topics and the data that must not change --------------
    with w.Connection(port) as conn:
        for topic in (STABLE, LIVE, "boundary"):
            r = conn.request(19, 1, w.create_topics_v1(topic, 1), response_class=CreateTopicsResponse[1])
            assert r.topic_errors[0][1] == 0, "create %s" % topic
        for j in range(3):
            batch = w.record_batch([(b"key-%d-%d" % (j, r), b"value %d %d" % (j, r), [("h", b"%d" % r)])
                                    for r in range(10)])
            assert w.produce(conn, STABLE, 0, batch) == (0, 10 * j), "raw produce of a hand-built batch %d" % j
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all", compression_type="gzip")
    for i in range(50):
        producer.send(STABLE, key=b"kp%d" % i, value=b"kafka-python %d" % i, partition=0)
    producer.flush(timeout=30)
    producer.close()
    with w.Connection(port) as conn:
        baseline = w.fetch_all(conn, STABLE, 0)
        first = w.parse_records(baseline[0][2])
    assert first[3] == (3, b"key-0-3", b"value 0 3", [("h", b"3")]), \
        "the hand-built batch reads back (key, value, headers)"
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=None, enable_auto_commit=False,
                             fetch_max_wait_ms=200)
    tp = TopicPartition(STABLE, 0)
    consumer.assign([tp])

    def consume_all():
        consumer.seek_to_beginning(tp)
        got = []
        deadline = time.monotonic() + 30
        while len(got) < 80 and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=300).values():
                got.extend((r.offset, r.key, r.value, list(r.headers)) for r in records)
        return got

    consumed_before = consume_all()
    assert len(consumed_before) == 80, "kafka-python reads the 80 stable records"

    live = LiveClient(port)
    live.start()
    good = w.Connection(port)

    def still_served(case):
        """After each case: the long-lived good connection is answered, the
        stored data is unchanged, the live client is still progressing."""
        rounds = live.rounds
        r = good.request(18, 0, b"", response_class=ApiVersionResponse[0])
        same = w.fetch_all(good, STABLE, 0) == baseline
        eddy_fixture.wait_until(lambda: live.rounds > rounds + 2 or live.errors or not live.is_alive(), 20,
                                "the live client to make progress")
        assert r.error_code == 0 and same and not live.errors and broker.alive(), \
            "%s: other clients served, data unchanged: api versions error %d, data same %s, live errors %s" \
            % (case, r.error_code, same, live.errors)

    def expect_closed(case, data, close_after=False):
        with w.Connection(port) as bad:
            bad.send_raw(data)
            if close_after:
                return  # the client goes away first
            assert bad.closed_by_peer(timeout=10), "%s: connection closed" % case

    yield types.SimpleNamespace(port=port, baseline=baseline, consumer=consumer, consume_all=consume_all,
                                consumed_before=consumed_before, live=live, good=good, still_served=still_served,
                                expect_closed=expect_closed)
    live.stop.set()
    live.join(30)
    good.close()
    consumer.close()


@pytest.fixture(scope="module")
def bad_input_sent(world):
    """Bad input of every kind the tests above send (closed connections for
    bad frames and malformed bodies, refused record batches to STABLE), each
    followed by world.still_served, and the live client past 20 rounds: the
    state test_nothing_changed checks, whether or not those tests ran."""
    port = world.port
    cases = [
        ("garbage with a negative size", b"\xde\xad\xbe\xef" * 16),
        ("garbage header", w.frame(struct.pack(">hhih", 3, 1, 7, 500) + b"abc")),
        ("oversized frame", struct.pack(">i", MAX_FRAME + 1) + b"\0" * 100),
        ("huge frame size", struct.pack(">i", 2 ** 31 - 1)),
        ("Metadata v1 with 1000 topics announced and none sent",
         w.frame(w.request_header(3, 1, 1) + struct.pack(">i", 1000))),
        ("Metadata v1 with array length -5", w.frame(w.request_header(3, 1, 1) + struct.pack(">i", -5))),
        ("Produce v3 whose records length runs past the frame",
         w.frame(w.request_header(0, 3, 1) + w.string(None) + struct.pack(">hi", 1, 1000) +
                 w.array([w.string(STABLE) + w.array([struct.pack(">ii", 0, 5000) + b"x" * 10])]))),
    ]
    for case, data in cases:
        world.expect_closed(case, data)
        world.still_served(case)
    good_batch = w.record_batch([(b"k", b"would be record %d" % i, []) for i in range(3)])
    corrupt = bytearray(good_batch)
    corrupt[w.BATCH_CRC_OFFSET] ^= 0x40
    with w.Connection(port) as conn:
        assert w.produce(conn, STABLE, 0, bytes(corrupt))[0] == CORRUPT_MESSAGE, "a bad CRC: CORRUPT_MESSAGE"
        assert w.produce(conn, STABLE, 0, good_batch + good_batch)[0] == INVALID_RECORD, \
            "two batches for one partition: INVALID_RECORD"
    world.still_served("bad record batches")
    eddy_fixture.wait_until(lambda: world.live.rounds > 20 or world.live.errors or not world.live.is_alive(), 30,
                            "the live client to make 20 rounds")


def test_framing(eddy, world):
    broker, port, good = eddy, world.port, world.good
    still_served, expect_closed = world.still_served, world.expect_closed

    # -- framing -------------------------------------------------------------
    expect_closed("garbage with a negative size", b"\xde\xad\xbe\xef" * 16)
    still_served("garbage with a negative size")
    expect_closed("garbage header (client id longer than the frame)",
                  w.frame(struct.pack(">hhih", 3, 1, 7, 500) + b"abc"))
    still_served("garbage header")
    expect_closed("frame of %d bytes > socket.request.max.bytes" % (MAX_FRAME + 1),
                  struct.pack(">i", MAX_FRAME + 1) + b"\0" * 100)
    still_served("oversized frame")
    expect_closed("frame size 2^31-1", struct.pack(">i", 2 ** 31 - 1))
    still_served("huge frame size")
    expect_closed("truncated frame, then the client closes", struct.pack(">i", 100) + b"\0\x03\0\x01" + b"\0" * 6,
                  close_after=True)
    expect_closed("half a size prefix, then the client closes", b"\0\0", close_after=True)
    eddy_fixture.wait_until(lambda: b"in the middle of a request" in broker.log_bytes(), 10,
                            "the log line about the truncated frame")
    still_served("truncated frames")
    with w.Connection(port) as stalled:
        # Half a frame from a client that stays: the others are not held up.
        stalled.send_raw(struct.pack(">i", 50) + b"\0\x12\0\0")
        still_served("a half-sent frame pending on another connection")


def test_frame_of_exactly_the_maximum(eddy, world):
    broker, port, good = eddy, world.port, world.good
    still_served, expect_closed = world.still_served, world.expect_closed
    # A frame of exactly socket.request.max.bytes is accepted.
    def boundary_request(value_len):
        batch = w.record_batch([(b"boundary", b"b" * value_len, [])])
        return w.request_header(0, 3, 1) + w.produce_v3("boundary", 0, batch), batch

    value_len = MAX_FRAME - 200
    payload, batch = boundary_request(value_len)
    for _ in range(10):  # varint lengths may shift by a byte: converge
        if len(payload) == MAX_FRAME:
            break
        value_len += MAX_FRAME - len(payload)
        payload, batch = boundary_request(value_len)
    assert len(payload) == MAX_FRAME, "hand-built Produce frame size"
    with w.Connection(port) as conn:
        conn.send_raw(w.frame(payload))
        _cid, response = conn.receive()
        r = ProduceResponse[3].decode(response)
        assert r.topics[0][1][0][1:3] == (0, 0), "a Produce frame of exactly %d bytes is accepted" % MAX_FRAME


def test_unknown_apis_and_versions(eddy, world):
    broker, port, good = eddy, world.port, world.good
    still_served, expect_closed = world.still_served, world.expect_closed
    # -- unknown APIs and versions -------------------------------------------
    with w.Connection(port) as bad:
        bad.send(9999, 0, b"")
        assert bad.closed_by_peer(), "unknown api key 9999: connection closed"
    with w.Connection(port) as bad:
        bad.send(3, 99, w.metadata_v1(None))
        assert bad.closed_by_peer(), "Metadata v99: connection closed"
    with w.Connection(port) as bad:
        bad.send(45, 0, b"\0\0\0\0" + w.array([]))  # AlterPartitionReassignments: a real API Eddy does not implement
        assert bad.closed_by_peer(), "AlterPartitionReassignments (not implemented): connection closed"
    still_served("unknown api and versions")

    with w.Connection(port) as conn:
        # A client newer than the broker: request header v2, flexible body.
        cid = conn.send(18, 99, w.compact_string("future-client") + w.compact_string("9.9") + b"\0", flexible=True)
        got_cid, payload = conn.receive()
        r = ApiVersionResponse[0].decode(payload)
        apis = {a[0]: (a[1], a[2]) for a in r.api_versions}
        assert got_cid == cid, "ApiVersions v99: correlation id"
        assert r.error_code == UNSUPPORTED_VERSION, "ApiVersions v99: UNSUPPORTED_VERSION"
        assert len(payload) == 2 + 4 + 6 * len(r.api_versions), \
            "ApiVersions v99: a v0 body (no throttle time, no tagged fields)"
        assert apis.get(18) == (0, 3) and 3 in apis and 0 in apis and 1 in apis, \
            "ApiVersions v99: the supported list (ApiVersions 0-3, Metadata, Produce, Fetch): %r" % (apis,)
        # The client retries with a version from the list, on the same connection.
        r = conn.request(18, 0, b"", response_class=ApiVersionResponse[0])
        assert (r.error_code, len(r.api_versions)) == (0, len(apis)), \
            "ApiVersions v0 afterwards on the same connection"
        assert {k: apis.get(k) for k in (22, 24, 25, 26, 28)} == \
            {22: (0, 4), 24: (0, 3), 25: (0, 3), 26: (0, 3), 28: (0, 3)}, \
            "ApiVersions lists the transaction APIs at their pre-KIP-890 versions only (InitProducerId 0-4, " \
            "AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, TxnOffsetCommit 0-3): %r" % (sorted(apis.items()),)
    still_served("ApiVersions v99")


def test_malformed_bodies(eddy, world):
    broker, port, good = eddy, world.port, world.good
    still_served, expect_closed = world.still_served, world.expect_closed
    # -- malformed bodies -----------------------------------------------------
    expect_closed("Metadata v1 with 1000 topics announced and none sent",
                  w.frame(w.request_header(3, 1, 1) + struct.pack(">i", 1000)))
    expect_closed("Metadata v1 with array length -5", w.frame(w.request_header(3, 1, 1) + struct.pack(">i", -5)))
    expect_closed("Produce v3 whose records length runs past the frame",
                  w.frame(w.request_header(0, 3, 1) + w.string(None) + struct.pack(">hi", 1, 1000) +
                          w.array([w.string(STABLE) + w.array([struct.pack(">ii", 0, 5000) + b"x" * 10])])))
    still_served("malformed bodies")


def test_responses_in_request_order(eddy, world):
    broker, port, good = eddy, world.port, world.good
    still_served, expect_closed = world.still_served, world.expect_closed
    # Responses are sent in request order: a good request pipelined before a
    # bad frame is answered before the connection closes.
    with w.Connection(port) as conn:
        conn.send_raw(w.frame(w.request_header(18, 0, 41)) + w.frame(struct.pack(">hhih", 3, 1, 42, 999)))
        try:
            cid, payload = conn.receive()
            answered = cid == 41 and ApiVersionResponse[0].decode(payload).error_code == 0
        except w.Closed:
            answered = False
        assert answered, "a good request before a bad frame is answered first"
        assert conn.closed_by_peer(), "then the connection is closed"


def test_invalid_topic_names(eddy, world):
    broker, port, good = eddy, world.port, world.good
    still_served, expect_closed = world.still_served, world.expect_closed
    # -- invalid topic names ---------------------------------------------------
    bad_names = ["bad/name", "..", ".", "a" * 250, "", "spaces are bad", "ümlaut"]
    with w.Connection(port) as conn:
        for name in bad_names:
            r = conn.request(19, 1, w.create_topics_v1(name, 1), response_class=CreateTopicsResponse[1])
            assert r.topic_errors[0][1] == INVALID_TOPIC, "CreateTopics %r: INVALID_TOPIC_EXCEPTION" % name[:20]
        r = conn.request(3, 1, w.metadata_v1(["bad/name", "a" * 250]), response_class=MetadataResponse[1])
        assert [(t[0], t[1][:20]) for t in r.topics] == [(INVALID_TOPIC, "bad/name"), (INVALID_TOPIC, "a" * 20)], \
            "Metadata for invalid names: INVALID_TOPIC_EXCEPTION each"
        r = conn.request(3, 1, w.metadata_v1(None), response_class=MetadataResponse[1])
        assert sorted(t[1] for t in r.topics) == sorted([STABLE, LIVE, "boundary"]), \
            "no topic was created by the bad names"
    still_served("invalid topic names")


def test_bad_record_batches(eddy, world):
    broker, port, good = eddy, world.port, world.good
    still_served, expect_closed = world.still_served, world.expect_closed
    # -- bad record batches ----------------------------------------------------
    good_batch = w.record_batch([(b"k", b"would be record %d" % i, []) for i in range(3)])
    with w.Connection(port) as conn:
        for where, pos in (("in a record", len(good_batch) - 2), ("in the CRC field", w.BATCH_CRC_OFFSET),
                           ("in the record count", 60)):
            corrupt = bytearray(good_batch)
            corrupt[pos] ^= 0x40
            assert w.produce(conn, STABLE, 0, bytes(corrupt))[0] == CORRUPT_MESSAGE, \
                "Produce with a byte flipped %s: CORRUPT_MESSAGE" % where
        assert w.produce(conn, STABLE, 0, good_batch[:-7])[0] == CORRUPT_MESSAGE, \
            "Produce with a truncated batch: CORRUPT_MESSAGE"
        for magic in (1, 0):
            legacy = w.legacy_message_set([(b"k", b"old format"), (None, b"v")], magic=magic)
            assert w.produce(conn, STABLE, 0, legacy)[0] == INVALID_RECORD, \
                "Produce v3 with a magic %d message set: INVALID_RECORD" % magic
        r = conn.request(0, 2, w.produce_v3(STABLE, 0, w.legacy_message_set([(b"k", b"v")]))[2:],
                         response_class=ProduceResponse[2])
        assert r.topics[0][1][0][1] == UNSUPPORTED_FOR_MESSAGE_FORMAT, \
            "Produce v2 with a magic 1 message set: UNSUPPORTED_FOR_MESSAGE_FORMAT"
        assert w.produce(conn, STABLE, 0, good_batch + good_batch)[0] == INVALID_RECORD, \
            "Produce v3 with two batches for one partition: INVALID_RECORD"
        assert w.produce(conn, STABLE, 0, good_batch, acks=2)[0] == INVALID_REQUIRED_ACKS, \
            "Produce with acks=2: INVALID_REQUIRED_ACKS"
        assert w.produce(conn, STABLE, 7, good_batch)[0] == UNKNOWN_TOPIC_OR_PARTITION, \
            "Produce to partition 7 of a 1-partition topic: UNKNOWN_TOPIC_OR_PARTITION"
        assert w.produce(conn, STABLE, 0, b"")[0] == INVALID_RECORD, "Produce with empty records: INVALID_RECORD"
        # Kafka refuses a client batch whose baseOffset is not 0 (so does Eddy).
        assert w.produce(conn, STABLE, 0, w.record_batch([(b"k", b"v", [])], base_offset=1000))[0] == INVALID_RECORD, \
            "Produce with a batch at base offset 1000: INVALID_RECORD, as Kafka"
        # The connection that sent all that is still usable.
        r = conn.request(18, 0, b"", response_class=ApiVersionResponse[0])
        assert r.error_code == 0, "the connection that sent bad batches is still served"
    still_served("bad record batches")


def test_nothing_changed(eddy, world, bad_input_sent):
    live = world.live
    live.stop.set()
    live.join(30)
    assert not live.errors and live.rounds > 20, \
        "live client: no error in %d produce+fetch rounds: %s" % (live.rounds, live.errors)
    with w.Connection(world.port) as conn:
        stored = w.fetch_all(conn, LIVE, 0)
    assert [b[0] for b in stored][:len(live.acked)] == live.acked, "live topic holds exactly the acknowledged rounds"
    assert w.fetch_all(world.good, STABLE, 0) == world.baseline, "stable data identical at the end (raw fetch)"
    assert world.consume_all() == world.consumed_before, "stable data identical at the end (kafka-python)"
    # No metric counts connections closed for bad input: the log is where
    # an operator sees them, with the client's address.
    warnings = [line for line in eddy.log_text().splitlines() if "closing connection" in line]
    assert len(warnings) >= 5 and all("127.0.0.1" in line for line in warnings), \
        "each closed connection is logged with the client's address (%d lines): %s" % (len(warnings), warnings[:3])
