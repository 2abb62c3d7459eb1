#!/usr/bin/python3
"""Produce CPU against the copy floor, interleaved (issue 20): one eddy on
the gateway config, then ROUNDS rounds of: the plain copy floor, the floor
with an fdatasync per MiB, and one produce of COUNT 1 KiB messages (acks=1
to a default topic, acks=all to a page-cache topic, acks=all to a disk
topic), each to a fresh topic. Prints each run and the medians' ratios:
the synced modes against the synced floor, the page-cache mode against the
plain one (see METHOD.md, "The limits", for why). A warm-up round is not
counted. Broker CPU from its process CPU clock (bench_measure.ProcessMeter).

  /usr/bin/python3 tests/bench/produce_floor_pairs.py --build build [--rounds 4] [--count 262144]
"""

import argparse
import os
import shutil
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_limits  # noqa: E402
from bench_measure import ProcessMeter  # noqa: E402
from bench_systems import EddySystem  # noqa: E402

SIZE = 1024
MODES = {"acks1": ("acks=1", "synced floor"), "acks_all_page_cache": ("acks=all, page cache", "plain floor"),
         "acks_all_disk": ("acks=all, disk", "synced floor")}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", required=True)
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--count", type=int, default=262144)
    o = p.parse_args()
    build = os.path.abspath(o.build)
    floor_tool = os.path.join(build, "tests", "bench", "copy_floor")
    work = tempfile.mkdtemp(prefix="floor-pairs-", dir=build)
    eddy = EddySystem(os.path.join(build, "eddy"), os.path.abspath(os.path.join(HERE, "..", "..")),
                      os.path.join(build, "tests", "bench", "rdkafka_bench"), work, retention_bytes=1 << 30)
    eddy.start()
    meter = ProcessMeter(eddy.broker.proc.pid)
    mib = max(64, o.count * SIZE >> 20)
    got = {}
    try:
        for r in range(o.rounds + 1):
            for kind in ("plain floor", "synced floor") + tuple(MODES):
                os.sync()
                if kind.endswith("floor"):
                    v = bench_limits.copy_floor_write(floor_tool, os.path.join(work, "floor"), mib,
                                                      sync=kind == "synced floor")
                    shutil.rmtree(os.path.join(work, "floor"), ignore_errors=True)
                    cpu = v["floor_cpu_s_per_gb"]
                else:
                    topic = "pairs-%s-%d" % (kind, r)
                    c0 = meter.cpu_s()
                    v = eddy.produce(topic, o.count, SIZE, 1, kind)()
                    cpu = (meter.cpu_s() - c0) / (v["bytes"] / 1e9)
                    eddy.delete(topic, 1)
                label = MODES[kind][0] if kind in MODES else kind
                print("%s %-22s %.3f CPU s/GB" % ("warm-up" if r == 0 else "round %d" % r, label, cpu), flush=True)
                if r > 0:
                    got.setdefault(kind, []).append(cpu)
    finally:
        eddy.stop()
        shutil.rmtree(work, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in got.items()}
    for kind, (label, floor) in MODES.items():
        print("median %-22s %.3f CPU s/GB = %.2fx the %s (%.3f)" % (label, med[kind], med[kind] / med[floor], floor,
                                                                   med[floor]))


if __name__ == "__main__":
    main()
