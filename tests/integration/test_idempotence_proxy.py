"""fault_proxy.py's own checks, against a loopback echo server (no broker):
pass-through, cut every connection now, cut after N bytes, stall, refuse new
connections for a while, and a new upstream."""

import socket
import threading
import time

import pytest

import eddy_fixture


class EchoServer:
    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._echo, args=(conn,), daemon=True).start()

    @staticmethod
    def _echo(conn):
        with conn:
            while True:
                try:
                    data = conn.recv(65536)
                except OSError:
                    return
                if not data:
                    return
                try:
                    conn.sendall(data)
                except OSError:
                    return

    def close(self):
        self.sock.close()


def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def echo(s, data):
    """Sends data, returns what came back (b'' / partial when cut)."""
    s.sendall(data)
    got = b""
    while len(got) < len(data):
        try:
            chunk = s.recv(65536)
        except (ConnectionResetError, socket.timeout):
            break
        if not chunk:
            break
        got += chunk
    return got


def is_cut(s, timeout=3):
    s.settimeout(timeout)
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


@pytest.fixture
def servers():
    server, other = EchoServer(), EchoServer()
    yield server, other
    server.close()
    other.close()


def test_fault_proxy(servers, fault_proxy):
    server, other = servers
    proxy = fault_proxy(server.port)
    a = connect(proxy.port)
    payload = bytes(range(256)) * 400
    assert echo(a, payload) == payload, "pass-through relays 100 kB both ways"

    b = connect(proxy.port)
    echo(b, b"x")
    eddy_fixture.wait_until(lambda: proxy.open_connections() == 2, 5, "two relayed connections")
    proxy.cut_all()
    assert is_cut(a), "cut_all resets the first connection"
    assert is_cut(b), "cut_all resets the second connection"

    proxy.cut_after(1000)
    c = connect(proxy.port)
    assert echo(c, b"y" * 400) == b"y" * 400, "under the byte budget data still flows"
    c.settimeout(3)
    got = echo(c, b"z" * 4000)
    assert len(got) < 4000 and is_cut(c), "cut_after(1000) cuts once 1000 bytes are relayed (%d)" % len(got)
    proxy.cut_after(None)

    d = connect(proxy.port)
    proxy.stall(0.6)
    t0 = time.monotonic()
    got = echo(d, b"stalled")
    waited = time.monotonic() - t0
    assert got == b"stalled" and waited >= 0.4, "stall holds data, then delivers it: %r" % ((got, waited),)

    proxy.refuse(0.5)
    try:
        refused = is_cut(connect(proxy.port))
    except OSError:  # reset before connect() returned
        refused = True
    assert refused, "refuse resets new connections"

    def relays():
        try:
            return echo(connect(proxy.port), b"ok") == b"ok"
        except OSError:
            return False

    eddy_fixture.wait_until(relays, 5, "new connections relayed again after refuse")

    proxy.set_upstream(other.port)
    f = connect(proxy.port)
    assert echo(f, b"moved") == b"moved", "set_upstream: new connections reach the new server"
    assert echo(d, b"still") == b"still", "the first server's connection still works"
    assert proxy.connections >= 6 and proxy.cuts >= 3 and proxy.refused >= 1, \
        "counters count: %r" % ((proxy.connections, proxy.cuts, proxy.refused),)
