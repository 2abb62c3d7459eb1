"""A fault-injecting TCP proxy for tests, loopback only.

    proxy = FaultProxy(upstream_port=broker.port)   # listens on 127.0.0.1:<ephemeral>
    proxy.start()
    client connects to proxy.port ...
    proxy.cut_all()          # reset every open connection now
    proxy.cut_after(4096)    # reset each connection after it relays 4096 more bytes
    proxy.stall(2.0)         # relay nothing for 2 s (connections stay open)
    proxy.refuse(1.0)        # close new connections at once for 1 s
    proxy.accept_again()     # end a refuse() early
    proxy.set_upstream(port) # where new connections go (after a broker restart)
    proxy.close()

One thread relays everything with select(); faults take effect within one
loop turn (<= 50 ms). Cuts are resets (SO_LINGER 0), as a dropped link or a
crashed peer looks to the client. Counters: connections, cuts, bytes.
"""

import select
import socket
import struct
import threading
import time

LOOPBACK = "127.0.0.1"
_TICK = 0.05
_CHUNK = 65536


def _reset(sock):
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


class _Pair:
    def __init__(self, client, upstream, budget):
        self.client = client
        self.upstream = upstream
        self.to_upstream = bytearray()
        self.to_client = bytearray()
        self.budget = budget  # bytes left before a cut; None: unlimited
        self.closing = False  # one side ended: flush, then close


class FaultProxy:
    def __init__(self, upstream_port, upstream_host=LOOPBACK, listen_port=0):
        if upstream_host not in (LOOPBACK, "localhost"):
            raise ValueError("FaultProxy relays to loopback only")
        self._upstream = (LOOPBACK, upstream_port)
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((LOOPBACK, listen_port))
        self._listener.listen(64)
        self._listener.setblocking(False)
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._pairs = []
        self._cut_all = False
        self._cut_after = None
        self._stall_until = 0.0
        self._refuse_until = 0.0
        self._stop = False
        self._thread = None
        self.connections = 0
        self.cuts = 0
        self.refused = 0
        self.bytes = 0

    # -- control (any thread) ---------------------------------------------

    def start(self):
        self._thread = threading.Thread(target=self._run, name="fault-proxy", daemon=True)
        self._thread.start()
        return self

    def close(self):
        self._stop = True
        if self._thread is not None:
            self._thread.join(5)
        for p in self._pairs:
            _reset(p.client)
            _reset(p.upstream)
        self._pairs = []
        self._listener.close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    def set_upstream(self, port):
        with self._lock:
            self._upstream = (LOOPBACK, port)

    def cut_all(self):
        """Resets every open connection (both sides) at the next loop turn."""
        with self._lock:
            self._cut_all = True

    def cut_after(self, nbytes):
        """Each open and future connection is reset after relaying nbytes
        more bytes (both directions together); None turns this off."""
        with self._lock:
            self._cut_after = nbytes
            for p in self._pairs:
                p.budget = nbytes

    def stall(self, seconds):
        """Relays nothing for seconds; data waits in the socket buffers."""
        with self._lock:
            self._stall_until = time.monotonic() + seconds

    def resume(self):
        with self._lock:
            self._stall_until = 0.0

    def refuse(self, seconds):
        """For seconds, new connections are accepted and reset at once."""
        with self._lock:
            self._refuse_until = time.monotonic() + seconds

    def accept_again(self):
        """Ends a refuse() now."""
        with self._lock:
            self._refuse_until = 0.0

    def open_connections(self):
        with self._lock:
            return len(self._pairs)

    # -- relay thread -----------------------------------------------------

    def _drop(self, pair, cut):
        _reset(pair.client) if cut else pair.client.close()
        _reset(pair.upstream) if cut else pair.upstream.close()
        if cut:
            self.cuts += 1
        self._pairs.remove(pair)

    def _accept(self):
        while True:
            try:
                client, _addr = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            if time.monotonic() < self._refuse_until:
                self.refused += 1
                _reset(client)
                continue
            try:
                upstream = socket.create_connection(self._upstream, timeout=1)
            except OSError:
                self.refused += 1
                _reset(client)
                continue
            for s in (client, upstream):
                s.setblocking(False)
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.connections += 1
            self._pairs.append(_Pair(client, upstream, self._cut_after))

    def _relay(self, pair, src, dst_buffer):
        try:
            data = src.recv(_CHUNK)
        except (BlockingIOError, InterruptedError):
            return True
        except OSError:
            return False
        if not data:
            pair.closing = True
            return True
        if pair.budget is not None:
            if len(data) >= pair.budget:
                # Relay up to the budget, then cut.
                dst_buffer += data[:pair.budget]
                self.bytes += pair.budget
                pair.budget = 0
                return True
            pair.budget -= len(data)
        dst_buffer += data
        self.bytes += len(data)
        return True

    @staticmethod
    def _flush(sock, buffer):
        if not buffer:
            return True
        try:
            n = sock.send(buffer)
        except (BlockingIOError, InterruptedError):
            return True
        except OSError:
            return False
        del buffer[:n]
        return True

    def _run(self):
        while not self._stop:
            with self._lock:
                now = time.monotonic()
                stalled = now < self._stall_until
                if self._cut_all:
                    self._cut_all = False
                    for p in list(self._pairs):
                        self._drop(p, cut=True)
                readers = [self._listener]
                writers = []
                for p in self._pairs:
                    if not stalled and not p.closing:
                        readers += [p.client, p.upstream]
                    if not stalled and p.to_client:
                        writers.append(p.client)
                    if not stalled and p.to_upstream:
                        writers.append(p.upstream)
            try:
                readable, writable, _ = select.select(readers, writers, [], _TICK)
            except (OSError, ValueError):
                readable, writable = [], []
            with self._lock:
                if self._listener in readable:
                    self._accept()
                for p in list(self._pairs):
                    ok = True
                    if p.client in readable:
                        ok = self._relay(p, p.client, p.to_upstream)
                    if ok and p.upstream in readable:
                        ok = self._relay(p, p.upstream, p.to_client)
                    if ok and p.client in writable:
                        ok = self._flush(p.client, p.to_client)
                    if ok and p.upstream in writable:
                        ok = self._flush(p.upstream, p.to_upstream)
                    if not ok:
                        self._drop(p, cut=True)
                    elif p.budget == 0 and not p.to_client and not p.to_upstream:
                        self._drop(p, cut=True)
                    elif p.closing and not p.to_client and not p.to_upstream:
                        self._drop(p, cut=False)
