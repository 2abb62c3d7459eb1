#!/usr/bin/python3
"""The metrics listener's cost (issue 18), measured on this machine:

  idle    RSS of an eddy without and with eddy.metrics.listener, and the CPU
          each uses over --idle-seconds idle, the second scraped once every
          15 s (a Prometheus scrape interval);
  scrape  wall time of GET /metrics and /status.json with 100 partitions,
          each with one record, and GROUPS consumer groups that committed an
          offset for 10 of them: once with nothing committed between two
          scrapes (the committed offsets come from the listener's copy,
          app/group_lag_cache.h) and once with an offset committed before
          every scrape (the copy is read again from eddy.db);
  memory  the RSS before and after 1000 more scrapes (nothing kept between
          scrapes but that copy).

  /usr/bin/python3 tests/bench/metrics_cost.py --build BUILD [--out DIR]
      [--idle-seconds 60] [--groups 50]

`make bench` runs it (METRICS_IDLE_SECONDS, 20 by default); the report is
BUILD/bench-report/metrics_cost.md (and metrics_cost.json); the latest
figures are in tests/bench/results/metrics_cost.md."""

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(SOURCE, "tests", "integration"))
import eddy_fixture  # noqa: E402
import kafka_wire as w  # noqa: E402
import metrics_fixture as mf  # noqa: E402

PARTITIONS = 100
PARTITIONS_PER_GROUP = 10
SCRAPE_INTERVAL_S = 15
OVERRIDES = {"eddy.disk.budget.bytes": str(1 << 30), "log.segment.bytes": str(1 << 20),
             "log.retention.bytes": "-1"}
TOPIC = "many"


def proc_status(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


class Committer:
    """Commits offsets of groups bench-0 .. bench-N-1 (kafka-python, simple
    commits outside a group generation)."""

    def __init__(self, broker):
        from kafka import KafkaConsumer
        self.bootstrap = broker.bootstrap
        self.consumers = {}
        self._new = lambda group: KafkaConsumer(bootstrap_servers=self.bootstrap, group_id=group,
                                                enable_auto_commit=False)

    def commit(self, group_index, offset):
        from kafka import TopicPartition
        from kafka.structs import OffsetAndMetadata
        group = "bench-%d" % group_index
        if group not in self.consumers:
            self.consumers[group] = self._new(group)
        first = (group_index * PARTITIONS_PER_GROUP) % PARTITIONS
        self.consumers[group].commit({TopicPartition(TOPIC, (first + p) % PARTITIONS): OffsetAndMetadata(offset, "")
                                      for p in range(PARTITIONS_PER_GROUP)})

    def close(self):
        for c in self.consumers.values():
            c.close()


def populate(broker, committer, groups):
    import forward_fixture as ff
    ff.create_eddy_topic(broker, TOPIC, PARTITIONS)
    with w.Connection(broker.port) as conn:
        for p in range(PARTITIONS):
            w.produce(conn, TOPIC, p, w.record_batch([(None, b"x" * 100, ())]))
    for g in range(groups):
        committer.commit(g, 0)


def idle(plain, metered, port, seconds):
    hz = os.sysconf("SC_CLK_TCK")
    out = {"rss_kib": {"without": proc_status(plain.proc.pid, "VmRSS"), "with": proc_status(metered.proc.pid, "VmRSS")}}
    t0 = (cpu_ticks(plain.proc.pid), cpu_ticks(metered.proc.pid))
    start = time.monotonic()
    scrapes = 0
    while time.monotonic() - start < seconds:
        if time.monotonic() - start >= scrapes * SCRAPE_INTERVAL_S:
            mf.http_get(port, "/metrics")
            scrapes += 1
        time.sleep(0.2)
    t1 = (cpu_ticks(plain.proc.pid), cpu_ticks(metered.proc.pid))
    out.update(seconds=seconds, scrapes=scrapes,
               cpu_s={"without": (t1[0] - t0[0]) / hz, "with": (t1[1] - t0[1]) / hz},
               rss_after_kib={"without": proc_status(plain.proc.pid, "VmRSS"),
                              "with": proc_status(metered.proc.pid, "VmRSS")})
    return out


def scrape_ms(port, path, n, before_each=None):
    """Median wall time of n GETs of path, in ms; before_each() runs
    untimed before each one."""
    times = []
    for i in range(n):
        if before_each is not None:
            before_each(i)
        t = time.monotonic()
        status, _, _ = mf.http_get(port, path)
        times.append((time.monotonic() - t) * 1000.0)
        if status != 200:
            raise RuntimeError("%s answered %s" % (path, status))
    times.sort()
    return times[len(times) // 2]


def scrapes(port, committer, groups):
    out = {}
    for path in ("/metrics", "/status.json"):
        out[path] = {"bytes": len(mf.http_get(port, path)[2]),
                     "unchanged_ms": scrape_ms(port, path, 200),
                     "after_commit_ms": scrape_ms(port, path, 50, lambda i: committer.commit(i % groups, 1 + i))}
    return out


def memory(port, pid):
    before = proc_status(pid, "VmRSS")
    for _ in range(1000):
        mf.http_get(port, "/metrics")
    return {"before_kib": before, "after_kib": proc_status(pid, "VmRSS"), "peak_kib": proc_status(pid, "VmHWM")}


def report(r):
    i, s, m = r["idle"], r["scrape"], r["memory"]
    lines = ["# The metrics listener's cost", "",
             "`/usr/bin/python3 tests/bench/metrics_cost.py --build BUILD --idle-seconds %d --groups %d`: two "
             "Release eddys side by side, one without `eddy.metrics.listener`, one with it." % (i["seconds"],
                                                                                              r["groups"]), "",
             "## Idle", "",
             "| | without listener | with listener |", "|---|---|---|",
             "| RSS at start | %d KiB | %d KiB |" % (i["rss_kib"]["without"], i["rss_kib"]["with"]),
             "| CPU over %d s idle (%d scrapes of /metrics, one per %d s) | %.2f s | %.2f s |" % (
                 i["seconds"], i["scrapes"], SCRAPE_INTERVAL_S, i["cpu_s"]["without"], i["cpu_s"]["with"]),
             "| RSS after | %d KiB | %d KiB |" % (i["rss_after_kib"]["without"], i["rss_after_kib"]["with"]), "",
             "## One scrape (client wall time over loopback, median)", "",
             "%d partitions with one record each; %d groups with committed offsets for %d partitions each "
             "(%d rows)." % (PARTITIONS, r["groups"], PARTITIONS_PER_GROUP, r["groups"] * PARTITIONS_PER_GROUP), "",
             "| document | bytes | nothing committed since the last scrape | an offset committed before it |",
             "|---|---|---|---|"]
    for path, f in s.items():
        lines.append("| `%s` | %d | %.2f ms | %.2f ms |" % (path, f["bytes"], f["unchanged_ms"], f["after_commit_ms"]))
    lines += ["", "RSS before / after 1000 more scrapes of /metrics: %d / %d KiB (peak %d KiB)." % (
        m["before_kib"], m["after_kib"], m["peak_kib"])]
    return "\n".join(lines) + "\n"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default=None, help="build directory with eddy (default: EDDY_BIN's)")
    p.add_argument("--out", help="report directory (default BUILD/bench-report)")
    p.add_argument("--idle-seconds", type=int, default=int(os.environ.get("IDLE_SECONDS", "60")))
    p.add_argument("--groups", type=int, default=50)
    o = p.parse_args()
    if o.build:
        o.build = os.path.abspath(o.build)
        os.environ["EDDY_BIN"] = os.path.join(o.build, "eddy")
    elif os.environ.get("EDDY_BIN"):
        o.build = os.path.dirname(os.path.abspath(os.environ["EDDY_BIN"]))
    else:
        p.error("--build or EDDY_BIN is needed")
    os.environ.setdefault("EDDY_SOURCE_DIR", SOURCE)
    o.out = os.path.abspath(o.out or os.path.join(o.build, "bench-report"))
    return o


def main():
    opts = parse_args()
    results = {"groups": opts.groups, "partitions": PARTITIONS}
    with eddy_fixture.Broker(overrides=OVERRIDES) as plain, eddy_fixture.Broker(
            overrides=dict(OVERRIDES, **{"eddy.metrics.listener": "http://127.0.0.1:0"})) as metered:
        plain.start()
        metered.start()
        port = mf.metrics_port(metered)
        time.sleep(2)  # both finish starting (topic load, first flush) before the idle figures
        results["idle"] = idle(plain, metered, port, opts.idle_seconds)
        committer = Committer(metered)
        try:
            populate(metered, committer, opts.groups)
            results["scrape"] = scrapes(port, committer, opts.groups)
        finally:
            committer.close()
        results["memory"] = memory(port, metered.proc.pid)
    text = report(results)
    os.makedirs(opts.out, exist_ok=True)
    with open(os.path.join(opts.out, "metrics_cost.md"), "w") as f:
        f.write(text)
    with open(os.path.join(opts.out, "metrics_cost.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
