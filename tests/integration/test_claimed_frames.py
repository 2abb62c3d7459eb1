"""Frames that claim more than they send (issue 14): a size prefix is a
claim, not a reason to allocate. Connections that announce 100 MB frames
(within socket.request.max.bytes) and send 1 000 bytes, or 1 MB frames and
send half, must cost Eddy about what they sent; the broker keeps serving
others and frees it all when they close. RSS is read from /proc."""

import socket

import eddy_fixture
import kafka_wire as w

MiB = 1024 * 1024


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


def still_served(broker, checks, case):
    with w.Connection(broker.port) as conn:
        payload = conn.request(18, 0, b"")
        checks.check("%s: ApiVersions still answered on a new connection" % case, len(payload) > 0)


def body(broker, checks):
    pid = broker.proc.pid
    still_served(broker, checks, "start")
    base = rss_mib(pid)
    sockets = [claim(broker.port, 100_000_000, 1000) for _ in range(5)]
    settle(broker)
    grown = rss_mib(pid) - base
    print("5 x claim 100 MB, send 1000 B: RSS %.1f -> +%.1f MiB" % (base, grown))
    checks.check("5 connections claiming 100 MB frames cost < 8 MiB of RSS", grown < 8, "+%.1f MiB" % grown)
    still_served(broker, checks, "5 large claims")

    more = [claim(broker.port, 1_000_000, 500_000) for _ in range(40)]
    settle(broker)
    grown = rss_mib(pid) - base
    print("+ 40 x claim 1 MB, send 500 KB: +%.1f MiB" % grown)
    # What they sent is 19 MiB; growth is bounded by twice that.
    checks.check("40 connections that sent 500 KB of 1 MB frames cost < 2 x what they sent", grown < 2 * 40 * 0.5,
                 "+%.1f MiB" % grown)

    for s in sockets + more:
        s.close()
    still_served(broker, checks, "after closing")
    print("after close: +%.1f MiB (what the allocator keeps is not checked here)" % (rss_mib(pid) - base))


if __name__ == "__main__":
    eddy_fixture.run_test(body, broker_overrides={"socket.request.max.bytes": "104857600"})
