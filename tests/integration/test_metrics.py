"""The metrics listener (issue 18): eddy.metrics.listener on an ephemeral
port, /metrics parsed with prometheus_client's text parser, values that
move with real kafka-python traffic, client-chosen strings escaped, and bad
HTTP input (garbage, oversized heads, slowloris, unknown paths, other
methods, too many connections) answered or closed without disturbing
Kafka clients. One broker for every check."""

import os
import socket
import time

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


def check_families(checks, families):
    want = {
        "eddy_requests": "counter", "eddy_requests_refused": "counter", "eddy_request_errors": "counter",
        "eddy_request_duration_seconds": "histogram", "eddy_connections": "gauge",
        "eddy_parked_requests": "gauge", "eddy_fsync_duration_seconds": "histogram",
        "eddy_disk_budget_used_bytes": "gauge", "eddy_disk_budget_free_bytes": "gauge",
        "eddy_disk_budget_limit_bytes": "gauge", "eddy_topic_bytes_in": "counter",
        "eddy_topic_messages_in": "counter", "eddy_topic_bytes_out": "counter",
        "eddy_topic_messages_out": "counter", "eddy_partition_log_start_offset": "gauge",
        "eddy_partition_log_end_offset": "gauge", "eddy_partition_high_watermark": "gauge",
        "eddy_consumer_group_lag": "gauge", "eddy_consumer_group_committed_offset": "gauge",
        "eddy_link_state": "gauge", "eddy_link_backlog_messages": "gauge", "eddy_link_backlog_bytes": "gauge",
        "eddy_link_dropped_messages": "counter", "eddy_link_paused": "gauge",
        "eddy_link_producer_resets": "counter", "eddy_link_rate_bytes_per_second": "gauge",
        "eddy_build_info": "gauge", "eddy_uptime_seconds": "gauge",
    }
    missing = {k: v for k, v in want.items() if families.get(k) != v}
    checks.check("every family is there with its type (prometheus_client parser)", not missing, missing)


def traffic(checks, broker, port):
    before, families, headers = mf.scrape(port)
    checks.check("content type is text format 0.0.4", "version=0.0.4" in headers.get("content-type", ""),
                 headers.get("content-type"))
    check_families(checks, families)
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
    checks.equal("the consumer read everything", got, COUNT)
    after, _, _ = mf.scrape(port)
    checks.equal("messages in moved by what was produced",
                 mf.value(after, "eddy_topic_messages_in_total", topic=TOPIC), float(COUNT))
    checks.check("bytes in moved", (mf.value(after, "eddy_topic_bytes_in_total", topic=TOPIC) or 0) > COUNT * 7)
    checks.check("messages out: at least what was consumed",
                 (mf.value(after, "eddy_topic_messages_out_total", topic=TOPIC) or 0) >= COUNT)
    checks.check("bytes out moved", (mf.value(after, "eddy_topic_bytes_out_total", topic=TOPIC) or 0) > COUNT * 7)
    for p in range(PARTITIONS):
        labels = dict(topic=TOPIC, partition=str(p))
        checks.equal("partition %d high watermark" % p, mf.value(after, "eddy_partition_high_watermark", **labels),
                     COUNT / PARTITIONS)
        checks.equal("partition %d log end" % p, mf.value(after, "eddy_partition_log_end_offset", **labels),
                     COUNT / PARTITIONS)
        checks.equal("partition %d log start" % p, mf.value(after, "eddy_partition_log_start_offset", **labels), 0.0)
        checks.equal("partition %d: the odd group's lag (label escaped and parsed back)" % p,
                     mf.value(after, "eddy_consumer_group_lag", group=ODD_GROUP, **labels),
                     COUNT / PARTITIONS - committed[p])
    produced = mf.value(after, "eddy_requests_total", api="Produce") - (
        mf.value(before, "eddy_requests_total", api="Produce") or 0)
    checks.check("Produce requests counted", produced >= 1, produced)
    h = mf.value(after, "eddy_request_duration_seconds_count", api="Produce")
    checks.equal("every Produce answered is in the latency histogram",
                 h, mf.value(after, "eddy_requests_total", api="Produce"))
    checks.check("Fetch latency histogram has observations",
                 (mf.value(after, "eddy_request_duration_seconds_count", api="Fetch") or 0) >= 1)
    checks.check("fsync histogram counted the acks=all syncs",
                 (mf.value(after, "eddy_fsync_duration_seconds_count") or 0) >
                 (mf.value(before, "eddy_fsync_duration_seconds_count") or 0))
    used = mf.value(after, "eddy_disk_budget_used_bytes")
    free = mf.value(after, "eddy_disk_budget_free_bytes")
    checks.equal("disk budget used + free = limit", used + free, mf.value(after, "eddy_disk_budget_limit_bytes"))
    checks.check("the topic's partitions are charged to the budget",
                 used > (mf.value(before, "eddy_disk_budget_used_bytes") or 0))
    return after


def errors_and_refusals(checks, broker, port):
    before, _, _ = mf.scrape(port)
    # A frame with an unsupported API key closes its connection.
    with socket.create_connection(("127.0.0.1", broker.port), timeout=5) as s:
        s.sendall(b"\x00\x00\x00\x0a" + b"\x00\x63\x00\x00\x00\x00\x00\x01\xff\xff")
        s.recv(100)
    after = eddy_fixture.wait_until(
        lambda: (lambda m: m if (mf.value(m, "eddy_requests_refused_total", api="other") or 0) >
                 (mf.value(before, "eddy_requests_refused_total", api="other") or 0) else None)(mf.scrape(port)[0]),
        10, "the refused request to be counted")
    checks.check("an unknown API key counts as refused (api=other)", after is not None)
    # Fetch and Produce of a partition that does not exist: error codes.
    with w.Connection(broker.port) as conn:
        w.fetch(conn, TOPIC, 7, 0)
        w.produce(conn, TOPIC, 9, w.record_batch([(None, b"x", ())]))
    after, _, _ = mf.scrape(port)
    for api in ("Fetch", "Produce"):
        checks.equal("%s: UNKNOWN_TOPIC_OR_PARTITION counted" % api,
                     mf.value(after, "eddy_request_errors_total", api=api, error="UNKNOWN_TOPIC_OR_PARTITION"), 1.0)


def bad_http(checks, broker, port):
    status, _, _ = mf.parse_response(mf.http_exchange(port, b"\x16\x03\x01garbage\x00\x01\r\n\r\n"))
    checks.equal("garbage: 400", status, 400)
    status, _, _ = mf.http_get(port, "/nope")
    checks.equal("unknown path: 404", status, 404)
    status, headers, _ = mf.parse_response(mf.http_exchange(
        port, b"POST /metrics HTTP/1.1\r\nContent-Length: 1000000000\r\n\r\nabc"))
    checks.equal("POST: 405", status, 405)
    checks.equal("405 names the allowed methods", headers.get("allow"), "GET, HEAD")
    status, _, _ = mf.http_get(port, "/metrics", method="DELETE")
    checks.equal("DELETE: 405", status, 405)
    status, _, _ = mf.parse_response(mf.http_exchange(port, b"GET /metrics HTTP/2.0\r\n\r\n"))
    checks.equal("HTTP/2.0 request line: 505", status, 505)
    status, headers, body = mf.http_get(port, "/metrics", method="HEAD")
    checks.check("HEAD: 200, no body", status == 200 and body == b"", (status, len(body)))
    huge = b"GET /metrics HTTP/1.1\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n"
    raw = mf.http_exchange(port, huge)
    status, _, _ = mf.parse_response(raw)
    checks.check("a 20 KB request head: 431 or a closed connection", status == 431 or raw == b"", raw[:60])

    # Slowloris: a head that never ends, a byte at a time; closed after the
    # 5 s timeout while Kafka clients and other scrapes go on.
    slow = socket.create_connection(("127.0.0.1", port), timeout=10)
    slow.sendall(b"GET /metrics HTTP/1.1\r\n")
    started = time.monotonic()
    produce(broker, 10, start=COUNT)
    checks.equal("a scrape during a slowloris connection works", mf.http_get(port, "/metrics")[0], 200)
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
    checks.check("the slowloris connection is closed after about 5 s", closed_after is not None and
                 3 < closed_after < 10, closed_after)


def connection_limit(checks, broker, port):
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
    checks.check("the 17th HTTP connection gets 503 or a close", status == 503 or raw == b"", raw[:60])
    grown = rss_kib(pid) - rss_before
    checks.check("16 connections with 8 KB heads cost under 1 MiB of RSS", grown < 1024, "%d KiB" % grown)
    produce(broker, 10, start=COUNT + 10)  # counted below: Kafka clients work while the HTTP slots are full
    for s in held:
        s.close()
    eddy_fixture.wait_until(lambda: mf.http_get(port, "/metrics")[0] == 200, 10, "the listener to take scrapes again")
    samples, _, _ = mf.scrape(port)
    checks.check("refused HTTP connections are counted",
                 (mf.value(samples, "eddy_metrics_http_refused_connections_total") or 0) >= 1)
    checks.equal("every record produced during the abuse is there",
                 mf.value(samples, "eddy_topic_messages_in_total", topic=TOPIC), float(COUNT + 20))


def main():
    checks = eddy_fixture.Checks()
    with eddy_fixture.Broker(overrides={"eddy.metrics.listener": "http://127.0.0.1:0",
                                        "eddy.disk.budget.bytes": str(1 << 30),
                                        "num.partitions": str(PARTITIONS)}) as broker:
        broker.start()
        port = mf.metrics_port(broker)
        traffic(checks, broker, port)
        errors_and_refusals(checks, broker, port)
        bad_http(checks, broker, port)
        connection_limit(checks, broker, port)
        checks.equal("eddy stops cleanly", broker.stop(), 0)
    checks.finish()


if __name__ == "__main__":
    main()
