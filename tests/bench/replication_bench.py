#!/usr/bin/python3
"""Replicated partitions on one machine (issue 16): a 3-node Eddy cluster,
the same librdkafka load (tests/bench/rdkafka_bench.c) on a topic with
replication factor 3 and on one with replication factor 1, each figure
next to its RF=1 peer measured in the same run:

  produce 1 KiB, acks=1 and acks=all, 1 partition: MiB/s, RF=3 / RF=1
  produce latency p50/p99/p99.9 at 1000 msg/s, 1 KiB, acks=all
  idle CPU of each node (five RF=3 partitions, no load, over 10 s)
  idle RSS of each node (after the cluster formed, before any load) and
  after the load (the leader of the RF=3 partition holds the most)
  failover: the RF=3 partition's leader killed (SIGKILL) while a librdkafka
      producer (not idempotent) sends acks=all at 1000 msg/s, 3 s into a
      12 s run: the longest wait for an acknowledgement (send -> delivery
      report; rdkafka_bench's latency run reports its max)
  failover (Java): the same with Apache Kafka's Java producer (kafka-clients
      4.4, tests/integration/java/ReplicatedNumbers.java latency: acks=all,
      enable.idempotence=true, linger.ms=0) on a second RF=3 topic, after
      the node killed above came back and caught up: the longest wait for
      an acknowledgement (send() -> callback) and the time from the kill to
      the end of the longest gap between two acknowledgements (the producer
      acknowledged again)

Three nodes on one 2-core machine share the CPU and the disk: the ratios
say what replication costs here, not what three gateways would see.

Not run by ctest. Usage, from the build directory (a Release build):
  EDDY_BIN=./eddy EDDY_SOURCE_DIR=.. /usr/bin/python3 ../tests/bench/replication_bench.py [--mib 32] [--no-java]
The Java run needs Kafka's jars (kafka_fixture.classpath(), cached in
~/.cache/eddy-test after the first Maven download) and a JDK; without them
it says why and the other figures are still printed.
"""

import argparse
import os
import select
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)
import kafka_fixture  # noqa: E402
import metrics_fixture  # noqa: E402
from cluster_fixture import EddyCluster  # noqa: E402
from eddy_fixture import FixtureError, wait_until  # noqa: E402
from rdkafka_bench import rss_kib, run_tool  # noqa: E402
from test_cluster_metadata import create_topic_at, metadata  # noqa: E402


def partition_leader(cluster, topic):
    views = []
    for i in cluster.running():
        topics = metadata(cluster, i, [topic])[3]
        if topic not in topics or 0 not in topics[topic][1]:
            return None
        views.append(topics[topic][1][0])
    leaders = {v[0] for v in views}
    return leaders.pop() if len(leaders) == 1 and views[0][2] == 0 and views[0][0] >= 0 else None


def caught_up(cluster, topics):
    """Whether every node's log of every topic's partition 0 ends where the
    other nodes' do and its high watermark is there too (metrics listener)."""
    ends = set()
    for i in cluster.ids:
        try:
            samples, _, _ = metrics_fixture.scrape(cluster.metrics_ports[i])
        except Exception:  # noqa: BLE001 - a node starting
            return False
        for topic in topics:
            labels = {"topic": topic, "partition": "0"}
            end = metrics_fixture.value(samples, "eddy_partition_log_end_offset", **labels)
            hw = metrics_fixture.value(samples, "eddy_partition_high_watermark", **labels)
            if end is None or hw != end:
                return False
            ends.add((topic, end))
    return len(ends) == len(topics)


def java_failover(cluster, topic, tmp, rate=1000, seconds=12, kill_after=3):
    """Kafka's Java producer (ReplicatedNumbers latency) sending acks=all to
    topic's partition 0 at rate for seconds, its leader SIGKILLed kill_after
    seconds into the sends. Returns (killed node, the program's figures,
    seconds from the kill to the end of the longest gap between two
    acknowledgements)."""
    log4j2 = os.path.join(tmp, "log4j2.properties")
    with open(log4j2, "w") as f:
        f.write(kafka_fixture.TOOLS_LOG4J2)
    everyone = ",".join("127.0.0.1:%d" % cluster.client_ports[i] for i in cluster.ids)
    cmd = kafka_fixture.java_program_command("ReplicatedNumbers", ["latency", everyone, topic, str(rate), str(seconds),
                                                                   "1024"], log4j2=log4j2)
    stderr_path = os.path.join(tmp, "ReplicatedNumbers.stderr")
    with open(stderr_path, "wb") as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err)
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        first = proc.stdout.readline().decode() if ready else ""
        if not first.startswith("started"):
            raise RuntimeError("ReplicatedNumbers latency did not start: %r" % first)
        time.sleep(kill_after)
        leader = partition_leader(cluster, topic)
        killed_at = time.monotonic()
        cluster.nodes[leader].kill()
        out, _ = proc.communicate(timeout=seconds + 180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    lines = [line for line in out.decode().splitlines() if line.startswith("latency ")]
    if not lines:
        with open(stderr_path, "rb") as f:
            tail = f.read()[-3000:].decode(errors="replace")
        raise RuntimeError("ReplicatedNumbers latency: exit %d, no result\n%s" % (proc.returncode, tail))
    figures = {k: float(v) for k, v in (kv.split("=") for kv in lines[-1].split()[1:])}
    return leader, figures, figures["gap_end_ns"] / 1e9 - killed_at


def cpu_seconds(pid):
    """User + system CPU time of pid so far (/proc/<pid>/stat)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mib", type=int, default=32, help="MiB of message values per produce run")
    parser.add_argument("--tool", default=os.path.join(os.getcwd(), "tests", "bench", "rdkafka_bench"))
    parser.add_argument("--no-java", action="store_true", help="leave out the Java producer's failover")
    args = parser.parse_args()
    if not os.path.exists(args.tool):
        print("rdkafka_bench not built (needs librdkafka-dev): %s" % args.tool)
        return 1
    # Seven single-partition topics in each node's disk budget (gateway
    # config: 4 GiB): 256 MiB rings.
    overrides = {"log.retention.bytes": str(256 << 20), "eddy.acks.all.waits.for": "disk"}
    with EddyCluster(3, overrides=overrides) as c:
        c.start_all()
        c.wait_for_leader(timeout=30)
        wait_until(lambda: all(len(metadata(c, i)[2]) == 3 for i in c.ids), 20, "three registered nodes")
        everyone = ",".join("127.0.0.1:%d" % c.client_ports[i] for i in c.ids)
        for topic, rf in (("rf3", 3), ("rf1", 1)):
            for acks in ("1", "all"):
                name = "%s-%s" % (topic, acks)
                created = create_topic_at(c, 1, name, 1, replication=rf)
                assert created == (0, None), "%s: %s" % (name, created)
                wait_until(lambda: partition_leader(c, name), 20, "a leader of " + name)
        failover_topics = ("rf3-failover", "rf3-failover-java")
        for name, rf in (("rf3-latency", 3), ("rf1-latency", 1)) + tuple((t, 3) for t in failover_topics):
            created = create_topic_at(c, 1, name, 1, replication=rf)
            assert created == (0, None), "%s: %s" % (name, created)
        for name in ("rf3-latency", "rf1-latency") + failover_topics:
            wait_until(lambda: partition_leader(c, name), 20, "a leader of " + name)
        time.sleep(2)
        idle = {i: rss_kib(c.nodes[i].eddy_pid(), "VmRSS") for i in c.ids}
        print("idle RSS per node (MiB): %s" % ", ".join("%d: %.1f" % (i, idle[i] / 1024) for i in c.ids), flush=True)
        # Idle CPU: the replicated partitions above (five RF=3, each led by
        # one node and followed by two) with no load, over 10 s.
        before = {i: cpu_seconds(c.nodes[i].eddy_pid()) for i in c.ids}
        time.sleep(10)
        idle_cpu = {i: (cpu_seconds(c.nodes[i].eddy_pid()) - before[i]) / 10 * 100 for i in c.ids}
        print("idle CPU per node (%% of one core, 5 RF=3 partitions): %s" % ", ".join(
            "%d: %.2f" % (i, idle_cpu[i]) for i in c.ids), flush=True)

        rows = {}
        count = (args.mib << 20) // 1024
        for acks in ("1", "all"):
            for topic in ("rf1", "rf3"):
                r = run_tool(args.tool, "produce", everyone, "%s-%s" % (topic, acks), count, 1024, acks, 1)
                rows[(topic, acks)] = r["mib_per_s"]
                print("produce 1 KiB acks=%-3s %s: %8.0f msg/s %7.1f MiB/s" % (acks, topic, r["msgs_per_s"],
                                                                          r["mib_per_s"]), flush=True)
        lat = {}
        for topic in ("rf1", "rf3"):
            lat[topic] = run_tool(args.tool, "latency", everyone, topic + "-latency", 1000, 10, 1024, "all")
            print("latency %s at 1000 msg/s acks=all: p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms" % (
                topic, lat[topic]["p50_us"] / 1000, lat[topic]["p99_us"] / 1000, lat[topic]["p999_us"] / 1000),
                flush=True)
        after = {i: rss_kib(c.nodes[i].eddy_pid(), "VmRSS") for i in c.ids}
        peak = {i: rss_kib(c.nodes[i].eddy_pid(), "VmHWM") for i in c.ids}

        # Failover: the leader killed 3 s into a 12 s run at 1000 msg/s.
        leader = partition_leader(c, "rf3-failover")
        result = {}
        runner = threading.Thread(target=lambda: result.update(
            run_tool(args.tool, "latency", everyone, "rf3-failover", 1000, 12, 1024, "all")))
        runner.start()
        time.sleep(3)
        c.nodes[leader].kill()
        runner.join()
        print("failover: leader %d killed at 1000 msg/s acks=all: longest wait for an ack %.2f s" % (
            leader, result.get("max_us", -1) / 1e6), flush=True)

        # The same with Kafka's Java producer, once the killed node is back
        # and every replica of the RF=3 topics caught up.
        java = None
        if not args.no_java:
            c.start(leader)
            rf3 = ["rf3-1", "rf3-all", "rf3-latency"] + list(failover_topics)
            wait_until(lambda: c.leader() is not None and all(partition_leader(c, t) for t in rf3), 60,
                       "the restarted node back in every group")
            wait_until(lambda: caught_up(c, rf3), 120, "every replica caught up")
            try:
                tmp = c.nodes[leader].tmp
                java = java_failover(c, "rf3-failover-java", tmp)
            except (FixtureError, RuntimeError, OSError, subprocess.SubprocessError) as e:
                print("failover (Java): not measured: %s" % e, flush=True)
        if java:
            java_leader, java_result, java_again = java
            print("failover (Java): leader %d killed at 1000 msg/s acks=all: longest wait for an ack %.2f s "
                  "(acknowledged again %.2f s after the kill; errors %d)" % (
                      java_leader, java_result["max_us"] / 1e6, java_again, java_result["errors"]), flush=True)

    print("\n%-30s %10s %10s %7s" % ("produce 1 KiB, 1 partition", "RF=3", "RF=1", "ratio"))
    for acks in ("1", "all"):
        print("%-30s %10.1f %10.1f %7.2f" % ("acks=%s MiB/s" % acks, rows[("rf3", acks)], rows[("rf1", acks)],
                                            rows[("rf3", acks)] / rows[("rf1", acks)]))
    for q, key in (("p50", "p50_us"), ("p99", "p99_us"), ("p99.9", "p999_us")):
        print("%-30s %10.2f %10.2f %7.2f" % ("latency %s ms (1000 msg/s)" % q, lat["rf3"][key] / 1000,
                                            lat["rf1"][key] / 1000, lat["rf3"][key] / lat["rf1"][key]))
    print("%-30s %10.2f" % ("failover: longest ack wait s", result.get("max_us", -1) / 1e6))
    if java:
        print("%-30s %10.2f   (acknowledged again %.2f s after the kill)" % (
            "failover (Java): longest wait s", java[1]["max_us"] / 1e6, java[2]))
    print("RSS per node idle / after load / peak (MiB): %s" % "; ".join(
        "%d: %.1f / %.1f / %.1f" % (i, idle[i] / 1024, after[i] / 1024, peak[i] / 1024) for i in sorted(idle)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
