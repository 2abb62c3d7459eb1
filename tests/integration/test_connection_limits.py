"""Connection limits (issue 14): max.connections and max.connections.per.ip.

- 1 000 connections from 127.0.0.1, each after an ApiVersions: Eddy keeps
  answering on all of them (and on new ones); RSS at 1 000 is printed.
- max.connections.per.ip=1002: the 1 003rd connection from 127.0.0.1 is
  closed at once and the refusal is logged; a connection from 127.0.0.2
  (another source address on loopback) still gets in.
- max.connections=1005: at 1 005 open the listener stops accepting: the
  next client connects (kernel backlog) but gets no answer until a
  connection closes, then it is served.
The tests share one eddy and its open connections (module fixture `conns`);
a test that needs the connections earlier tests open gets them from a
fixture (`local_at_limit`: 127.0.0.1 at max.connections.per.ip; `all_open`:
max.connections open), so that each passes alone as well as in file order."""

import resource
import select
import socket
import time

import pytest

import eddy_fixture
import kafka_wire as w

PER_IP = 1002
MAX = 1005


def connect(port, source="127.0.0.1"):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((source, 0))
    s.settimeout(10)
    s.connect(("127.0.0.1", port))
    return s


def api_versions(sock, correlation_id=1, timeout=10):
    """Sends ApiVersions v0, returns True when an answer with the same
    correlation id arrives within timeout."""
    sock.settimeout(timeout)
    sock.sendall(w.frame(w.request_header(18, 0, correlation_id) + w.api_versions_v0()))
    try:
        head = b""
        while len(head) < 8:
            chunk = sock.recv(8 - len(head))
            if not chunk:
                return False
            head += chunk
    except (socket.timeout, ConnectionResetError):
        return False
    size = int.from_bytes(head[:4], "big")
    rest = size - 4
    while rest > 0:
        chunk = sock.recv(min(rest, 65536))
        if not chunk:
            return False
        rest -= len(chunk)
    return int.from_bytes(head[4:8], "big") == correlation_id


def closed_at_once(sock, timeout=5):
    sock.settimeout(timeout)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


@pytest.fixture(scope="module")
def eddy_overrides():
    return {"max.connections": str(MAX), "max.connections.per.ip": str(PER_IP)}


@pytest.fixture(scope="module")
def conns():
    """The test's open connections: {"local": [from 127.0.0.1], "other": [from 127.0.0.2]}."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    opened = {"local": [], "other": []}
    yield opened
    for socks in opened.values():
        for s in socks:
            s.close()


def top_up(port, socks, count, source, first_id):
    """Opens connections from source until socks holds count, each answered."""
    while len(socks) < count:
        s = connect(port, source)
        socks.append(s)
        assert api_versions(s, first_id + len(socks)), "connection %d from %s answered" % (len(socks), source)


@pytest.fixture(scope="module")
def local_at_limit(eddy, conns):
    """PER_IP answered connections from 127.0.0.1 in conns["local"] (what
    test_per_ip_limit opens)."""
    top_up(eddy.port, conns["local"], PER_IP, "127.0.0.1", 7000)
    return conns


@pytest.fixture(scope="module")
def all_open(eddy, local_at_limit):
    """max.connections open: PER_IP from 127.0.0.1, the rest from 127.0.0.2
    (what test_other_address_not_limited adds)."""
    conns = local_at_limit
    top_up(eddy.port, conns["other"], MAX - PER_IP, "127.0.0.2", 8000)
    return conns


def readable(sock):
    return bool(select.select([sock], [], [], 0)[0])


def test_thousand_connections_answered(eddy, conns):
    rss0 = rss_kib(eddy.proc.pid)
    for i in range(1000):
        s = connect(eddy.port)
        conns["local"].append(s)
        assert api_versions(s, i + 1), "connection %d answered ApiVersions" % (i + 1)
    rss1 = rss_kib(eddy.proc.pid)
    print("RSS with no client %d KiB, with 1 000 connections %d KiB (%.1f KiB per connection)" % (
        rss0, rss1, (rss1 - rss0) / 1000.0))
    assert api_versions(conns["local"][0], 5000), "... and the first one still answers"


def test_per_ip_limit(eddy, local_at_limit):
    assert len(local_at_limit["local"]) == PER_IP, "max.connections.per.ip connections from 127.0.0.1 open"
    extra = connect(eddy.port)
    assert closed_at_once(extra), \
        "connection %d from 127.0.0.1 is closed at once (max.connections.per.ip=%d)" % (PER_IP + 1, PER_IP)
    extra.close()
    # The refusal's log line is the operator's interface (no metric counts it).
    eddy_fixture.wait_until(lambda: "max.connections.per.ip=%d" % PER_IP in eddy.log_text(), 5,
                            "the refusal in the log, naming the address and the limit")


def test_other_address_not_limited(eddy, local_at_limit):
    """Another source address is not limited by 127.0.0.1's count (at its
    limit, fixture local_at_limit)."""
    conns = local_at_limit
    for i in range(MAX - PER_IP - len(conns["other"])):
        s = connect(eddy.port, "127.0.0.2")
        conns["other"].append(s)
        assert api_versions(s, 8000 + i), "connection %d (from 127.0.0.2) answered" % (PER_IP + len(conns["other"]))


def test_max_connections_pauses_accept(eddy, all_open):
    """At max.connections the next one waits in the backlog, unanswered,
    until a connection closes."""
    conns = all_open
    assert len(conns["local"]) + len(conns["other"]) == MAX, "max.connections are open (fixture all_open)"
    waiting = connect(eddy.port, "127.0.0.2")
    try:
        waiting.sendall(w.frame(w.request_header(18, 0, 9000) + w.api_versions_v0()))
        eddy_fixture.nothing_happens_for(lambda: readable(waiting), 1500,
                                         "at max.connections=%d the next client gets no answer" % MAX)
        eddy_fixture.wait_until(lambda: "max.connections=%d reached" % MAX in eddy.log_text(), 5,
                                "the pause in the log")
        conns["local"].pop().close()
        started = time.monotonic()
        answered = False
        waiting.settimeout(10)
        # The ApiVersions it sent is read once the connection is accepted.
        head = b""
        try:
            while len(head) < 8:
                chunk = waiting.recv(8 - len(head))
                if not chunk:
                    break
                head += chunk
            answered = len(head) == 8 and int.from_bytes(head[4:8], "big") == 9000
        except socket.timeout:
            pass
        assert answered, "once a connection closes the waiting client is served (%.2f s)" % (time.monotonic() - started)
    finally:
        waiting.close()
