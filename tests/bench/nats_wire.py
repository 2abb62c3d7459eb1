"""A minimal NATS protocol client (stdlib only) for what nats_bench.c does
not do: JetStream API requests by hand ($JS.API.STREAM.CREATE with sources,
STREAM.INFO, STREAM.DELETE). Debian has no Python NATS client; the protocol
is text: INFO / CONNECT / SUB / PUB / MSG / HMSG / PING / PONG."""

import json
import os
import socket
import time


class NatsWire:
    def __init__(self, url, timeout=10.0):
        host, port = url.replace("nats://", "").rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.buf = b""
        self.timeout = timeout
        self._line()  # INFO
        # A prefix of its own: servers joined by a leaf node share the
        # account, so another client's replies to the same inbox would come
        # here too.
        self.inbox = "_INBOX.%s" % os.urandom(8).hex()
        self.sock.sendall(b'CONNECT {"verbose":false,"pedantic":false,"headers":true,"no_responders":true}\r\n'
                          b"SUB %s.* 1\r\nPING\r\n" % self.inbox.encode())
        while self._line() != b"PONG":
            pass
        self.seq = 0

    def close(self):
        self.sock.close()

    def _fill(self):
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise ConnectionError("nats-server closed the connection")
        self.buf += chunk

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _take(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def request(self, subject, payload):
        """Sends payload (dict or bytes) to subject; returns the decoded JSON
        reply. Raises RuntimeError on a no-responders status."""
        self.seq += 1
        inbox = "%s.%d" % (self.inbox, self.seq)
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.sock.sendall(b"PUB %s %s %d\r\n%s\r\n" % (subject.encode(), inbox.encode(), len(body), body))
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            line = self._line()
            if line == b"PING":
                self.sock.sendall(b"PONG\r\n")
                continue
            parts = line.split()
            if not parts or parts[0] not in (b"MSG", b"HMSG"):
                if parts and parts[0] == b"-ERR":
                    raise RuntimeError(line.decode())
                continue
            total = int(parts[-1])
            data = self._take(total)
            hdr_len = int(parts[-2]) if parts[0] == b"HMSG" else 0
            if parts[1].decode() != inbox:
                continue
            if hdr_len and b"503" in data[:hdr_len]:
                raise RuntimeError("no responders for %s" % subject)
            return json.loads(data[hdr_len:] or b"{}")
        raise TimeoutError("no reply to %s" % subject)

    def api(self, what, payload=b""):
        """A $JS.API request; raises RuntimeError when the reply is an error."""
        reply = self.request("$JS.API." + what, payload)
        if "error" in reply:
            raise RuntimeError("%s: %s" % (what, reply["error"]))
        return reply
