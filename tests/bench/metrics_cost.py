"""The metrics listener's cost (issue 18), measured on this machine:
  idle   RSS of an eddy without and with eddy.metrics.listener, and the CPU
         each uses over IDLE_SECONDS (default 60) idle, the second scraped
         once every 15 s;
  scrape wall time of GET /metrics and /status.json with 100 partitions
         (each with one record and a committed offset of one group), and the
         RSS after 1000 scrapes (nothing kept between scrapes).
usage: EDDY_BIN=... EDDY_SOURCE_DIR=... /usr/bin/python3 tests/bench/metrics_cost.py
Allocation per scrape: run eddy under heaptrack (see README, "Metrics and
the status page")."""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import eddy_fixture  # noqa: E402
import kafka_wire as w  # noqa: E402
import metrics_fixture as mf  # noqa: E402

IDLE_SECONDS = int(os.environ.get("IDLE_SECONDS", "60"))
PARTITIONS = 100
OVERRIDES = {"eddy.disk.budget.bytes": str(1 << 30), "log.segment.bytes": str(1 << 20),
             "log.retention.bytes": "-1"}


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


def populate(broker):
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata
    import forward_fixture as ff
    ff.create_eddy_topic(broker, "many", PARTITIONS)
    with w.Connection(broker.port) as conn:
        for p in range(PARTITIONS):
            w.produce(conn, "many", p, w.record_batch([(None, b"x" * 100, ())]))
    c = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id="bench", enable_auto_commit=False)
    c.commit({TopicPartition("many", p): OffsetAndMetadata(0, "") for p in range(PARTITIONS)})
    c.close()


def main():
    hz = os.sysconf("SC_CLK_TCK")
    with eddy_fixture.Broker(overrides=OVERRIDES) as plain, eddy_fixture.Broker(
            overrides=dict(OVERRIDES, **{"eddy.metrics.listener": "http://127.0.0.1:0"})) as metered:
        plain.start()
        metered.start()
        port = mf.metrics_port(metered)
        time.sleep(2)  # let both settle before measuring
        print("idle RSS without listener: %d KiB, with: %d KiB" % (proc_status(plain.proc.pid, "VmRSS"),
                                                                   proc_status(metered.proc.pid, "VmRSS")))
        t0 = (cpu_ticks(plain.proc.pid), cpu_ticks(metered.proc.pid))
        start = time.monotonic()
        scrapes = 0
        while time.monotonic() - start < IDLE_SECONDS:
            if time.monotonic() - start >= scrapes * 15:
                mf.http_get(port, "/metrics")
                scrapes += 1
            time.sleep(0.2)
        t1 = (cpu_ticks(plain.proc.pid), cpu_ticks(metered.proc.pid))
        print("CPU over %d s idle: without listener %.2f s, with listener (%d scrapes) %.2f s" % (
            IDLE_SECONDS, (t1[0] - t0[0]) / hz, scrapes, (t1[1] - t0[1]) / hz))
        print("RSS after idle: without %d KiB, with %d KiB" % (proc_status(plain.proc.pid, "VmRSS"),
                                                               proc_status(metered.proc.pid, "VmRSS")))
        populate(metered)
        for path in ("/metrics", "/status.json"):
            size = len(mf.http_get(port, path)[2])
            n = 200
            t = time.monotonic()
            for _ in range(n):
                mf.http_get(port, path)
            per = (time.monotonic() - t) / n
            print("%s with %d partitions: %d bytes, %.2f ms per request (client wall time, loopback)" % (
                path, PARTITIONS, size, per * 1000))
        rss = proc_status(metered.proc.pid, "VmRSS")
        for _ in range(1000):
            mf.http_get(port, "/metrics")
        print("RSS before/after 1000 more scrapes: %d / %d KiB (peak %d KiB)" % (
            rss, proc_status(metered.proc.pid, "VmRSS"), proc_status(metered.proc.pid, "VmHWM")))


if __name__ == "__main__":
    main()
