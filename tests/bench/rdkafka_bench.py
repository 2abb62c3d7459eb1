#!/usr/bin/python3
"""Eddy with a librdkafka client (tests/bench/rdkafka_bench.c), on the
gateway configuration, each figure next to a limit measured in the same run:

  produce (100 B and 1 KiB, acks=1 and acks=all)  vs  sequential write +
      fdatasync of the same bytes in the data directory (the disk's limit)
  consume from the beginning                      vs  sendfile(2) of the
      partition's segment files to a loopback socket (the zero-copy limit)
  produce latency p50/p99/p99.9 at a fixed moderate rate (acks=all)
  broker RSS when idle and its peak under load with 32 partitions
      (targets: < 8 MiB idle, < 48 MiB at full load)

Not run by ctest. Usage, from the build directory (after `make test` or a
Release build):
  EDDY_BIN=./eddy EDDY_SOURCE_DIR=.. /usr/bin/python3 ../tests/bench/rdkafka_bench.py [--mib 64]
"""

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)
import eddy_fixture  # noqa: E402
from broker_bench import disk_peer, sendfile_peer  # noqa: E402


def rss_kib(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def run_tool(tool, *args):
    result = subprocess.run([tool] + [str(a) for a in args], capture_output=True, text=True, timeout=900)
    if result.returncode != 0:
        raise RuntimeError("%s %s failed: %s %s" % (tool, " ".join(map(str, args)), result.stdout, result.stderr[-2000:]))
    fields = dict(kv.split("=") for kv in result.stdout.split()[1:])
    return {k: float(v) for k, v in fields.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mib", type=int, default=64, help="MiB of message values per produce run")
    parser.add_argument("--tool", default=os.path.join(os.getcwd(), "tests", "bench", "rdkafka_bench"))
    args = parser.parse_args()
    if not os.path.exists(args.tool):
        print("rdkafka_bench not built (needs librdkafka-dev): %s" % args.tool)
        return 1
    config = os.path.join(os.environ["EDDY_SOURCE_DIR"], "config", "gateway.properties")
    broker = eddy_fixture.Broker(config=config, overrides={"log.retention.bytes": 1 << 30,
                                                           "num.partitions": 8})
    rows = []
    try:
        broker.start()
        pid = broker.proc.pid
        idle = rss_kib(pid, "VmRSS")
        print("eddy on %s (gateway config), idle RSS %.1f MiB" % (broker.bootstrap, idle / 1024), flush=True)
        disk = disk_peer(broker.data_dir, args.mib << 20, 8 << 20)
        print("limit: disk write + fdatasync every 8 MiB: %.1f MiB/s" % disk, flush=True)
        for size in (100, 1024):
            count = (args.mib << 20) // size
            for acks in ("1", "all"):
                topic = "bench-%d-%s" % (size, acks)
                r = run_tool(args.tool, "produce", broker.bootstrap, topic, count, size, acks, 8)
                print("produce %5d B acks=%-3s: %8.0f msg/s %7.1f MiB/s" % (size, acks, r["msgs_per_s"],
                                                                        r["mib_per_s"]), flush=True)
                rows.append(("produce %d B acks=%s" % (size, acks), r["mib_per_s"], "disk write+fdatasync", disk))
        count = (args.mib << 20) // 1024
        r = run_tool(args.tool, "consume", broker.bootstrap, "bench-1024-all", 8, count)
        segments = []
        for p in range(8):
            d = os.path.join(broker.data_dir, "bench-1024-all-%d" % p)
            segments += sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".log"))
        _, loopback = sendfile_peer(segments)
        print("consume 1 KiB: %.0f msg/s %.1f MiB/s; limit: loopback sendfile %.1f MiB/s" % (
            r["msgs_per_s"], r["mib_per_s"], loopback), flush=True)
        rows.append(("consume 1024 B", r["mib_per_s"], "loopback sendfile", loopback))
        lat = run_tool(args.tool, "latency", broker.bootstrap, "bench-latency", 1000, 10, 1024, "all")
        print("latency at 1000 msg/s, 1 KiB, acks=all: p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms" % (
            lat["p50_us"] / 1000, lat["p99_us"] / 1000, lat["p999_us"] / 1000), flush=True)
        # Full load over 32 partitions, then the peak resident set.
        count32 = (args.mib << 20) // 1024
        from kafka.admin import KafkaAdminClient, NewTopic
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
        admin.create_topics([NewTopic("bench-32", num_partitions=32, replication_factor=1)])
        admin.close()
        r32 = run_tool(args.tool, "produce", broker.bootstrap, "bench-32", count32, 1024, "1", 32)
        peak = rss_kib(pid, "VmHWM")
        print("32-partition load: %.1f MiB/s; peak RSS %.1f MiB" % (r32["mib_per_s"], peak / 1024), flush=True)
        rc = broker.stop()
        if rc != 0:
            raise RuntimeError("eddy exited with %d" % rc)
    except Exception as e:  # noqa: BLE001
        print("bench failed: %s\n%s" % (e, broker.log_text()[-3000:]))
        broker.close()
        return 1
    broker.close()
    print("\n%-26s %10s   %-22s %10s %7s" % ("measurement", "MiB/s", "limit", "MiB/s", "ratio"))
    for name, rate, peer, peer_rate in rows:
        print("%-26s %10.1f   %-22s %10.1f %7.2f" % (name, rate, peer, peer_rate, rate / peer_rate))
    print("latency p50/p99/p99.9 (ms) at 1000 msg/s acks=all: %.2f / %.2f / %.2f" % (
        lat["p50_us"] / 1000, lat["p99_us"] / 1000, lat["p999_us"] / 1000))
    print("RSS idle %.1f MiB (target < 8), peak under 32-partition load %.1f MiB (target < 48)" % (
        idle / 1024, peak / 1024))
    return 0


if __name__ == "__main__":
    sys.exit(main())
