#!/usr/bin/env python3
"""What the broker spends per record at a low rate: syscalls and CPU.

At a gateway's rates (a few thousand records a second) a broker's CPU goes
to the syscalls and event-loop turns around each record, not to copying
its bytes. This starts an Eddy on the gateway config (127.0.0.1, an
ephemeral port, a temporary data directory), drives one topic per mode with
the one-thread raw client (tests/bench/raw_e2e.c: one Produce per record,
a Fetch long poll answered per record) and reports, per record:

  - the broker's syscalls, counted by the kernel's syscall tracepoints
    (`perf stat -e raw_syscalls:sys_enter,syscalls:sys_enter_NAME...
    -p PID`), in total and for the calls of the produce-fetch path;
  - the broker's CPU (all its threads, from /proc/PID/task/*/schedstat);
  - the raw client's end-to-end latency (p50 / p99).

What no broker of this shape can go under: per record it receives two
requests and sends two answers (recv x2, send x2, the records by sendfile),
writes the record (pwrite), and is woken at least once per request
(epoll_wait); in disk mode it also syncs (fdatasync) and hands each sync to
and from its flusher thread (futex, and the wake of the event loop). That
is 8 calls in page-cache mode and about 12 in disk mode.

  /usr/bin/python3 tests/bench/syscalls_per_record.py [--build build]
      [--rate 1000] [--seconds 5] [--rounds 2] [--modes page-cache,disk]

Needs perf (Debian: linux-perf) and root, or a kernel.perf_event_paranoid
that lets a user count tracepoints; exits 2 without them. Test-only
(write_path.md has the figures before and after each change it measured).
"""
import argparse
import glob
import os
import subprocess
import sys

from traced_broker import BrokerDidNotStart, bench_tools, gateway_broker

CALLS = ["epoll_wait", "epoll_ctl", "timerfd_settime", "sendmsg", "recvfrom", "sendfile64", "pread64", "pwrite64",
         "futex", "fdatasync"]


def cpu_ns(pid):
    total = 0
    for path in glob.glob("/proc/%d/task/*/schedstat" % pid):
        try:
            with open(path) as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that ended meanwhile
    return total


def parse_perf(path):
    counts = {}
    with open(path) as f:
        for line in f:
            parts = line.strip().split(",")
            if len(parts) < 3 or not parts[0].strip().isdigit():
                continue
            name = parts[2].split(":")[-1].replace("sys_enter_", "").replace("sys_enter", "all")
            counts[name] = int(parts[0])
    return counts


def fields(line):
    return dict(kv.split("=", 1) for kv in line.split() if "=" in kv)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--modes", default="page-cache,disk")
    opts = ap.parse_args()
    tools = bench_tools(opts.build, "syscalls_per_record")
    if tools is None:
        return 2
    eddy, raw_e2e, rdkafka_bench = tools
    modes = [m for m in opts.modes.split(",") if m]
    if any(m not in ("page-cache", "disk") for m in modes) or opts.rate < 1 or opts.seconds < 1:
        print("syscalls_per_record: modes are page-cache and disk; rate and seconds >= 1", file=sys.stderr)
        return 2

    events = ",".join(["raw_syscalls:sys_enter"] + ["syscalls:sys_enter_" + c for c in CALLS])
    try:
        with gateway_broker(eddy, "eddy-syscalls-") as (proc, broker, work):
            return count(opts, modes, events, proc, broker, work, raw_e2e, rdkafka_bench)
    except BrokerDidNotStart as e:
        print("syscalls_per_record: %s" % e, file=sys.stderr)
        return 1


def count(opts, modes, events, proc, broker, work, raw_e2e, rdkafka_bench):
    """The rounds against the started broker; the exit status."""
    status = 0
    records = opts.rate * opts.seconds
    for r in range(opts.rounds):
        for mode in modes:
            topic = "syscalls-%s-%d" % (mode, r)
            subprocess.run([rdkafka_bench, "create", broker, topic, "1", "eddy.acks.all.waits.for=" + mode],
                           check=True, stdout=subprocess.DEVNULL)
            stat = os.path.join(work, "perf.csv")
            before = cpu_ns(proc.pid)
            run = subprocess.run(["perf", "stat", "-x,", "-e", events, "-p", str(proc.pid), "-o", stat, "--",
                                  raw_e2e, broker, topic, str(opts.rate), str(opts.seconds), "1024", "all"],
                                 capture_output=True, text=True)
            after = cpu_ns(proc.pid)
            if run.returncode != 0:
                print("syscalls_per_record: %s run failed: %s%s" % (mode, run.stdout, run.stderr),
                      file=sys.stderr)
                status = 1
                continue
            counts = parse_perf(stat)
            latency = fields(run.stdout)
            per = " ".join("%s=%.2f" % (c, counts.get(c, 0) / records) for c in CALLS)
            print("syscalls mode=%s round=%d records=%d per_record=%.2f cpu_us_per_record=%.1f "
                  "e2e_p50_us=%s e2e_p99_us=%s %s" %
                  (mode, r + 1, records, counts.get("all", 0) / records, (after - before) / 1e3 / records,
                   latency.get("e2e_p50_us", "?"), latency.get("e2e_p99_us", "?"), per))
            sys.stdout.flush()
            subprocess.run([rdkafka_bench, "delete", broker, topic], stdout=subprocess.DEVNULL)
    return status


if __name__ == "__main__":
    sys.exit(main())
