"""Frames that claim more than they send (issue 14): a size prefix is a
claim, not a reason to allocate. Connections that announce 100 MB frames
(within socket.request.max.bytes; no queued.max.request.bytes) and send
1 000 bytes, or 1 MB frames and send half, must cost Eddy about what they
sent; the broker keeps serving others (produce and fetch beside the stalled
claims) and frees it all when they close.

queued.max.request.bytes (a second broker, 16 MiB): eight clients that each
send a whole 12 MiB frame at once (96 MiB in all) raise Eddy's peak RSS by
at most about twice the bound (a frame's buffer grows, and moves), not by
96 MiB: connections that would exceed it stop being
read until memory frees; all are read in the end (and closed as the
garbage they are; a frame reserves its whole size before it is read, as in
Kafka, so frames never wait for each other half-read); meanwhile another
client produces and fetches. A frame claiming more than the bound closes its
connection at once, and one begun and stalled is closed after
eddy.request.read.timeout.ms, giving its memory to the frame waiting for it.
RSS and its peak are read from /proc."""

import socket
import threading
import time

import pytest

import eddy_fixture
import kafka_wire as w

MiB = 1024 * 1024
SENDERS = 8  # clients sending a whole 12 MiB frame each to the bounded broker


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    raise eddy_fixture.FixtureError("no VmRSS for pid %d" % pid)


def claim(port, size, send):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(size.to_bytes(4, "big") + b"\x01" * send)
    return s


def unread_bytes(port):
    """Bytes queued on eddy's side of its connections that it has not read
    yet (the rx_queue of /proc/net/tcp entries whose local port is port)."""
    total = 0
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            local_port = int(fields[1].split(":")[1], 16)
            if local_port == port:
                total += int(fields[4].split(":")[1], 16)
    return total


def settle(broker):
    """Until eddy has read every byte the clients sent."""
    eddy_fixture.wait_until(lambda: unread_bytes(broker.port) == 0, 10, "eddy to read what the clients sent",
                            interval=0.05)


def still_served(broker, case):
    with w.Connection(broker.port) as conn:
        payload = conn.request(18, 0, b"")
        assert len(payload) > 0, "%s: ApiVersions still answered on a new connection" % case


@pytest.fixture(scope="module")
def eddy_overrides():
    # No queued.max.request.bytes here (a claim reserves its whole size
    # there, so five 100 MB claims would hold the bound): what is measured is
    # that memory follows the bytes sent, not the claims.
    return {"socket.request.max.bytes": "104857600", "queued.max.request.bytes": "-1"}


BOUND_MIB = 16


@pytest.fixture(scope="module")
def bounded(eddy_factory):
    """The second broker: queued.max.request.bytes=16 MiB."""
    return eddy_factory({"queued.max.request.bytes": str(BOUND_MIB * MiB), "socket.request.max.bytes": "104857600",
                         "eddy.request.read.timeout.ms": "2000"})


def test_memory_follows_bytes_sent_not_claims(eddy):
    pid = eddy.proc.pid
    still_served(eddy, "start")
    base = rss_mib(pid)
    sockets = [claim(eddy.port, 100_000_000, 1000) for _ in range(5)]
    settle(eddy)
    grown = rss_mib(pid) - base
    print("5 x claim 100 MB, send 1000 B: RSS %.1f -> +%.1f MiB" % (base, grown))
    assert grown < 8, "5 connections claiming 100 MB frames cost < 8 MiB of RSS (+%.1f MiB)" % grown
    still_served(eddy, "5 large claims")
    # While they stall, another client produces and fetches.
    record = w.record_batch([(b"k", b"beside stalled claims", ())])
    with w.Connection(eddy.port) as conn:
        conn.request(19, 1, w.create_topics_v1("beside-claims", 1))
        code, offset = w.produce(conn, "beside-claims", 0, record)
        assert (code, offset) == (0, 0), "a produce beside 5 stalled 100 MB claims: accepted"
        assert len(w.fetch_all(conn, "beside-claims", 0)) == 1, "... and fetched back"

    more = [claim(eddy.port, 1_000_000, 500_000) for _ in range(40)]
    settle(eddy)
    grown = rss_mib(pid) - base
    print("+ 40 x claim 1 MB, send 500 KB: +%.1f MiB" % grown)
    # What they sent is 19 MiB; growth is bounded by twice that.
    assert grown < 2 * 40 * 0.5, \
        "40 connections that sent 500 KB of 1 MB frames cost < 2 x what they sent (+%.1f MiB)" % grown

    for s in sockets + more:
        s.close()
    still_served(eddy, "after closing")
    print("after close: +%.1f MiB (what the allocator keeps is not checked here)" % (rss_mib(pid) - base))


def peak_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    raise eddy_fixture.FixtureError("no VmHWM for pid %d" % pid)


def test_bounded_request_memory(bounded):
    other = bounded
    pid = other.proc.pid
    with w.Connection(other.port) as conn:
        conn.request(19, 1, w.create_topics_v1("beside", 1))
    peak0 = peak_mib(pid)
    rss0 = rss_mib(pid)
    frame = 12 * MiB
    senders = []
    done = []

    def send_whole_frame():
        s = socket.create_connection(("127.0.0.1", other.port), timeout=60)
        try:
            s.sendall(frame.to_bytes(4, "big") + b"\x01" * frame)
            s.settimeout(60)
            done.append(s.recv(1) == b"")  # eddy reads it all, then closes (not a request)
        except OSError:
            done.append(True)
        finally:
            s.close()

    for _ in range(SENDERS):
        t = threading.Thread(target=send_whole_frame, daemon=True)
        t.start()
        senders.append(t)
    # Meanwhile another client is served.
    record = w.record_batch([(b"k", b"while large frames wait", ())])
    with w.Connection(other.port) as conn:
        code, offset = w.produce(conn, "beside", 0, record)
        assert (code, offset) == (0, 0), "a produce beside %d MiB of large frames: accepted" % (SENDERS * 12)
        fetched = w.fetch_all(conn, "beside", 0)
        assert len(fetched) == 1, "... and fetched back: %r" % fetched
    for t in senders:
        t.join(120)
    grown = peak_mib(pid) - peak0
    print("%d x a whole 12 MiB frame (%d MiB) with queued.max.request.bytes=%d MiB: peak RSS +%.1f MiB" % (
        SENDERS, SENDERS * 12, BOUND_MIB, grown))
    assert len(done) == SENDERS, "all %d large frames were read in the end" % SENDERS
    # The last frames are freed just after their connections close.
    try:
        eddy_fixture.wait_until(lambda: rss_mib(pid) < rss0 + 4, 5, "RSS to come down", interval=0.1)
    except eddy_fixture.FixtureError:
        pass
    after = rss_mib(pid)
    print("RSS before the large frames %.1f MiB, after they were answered and closed %.1f MiB" % (rss0, after))
    assert after < rss0 + 4, \
        "the memory of the large frames went back to the system (RSS within 4 MiB of before): %.1f -> %.1f MiB" \
        % (rss0, after)
    # The bound counts frame buffers; a frame's buffer grows with what
    # arrives, and while it moves to a larger one both exist (up to
    # 8 + 12 MiB here): twice the bound is the ceiling checked.
    assert grown < 2 * BOUND_MIB + 8, \
        "peak RSS grew by less than twice the bound + 8 MiB (not %d MiB): +%.1f MiB" % (SENDERS * 12, grown)


def test_claim_over_the_bound_closes(bounded):
    s = claim(bounded.port, 20 * MiB, 100)
    s.settimeout(10)
    try:
        closed = s.recv(1) == b""
    except ConnectionResetError:
        closed = True
    s.close()
    assert closed, "a frame claiming more than queued.max.request.bytes closes its connection"
    # The reason is only in the log (no metric counts closed connections by cause).
    eddy_fixture.wait_until(lambda: "queued.max.request.bytes" in bounded.log_text(), 5, "the reason in the log")
    with w.Connection(bounded.port) as conn:
        assert len(conn.request(18, 0, b"")) > 0, "the broker still answers"


def test_stalled_claim_times_out(bounded):
    """A client that starts a 12 MiB frame and stalls holds 12 of the 16 MiB
    of request memory: another whole 12 MiB frame waits for it. After
    eddy.request.read.timeout.ms (2 s here) the stalled connection is
    closed and the waiting frame goes through; without the timeout it would
    wait for connections.max.idle.ms (10 minutes)."""
    broker = bounded
    stalled = claim(broker.port, 12 * MiB, 1000)
    settle(broker)
    started = time.monotonic()
    result = {}

    def send_whole_frame():
        s = socket.create_connection(("127.0.0.1", broker.port), timeout=60)
        try:
            s.sendall((12 * MiB).to_bytes(4, "big") + b"\x01" * (12 * MiB))
            s.settimeout(60)
            result["closed"] = s.recv(1) == b""  # read whole, then closed as not a request
        except OSError:
            result["closed"] = True
        finally:
            result["seconds"] = time.monotonic() - started
            s.close()

    t = threading.Thread(target=send_whole_frame, daemon=True)
    t.start()
    stalled.settimeout(10)
    try:
        closed = stalled.recv(1) == b""
    except (ConnectionResetError, socket.timeout):
        closed = False
    stalled_after = time.monotonic() - started
    stalled.close()
    t.join(60)
    print("a stalled 12 MiB claim closed after %.1f s; the frame waiting behind it read after %.1f s" % (
        stalled_after, result.get("seconds", -1)))
    assert closed and 1.5 < stalled_after < 6, \
        "a frame begun and stalled is closed after eddy.request.read.timeout.ms (2 s): %r" % ((closed, stalled_after),)
    assert result.get("closed") is True and result["seconds"] < 15, \
        "the frame that waited for its request memory went through then: %r" % result
    eddy_fixture.wait_until(lambda: "eddy.request.read.timeout.ms" in broker.log_text(), 5, "the reason in the log")
