#!/usr/bin/env python3
"""Where a durable record's time goes past its sync, in the broker.

Starts an Eddy on the gateway config (127.0.0.1, an ephemeral port, a
temporary data directory), drives a disk-mode topic (acks=all,
eddy.acks.all.waits.for=disk) at a low rate with the raw client
(tests/bench/raw_e2e.c) or librdkafka (rdkafka_bench e2e), and traces the
broker's pwrite, fdatasync and sendfile calls with the kernel's syscall
tracepoints on the monotonic clock (`perf record -k CLOCK_MONOTONIC -e
syscalls:sys_enter_pwrite64,... -p PID`). Each record is followed from its
pwrite (the append, on the reactor) to the flusher's next fdatasync, to
that sync's end, to the end of the next sendfile (its fetch answer's
records leaving), and the script prints medians and p99 of each step:

  pwrite -> fdatasync    the hand-off to the flusher thread
  fdatasync              the sync itself
  sync end -> sent       the hand-off back to the reactor and the answers
  pwrite -> sent         all of the broker's part after the append

The matching assumes one record per sync: keep the rate low (the default
1 000 records/s, where each sync covers one record). The trace adds a few
microseconds to each traced call. write_path.md has the figures.

  /usr/bin/python3 tests/bench/durable_path_trace.py [--build build]
      [--client raw|rdkafka] [--rate 1000] [--seconds 5]

Needs perf (Debian: linux-perf) and root, or a kernel.perf_event_paranoid
that lets a user record tracepoints; exits 2 without them. Test-only.
"""
import argparse
import os
import subprocess
import sys
import time

from traced_broker import BrokerDidNotStart, bench_tools, gateway_broker

EVENTS = ["syscalls:sys_enter_pwrite64", "syscalls:sys_enter_fdatasync", "syscalls:sys_exit_fdatasync",
          "syscalls:sys_exit_sendfile64"]


def events(script_text):
    """[(time_us, event name)] from `perf script -F time,event`, in order."""
    out = []
    for line in script_text.splitlines():
        parts = line.split()
        if len(parts) < 2 or not parts[0].endswith(":"):
            continue
        try:
            t = float(parts[0].rstrip(":")) * 1e6
        except ValueError:
            continue
        out.append((t, parts[1].rstrip(":").split(":")[-1]))
    out.sort()
    return out


def steps(evs):
    """Per record: (pwrite -> sync start, sync, sync end -> sent, total)."""
    records, cur = [], None
    for t, name in evs:
        if name == "sys_enter_pwrite64" and cur is None:
            cur = {"pwrite": t}
        elif cur is None:
            continue
        elif name == "sys_enter_fdatasync" and "sync0" not in cur:
            cur["sync0"] = t
        elif name == "sys_exit_fdatasync" and "sync0" in cur and "sync1" not in cur:
            cur["sync1"] = t
        elif name == "sys_exit_sendfile64" and "sync1" in cur:
            records.append((cur["sync0"] - cur["pwrite"], cur["sync1"] - cur["sync0"], t - cur["sync1"],
                            t - cur["pwrite"]))
            cur = None
    return records


def rank(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--client", default="raw", choices=["raw", "rdkafka"])
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--seconds", type=int, default=5)
    opts = ap.parse_args()
    tools = bench_tools(opts.build, "durable_path_trace")
    if tools is None:
        return 2
    _, raw_e2e, rdkafka_bench = tools
    if opts.rate < 1 or opts.seconds < 1:
        print("durable_path_trace: rate and seconds >= 1", file=sys.stderr)
        return 2
    try:
        with gateway_broker(tools[0], "eddy-durable-trace-") as (proc, broker, work):
            return trace(opts, proc, broker, work, raw_e2e, rdkafka_bench)
    except BrokerDidNotStart as e:
        print("durable_path_trace: %s" % e, file=sys.stderr)
        return 1


def trace(opts, proc, broker, work, raw_e2e, rdkafka_bench):
    """One traced run against the started broker; the exit status."""
    subprocess.run([rdkafka_bench, "create", broker, "trace", "1", "eddy.acks.all.waits.for=disk"], check=True,
                   stdout=subprocess.DEVNULL)
    # The client runs a second longer than the trace on each side, so
    # that neither its start nor its end is traced.
    seconds = str(opts.seconds + 2)
    client = ([raw_e2e, broker, "trace", str(opts.rate), seconds, "1024", "all"] if opts.client == "raw" else
              [rdkafka_bench, "e2e", broker, "trace", str(opts.rate), seconds, "1024", "all"])
    driver = subprocess.Popen(client, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1)
    data = os.path.join(work, "perf.data")
    record = subprocess.run(["perf", "record", "-q", "-k", "CLOCK_MONOTONIC", "-e", ",".join(EVENTS),
                             "-p", str(proc.pid), "-o", data, "--", "sleep", str(opts.seconds)],
                            capture_output=True, text=True)
    out, err = driver.communicate()
    if record.returncode != 0 or driver.returncode != 0:
        print("durable_path_trace: perf record or the client failed: %s%s" % (record.stderr, err),
              file=sys.stderr)
        return 1
    script = subprocess.run(["perf", "script", "-i", data, "-F", "time,event"], capture_output=True, text=True)
    records = steps(events(script.stdout))
    if not records:
        print("durable_path_trace: no record traced (perf script: %s)" % script.stderr.strip(), file=sys.stderr)
        return 1
    print("client=%s rate=%d records=%d %s" % (opts.client, opts.rate, len(records),
                                                 (out.strip().splitlines() or [""])[-1]))
    names = ("pwrite -> fdatasync", "fdatasync", "sync end -> sent", "pwrite -> sent")
    for i, name in enumerate(names):
        values = [r[i] for r in records]
        print("%-20s p50 %6.0f us   p99 %6.0f us" % (name, rank(values, 0.5), rank(values, 0.99)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
