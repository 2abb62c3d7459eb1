#!/usr/bin/python3
"""Eddy side by side with Apache Kafka (the broker whose protocol it
speaks), NATS JetStream (the broker a gateway user might otherwise run) and
what the hardware allows, all measured in one run on one machine; writes a
Markdown report, a PNG chart and the raw figures. `make bench` runs it; see
tests/bench/METHOD.md for what is compared how.

  /usr/bin/python3 tests/bench/compare_bench.py --build BUILD_DIR [--out DIR]
      [--runs 3] [--scale 1.0] [--consume-mib 1024] [--latency-seconds 5]
      [--gateway-seconds 12] [--peers kafka,jetstream]
      [--workloads produce,perftest,consume,latency,gatewayday,validation]
      [--publish tests/bench/results]

Workloads are functions Context -> [row]; WORKLOADS lists them in the order
they run. A new one (as gatewayday_workload, many small producers, their
consumers and a forwarding link) is one more such function: it measures with
ctx.measure(label, system, run_once) and returns rows made by
throughput_row() or latency_row(), which the report renders like the rest.
A row holds Eddy's series and one per peer (ctx.peers: Kafka, JetStream),
each with whether that peer's mode gives Eddy's guarantee.
"""

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_limits  # noqa: E402
import bench_machine  # noqa: E402
import bench_report  # noqa: E402
import gateway_day  # noqa: E402
from bench_measure import ClientFailed, Series, measure, run_client, summarize  # noqa: E402
import bench_systems  # noqa: E402
from bench_systems import EddySystem, JetStreamSystem, KafkaSystem  # noqa: E402

SIZES = (100, 1024, 16384)
PARTITIONS = (1, 8)
# Messages per produce run at --scale 1 (100 B: 100 MB; otherwise 256 MiB).
PRODUCE_COUNTS = {100: 1_000_000, 1024: 262_144, 16384: 16_384}
EDDY_MODES = ("acks1", "acks_all_page_cache", "acks_all_disk")
MODE_LABELS = {"acks1": "acks=1", "acks_all_page_cache": "acks=all, page cache", "acks_all_disk": "acks=all, disk"}
MODE_SHORT = {"acks1": "acks1", "acks_all_page_cache": "all-pc", "acks_all_disk": "all-disk"}
LATENCY_RATES = (1000, 10000)
LATENCY_SIZE = 1024
CONSUME_SIZE = 1024
PERF_TEST_SIZE = 1024
PEERS = ("kafka", "jetstream")


class Context:
    """What a workload needs: the options, the systems (eddy, and the peers
    in the order they are shown: kafka, jetstream, either None when not
    run), the measured limits, and measure() (warm-up + runs + medians, with
    the broker's CPU and peak RSS when a system is given)."""

    def __init__(self, opts, eddy, kafka, jetstream, log):
        self.opts = opts
        self.eddy = eddy
        self.kafka = kafka
        self.jetstream = jetstream
        self.peers = [p for p in (kafka, jetstream) if p is not None]
        self.limits = {}
        self.log = log
        self.started = time.monotonic()

    def measure(self, label, system, run_once, cleanup=None):
        """Warm-up + opts.runs runs of run_once(index, warmup) -> values;
        cleanup(index) after each, outside the measurement."""
        self.log("[%5.0f s] %s" % (time.monotonic() - self.started, label))
        return measure(label, run_once, self.opts.runs, meter=system.meter if system else None, log=self.log,
                       cleanup=cleanup)

    @contextlib.contextmanager
    def alone(self, system):
        """The other systems' brokers stopped (SIGSTOP) while `system` is
        measured, and continued after. For the latency rows: an idle
        broker's timers and threads (the JVM's above all) wake on the same
        two cores and set the tail of a latency run. Measured on the
        development machine, Eddy's e2e p99 at 1 000 msg/s (acks=all, disk):
        1.05 to 2.16 ms with Kafka and nats-server idle beside it, 0.63 to
        0.78 ms with them stopped (3 runs each, alive, stopped, alive again).
        Every system's rows are measured alone the same way, as fio's floor
        is."""
        others = [s for s in [self.eddy] + self.peers if s is not system and s.meter is not None]
        for other in others:
            os.kill(other.meter.pid, signal.SIGSTOP)
        try:
            yield
        finally:
            for other in others:
                os.kill(other.meter.pid, signal.SIGCONT)

    def limit(self, key):
        """(description, median MB/s) of a throughput limit."""
        desc, series = self.limits[key]
        return desc, series.medians().get("mb_per_s")

    def write_limit(self, durability):
        """The tighter of the file-write and loopback ceilings for a produce
        with this durability."""
        disk_key = "fio_write_end_fsync" if durability == "acks_all_disk" else "fio_write"
        candidates = [self.limit(disk_key), self.limit("iperf3")]
        candidates = [c for c in candidates if c[1]]
        return min(candidates, key=lambda c: c[1]) if candidates else (None, None)


def _peer_fields(peers):
    """peers: {system name: (series, matches)}; matches: that system's mode
    gives the guarantee of Eddy's (else its figure is a reference only)."""
    return {"peers": {name: s for name, (s, _m) in peers.items()},
            "matches": {name: m for name, (_s, m) in peers.items()}}


def throughput_row(short, workload, mode, eddy, peers, limit, cpu_floor=None):
    """A row compared by MB/s. short: its chart label. peers: {name:
    (series, matches)} (see _peer_fields). limit: (description, MB/s), or a
    function returning that, called once every limit is measured (see
    resolve_limits). cpu_floor: the key of the copy-floor limit its broker
    CPU per GB is divided by (copy_floor_write, copy_floor_sendfile)."""
    row = {"kind": "throughput", "short": short, "workload": workload, "mode": mode, "eddy": eddy,
           **_peer_fields(peers), "limit_name": None, "limit": None, "cpu_floor": cpu_floor}
    if callable(limit):
        row["limit_of"] = limit
    else:
        row["limit_name"], row["limit"] = limit
    return row


def resolve_limits(rows):
    """Fills in the limits given as functions (their medians pool the passes
    before and after the workloads)."""
    for row in rows:
        limit_of = row.pop("limit_of", None)
        if limit_of:
            try:
                row["limit_name"], row["limit"] = limit_of()
            except KeyError:  # the limit was never measured (run stopped)
                pass


def latency_row(short, workload, mode, eddy, peers, floor=(None, None), open_floor=(None, None)):
    """A row compared by end-to-end latency percentiles; floor: (description,
    Series with p50_us/p99_us/p999_us) of what the hardware needs at least
    (fio's, the ratio's); open_floor: (description, Series with
    e2e_p50_us/...) of sync_floor.c, the same floor timed as a broker's
    records are (InterleavedSyncFloor)."""
    return {"kind": "latency", "short": short, "workload": workload, "mode": mode, "eddy": eddy,
            **_peer_fields(peers), "limit_name": floor[0], "limit": floor[1],
            "open_floor_name": open_floor[0], "open_floor": open_floor[1]}


def size_label(size):
    return "%d KiB" % (size // 1024) if size >= 1024 and size % 1024 == 0 else "%d B" % size


# --------------------------------------------------------------------------
# Limits
# --------------------------------------------------------------------------

LIMITS = (
    # key, description, function(work_dir, opts, warmup) -> values
    ("fio_write", "fio sequential write, page cache (1 MiB writes)",
     lambda d, o, w: bench_limits.fio_write(d, o.fio_mib)),
    ("fio_write_end_fsync", "fio sequential write to disk (1 MiB writes, final fsync timed)",
     lambda d, o, w: bench_limits.fio_write_end_fsync(d, o.fio_mib)),
    ("fio_write_fdatasync", "fio sequential write + fdatasync per 1 MiB",
     lambda d, o, w: bench_limits.fio_write_fdatasync(d, o.fio_mib)),
    ("fio_read_direct", "fio sequential read, O_DIRECT (1 MiB reads)",
     lambda d, o, w: bench_limits.fio_read_direct(d, o.fio_mib)),
    ("fio_sync_latency", "fdatasync after a 1 KiB write (fio)",
     lambda d, o, w: bench_limits.fio_sync_latency(d, 2)),
    ("fio_sync_latency_1000", "fdatasync after a 1 KiB write, 1 ms apart (fio --thinktime=1000)",
     lambda d, o, w: bench_limits.fio_sync_latency(d, 2, 1000)),
    ("fio_sync_latency_10000", "fdatasync after a 1 KiB write, 0.1 ms apart (fio --thinktime=100)",
     lambda d, o, w: bench_limits.fio_sync_latency(d, 2, 100)),
    ("iperf3", "iperf3 loopback TCP, one stream", lambda d, o, w: bench_limits.iperf3_loopback(1 if w else 3)),
    ("copy_floor_write", "copy floor, produce: recv from loopback TCP + pwrite into a preallocated file",
     lambda d, o, w: bench_limits.copy_floor_write(copy_floor_tool(o), d, o.fio_mib)),
)


def copy_floor_tool(opts):
    return os.path.join(opts.build, "tests", "bench", "copy_floor")


def raw_fetch_tool(opts):
    return os.path.join(opts.build, "tests", "bench", "raw_fetch")


def sync_floor_tool(opts):
    return os.path.join(opts.build, "tests", "bench", "sync_floor")


def raw_e2e_tool(opts):
    return os.path.join(opts.build, "tests", "bench", "raw_e2e")


def measure_limits(ctx, when):
    """Measures every limit (warm-up + runs). Called before the workloads
    and again after them: the runs of both passes are pooled, so that a
    burst of load from elsewhere on the machine during one pass moves the
    median less."""
    work = os.path.join(ctx.opts.work, "fio")
    for key, desc, fn in LIMITS:
        series = ctx.measure("limit (%s): %s" % (when, desc), None, lambda i, w: fn(work, ctx.opts, w))
        if key in ctx.limits:
            ctx.limits[key][1].pool(series)
        else:
            ctx.limits[key] = (desc, series)
    shutil.rmtree(work, ignore_errors=True)


# --------------------------------------------------------------------------
# Workloads
# --------------------------------------------------------------------------

def prime(ctx, systems):
    """Before the first measurement, every broker carries a little of each
    workload's traffic (produce 1 KiB to 1 and 8 partitions in each mode,
    read one topic back, 2 s of e2e at 1 000 msg/s), not measured: Kafka's
    JVM compiles its hot paths while it runs (it does not reach full speed
    within one warm-up run otherwise, see METHOD.md); Eddy and JetStream
    get the same, for symmetry. Topics deleted afterwards."""
    count = max(1000, int(PRODUCE_COUNTS[1024] * ctx.opts.scale // 4))
    started = time.monotonic()
    for system in systems:
        t0 = time.monotonic()
        try:
            for mode in EDDY_MODES:
                if system.variant(mode) == "publish" and mode != EDDY_MODES[0]:
                    continue
                for parts in PARTITIONS:
                    name = "prime-%d-%s" % (parts, _tag(system, mode))
                    system.produce(name, count, 1024, parts, mode)()
                    if parts == 1 and mode == EDDY_MODES[0]:
                        system.consume(name, count)()
                    system.delete(name, parts)
                name = "prime-lat-%s" % _tag(system, mode)
                system.latency(name, 1000, 2, 1024, mode)()
                system.delete(name, 1)
        except ClientFailed as e:  # the measured runs will show it again, flagged
            ctx.log("priming %s: %s" % (system.name, e))
        ctx.log("primed %s (not measured): %.0f s" % (system.name, time.monotonic() - t0))
    ctx.log("[%5.0f s] priming done in %.0f s" % (time.monotonic() - ctx.started, time.monotonic() - started))


def fresh_topics(system, prefix, partitions, run):
    """(run_once, cleanup) for ctx.measure: run i gets a fresh topic (stream)
    named PREFIX-rI, deleted after it. run(name, warmup) -> values."""
    def name(i):
        return "%s-r%d" % (prefix, i)

    return (lambda i, warmup: run(name(i), warmup)), (lambda i: system.delete(name(i), partitions))


def peer_mode_label(system, mode):
    if isinstance(system, KafkaSystem):
        return system.mode_label(mode)
    if isinstance(system, JetStreamSystem):
        return "publish ack"
    return MODE_LABELS[mode]


def measure_peers(ctx, cache, what, mode, measure_one):
    """Every peer's series for Eddy's `mode` of the workload `what`: a peer
    whose variant of this mode was measured already (JetStream's one
    publish mode) is not measured again. measure_one(system, label) -> a
    Series. Returns {name: (series, matches)} for the row."""
    out = {}
    for peer in ctx.peers:
        key = (peer.name, peer.variant(mode))
        if key not in cache:
            cache[key] = measure_one(peer, "%s %s, %s" % (peer.name, what, peer_mode_label(peer, mode)))
        out[peer.name] = (cache[key], peer.matches(mode))
    return out


def _tag(system, mode):
    return "%s-%s" % (system.name.lower()[:2], MODE_SHORT[mode]) if system.variant(mode) != "publish" else "js"


def adjacent_floor(ctx, label, syncs, nbytes):
    """The copy floor measured right before a produce series (warm-up and
    runs, as the series has), moving the same bytes and doing the same
    durability work: an fdatasync per MiB where the system syncs in that
    mode. A row's CPU / copy floor divides by it: on a VM the cost of the
    copy into the page cache drifts between minutes (METHOD.md), and a floor
    measured a quarter of an hour away says less about the run next to it."""
    mib = max(64, nbytes >> 20)
    work = os.path.join(ctx.opts.work, "floor")
    what = "copy floor%s, %d MiB, before: %s" % (" with an fdatasync per MiB" if syncs else "", mib, label)
    series = ctx.measure(what, None, lambda i, w: bench_limits.copy_floor_write(copy_floor_tool(ctx.opts), work, mib,
                                                                               sync=syncs))
    shutil.rmtree(work, ignore_errors=True)
    return series


def produce_workload(ctx):
    """Every size x partition count x Eddy durability mode, next to Kafka in
    the matching mode and JetStream in its one publish mode (measured once
    per size and partition count). For each mode the peers run first, then
    Eddy. The warm-up sends a quarter of the messages. (Closures below run
    within their loop iteration.)"""
    rows = []
    for size in SIZES:
        count = max(1000, int(PRODUCE_COUNTS[size] * ctx.opts.scale))
        for parts in PARTITIONS:
            what = "produce %s, %d partition%s" % (size_label(size), parts, "s" if parts > 1 else "")
            cache = {}
            for mode in EDDY_MODES:
                def one(system, label, mode=mode):
                    floor = adjacent_floor(ctx, label, system.syncs(mode), count * size)
                    series = ctx.measure(label, system, *fresh_topics(
                        system, "p%d-%d-%s" % (size, parts, _tag(system, mode)), parts,
                        lambda name, warmup: system.produce(name, count // 4 if warmup else count, size, parts,
                                                            mode)()))
                    series.floor = floor
                    return series
                peers = measure_peers(ctx, cache, what, mode, one)
                eddy = one(ctx.eddy, "Eddy %s, %s" % (what, MODE_LABELS[mode]))
                short = "%s %dp %s" % (size_label(size).replace(" ", ""), parts, MODE_SHORT[mode])
                rows.append(throughput_row(short, what, MODE_LABELS[mode], eddy, peers,
                                           lambda mode=mode: ctx.write_limit(mode), cpu_floor="copy_floor_write"))
    return rows


def perftest_workload(ctx):
    """kafka-producer-perf-test (the Java producer, its defaults but acks)
    against Kafka and against Eddy: 1 KiB records to a fresh 1-partition
    topic per run, in each durability mode. A measured run sends the produce
    workload's 1 KiB count plus a quarter more first as the tool's own
    warm-up (--warmup-records: the JVM compiles the client meanwhile); the
    figures are its steady-state summary. The discarded warm-up run sends a
    quarter as many."""
    rows = []
    count = max(1000, int(PRODUCE_COUNTS[PERF_TEST_SIZE] * ctx.opts.scale))
    what = "kafka-producer-perf-test (Java client), %s, 1 partition" % size_label(PERF_TEST_SIZE)
    for mode in EDDY_MODES:
        def one(system, label, mode=mode):
            def run(name, warmup):
                n = count // 4 if warmup else count
                w = n // 4
                system.create(name, 1, mode)
                argv = bench_systems.perf_test_argv(system.bootstrap, name, n + w, w, PERF_TEST_SIZE,
                                                    "1" if mode == "acks1" else "all", ctx.opts.work)
                return bench_systems.run_perf_test(argv, n + w, w, PERF_TEST_SIZE)
            return ctx.measure(label, system, *fresh_topics(system, "perf-%s" % _tag(system, mode), 1, run))
        peers = {}
        if ctx.kafka is not None:
            peers["Kafka"] = (one(ctx.kafka, "Kafka %s, %s" % (what, ctx.kafka.mode_label(mode))),
                              ctx.kafka.matches(mode))
        eddy = one(ctx.eddy, "Eddy %s, %s" % (what, MODE_LABELS[mode]))
        row = throughput_row("perf-test 1KiB %s" % MODE_SHORT[mode], what, MODE_LABELS[mode], eddy, peers,
                             lambda mode=mode: ctx.write_limit(mode))
        row["perf_test"] = True
        rows.append(row)
    return rows


def consume_workload(ctx):
    """A topic of --consume-mib MiB of 1 KiB messages in one partition, read
    from the start (the warm-up reads a quarter); the limit is sendfile of
    Eddy's segment files."""
    count = (ctx.opts.consume_mib << 20) // CONSUME_SIZE
    what = "consume %d MiB from the start (1 KiB messages, 1 partition)" % ctx.opts.consume_mib
    # Loading is not measured; acks=1 for Eddy and Kafka (default topic
    # configs), JetStream's publish ack.
    ctx.log("loading %d MiB into each system" % ctx.opts.consume_mib)
    for system in [ctx.eddy] + ctx.peers:
        system.produce("consume", count, CONSUME_SIZE, 1, "acks1")()
    warm = count // 4
    peers = {}
    for system in [ctx.eddy] + ctx.peers:
        series = ctx.measure("%s %s" % (system.name, what), system,
                             lambda i, w, system=system: system.consume("consume", warm if w else count)())
        if system is ctx.eddy:
            eddy = series
        else:
            peers[system.name] = (series, True)
    # The same topic read by a client that parses nothing (raw_fetch.c:
    # plain Fetch v4, batch headers only): what the broker serves when the
    # client is not the bottleneck. Eddy and Kafka (JetStream has no Fetch).
    raw_what = "consume %d MiB from the start, raw Fetch loop (no record parsing)" % ctx.opts.consume_mib
    raw = {}
    for system in [ctx.eddy] + [p for p in ctx.peers if isinstance(p, KafkaSystem)]:
        raw[system.name] = ctx.measure(
            "%s %s" % (system.name, raw_what), system,
            lambda i, w, system=system: run_client([raw_fetch_tool(ctx.opts), system.bootstrap, "consume",
                                                    warm if w else count, CONSUME_SIZE]))
    segments = ctx.eddy.segment_files("consume")
    ctx.limits["sendfile"] = ("sendfile(2) of the topic's segment files to loopback TCP", ctx.measure(
        "limit: sendfile loop over %d segment files" % len(segments), None,
        lambda i, w: bench_limits.sendfile_loopback(segments)))
    ctx.limits["copy_floor_sendfile"] = ("copy floor, consume: sendfile(2) of the same segment files", ctx.measure(
        "limit: copy floor, sendfile of %d segment files" % len(segments), None,
        lambda i, w: bench_limits.copy_floor_sendfile(copy_floor_tool(ctx.opts), segments)))
    rows = [throughput_row("consume %dMiB" % ctx.opts.consume_mib, what, "from the page cache", eddy, peers,
                           ctx.limit("sendfile"), cpu_floor="copy_floor_sendfile")]
    rows.append(throughput_row("raw fetch %dMiB" % ctx.opts.consume_mib, raw_what, "from the page cache",
                               raw["Eddy"], {n: (v, True) for n, v in raw.items() if n != "Eddy"},
                               ctx.limit("sendfile"), cpu_floor="copy_floor_sendfile"))
    return rows


SYNC_PAUSE_US = {1000: 1000, 10000: 100}  # fio --thinktime per latency rate, as in LIMITS


class InterleavedSyncFloor:
    """The floors of a disk-mode latency row, measured right before each of
    Eddy's runs of that row (its warm-up's too, discarded like the warm-up),
    each as long as one of those runs, with the other brokers stopped as
    during Eddy's runs:
    - fio's fdatasync latency at the row's pace (--thinktime): the issue's
      floor, each sync timed alone (closed loop: a write waits for the sync
      before it, so a slow sync's delay to the writes behind it is not
      counted);
    - sync_floor.c at the row's rate: writes kept to their schedule, a
      group-commit sync thread, each record timed from its write to the end
      of its sync (open loop, as a broker's records are).
    This VM's disk stalls for tens of milliseconds in some minutes and not
    in others: floors measured before and after the whole bench do not see
    the stalls that fall on a row, and one measured in a block before
    Eddy's series not those that fall on its later runs (METHOD.md). Use:
    run(0) before Eddy's warm-up, then after_run(i) after each of Eddy's
    runs."""

    def __init__(self, ctx, rate, what):
        self.ctx = ctx
        self.rate = rate
        self.pause = SYNC_PAUSE_US[rate]
        self.seconds = max(1, ctx.opts.latency_seconds)
        self.work = os.path.join(ctx.opts.work, "floor-paired")
        self.desc = "fdatasync after a 1 KiB write, %s apart (fio --thinktime=%d), one run before each of Eddy's" % (
            "1 ms" if self.pause == 1000 else "%.1f ms" % (self.pause / 1000.0), self.pause)
        self.open_desc = ("1 KiB writes at %d/s with a group-commit fdatasync thread, each write timed to the end "
                          "of its sync (sync_floor.c), one run before each of Eddy's" % rate)
        self.series = Series("%s: %s" % (self.desc, what))
        self.open_series = Series("%s: %s" % (self.open_desc, what))

    def _one(self, series, name, index, measure_once):
        seconds = max(1, self.seconds // 2) if index == 0 else self.seconds
        try:
            values = measure_once(seconds)
        except ClientFailed as e:
            values = {"error": str(e)}
        finally:
            shutil.rmtree(self.work, ignore_errors=True)
        values["pair"] = index  # Eddy's run of the same index follows
        if index == 0:
            series.warmup = values
        elif "error" in values:
            series.failures.append(values)
        else:
            series.runs.append(values)
        self.ctx.log("  %-52s %s" % ("%s before Eddy's %s" % (name, "warm-up" if index == 0 else "run %d" % index),
                                       summarize(values)))

    def run(self, index):
        """The floor runs paired with Eddy's run `index` (0: the warm-up)."""
        self._one(self.series, "fio", index,
                  lambda seconds: bench_limits.fio_sync_latency(self.work, seconds, self.pause))
        self._one(self.open_series, "sync_floor", index,
                  lambda seconds: bench_limits.sync_floor(sync_floor_tool(self.ctx.opts), self.work, self.rate,
                                                          seconds, LATENCY_SIZE))

    def after_run(self, index):
        if index < self.ctx.opts.runs:
            self.run(index + 1)

    def floor(self):
        """(description, Series) of fio, for latency_row's floor."""
        return self.desc, self.series

    def open_floor(self):
        """(description, Series) of sync_floor, for latency_row's open_floor."""
        return self.open_desc, self.open_series


def latency_series(ctx, system, label, prefix, run, floor=None):
    """Measures one latency series of `system`, alone (Context.alone), each
    run on a fresh topic; run(name, warmup) -> values. With floor (an
    InterleavedSyncFloor), its fio and sync_floor runs alternate with the
    series' runs, and each run counts Eddy's slow syncs
    (EddySystem.watch_syncs)."""
    run_once, cleanup = fresh_topics(system, prefix, 1, run)
    if floor is not None:
        run_once = system.watch_syncs(run_once, bench_report.STALL_MS)

    def after(i):
        cleanup(i)
        if floor is not None:
            floor.after_run(i)

    with ctx.alone(system):
        if floor is not None:
            floor.run(0)
        return ctx.measure(label, system, run_once, after)


def latency_workload(ctx):
    """End-to-end latency (producer -> broker -> consumer in the same client
    process) of 1 KiB messages at fixed rates, one partition, in each mode
    (peers first, as for produce), each system with the others stopped
    (Context.alone). The warm-up lasts half as long."""
    rows = []
    secs = ctx.opts.latency_seconds
    for rate in LATENCY_RATES:
        # The floors of the rows whose consumer waits for the sync (Eddy's
        # acks=1 and acks=all/disk: its acks=1 topics keep the gateway's
        # default durability, EddySystem.syncs), InterleavedSyncFloor: fio's
        # fdatasync at about the row's pace and sync_floor at its rate,
        # paired run by run (fio's back-to-back figure, the
        # fio_sync_latency limit, is in the limits).
        what = "e2e latency, %s at %d msg/s" % (size_label(LATENCY_SIZE), rate)
        cache = {}
        for mode in EDDY_MODES:
            def one(system, label, mode=mode, floor=None):
                return latency_series(
                    ctx, system, label, "lat-%d-%s" % (rate, _tag(system, mode)),
                    lambda name, warmup: system.latency(name, rate, max(1, secs // 2) if warmup else secs,
                                                        LATENCY_SIZE, mode)(), floor)
            peers = measure_peers(ctx, cache, what, mode, one)
            floor = InterleavedSyncFloor(ctx, rate, what) if ctx.eddy.syncs(mode) else None
            eddy = one(ctx.eddy, "Eddy %s, %s" % (what, MODE_LABELS[mode]), floor=floor)
            short = "e2e %dk/s %s" % (rate // 1000, MODE_SHORT[mode])
            rows.append(latency_row(short, what, MODE_LABELS[mode], eddy, peers,
                                    *((floor.floor(), floor.open_floor()) if floor else ())))
    rows += raw_latency_rows(ctx)
    return rows


def raw_latency_rows(ctx):
    """The first rate again through a client that adds as little as it can
    (raw_e2e.c: one thread, plain Produce v3 and Fetch v4 long polls, each
    record stamped when sent), Eddy and Kafka (JetStream speaks no Kafka
    protocol): what the broker adds between a record's arrival and its
    delivery, as the raw Fetch row is for consume. librdkafka hands every
    message between two or three threads on each side; on two vCPUs those
    wake-ups set the e2e rows' tail (METHOD.md)."""
    rows = []
    rate, secs = LATENCY_RATES[0], ctx.opts.latency_seconds
    what = "e2e latency, raw client (one thread), %s at %d msg/s" % (size_label(LATENCY_SIZE), rate)
    kafkas = [p for p in ctx.peers if isinstance(p, KafkaSystem)]
    for mode in EDDY_MODES:
        def one(system, label, mode=mode, floor=None):
            return latency_series(
                ctx, system, label, "raw-%d-%s" % (rate, _tag(system, mode)),
                lambda name, warmup: system.raw_latency(raw_e2e_tool(ctx.opts), name, rate,
                                                        max(1, secs // 2) if warmup else secs,
                                                        LATENCY_SIZE, mode)(), floor)
        peers = {p.name: (one(p, "%s %s, %s" % (p.name, what, peer_mode_label(p, mode))), p.matches(mode))
                 for p in kafkas}
        floor = InterleavedSyncFloor(ctx, rate, what) if ctx.eddy.syncs(mode) else None
        eddy = one(ctx.eddy, "Eddy %s, %s" % (what, MODE_LABELS[mode]), floor=floor)
        rows.append(latency_row("raw e2e %dk/s %s" % (rate // 1000, MODE_SHORT[mode]), what, MODE_LABELS[mode],
                                eddy, peers, *((floor.floor(), floor.open_floor()) if floor else ())))
    return rows


def gatewayday_workload(ctx):
    """A "gateway day" (gateway_day.py): SENSORS sensor processes at RATE
    msg/s of SIZE bytes, each with a live consumer, into an edge broker that
    forwards everything to a central one (Eddy: a forward link to a second
    eddy; JetStream: a leaf-node edge whose streams a central stream
    sources). Two rows: the local consumers' end-to-end latency, and the
    forwarded rate against the offered load (the sensors' produced rate).
    Eddy and JetStream only: the Kafka node of the other workloads stays
    idle meanwhile (see METHOD.md)."""
    secs = ctx.opts.gateway_seconds
    what = "gateway day: %d sensors × %d msg/s × %d B, %d s, forwarded" % (
        gateway_day.SENSORS, gateway_day.RATE, gateway_day.SIZE, secs)
    mode = "acks=all, page cache"
    eddy_gw = gateway_day.EddyGateway(ctx.eddy_bin, ctx.source_dir, ctx.eddy.tool, ctx.opts.work)
    try:
        eddy_gw.start()
        eddy = gateway_day.measure_day(ctx, eddy_gw, "Eddy " + what, secs)
    finally:
        eddy_gw.close()
    peers = {}
    if ctx.jetstream is not None:
        peer_gw = gateway_day.JetStreamGateway(ctx.jetstream.tool, ctx.opts.work)
        try:
            peer_gw.start()
            peers["JetStream"] = (gateway_day.measure_day(ctx, peer_gw, "JetStream " + what, secs), True)
        finally:
            peer_gw.close()
    offered = ("offered load: %d sensors × %d msg/s × %d B" % (gateway_day.SENSORS, gateway_day.RATE,
                                                                gateway_day.SIZE), gateway_day.OFFERED_MB_PER_S)
    rows = [latency_row("gw day e2e", what + ", local consumers", mode, eddy, peers),
            throughput_row("gw day fwd", what + ", forwarding link", mode, eddy, peers, offered)]
    for row in rows:
        row["gateway_day"] = True
    return rows


VALIDATION_CODECS = ("none", "lz4", "zstd")
VALIDATION_OFF = {"eddy.validate.compressed.records": "false"}


def walk_cost_s_per_gb(ctx):
    """CPU seconds per 10^9 stored bytes of the uncompressed record walk
    alone (tests/bench/record_validation_bench.cc on 64 MiB of 1 KiB
    records, this run): that walk cannot be switched off, so this stands for
    what a broker without it would save."""
    tool = os.path.join(ctx.opts.build, "tests", "bench", "eddy_record_validation_bench")
    out = subprocess.run([tool, "64"], capture_output=True, text=True, timeout=300)
    for line in out.stdout.splitlines():
        fields = line.split()
        if fields and fields[0] == "none":
            return 1e3 / float(fields[3])  # walk MB/s of stored bytes -> s/GB
    raise ClientFailed("record_validation_bench printed no 'none' line", {"stdout": out.stdout[-500:]})


def validation_workload(ctx):
    """What record validation on append (issue 21) costs a whole broker:
    1 KiB sensor-like messages (rdkafka_bench.c's sensor_text), 1
    partition, acks=1, uncompressed and compressed by the producer with lz4
    and zstd. Each codec into the default Eddy (every batch's records
    validated, compressed ones by streaming decompression), into a second
    Eddy started with eddy.validate.compressed.records=false (compressed
    batches stored after the header and CRC checks only) and into Kafka
    (which decompresses and validates every compressed batch, like the
    default Eddy). The uncompressed walk has no switch: its row carries the
    walk's own cost measured in isolation (walk_cost_s_per_gb)."""
    count = max(1000, int(PRODUCE_COUNTS[1024] * ctx.opts.scale))
    mode = "acks1"

    def one(system, label, codec, tag):
        return ctx.measure(label, system, *fresh_topics(
            system, "v-%s-%s" % (codec, tag), 1,
            lambda name, warmup: system.produce(name, count // 4 if warmup else count, 1024, 1, mode, codec)()))

    trusting = EddySystem(ctx.eddy_bin, ctx.source_dir, ctx.eddy.tool, ctx.opts.work, ctx.eddy.retention_bytes,
                          overrides=VALIDATION_OFF)
    rows = []
    try:
        trusting.start()
        for codec in VALIDATION_CODECS:
            what = "produce 1 KiB sensor text, %s, 1 partition" % codec
            peers = {}
            if ctx.kafka is not None:
                peers["Kafka"] = (one(ctx.kafka, "Kafka " + what, codec, "ka"), True)
            eddy = one(ctx.eddy, "Eddy " + what + ", records validated", codec, "ed")
            row = {"kind": "validation", "short": "valid %s" % codec, "workload": what, "mode": MODE_LABELS[mode],
                   "codec": codec, "eddy": eddy, **_peer_fields(peers), "limit_name": None, "limit": None}
            if codec == "none":
                row["walk_s_per_gb"] = walk_cost_s_per_gb(ctx)
            else:
                row["unvalidated"] = one(trusting, "Eddy " + what + ", eddy.validate.compressed.records=false",
                                         codec, "tr")
            rows.append(row)
    finally:
        trusting.stop()
    return rows


WORKLOADS = {"produce": produce_workload, "perftest": perftest_workload, "consume": consume_workload,
             "latency": latency_workload, "gatewayday": gatewayday_workload, "validation": validation_workload}


# --------------------------------------------------------------------------

def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", required=True, help="build directory with eddy and tests/bench/{rdkafka,nats}_bench")
    p.add_argument("--out", help="report directory (default BUILD/bench-report)")
    p.add_argument("--work", help="where the data directories and fio files go; its filesystem is the one "
                                  "measured (default BUILD/bench-work, removed afterwards)")
    p.add_argument("--runs", type=int, default=3, help="measured runs per figure, after one warm-up (default 3)")
    p.add_argument("--scale", type=float, default=1.0, help="multiplies the messages per produce run")
    p.add_argument("--consume-mib", type=int, default=1024, help="size of the topic read from the start")
    p.add_argument("--latency-seconds", type=int, default=5, help="seconds per latency run")
    p.add_argument("--gateway-seconds", type=int, default=12, help="seconds per gateway-day run")
    p.add_argument("--fio-mib", type=int, default=512, help="MiB per fio throughput run")
    p.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated subset of " + ",".join(WORKLOADS))
    p.add_argument("--peers", default=",".join(PEERS), help="the systems Eddy is compared with, a subset of " +
                   ",".join(PEERS) + " (default both)")
    p.add_argument("--publish", help="also copy report.md, chart.png and machine.md here (tests/bench/results)")
    o = p.parse_args()
    o.build = os.path.abspath(o.build)
    o.out = os.path.abspath(o.out or os.path.join(o.build, "bench-report"))
    o.work = os.path.abspath(o.work or os.path.join(o.build, "bench-work"))
    o.workloads = [w for w in o.workloads.split(",") if w]
    unknown = [w for w in o.workloads if w not in WORKLOADS]
    if unknown:
        p.error("unknown workload(s): %s" % ", ".join(unknown))
    o.peers = [x for x in o.peers.split(",") if x]
    unknown = [x for x in o.peers if x not in PEERS]
    if unknown:
        p.error("unknown peer(s): %s" % ", ".join(unknown))
    return o


def main():
    o = parse_args()
    source = os.path.abspath(os.path.join(HERE, "..", ".."))
    tools = {"eddy": os.path.join(o.build, "eddy"),
             "rdkafka_bench": os.path.join(o.build, "tests", "bench", "rdkafka_bench"),
             "nats_bench": os.path.join(o.build, "tests", "bench", "nats_bench"),
             "copy_floor": copy_floor_tool(o),
             "raw_fetch": raw_fetch_tool(o),
             "raw_e2e": raw_e2e_tool(o),
             "sync_floor": sync_floor_tool(o)}
    if "jetstream" not in o.peers:
        del tools["nats_bench"]
    missing = [p for p in tools.values() if not os.access(p, os.X_OK)]
    needed = ["fio", "iperf3", "gnuplot"] + (["nats-server"] if "jetstream" in o.peers else [])
    if "kafka" in o.peers or "perftest" in o.workloads:
        needed += ["java"]  # Kafka's JVM and kafka-producer-perf-test's
    if "kafka" in o.peers:
        needed += ["kcat"]  # kafka_fixture waits for the node's metadata with it
    missing += [t for t in needed if not shutil.which(t)]
    if missing:
        print("compare_bench: missing %s (make bench installs and builds them)" % ", ".join(missing))
        return 2
    os.makedirs(o.work, exist_ok=True)
    os.makedirs(o.out, exist_ok=True)
    log_file = open(os.path.join(o.out, "bench.log"), "w")

    def log(line):
        print(line, flush=True)
        log_file.write(line + "\n")
        log_file.flush()

    started = time.time()
    eddy = EddySystem(tools["eddy"], source, tools["rdkafka_bench"], o.work,
                      retention_bytes=max(o.consume_mib << 20, 256 << 20) + (64 << 20))
    kafka = KafkaSystem(tools["rdkafka_bench"], o.work) if "kafka" in o.peers else None
    jetstream = JetStreamSystem(tools["nats_bench"], o.work) if "jetstream" in o.peers else None
    ctx = Context(o, eddy, kafka, jetstream, log)
    ctx.eddy_bin, ctx.source_dir = tools["eddy"], source
    systems = [eddy] + ctx.peers
    rows = []
    failed = None
    machine = {}
    try:
        uses_java = kafka is not None or "perftest" in o.workloads
        if uses_java:
            log("Apache Kafka %s: its jars come from ~/.cache/eddy-test (Maven Central on first use, "
                "a few minutes)" % bench_systems.kafka_fixture.KAFKA_VERSION)
            KafkaSystem.provision()
        machine = bench_machine.facts(o.work, eddy.version(), jetstream.version() if jetstream else None,
                                      KafkaSystem.version() if uses_java else None,
                                      KafkaSystem.java_version() if uses_java else None)
        measure_limits(ctx, "before")
        for system in systems:
            system.start()
        ctx.idle_rss_kib = {s.name: s.meter.rss_kib() for s in systems}
        log("eddy on %s%s%s; data under %s" % (
            eddy.broker.bootstrap, ", kafka on %s" % kafka.bootstrap if kafka else "",
            ", nats-server on %s" % jetstream.url if jetstream else "", o.work))
        prime(ctx, systems)
        for name in o.workloads:
            rows += WORKLOADS[name](ctx)
        for system in systems:
            system.stop()
        measure_limits(ctx, "after")
    except Exception as e:  # noqa: BLE001 - reported, and the report still written
        import traceback
        failed = "%s: %s" % (type(e).__name__, e)
        log("bench failed: %s\n%s" % (failed, traceback.format_exc()))
        if eddy.broker.proc is not None:
            log("---- eddy log ----\n" + eddy.broker.log_text()[-3000:])
        if kafka is not None and kafka.cluster is not None and kafka.cluster.logs:
            log("---- kafka log ----\n" + kafka.log_text()[-3000:])
    finally:
        for system in systems:
            system.close()
        shutil.rmtree(o.work, ignore_errors=True)
    elapsed = time.time() - started
    resolve_limits(rows)
    if not rows:
        log("no results")
        return 1
    paths = bench_report.write(o.out, rows, ctx.limits, machine, getattr(ctx, "idle_rss_kib", {}), o, started,
                               elapsed, failed)
    if o.publish:
        bench_report.publish(o.out, o.publish)
        log("copied the report to %s" % o.publish)
    log("\nreport: %s\nchart:  %s\n(bench took %.0f s)" % (paths["report"], paths["chart"], elapsed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
