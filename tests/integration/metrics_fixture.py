"""Helpers for the metrics listener tests (test_metrics.py,
test_status_page.py): finding the listener's port in eddy's log, plain
HTTP requests over a socket, and /metrics parsed with prometheus_client's
text parser (Debian's python3-prometheus-client)."""

import json
import re
import socket

import eddy_fixture

METRICS_LISTENING = re.compile(rb"metrics listening on http://127\.0\.0\.1:(\d+)")


def metrics_port(broker, timeout=10):
    """The metrics listener's port, from the log line eddy writes once bound."""
    def port():
        m = METRICS_LISTENING.search(broker.log_bytes())
        return int(m.group(1)) if m else None
    return eddy_fixture.wait_until(port, timeout, "eddy to log its metrics port")


def http_exchange(port, raw, timeout=10):
    """Sends raw bytes, reads until the server closes; returns the bytes."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        if raw:
            s.sendall(raw)
        chunks = []
        while True:
            try:
                b = s.recv(65536)
            except ConnectionResetError:
                break
            if not b:
                break
            chunks.append(b)
        return b"".join(chunks)


def http_get(port, path, method="GET"):
    """(status, headers dict with lower-case names, body bytes)."""
    raw = http_exchange(port, ("%s %s HTTP/1.1\r\nHost: x\r\n\r\n" % (method, path)).encode())
    return parse_response(raw)


def parse_response(raw):
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and len(lines[0].split()) > 1 else None
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return status, headers, body


def scrape(port):
    """{sample name: {frozenset(labels.items()): value}} and the families
    {family name: type}, from /metrics, parsed with prometheus_client."""
    from prometheus_client.parser import text_string_to_metric_families
    status, headers, body = http_get(port, "/metrics")
    if status != 200:
        raise eddy_fixture.FixtureError("GET /metrics: %s" % status)
    samples, families = {}, {}
    for family in text_string_to_metric_families(body.decode("utf-8")):
        families[family.name] = family.type
        for s in family.samples:
            samples.setdefault(s.name, {})[frozenset(s.labels.items())] = s.value
    return samples, families, headers


def value(samples, name, **labels):
    """The value of one sample (None when missing)."""
    return samples.get(name, {}).get(frozenset(labels.items()))


def total(samples, name, **labels):
    """Sum over the samples of name whose labels include these."""
    want = set(labels.items())
    return sum(v for k, v in samples.get(name, {}).items() if want <= set(k))


def status_json(port):
    status, _, body = http_get(port, "/status.json")
    if status != 200:
        raise eddy_fixture.FixtureError("GET /status.json: %s" % status)
    return json.loads(body)
