#!/usr/bin/env python3
"""Soak and memory figures of one eddy (issue #14), not part of make test:

    make soak                               # 30 minutes (SOAK_FLAGS for options)
    /usr/bin/python3 tests/bench/soak_bench.py --build build --minutes 30 \\
        [--connections 1000] [--partitions 100] [--cut-every 5] [--out DIR]

First the memory figures of an otherwise idle broker: RSS at start, with
1 000 connections open (one ApiVersions answered on each), after they
closed, and while five connections each claim a 100 MB frame, send 1 000
bytes of it and stall (a sixth client produces and fetches meanwhile).

Then the soak: --connections connections through a fault proxy (asyncio,
in this process) that resets a random 5% of its connections every
--cut-every seconds. Half the connections produce (Produce v3, one batch of
five 100-byte records every 2 s, acks=1 and acks=all alternating by
connection) to a partition of a --partitions topic; the other half fetch
(Fetch v4 long polls) a partition each, from offset 0 on. A cut connection
reconnects within a second; its request in flight is neither acknowledged
nor counted as lost (at-least-once: it may or may not be stored). The
broker's RSS is sampled every second; the report gives min / median / max
per minute. At the end every partition is read back on a direct connection:
every record acknowledged must be there, at its offset, with its value.

Report: <out>/soak.md (default <build>/bench-report). Exit status 1 when a
record acknowledged is missing, when an answer carried an error code (cuts
are the only faults injected, and they carry none), or when eddy died;
figures are printed, never judged by a limit.
"""

import argparse
import asyncio
import os
import random
import socket
import statistics
import struct
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import eddy_fixture  # noqa: E402
import kafka_wire as w  # noqa: E402

TOPIC = "soak"
RECORDS_PER_BATCH = 5
VALUE_BYTES = 100
PRODUCE_INTERVAL_S = 2.0
CUT_SHARE = 0.05


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS for pid %d" % pid)


def mib(kib):
    return "%.1f MiB" % (kib / 1024)


# ------------------------------------------------------------ memory figures


def settle_rss(pid, seconds=2.0):
    time.sleep(seconds)
    return rss_kib(pid)


def api_versions_on(sock, correlation):
    sock.sendall(w.frame(w.request_header(18, 0, correlation) + w.api_versions_v0()))
    size = struct.unpack(">i", recv_exactly(sock, 4))[0]
    recv_exactly(sock, size)


def recv_exactly(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed after %d of %d bytes" % (len(buf), n))
        buf += chunk
    return buf


def produce_and_fetch_once(port):
    """A client that is not one of the stalled ones: one record in, read back."""
    with w.Connection(port) as conn:
        code, offset = w.produce(conn, "memory", 0, w.record_batch([(None, b"still served", ())]), acks=1)
        if code != 0:
            raise RuntimeError("produce while others stall: error %d" % code)
        # The high watermark may wait for the group commit's fdatasync.
        deadline = time.monotonic() + 10
        while True:
            code, _hw, records = w.fetch(conn, "memory", 0, offset)
            if code == 0 and w.parse_batches(records):
                return
            if code != 0 or time.monotonic() > deadline:
                raise RuntimeError("fetch while others stall: error %d, %d bytes" % (code, len(records)))
            time.sleep(0.05)


def memory_figures(broker, connections):
    pid = broker.proc.pid
    figures = [("idle, after start", settle_rss(pid))]
    with w.Connection(broker.port) as conn:
        conn.request(19, 1, w.create_topics_v1("memory"))
    socks = []
    try:
        for i in range(connections):
            s = socket.create_connection(("127.0.0.1", broker.port), timeout=10)
            socks.append(s)
            api_versions_on(s, i + 1)
        figures.append(("%d connections open (one ApiVersions each)" % connections, settle_rss(pid)))
    finally:
        for s in socks:
            s.close()
    figures.append(("after they closed", settle_rss(pid)))
    claims = []
    try:
        for _ in range(5):
            s = socket.create_connection(("127.0.0.1", broker.port), timeout=10)
            s.sendall(struct.pack(">i", 100_000_000) + w.request_header(0, 3, 1) + b"\0" * (1000 - 10 - 7))
            claims.append(s)
        produce_and_fetch_once(broker.port)
        figures.append(("5 connections claiming 100 MB frames, stalled after 1 000 bytes", settle_rss(pid)))
    finally:
        for s in claims:
            s.close()
    figures.append(("after the claims closed", settle_rss(pid)))
    return figures


# --------------------------------------------------------------- the proxy


class CuttingProxy:
    """Relays 127.0.0.1:port to the broker; cut_some() resets a share of the
    open connections (SO_LINGER 0: the broker sees a reset, as from a
    dropped link)."""

    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.pairs = set()
        self.cuts = 0
        self.server = None
        self.port = None

    async def start(self):
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=1024)
        self.port = self.server.sockets[0].getsockname()[1]

    async def _serve(self, client_reader, client_writer):
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            client_writer.close()
            return
        pair = (client_writer, up_writer)
        self.pairs.add(pair)
        try:
            await asyncio.gather(self._pump(client_reader, up_writer), self._pump(up_reader, client_writer))
        finally:
            self.pairs.discard(pair)
            for wr in pair:
                wr.close()

    @staticmethod
    async def _pump(reader, writer):
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    def cut_some(self, share):
        for pair in random.sample(sorted(self.pairs, key=id), int(len(self.pairs) * share)):
            for wr in pair:
                sock = wr.get_extra_info("socket")
                if sock is not None:
                    try:
                        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    except OSError:
                        pass
                wr.transport.abort()
            self.cuts += 1

    async def close(self):
        self.server.close()
        for pair in list(self.pairs):
            for wr in pair:
                wr.transport.abort()


# ------------------------------------------------------------------ clients


class Tally:
    def __init__(self, partitions):
        self.acked = [dict() for _ in range(partitions)]  # offset -> value
        self.errors = {}  # (api, code) -> count
        self.requests = 0
        self.reconnects = 0
        self.fetched_bytes = 0

    def error(self, api, code):
        self.errors[(api, code)] = self.errors.get((api, code), 0) + 1


async def read_frame(reader):
    size = struct.unpack(">i", await reader.readexactly(4))[0]
    return await reader.readexactly(size)


def parse_produce_v3(payload):
    """(error code, base offset) of a one-partition Produce v3 response."""
    pos = 4 + 4  # correlation id, topic count
    name_len = struct.unpack_from(">h", payload, pos)[0]
    pos += 2 + name_len + 4 + 4  # name, partition count, partition index
    code, base_offset = struct.unpack_from(">hq", payload, pos)
    return code, base_offset


def parse_fetch_v4(payload):
    """(error code, records bytes) of a one-partition Fetch v4 response."""
    pos = 4 + 4 + 4  # correlation id, throttle, topic count
    name_len = struct.unpack_from(">h", payload, pos)[0]
    pos += 2 + name_len + 4 + 4  # name, partition count, partition index
    code = struct.unpack_from(">h", payload, pos)[0]
    pos += 2 + 8 + 8  # error, high watermark, last stable offset
    aborted = struct.unpack_from(">i", payload, pos)[0]
    pos += 4 + max(aborted, 0) * 16
    size = struct.unpack_from(">i", payload, pos)[0]
    pos += 4
    return code, payload[pos:pos + max(size, 0)]


async def reconnecting(port, tally, stop, session):
    """Runs session(reader, writer) on a connection to port until stop,
    connecting again after a cut (or a refused connect)."""
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(1)
            continue
        try:
            await session(reader, writer)
        except (ConnectionError, OSError, asyncio.IncompleteReadError):
            tally.reconnects += 1
            await asyncio.sleep(random.uniform(0.1, 1.0))
        finally:
            writer.close()


async def producer(index, port, partitions, tally, stop):
    partition = index % partitions
    acks = 1 if index % 2 else -1
    seq = 0

    async def session(reader, writer):
        nonlocal seq
        correlation = 0
        while not stop.is_set():
            values = [(b"%d:%d:" % (index, seq + i)).ljust(VALUE_BYTES, b".") for i in range(RECORDS_PER_BATCH)]
            seq += RECORDS_PER_BATCH
            correlation += 1
            batch = w.record_batch([(None, v, ()) for v in values])
            writer.write(w.frame(w.request_header(0, 3, correlation, "soak-p%d" % index) +
                                 w.produce_v3(TOPIC, partition, batch, acks=acks)))
            await writer.drain()
            code, base = parse_produce_v3(await read_frame(reader))
            tally.requests += 1
            if code != 0:
                tally.error("Produce", code)
            else:
                for i, v in enumerate(values):
                    tally.acked[partition][base + i] = v
            await asyncio.sleep(PRODUCE_INTERVAL_S * random.uniform(0.5, 1.5))

    await reconnecting(port, tally, stop, session)


async def fetcher(index, port, partitions, tally, stop):
    partition = index % partitions
    offset = 0

    async def session(reader, writer):
        nonlocal offset
        correlation = 0
        while not stop.is_set():
            correlation += 1
            writer.write(w.frame(w.request_header(1, 4, correlation, "soak-f%d" % index) +
                                 w.fetch_v4(TOPIC, partition, offset, max_bytes=65536, max_wait_ms=1000,
                                            min_bytes=4096)))
            await writer.drain()
            code, records = parse_fetch_v4(await read_frame(reader))
            tally.requests += 1
            if code != 0:
                tally.error("Fetch", code)
                await asyncio.sleep(1)
                continue
            tally.fetched_bytes += len(records)
            for _base, last, _data in w.parse_batches(records):
                offset = max(offset, last + 1)

    await reconnecting(port, tally, stop, session)


async def sample_rss(pid, minutes_out, stop, started):
    while not stop.is_set():
        minute = int((time.monotonic() - started) // 60)
        minutes_out.setdefault(minute, []).append(rss_kib(pid))
        try:
            await asyncio.wait_for(stop.wait(), 1.0)
        except asyncio.TimeoutError:
            pass


async def cutter(proxy, every, stop):
    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), every)
        except asyncio.TimeoutError:
            proxy.cut_some(CUT_SHARE)


async def soak(broker, opts):
    proxy = CuttingProxy(broker.port)
    await proxy.start()
    tally = Tally(opts.partitions)
    stop = asyncio.Event()
    rss_minutes = {}
    started = time.monotonic()
    tasks = [asyncio.ensure_future(sample_rss(broker.proc.pid, rss_minutes, stop, started)),
             asyncio.ensure_future(cutter(proxy, opts.cut_every, stop))]
    for i in range(opts.connections):
        role = producer if i % 2 == 0 else fetcher
        tasks.append(asyncio.ensure_future(role(i // 2, proxy.port, opts.partitions, tally, stop)))
        if i % 50 == 49:
            await asyncio.sleep(0.05)  # do not hit the listener's backlog all at once
    deadline = started + opts.minutes * 60
    while time.monotonic() < deadline and broker.proc.poll() is None:
        await asyncio.sleep(1)
    stop.set()
    await proxy.close()
    await asyncio.wait(tasks, timeout=15)
    return tally, proxy.cuts, rss_minutes, time.monotonic() - started


def verify(broker, tally, partitions):
    """Acknowledged records missing or changed, reading every partition back."""
    missing = 0
    with w.Connection(broker.port, timeout=60) as conn:
        for p in range(partitions):
            stored = {}
            for _base, _last, data in w.fetch_all(conn, TOPIC, p):
                for offset, _key, value, _headers in w.parse_records(data):
                    stored[offset] = value
            missing += sum(1 for offset, value in tally.acked[p].items() if stored.get(offset) != value)
    return missing


# ------------------------------------------------------------------- report


def report(opts, figures, tally, cuts, rss_minutes, elapsed, missing, alive):
    acked = sum(len(a) for a in tally.acked)
    lines = ["# Soak and memory figures", "",
             "`/usr/bin/python3 tests/bench/soak_bench.py --build %s --minutes %g --connections %d "
             "--partitions %d --cut-every %g` on %s" % (opts.build, opts.minutes, opts.connections, opts.partitions,
                                                          opts.cut_every, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())),
             "", "## Memory (RSS of eddy)", "", "| state | RSS |", "|---|---|"]
    lines += ["| %s | %s |" % (label, mib(kib)) for label, kib in figures]
    lines += ["", "## Soak", "",
              "%d connections through a proxy cutting %d%% of them every %g s, %d partitions, %.1f min: "
              "%d requests answered, %d records acknowledged, %.1f MiB fetched, %d cuts, %d reconnects." % (
                  opts.connections, CUT_SHARE * 100, opts.cut_every, opts.partitions, elapsed / 60, tally.requests,
                  acked, tally.fetched_bytes / (1 << 20), cuts, tally.reconnects),
              "", "- acknowledged records missing or changed when read back: **%d**" % missing,
              "- answers with an error code: %s" % (
                  ", ".join("%s %s x%d" % (api, code, n) for (api, code), n in sorted(tally.errors.items())) or "none"),
              "- eddy %s" % ("ran throughout" if alive else "**died**"),
              "", "| minute | RSS min | median | max |", "|---|---|---|---|"]
    for minute in sorted(rss_minutes):
        s = rss_minutes[minute]
        lines.append("| %d | %s | %s | %s |" % (minute, mib(min(s)), mib(statistics.median(s)), mib(max(s))))
    full = [m for m in sorted(rss_minutes) if len(rss_minutes[m]) >= 30]
    if len(full) >= 2:
        first, last = statistics.median(rss_minutes[full[0]]), statistics.median(rss_minutes[full[-1]])
        lines += ["", "Median RSS of the last full minute / the first: %.2f" % (last / first)]
    return "\n".join(lines) + "\n"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default="build", help="the build directory holding eddy")
    p.add_argument("--minutes", type=float, default=30.0)
    p.add_argument("--connections", type=int, default=1000)
    p.add_argument("--partitions", type=int, default=100)
    p.add_argument("--cut-every", type=float, default=5.0, help="seconds between two rounds of cuts")
    p.add_argument("--out", help="report directory (default <build>/bench-report)")
    opts = p.parse_args()
    if opts.minutes <= 0 or opts.connections < 2 or opts.partitions < 1 or opts.cut_every <= 0:
        p.error("--minutes and --cut-every must be positive, --connections at least 2, --partitions at least 1")
    return opts


def main():
    opts = parse_args()
    eddy_bin = os.path.join(opts.build, "eddy")
    if not os.access(eddy_bin, os.X_OK):
        sys.exit("soak_bench: %s is not an executable (build first: make build)" % eddy_bin)
    os.environ["EDDY_BIN"] = os.path.abspath(eddy_bin)
    os.environ["EDDY_SOURCE_DIR"] = SOURCE
    out_dir = opts.out or os.path.join(opts.build, "bench-report")
    # Nothing may fall out of retention during the soak (the read-back would
    # call it lost): 1 MiB segments that roll and recycle, 16 MiB a partition.
    broker = eddy_fixture.Broker(overrides={
        "max.connections": opts.connections + 64,
        # Kafka's default frame limit and a request memory cap above one
        # claim, so that the 100 MB claims are frames Eddy holds on to (the
        # gateway config closes them at once: frames over 16 MiB, or over
        # the 64 MiB cap of request memory).
        "socket.request.max.bytes": 104857600, "queued.max.request.bytes": 200 << 20, "log.segment.bytes": 1 << 20, "log.retention.bytes": 16 << 20,
        "eddy.disk.budget.bytes": (opts.partitions * 17 + 64) << 20}, tmp=tempfile.mkdtemp(prefix="eddy-soak-"))
    broker.start()
    try:
        figures = memory_figures(broker, opts.connections)
        with w.Connection(broker.port) as conn:
            conn.request(19, 1, w.create_topics_v1(TOPIC, partitions=opts.partitions))
        tally, cuts, rss_minutes, elapsed = asyncio.run(soak(broker, opts))
        alive = broker.proc.poll() is None
        missing = verify(broker, tally, opts.partitions) if alive else sum(len(a) for a in tally.acked)
    finally:
        broker.stop()
        broker.close()
    text = report(opts, figures, tally, cuts, rss_minutes, elapsed, missing, alive)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "soak.md"), "w") as f:
        f.write(text)
    print(text)
    sys.exit(0 if missing == 0 and not tally.errors and alive else 1)


if __name__ == "__main__":
    main()
