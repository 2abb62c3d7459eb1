#!/usr/bin/python3
"""Store-and-forward drain rate after an outage, as a ratio to the edge's own
local produce throughput measured in the same run.

An edge eddy (gateway config) forwards topic "bench" to a central eddy on the
same machine through a fault proxy (tests/integration/fault_proxy.py). With
the link down, librdkafka (tests/bench/rdkafka_bench) produces MIB MiB of
SIZE-byte messages, acks=all, to the edge: that is the local produce
throughput. Then the link comes back and the time from that moment until
every partition is forwarded up to its end gives the drain rate.
Both brokers and the proxy share the machine, so the ratio says how much of
what a gateway can take in locally it can ship out after an outage (on a
real uplink the network is the limit; see the bandwidth cap).

Usage, from the build directory (Release build with librdkafka-dev):
  EDDY_BIN=./eddy EDDY_SOURCE_DIR=.. /usr/bin/python3 ../tests/bench/forward_bench.py [--mib 64] [--runs 3]
Prints one line per message size: produce MiB/s, drain MiB/s, ratio (median of runs)."""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import eddy_fixture  # noqa: E402
from fault_proxy import FaultProxy  # noqa: E402

PARTITIONS = 4


def status(edge):
    r = subprocess.run([edge.bin, "forward", "status", "--data-dir", edge.data_dir, "--json"], capture_output=True,
                       text=True, timeout=20)
    if r.returncode != 0:
        raise RuntimeError(r.stderr)
    return json.loads(r.stdout)["links"][0]


def run_tool(tool, *args):
    r = subprocess.run([tool] + [str(a) for a in args], capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        raise RuntimeError("%s %s: %s %s" % (tool, args, r.stdout, r.stderr[-2000:]))
    lines = r.stdout.strip().splitlines()
    if not lines:
        return {}
    line = lines[-1]
    return {k: float(v) for k, v in (kv.split("=") for kv in line.split()[1:])}


def one_run(tool, config, size, mib):
    proxy = FaultProxy(upstream_port=1)
    proxy.start()
    central = eddy_fixture.Broker(config=config, overrides={
        "advertised.listeners": "PLAINTEXT://127.0.0.1:%d" % proxy.port, "log.retention.bytes": 1 << 30})
    edge = eddy_fixture.Broker(config=config, overrides={
        "log.retention.bytes": 1 << 30,
        "eddy.forward.links": "central",
        "eddy.forward.central.bootstrap.servers": "127.0.0.1:%d" % proxy.port,
        "eddy.forward.central.topics": "bench",
        # Reconnects within ~50 ms of the link coming back.
        "eddy.forward.central.retry.backoff.ms": "10",
        "eddy.forward.central.retry.backoff.max.ms": "50"})
    try:
        central.start()
        proxy.set_upstream(central.port)
        edge.start()
        run_tool(tool, "create", central.bootstrap, "bench", PARTITIONS)
        run_tool(tool, "create", edge.bootstrap, "bench", PARTITIONS)
        proxy.refuse(10 ** 6)
        proxy.cut_all()
        count = mib * 1024 * 1024 // size
        produced = run_tool(tool, "produce", edge.bootstrap, "bench", count, size, "all", PARTITIONS)
        up = time.monotonic()
        proxy.refuse(0)
        while True:
            link = status(edge)
            parts = link["partitions"]
            now = time.monotonic()
            if parts and all(p["forwarded_offset"] == p["local_end_offset"] for p in parts) and \
                    sum(p["local_end_offset"] for p in parts) == count:
                break
            time.sleep(0.01)
        # In message-value bytes, as the produce figure (batch bytes are
        # larger by the record and batch headers).
        drained_bytes = count * size
        with open("/proc/%d/status" % edge.proc.pid) as f:
            peak_kib = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
        # From the link coming back (including the reconnect, <= ~60 ms) to
        # the last acknowledgement seen (status polled every ~10-20 ms).
        return produced["mib_per_s"], drained_bytes / (now - up) / (1 << 20), peak_kib / 1024
    finally:
        edge.close()
        central.close()
        proxy.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mib", type=int, default=64)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tool", default=os.path.join(os.getcwd(), "tests", "bench", "rdkafka_bench"))
    args = parser.parse_args()
    config = os.path.join(os.environ["EDDY_SOURCE_DIR"], "config", "gateway.properties")
    for size in (100, 1024):
        produce, drain, rss = [], [], []
        for _ in range(args.runs):
            p, d, r = one_run(args.tool, config, size, args.mib)
            produce.append(p)
            drain.append(d)
            rss.append(r)
        p, d = statistics.median(produce), statistics.median(drain)
        print("forward drain %5d B messages, %d MiB, %d partitions: local produce %.1f MiB/s, drain %.1f MiB/s, "
              "ratio %.2f; edge peak RSS %.1f MiB (runs: produce %s, drain %s)" % (
                  size, args.mib, PARTITIONS, p, d, d / p, max(rss), ["%.1f" % x for x in produce],
                  ["%.1f" % x for x in drain]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
