#!/usr/bin/python3
"""The gateway build next to the Release build (issue 20): the package and
the boards run eddy built with EDDY_GATEWAY_SIZE=ON (-Os, make size / make
deb), the rest of the bench measures the Release build. Here both run the
issue's figures in the same run, one build after the other, on the same clients:

  produce   1 KiB messages, 1 partition, acks=1 (rdkafka_bench produce):
            MB/s and broker CPU per GB, as a multiple of the copy floor's
            (copy_floor write: recv + pwrite, the receiving thread's CPU);
  consume   the topic (1 KiB messages) read from the start by librdkafka
            and by raw_fetch (parses nothing), against a sendfile(2) loop
            of the same segment files;
  e2e       end-to-end latency at 1 000 msg/s, acks=all, the gateway's
            default durability (eddy.acks.all.waits.for=disk), against
            fio's fdatasync latency after a 1 KiB write; with librdkafka and
            with raw_e2e (one thread, no library: what the broker adds).
            Each run also next to a fio run, 1 ms apart, measured right
            before it, and judged against it when neither met a stall.

  /usr/bin/python3 tests/bench/gateway_build_bench.py --build BUILD
      --gateway-build BUILD_SIZE [--out DIR] [--runs 3] [--consume-mib 512]
      [--latency-seconds 5]

BUILD has the bench tools (rdkafka_bench, raw_fetch, raw_e2e, copy_floor) and the
Release eddy; BUILD_SIZE/eddy is the gateway build. `make bench` runs it;
the report is BUILD/bench-report/gateway_build.md (and .json)."""

import argparse
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import bench_limits  # noqa: E402
from bench_measure import ClientFailed, ProcessMeter, Series, measure, run_client, summarize  # noqa: E402
from bench_report import STALL_MS, disk_runs_table  # noqa: E402
from bench_systems import EddySystem  # noqa: E402

SIZE = 1024
PRODUCE_COUNT = 262_144  # 256 MiB


def tool(build, name):
    return os.path.join(build, "tests", "bench", name)


def median_of(series, key):
    return series.medians().get(key)


class PairedFio:
    """fio's fdatasync after a 1 KiB write, 1 ms apart, as long as one e2e
    run, right before each run of a series (its warm-up's too, discarded):
    that run's own floor. This VM's disk stalls for tens of ms in some
    minutes and not in others, so one fio series per bench does not see the
    stalls that fall on a given run (METHOD.md, "The disk rows run by run").
    run(0) before the series' warm-up, after_run(i) after each of its runs."""

    def __init__(self, label, directory, opts):
        self.series = Series("fio, 1 ms apart, before each run of: " + label)
        self.directory = directory
        self.opts = opts

    def run(self, index):
        try:
            values = bench_limits.fio_sync_latency(self.directory, 1 if index == 0 else self.opts.latency_seconds,
                                                   1000)
        except ClientFailed as e:
            values = {"error": str(e)}
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)
        values["pair"] = index  # the series' run of the same index follows
        if index == 0:
            self.series.warmup = values
        elif "error" in values:
            self.series.failures.append(values)
        else:
            self.series.runs.append(values)
        print("  %-60s %s" % ("fio before %s" % ("the warm-up" if index == 0 else "run %d" % index),
                              summarize(values)), flush=True)

    def after_run(self, index):
        if index < self.opts.runs:
            self.run(index + 1)


def measure_build(label, eddy_bin, opts, work, floors, with_sendfile):
    """Every figure of one build, on a fresh broker; with_sendfile: also the
    sendfile loop over its segment files, into floors."""
    rdkafka = tool(opts.build, "rdkafka_bench")
    eddy = EddySystem(eddy_bin, SOURCE, rdkafka, work, retention_bytes=(opts.consume_mib << 20) + (256 << 20))
    eddy.start()
    try:
        meter = ProcessMeter(eddy.broker.proc.pid)
        out = {}
        # The copy floors right before this build's produce series: on a VM
        # the cost of the copy into the page cache drifts between minutes
        # (METHOD.md), so one floor measured before both builds would judge
        # the second build against another minute's machine.
        floor_dir = os.path.join(work, "floor")
        out["copy_floor_write"] = measure(
            "%s: copy floor, produce" % label,
            lambda i, w: bench_limits.copy_floor_write(tool(opts.build, "copy_floor"), floor_dir, 256), opts.runs)
        out["copy_floor_write_sync"] = measure(
            "%s: copy floor with an fdatasync per MiB, produce" % label,
            lambda i, w: bench_limits.copy_floor_write(tool(opts.build, "copy_floor"), floor_dir, 256, sync=True),
            opts.runs)

        def produce(i, warmup):
            return eddy.produce("produce-r%d" % i, PRODUCE_COUNT // 4 if warmup else PRODUCE_COUNT, SIZE, 1,
                                "acks1")()
        out["produce"] = measure("%s produce 1 KiB acks=1" % label, produce, opts.runs, meter=meter,
                                 cleanup=lambda i: eddy.delete("produce-r%d" % i, 1))

        count = (opts.consume_mib << 20) // SIZE
        eddy.produce("consume", count, SIZE, 1, "acks1")()
        out["consume"] = measure("%s consume (librdkafka)" % label,
                                 lambda i, w: eddy.consume("consume", count // 4 if w else count)(), opts.runs,
                                 meter=meter)
        out["raw_fetch"] = measure("%s consume (raw Fetch)" % label,
                                   lambda i, w: run_client([tool(opts.build, "raw_fetch"), eddy.bootstrap, "consume",
                                                            count // 4 if w else count, SIZE]),
                                   opts.runs, meter=meter)
        if with_sendfile:
            segments = eddy.segment_files("consume")
            floors["sendfile"] = measure("limit: sendfile loop over %d segment files" % len(segments),
                                         lambda i, w: bench_limits.sendfile_loopback(segments), opts.runs)

        def e2e(i, warmup):
            return eddy.latency("e2e-r%d" % i, 1000, 1 if warmup else opts.latency_seconds, SIZE,
                                "acks_all_disk")()
        fio = PairedFio("%s e2e" % label, os.path.join(work, "fio-paired"), opts)
        fio.run(0)
        out["e2e"] = measure("%s e2e 1 000 msg/s, acks=all, disk" % label, eddy.watch_syncs(e2e, STALL_MS),
                             opts.runs, meter=meter,
                             cleanup=lambda i: (eddy.delete("e2e-r%d" % i, 1), fio.after_run(i)))
        out["e2e_fio"] = fio.series

        def raw_e2e(i, warmup):
            return eddy.raw_latency(tool(opts.build, "raw_e2e"), "raw-e2e-r%d" % i, 1000,
                                    1 if warmup else opts.latency_seconds, SIZE, "acks_all_disk")()
        raw_fio = PairedFio("%s raw e2e" % label, os.path.join(work, "fio-paired"), opts)
        raw_fio.run(0)
        out["raw_e2e"] = measure("%s e2e 1 000 msg/s, acks=all, disk, raw client" % label,
                                 eddy.watch_syncs(raw_e2e, STALL_MS), opts.runs, meter=meter,
                                 cleanup=lambda i: (eddy.delete("raw-e2e-r%d" % i, 1), raw_fio.after_run(i)))
        out["raw_e2e_fio"] = raw_fio.series
        return out
    finally:
        eddy.stop()


def report(results, floors, opts):
    def value(build, key, field):
        return median_of(results[build][key], field)

    def cell(v, fmt, scale=1.0):
        return fmt % (v * scale) if v is not None else "n/a"

    write_floor = {b: median_of(results[b]["copy_floor_write"], "floor_cpu_s_per_gb") for b in results}
    sync_floor = {b: median_of(results[b]["copy_floor_write_sync"], "floor_cpu_s_per_gb") for b in results}
    sendfile = median_of(floors["sendfile"], "mb_per_s")
    sync = floors["fio_sync_latency"].medians()
    paced = floors["fio_sync_latency_1000"].medians()
    rows = [
        ("produce 1 KiB, acks=1: MB/s", "produce", "mb_per_s", "%.0f", 1.0, ""),
        ("produce 1 KiB, acks=1: broker CPU s/GB", "produce", "broker_cpu_s_per_gb", "%.2f", 1.0,
         "the copy floors below"),
        ("copy floor, measured right before the build's produce: CPU s/GB", "copy_floor_write",
         "floor_cpu_s_per_gb", "%.3f", 1.0, "recv + pwrite (copy_floor.c)"),
        ("copy floor with an fdatasync per MiB, right before the build's produce: CPU s/GB",
         "copy_floor_write_sync", "floor_cpu_s_per_gb", "%.3f", 1.0, "the same, synced"),
        ("consume %d MiB, librdkafka: MB/s" % opts.consume_mib, "consume", "mb_per_s", "%.0f", 1.0,
         "sendfile loop " + cell(sendfile, "%.0f MB/s")),
        ("consume %d MiB, raw Fetch: MB/s" % opts.consume_mib, "raw_fetch", "mb_per_s", "%.0f", 1.0,
         "sendfile loop " + cell(sendfile, "%.0f MB/s")),
        ("consume, raw Fetch: broker CPU s/GB", "raw_fetch", "broker_cpu_s_per_gb", "%.2f", 1.0, ""),
    ]
    for client, key_of in (("", "e2e"), (", raw client", "raw_e2e")):
        for pct, key in (("p50", "p50_us"), ("p99", "p99_us"), ("p99.9", "p999_us")):
            rows.append(("e2e 1 000 msg/s, acks=all, disk%s: %s ms" % (client, pct), key_of, "e2e_" + key, "%.2f",
                         1e-3, "fdatasync %s %s back to back, %s 1 ms apart" % (
                             pct, cell(sync.get(key), "%.2f ms", 1e-3), cell(paced.get(key), "%.2f ms", 1e-3))))
    lines = ["# The gateway build next to the Release build", "",
             "Same run, same clients, one build after the other; medians of %d runs after a warm-up. Gateway "
             "build: `-DEDDY_GATEWAY_SIZE=ON` (-Os), what `make deb` packages; Release: what the rest of the "
             "bench measures. Limits: the copy floor (recv + pwrite, tests/bench/copy_floor.c; also with an "
             "fdatasync per MiB, the floor of the default durability that syncs every batch), measured right "
             "before each build's produce runs (the copy's cost drifts between minutes on a VM), a sendfile(2) "
             "loop over the Release broker's segment files of the consumed topic, fio's fdatasync after a 1 KiB "
             "write, back to back and 1 ms apart (--thinktime=1000). Reproduce: `make bench`, or "
             "`tests/bench/gateway_build_bench.py --build build --gateway-build build-size`." % opts.runs, "",
             "| figure | Release | gateway build | limit |", "|---|---|---|---|"]
    for name, key, field, fmt, scale, limit in rows:
        lines.append("| %s | %s | %s | %s |" % (name, cell(value("Release", key, field), fmt, scale),
                                                cell(value("gateway", key, field), fmt, scale), limit))
    ratios = [cell(value(b, "produce", "broker_cpu_s_per_gb") / write_floor[b], "%.2fx")
              if write_floor[b] and value(b, "produce", "broker_cpu_s_per_gb") else "n/a"
              for b in ("Release", "gateway")]
    lines.append("| produce 1 KiB, acks=1: broker CPU / copy floor | %s | %s | 1.5x (issue 20) |" % tuple(ratios))
    # The gateway's default durability syncs every batch (a consumer sees a
    # record once it is synced): its floor includes the fdatasync.
    synced = [cell(value(b, "produce", "broker_cpu_s_per_gb") / sync_floor[b], "%.2fx")
              if sync_floor[b] and value(b, "produce", "broker_cpu_s_per_gb") else "n/a"
              for b in ("Release", "gateway")]
    lines.append("| produce 1 KiB, acks=1, every batch synced: broker CPU / copy floor with an fdatasync per MiB "
                 "| %s | %s | 1.5x (issue 20) |" % tuple(synced))
    raw = [cell(value(b, "raw_fetch", "mb_per_s") / sendfile, "%.2fx")
           if sendfile and value(b, "raw_fetch", "mb_per_s") else "n/a" for b in ("Release", "gateway")]
    lines.append("| consume, raw Fetch / sendfile loop | %s | %s | 0.85x (issue 20) |" % tuple(raw))
    peaks = ["%.1f MiB" % (max(s.peak_rss_kib or 0 for s in results[b].values()) / 1024)
             for b in ("Release", "gateway")]
    lines.append("| peak RSS over the runs | %s | %s | |" % tuple(peaks))
    # Each e2e run next to the fio run measured right before it, judged as
    # compare_bench.py's disk rows are (METHOD.md, the disk rows run by run).
    rows = [{"short": "%s, %s" % (b, client), "eddy": results[b][key], "limit": results[b][key + "_fio"]}
            for b in ("Release", "gateway") for client, key in (("librdkafka", "e2e"), ("raw client", "raw_e2e"))]
    lines += ["", "## The e2e runs run by run", "",
              "Each e2e run next to fio's fdatasync run (1 KiB writes, 1 ms apart) measured right before it. "
              "A run is judged against that fio run's p99 (issue 20's check: within 0.5 ms) only when none of "
              "Eddy's own fdatasync calls in it (its eddy_fsync_duration_seconds histogram) and none of fio's "
              "took over %d ms: this VM's disk stalls for tens of ms in some minutes, and a run that meets a "
              "stall has the stall's p99. In brackets: the slowest sync of that fio run." % STALL_MS, "",
              disk_runs_table(rows, STALL_MS).rstrip("\n")]
    return "\n".join(lines) + "\n"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", required=True, help="build with the bench tools and the Release eddy")
    p.add_argument("--gateway-build", required=True, help="build whose eddy is the gateway build")
    p.add_argument("--out", default=None, help="report directory (default BUILD/bench-report)")
    p.add_argument("--work", default=None, help="directory for data (default a temporary one)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--consume-mib", type=int, default=512)
    p.add_argument("--latency-seconds", type=int, default=5)
    o = p.parse_args()
    o.out = o.out or os.path.join(o.build, "bench-report")
    return o


def main():
    opts = parse_args()
    binaries = {"Release": os.path.join(opts.build, "eddy"), "gateway": os.path.join(opts.gateway_build, "eddy")}
    needed = list(binaries.values()) + [tool(opts.build, n) for n in ("rdkafka_bench", "raw_fetch", "raw_e2e", "copy_floor")]
    missing = [p for p in needed if not os.access(p, os.X_OK)]
    if missing:
        print("missing: %s" % ", ".join(missing), file=sys.stderr)
        return 2
    work = opts.work or tempfile.mkdtemp(prefix="eddy-gwbuild-")
    os.makedirs(work, exist_ok=True)
    try:
        floors = {
            "fio_sync_latency": measure("limit: fdatasync after a 1 KiB write (fio)",
                                        lambda i, w: bench_limits.fio_sync_latency(os.path.join(work, "fio"),
                                                                                   opts.latency_seconds),
                                        opts.runs),
            "fio_sync_latency_1000": measure("limit: fdatasync after a 1 KiB write, 1 ms apart (fio)",
                                             lambda i, w: bench_limits.fio_sync_latency(
                                                 os.path.join(work, "fio"), opts.latency_seconds, 1000),
                                             opts.runs),
        }
        results = {}
        for label, binary in binaries.items():
            results[label] = measure_build(label, binary, opts, work, floors, label == "Release")
    finally:
        if not opts.work:
            shutil.rmtree(work, ignore_errors=True)
    text = report(results, floors, opts)
    os.makedirs(opts.out, exist_ok=True)
    with open(os.path.join(opts.out, "gateway_build.md"), "w") as f:
        f.write(text)
    with open(os.path.join(opts.out, "gateway_build.json"), "w") as f:
        json.dump({"floors": {k: s.to_json() for k, s in floors.items()},
                   "builds": {b: {k: s.to_json() for k, s in r.items() if not k.startswith("_")}
                              for b, r in results.items()}}, f, indent=1)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
