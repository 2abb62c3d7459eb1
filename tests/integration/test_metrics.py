"""The metrics listener (issue 18): eddy.metrics.listener on an ephemeral
port, /metrics parsed with prometheus_client's text parser, values that
move with real kafka-python traffic, client-chosen strings escaped, and bad
HTTP input (garbage, oversized heads, slowloris, unknown paths, other
methods, too many connections) answered or closed without disturbing
Kafka clients. One broker for the module; a test that counts traffic
compares with what it scraped before its own (the earlier tests' traffic
is there too when they ran), so that each passes alone as well as in file
order."""

import socket
import time

import pytest

import eddy_fixture
import kafka_wire as w
import metrics_fixture as mf
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata

TOPIC = "metered"
PARTITIONS = 2
COUNT = 200
# A group id a client may choose: quotes, backslashes, a newline, markup.
ODD_GROUP = 'odd"group\\with\nnewline<b>&'


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def produce(broker, count, start=0):
    p = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all")
    for i in range(start, start + count):
        p.send(TOPIC, value=b"v%06d" % i, partition=i % PARTITIONS)
    p.flush()
    p.close()


def check_families(families):
    want = {
        "eddy_requests": "counter", "eddy_requests_refused": "counter", "eddy_request_errors": "counter",
        "eddy_request_duration_seconds": "histogram", "eddy_connections": "gauge",
        "eddy_parked_requests": "gauge", "eddy_fsync_duration_seconds": "histogram",
        "eddy_disk_budget_used_bytes": "gauge", "eddy_disk_budget_free_bytes": "gauge",
        "eddy_disk_budget_limit_bytes": "gauge", "eddy_topic_bytes_in": "counter",
        "eddy_topic_messages_in": "counter", "eddy_topic_bytes_out": "counter",
        "eddy_topic_messages_out": "counter", "eddy_partition_log_start_offset": "gauge",
        "eddy_partition_log_end_offset": "gauge", "eddy_partition_high_watermark": "gauge",
        "eddy_partition_last_stable_offset": "gauge",
        "eddy_consumer_group_lag": "gauge", "eddy_consumer_group_committed_offset": "gauge",
        "eddy_link_state": "gauge", "eddy_link_backlog_messages": "gauge", "eddy_link_backlog_bytes": "gauge",
        "eddy_link_dropped_messages": "counter", "eddy_link_paused": "gauge",
        "eddy_link_producer_resets": "counter", "eddy_link_rate_bytes_per_second": "gauge",
        "eddy_build_info": "gauge", "eddy_uptime_seconds": "gauge",
    }
    missing = {k: v for k, v in want.items() if families.get(k) != v}
    assert not missing, "every family is there with its type (prometheus_client parser): %r" % (missing,)


def test_traffic(broker, port):
    before, families, headers = mf.scrape(port)
    assert "version=0.0.4" in headers.get("content-type", ""), \
        "content type is text format 0.0.4: %r" % (headers.get("content-type"),)
    check_families(families)
    produce(broker, COUNT)
    c = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=ODD_GROUP, enable_auto_commit=False,
                      auto_offset_reset="earliest", consumer_timeout_ms=3000)
    tps = [TopicPartition(TOPIC, p) for p in range(PARTITIONS)]
    c.assign(tps)
    got = 0
    for _ in c:
        got += 1
        if got == COUNT:
            break
    committed = {0: 40, 1: 70}
    c.commit({TopicPartition(TOPIC, p): OffsetAndMetadata(o, "") for p, o in committed.items()})
    c.close()
    assert got == COUNT, "the consumer read everything"
    after, _, _ = mf.scrape(port)
    assert mf.value(after, "eddy_topic_messages_in_total", topic=TOPIC) == float(COUNT), \
        "messages in moved by what was produced"
    assert (mf.value(after, "eddy_topic_bytes_in_total", topic=TOPIC) or 0) > COUNT * 7, "bytes in moved"
    assert (mf.value(after, "eddy_topic_messages_out_total", topic=TOPIC) or 0) >= COUNT, \
        "messages out: at least what was consumed"
    assert (mf.value(after, "eddy_topic_bytes_out_total", topic=TOPIC) or 0) > COUNT * 7, "bytes out moved"
    for p in range(PARTITIONS):
        labels = dict(topic=TOPIC, partition=str(p))
        assert mf.value(after, "eddy_partition_high_watermark", **labels) == COUNT / PARTITIONS, \
            "partition %d high watermark" % p
        assert mf.value(after, "eddy_partition_log_end_offset", **labels) == COUNT / PARTITIONS, \
            "partition %d log end" % p
        assert mf.value(after, "eddy_partition_last_stable_offset", **labels) == COUNT / PARTITIONS, \
            "partition %d: no transaction, the last stable offset is the high watermark" % p
        assert mf.value(after, "eddy_partition_log_start_offset", **labels) == 0.0, "partition %d log start" % p
        assert mf.value(after, "eddy_consumer_group_lag", group=ODD_GROUP, **labels) == COUNT / PARTITIONS - committed[p], \
            "partition %d: the odd group's lag (label escaped and parsed back)" % p
    produced = mf.value(after, "eddy_requests_total", api="Produce") - (
        mf.value(before, "eddy_requests_total", api="Produce") or 0)
    assert produced >= 1, "Produce requests counted: %r" % (produced,)
    h = mf.value(after, "eddy_request_duration_seconds_count", api="Produce")
    assert h == mf.value(after, "eddy_requests_total", api="Produce"), \
        "every Produce answered is in the latency histogram"
    assert (mf.value(after, "eddy_request_duration_seconds_count", api="Fetch") or 0) >= 1, \
        "Fetch latency histogram has observations"
    assert ((mf.value(after, "eddy_fsync_duration_seconds_count") or 0) >
                 (mf.value(before, "eddy_fsync_duration_seconds_count") or 0)), \
        "fsync histogram counted the acks=all syncs"
    used = mf.value(after, "eddy_disk_budget_used_bytes")
    free = mf.value(after, "eddy_disk_budget_free_bytes")
    assert used + free == mf.value(after, "eddy_disk_budget_limit_bytes"), "disk budget used + free = limit"
    assert used > (mf.value(before, "eddy_disk_budget_used_bytes") or 0), \
        "the topic's partitions are charged to the budget"


def test_committed_offsets_move_between_scrapes(broker, port):
    """The listener keeps the committed offsets between scrapes
    (app/committed_offsets_cache.h): a commit made after a scrape is in the
    next one, in /metrics and /status.json alike."""
    group = "moving"
    produce(broker, 10)
    end = mf.value(mf.scrape(port)[0], "eddy_partition_high_watermark", topic=TOPIC, partition="0")
    c = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=group, enable_auto_commit=False)
    try:
        for offset in (1, 4, 2):
            c.commit({TopicPartition(TOPIC, 0): OffsetAndMetadata(offset, "")})
            for _ in range(2):  # the second scrape is served from the copy
                samples = mf.scrape(port)[0]
                labels = dict(group=group, topic=TOPIC, partition="0")
                assert mf.value(samples, "eddy_consumer_group_committed_offset", **labels) == offset, \
                    "the committed offset scraped after committing %d" % offset
                assert mf.value(samples, "eddy_consumer_group_lag", **labels) == end - offset, \
                    "the lag after committing %d" % offset
                rows = [g for g in mf.status_json(port)["groups"] if g["group"] == group]
                assert [p["committed"] for g in rows for p in g["partitions"]] == [offset], \
                    "/status.json after committing %d: %r" % (offset, rows)
    finally:
        c.close()


def test_errors_and_refusals(broker, port):
    before, _, _ = mf.scrape(port)
    # A frame with an unsupported API key closes its connection.
    with socket.create_connection(("127.0.0.1", broker.port), timeout=5) as s:
        s.sendall(b"\x00\x00\x00\x0a" + b"\x00\x63\x00\x00\x00\x00\x00\x01\xff\xff")
        s.recv(100)
    eddy_fixture.wait_until(
        lambda: (lambda m: m if (mf.value(m, "eddy_requests_refused_total", api="other") or 0) >
                 (mf.value(before, "eddy_requests_refused_total", api="other") or 0) else None)(mf.scrape(port)[0]),
        10, "an unknown API key to count as refused (api=other)")
    # (wait_until fails the test when the refusal is not counted)
    # Fetch and Produce of a partition that does not exist: error codes.
    with w.Connection(broker.port) as conn:
        w.fetch(conn, TOPIC, 7, 0)
        w.produce(conn, TOPIC, 9, w.record_batch([(None, b"x", ())]))
    after, _, _ = mf.scrape(port)
    for api in ("Fetch", "Produce"):
        assert mf.value(after, "eddy_request_errors_total", api=api, error="UNKNOWN_TOPIC_OR_PARTITION") == 1.0, \
            "%s: UNKNOWN_TOPIC_OR_PARTITION counted" % api
    # Any API's error codes count, per topic here: CreateTopics v1 of the
    # existing topic, then of a topic with 0 partitions.
    with w.Connection(broker.port) as conn:
        conn.request(19, 1, w.create_topics_v1(TOPIC))
        conn.request(19, 1, w.create_topics_v1("zero-partitions", partitions=0))
    after, _, _ = mf.scrape(port)
    assert mf.value(after, "eddy_request_errors_total", api="CreateTopics", error="TOPIC_ALREADY_EXISTS") == 1.0, \
        "CreateTopics: TOPIC_ALREADY_EXISTS counted"
    assert mf.value(after, "eddy_request_errors_total", api="CreateTopics", error="INVALID_PARTITIONS") == 1.0, \
        "CreateTopics: INVALID_PARTITIONS counted"


def test_bad_http(broker, port):
    status, _, _ = mf.parse_response(mf.http_exchange(port, b"\x16\x03\x01garbage\x00\x01\r\n\r\n"))
    assert status == 400, "garbage: 400"
    status, _, _ = mf.http_get(port, "/nope")
    assert status == 404, "unknown path: 404"
    status, headers, _ = mf.parse_response(mf.http_exchange(
        port, b"POST /metrics HTTP/1.1\r\nContent-Length: 1000000000\r\n\r\nabc"))
    assert status == 405, "POST: 405"
    assert headers.get("allow") == "GET, HEAD", "405 names the allowed methods"
    status, _, _ = mf.http_get(port, "/metrics", method="DELETE")
    assert status == 405, "DELETE: 405"
    status, _, _ = mf.parse_response(mf.http_exchange(port, b"GET /metrics HTTP/2.0\r\n\r\n"))
    assert status == 505, "HTTP/2.0 request line: 505"
    status, headers, body = mf.http_get(port, "/metrics", method="HEAD")
    assert status == 200 and body == b"", "HEAD: 200, no body: %r" % ((status, len(body)),)
    huge = b"GET /metrics HTTP/1.1\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n"
    raw = mf.http_exchange(port, huge)
    status, _, _ = mf.parse_response(raw)
    assert status == 431 or raw == b"", "a 20 KB request head: 431 or a closed connection: %r" % (raw[:60],)

    # Slowloris: a head that never ends, a byte at a time; closed after the
    # 5 s timeout while Kafka clients and other scrapes go on.
    slow = socket.create_connection(("127.0.0.1", port), timeout=10)
    slow.sendall(b"GET /metrics HTTP/1.1\r\n")
    started = time.monotonic()
    produce(broker, 10, start=COUNT)
    assert mf.http_get(port, "/metrics")[0] == 200, "a scrape during a slowloris connection works"
    closed_after = None
    try:
        while time.monotonic() - started < 15:
            slow.sendall(b"X")
            slow.settimeout(0.5)
            try:
                if slow.recv(100) == b"":
                    closed_after = time.monotonic() - started
                    break
            except socket.timeout:
                pass
    except (BrokenPipeError, ConnectionResetError):
        closed_after = time.monotonic() - started
    slow.close()
    assert (closed_after is not None and
                 3 < closed_after < 10), \
        "the slowloris connection is closed after about 5 s: %r" % (closed_after,)


def test_connection_limit(broker, port):
    before, _, _ = mf.scrape(port)
    messages_before = mf.value(before, "eddy_topic_messages_in_total", topic=TOPIC) or 0.0
    pid = broker.eddy_pid()
    rss_before = rss_kib(pid)
    held = []

    def hold():
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(b"GET /metrics HTTP/1.1\r\n" + b"X: " + b"a" * 8000)  # a head just short of the cap
        held.append(s)
    for _ in range(15):
        hold()
    # 15 held and the scrape's own: the listener has read them all.
    eddy_fixture.wait_until(lambda: mf.value(mf.scrape(port)[0], "eddy_metrics_http_connections") == 16, 10,
                            "15 held HTTP connections")
    hold()
    raw = mf.http_exchange(port, b"GET /metrics HTTP/1.1\r\n\r\n")
    status, _, _ = mf.parse_response(raw)
    assert status == 503 or raw == b"", "the 17th HTTP connection gets 503 or a close: %r" % (raw[:60],)
    grown = rss_kib(pid) - rss_before
    assert grown < 1024, "16 connections with 8 KB heads cost under 1 MiB of RSS: %r" % ("%d KiB" % grown,)
    produce(broker, 10, start=COUNT + 10)  # counted below: Kafka clients work while the HTTP slots are full
    for s in held:
        s.close()
    eddy_fixture.wait_until(lambda: mf.http_get(port, "/metrics")[0] == 200, 10, "the listener to take scrapes again")
    samples, _, _ = mf.scrape(port)
    assert (mf.value(samples, "eddy_metrics_http_refused_connections_total") or 0) >= 1, \
        "refused HTTP connections are counted"
    assert mf.value(samples, "eddy_topic_messages_in_total", topic=TOPIC) == messages_before + 10, \
        "every record produced during the abuse is there (%d before it)" % messages_before


@pytest.fixture(scope="module")
def eddy_overrides():
    return {"eddy.metrics.listener": "http://127.0.0.1:0", "eddy.disk.budget.bytes": str(1 << 30),
            "num.partitions": str(PARTITIONS)}


@pytest.fixture(scope="module")
def broker(eddy):
    return eddy


@pytest.fixture(scope="module")
def port(eddy):
    """The metrics listener's port."""
    return mf.metrics_port(eddy)
