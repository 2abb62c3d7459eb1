"""Connection limits (issue 14): max.connections and max.connections.per.ip.

- 1 000 connections from 127.0.0.1, each after an ApiVersions: Eddy keeps
  answering on all of them (and on new ones); RSS at 1 000 is printed.
- max.connections.per.ip=1002: the 1 003rd connection from 127.0.0.1 is
  closed at once and the refusal is logged; a connection from 127.0.0.2
  (another source address on loopback) still gets in.
- max.connections=1005: at 1 005 open the listener stops accepting: the
  next client connects (kernel backlog) but gets no answer until a
  connection closes, then it is served."""

import resource
import socket
import time

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


def body(broker, checks):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    port = broker.port
    socks = []
    try:
        rss0 = rss_kib(broker.proc.pid)
        for i in range(1000):
            s = connect(port)
            socks.append(s)
            if not api_versions(s, i + 1):
                checks.fail("connection %d answered ApiVersions" % (i + 1), "no answer")
                return
        rss1 = rss_kib(broker.proc.pid)
        print("RSS with no client %d KiB, with 1 000 connections %d KiB (%.1f KiB per connection)" % (
            rss0, rss1, (rss1 - rss0) / 1000.0))
        checks.check("1 000 connections each answered ApiVersions", True)
        checks.check("... and the first one still answers", api_versions(socks[0], 5000))
        # Up to the per-address limit.
        for i in range(PER_IP - 1000):
            s = connect(port)
            socks.append(s)
            checks.check("connection %d from 127.0.0.1 answered" % len(socks), api_versions(s, 7000 + i))
        extra = connect(port)
        checks.check("connection %d from 127.0.0.1 is closed at once (max.connections.per.ip=%d)" % (PER_IP + 1,
                                                                                                   PER_IP),
                     closed_at_once(extra))
        extra.close()
        eddy_fixture.wait_until(lambda: "max.connections.per.ip=%d" % PER_IP in broker.log_text(), 5,
                                "the refusal in the log")
        checks.check("the refusal is logged naming the address and the limit", True)
        # Another source address is not limited by 127.0.0.1's count.
        others = []
        for i in range(MAX - PER_IP):
            s = connect(port, "127.0.0.2")
            others.append(s)
            checks.check("connection %d (from 127.0.0.2) answered" % (PER_IP + len(others)), api_versions(s, 8000 + i))
        # At max.connections: the next one waits in the backlog, unanswered.
        waiting = connect(port, "127.0.0.2")
        checks.check("at max.connections=%d the next client gets no answer while all stay open" % MAX,
                     not api_versions(waiting, 9000, timeout=1.5))
        eddy_fixture.wait_until(lambda: "max.connections=%d reached" % MAX in broker.log_text(), 5,
                                "the pause in the log")
        socks.pop().close()
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
        checks.check("once a connection closes the waiting client is served (%.2f s)" % (time.monotonic() - started),
                     answered)
        waiting.close()
        for s in others:
            s.close()
    finally:
        for s in socks:
            s.close()


if __name__ == "__main__":
    eddy_fixture.run_test(body, broker_overrides={"max.connections": str(MAX),
                                                  "max.connections.per.ip": str(PER_IP)})
