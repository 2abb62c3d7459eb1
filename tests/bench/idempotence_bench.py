#!/usr/bin/python3
"""Produce throughput with idempotence on vs off (the ratio is the figure):
tests/integration/rdkafka_idempotence (librdkafka, 9-byte values, 4
partitions, acks=all, max.in.flight 5, batches of 200) sends COUNT messages
straight to one Eddy, alternating RDKAFKA_IDEMPOTENCE=true/false, ROUNDS
times each, each run on a fresh topic; reported: best and median msg/s per
mode and on/off, and the broker's CPU time per message in each mode (the
broker's own share of the difference; the rest is the client's).

Not run by ctest. Usage, from the build directory:
  EDDY_BIN=./eddy EDDY_SOURCE_DIR=.. /usr/bin/python3 ../tests/bench/idempotence_bench.py \
      [--count 1000000] [--rounds 3]
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import eddy_fixture  # noqa: E402
import kafka_wire as w  # noqa: E402


def cpu_seconds(pid):
    """utime + stime of a process, in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=1000000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tool", default=os.path.join(os.getcwd(), "tests", "integration", "rdkafka_idempotence"))
    args = parser.parse_args()
    broker = eddy_fixture.Broker(overrides={"log.retention.bytes": 1 << 30})
    rates = {"true": [], "false": []}
    cpu = {"true": [], "false": []}
    try:
        broker.start()
        run = 0
        for _ in range(args.rounds):
            for mode in ("true", "false"):
                run += 1
                topic = "bench-%d" % run
                with w.Connection(broker.port) as conn:
                    from kafka.protocol.admin import CreateTopicsResponse
                    conn.request(19, 1, w.create_topics_v1(topic, 4), response_class=CreateTopicsResponse[1])
                t0 = time.monotonic()
                c0 = cpu_seconds(broker.proc.pid)
                result = subprocess.run([args.tool, broker.bootstrap, topic, str(args.count), "4"],
                                        env=dict(os.environ, RDKAFKA_IDEMPOTENCE=mode),
                                        capture_output=True, text=True, timeout=900)
                elapsed = time.monotonic() - t0
                if result.returncode != 0:
                    raise RuntimeError("run failed: %s %s" % (result.stdout[-500:], result.stderr[-2000:]))
                rates[mode].append(args.count / elapsed)
                cpu[mode].append((cpu_seconds(broker.proc.pid) - c0) * 1e9 / args.count)
                print("idempotence=%s: %.0f msg/s, broker CPU %.0f ns/msg" % (mode, args.count / elapsed, cpu[mode][-1]),
                      flush=True)
    finally:
        broker.close()
    on, off = rates["true"], rates["false"]
    print("idempotence on : best %.0f, median %.0f msg/s" % (max(on), statistics.median(on)))
    print("idempotence off: best %.0f, median %.0f msg/s" % (max(off), statistics.median(off)))
    print("ratio on/off: best %.3f, median %.3f" % (max(on) / max(off), statistics.median(on) / statistics.median(off)))
    print("broker CPU per message, median: on %.0f ns, off %.0f ns (ratio %.3f)" %
          (statistics.median(cpu["true"]), statistics.median(cpu["false"]),
           statistics.median(cpu["true"]) / statistics.median(cpu["false"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
