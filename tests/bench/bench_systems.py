"""The systems compare_bench.py sets side by side, each one broker process
on loopback with its data directory under the bench's work directory (one
filesystem for all), driven by its own bench client:

  EddySystem       eddy serve on config/gateway.properties, librdkafka
                   client tests/bench/rdkafka_bench.c
  KafkaSystem      Apache Kafka 4.4, one KRaft node (broker + controller in one
                   JVM) started with tests/integration/kafka_fixture.py, the
                   same librdkafka client as Eddy
  JetStreamSystem  Debian's nats-server with JetStream file storage, libnats
                   client tests/bench/nats_bench.c

All offer the same operations with the same arguments, so a workload is
written once for all: produce(name, count, size, partitions, durability),
consume(name, count), latency(name, rate, seconds, size, durability), each
returning a function that runs the client once, delete(name, partitions),
plus meter (CPU and RSS of the broker process). `durability` is one of the
DURABILITY keys below. variant(durability) names what the system does for
that mode (JetStream has a single publish mode, so it is measured once and
shown next to all three of Eddy's); matches(durability) tells whether it
gives the same guarantee as Eddy's mode of that name, so the report can say
when a pairing is not like for like.

perf_test_argv() is Kafka's own producer benchmark, kafka-producer-perf-test
(org.apache.kafka.tools.ProducerPerformance, the Java client), pointed at
any of the Kafka-protocol brokers; run_perf_test() runs it and parses its
summary.
"""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

from bench_measure import ClientFailed, ProcessMeter, run_client

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import eddy_fixture  # noqa: E402
import kafka_fixture  # noqa: E402

# What a positive produce acknowledgement means, per mode (see METHOD.md).
DURABILITY = {
    "acks1": "acks=1: acknowledged once written to the broker's page cache",
    "acks_all_page_cache": "acks=all, written to the page cache (survives a broker crash, not a power cut)",
    "acks_all_disk": "acks=all, fdatasync before the acknowledgement (survives a power cut)",
}


BENCH_DISK_BUDGET_BYTES = 24 << 30


class EddySystem:
    name = "Eddy"

    def __init__(self, eddy_bin, source_dir, tool, work_dir, retention_bytes, overrides=None):
        os.environ["EDDY_BIN"] = eddy_bin
        os.environ["EDDY_SOURCE_DIR"] = source_dir
        self.tool = tool
        self.retention_bytes = retention_bytes
        # The metrics listener, for the disk rows' stall check (fsync_counts);
        # its idle cost is in tests/bench/results/metrics_cost.md.
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.metrics_port = s.getsockname()[1]
        self.broker = eddy_fixture.Broker(
            config=os.path.join(source_dir, "config", "gateway.properties"),
            overrides={"log.retention.bytes": retention_bytes, "num.partitions": 1,
                       # The 8-partition topics preallocate 8 x retention_bytes
                       # (about 9 GiB): more than the gateway's 4 GiB budget.
                       "eddy.disk.budget.bytes": BENCH_DISK_BUDGET_BYTES,
                       "eddy.metrics.listener": "http://127.0.0.1:%d" % self.metrics_port,
                       **(overrides or {})}, keep=False)
        shutil.rmtree(self.broker.tmp, ignore_errors=True)
        self.broker.tmp = tempfile.mkdtemp(prefix="eddy-", dir=work_dir)
        self.broker.data_dir = os.path.join(self.broker.tmp, "data")
        self.meter = None

    def version(self):
        out = subprocess.run([os.environ["EDDY_BIN"], "--version"], capture_output=True, text=True)
        return (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr) else "eddy"

    def start(self):
        self.broker.start()
        self.meter = ProcessMeter(self.broker.proc.pid)

    def stop(self):
        rc = self.broker.stop()
        self.broker.close()
        if rc != 0:
            raise RuntimeError("eddy exited with %d" % rc)

    def close(self):
        self.broker.close()

    def data_dir(self):
        return self.broker.data_dir

    def fsync_counts(self):
        """Eddy's own fdatasync histogram (eddy_fsync_duration_seconds on
        /metrics): {upper bound in seconds, +Inf as inf: how many syncs took
        at most that long}, cumulative as Prometheus gives it."""
        url = "http://127.0.0.1:%d/metrics" % self.metrics_port
        with urllib.request.urlopen(url, timeout=10) as answer:
            text = answer.read().decode()
        counts = {}
        for line in text.splitlines():
            m = re.match(r'eddy_fsync_duration_seconds_bucket\{le="([^"]+)"\} (\S+)$', line)
            if m:
                counts[float("inf") if m.group(1) == "+Inf" else float(m.group(1))] = int(float(m.group(2)))
        if not counts:
            raise RuntimeError("no eddy_fsync_duration_seconds on %s" % url)
        return counts

    def watch_syncs(self, run_once, stall_ms):
        """run_once(index, warmup) -> values, plus pair (the index),
        syncs_over_1ms and syncs_over_stall: how many of Eddy's own
        fdatasync calls during the run took over 1 ms and over stall_ms (a
        bound of its histogram), from fsync_counts() before and after."""
        def over(counts, ms):
            return counts[float("inf")] - counts[ms / 1000.0]

        def watched(index, warmup):
            before = self.fsync_counts()
            values = run_once(index, warmup)
            after = self.fsync_counts()
            values["syncs_over_1ms"] = over(after, 1) - over(before, 1)
            values["syncs_over_stall"] = over(after, stall_ms) - over(before, stall_ms)
            values["pair"] = index
            return values
        return watched

    @property
    def bootstrap(self):
        return self.broker.bootstrap

    def create(self, topic, partitions, durability):
        self._create(topic, partitions, durability)

    @staticmethod
    def variant(durability):
        return durability

    def _create(self, topic, partitions, durability):
        configs = []
        if durability == "acks_all_page_cache":
            configs.append("eddy.acks.all.waits.for=page-cache")
        elif durability == "acks_all_disk":
            configs.append("eddy.acks.all.waits.for=disk")
        run_client([self.tool, "create", self.broker.bootstrap, topic, partitions] + configs)

    @staticmethod
    def matches(durability):
        return True

    @staticmethod
    def syncs(durability):
        """Whether its produce path fdatasyncs what it stores in this mode:
        yes but for acks=all/page cache. acks=1 topics take the gateway's
        default (eddy.acks.all.waits.for=disk), whose flusher syncs each
        batch before consumers see it."""
        return durability != "acks_all_page_cache"

    @staticmethod
    def _acks(durability):
        return "1" if durability == "acks1" else "all"

    def produce(self, name, count, size, partitions, durability, codec=None):
        """codec (none, lz4, zstd, ...): the producer compresses sensor-like
        text with it (rdkafka_bench.c); None: the same text every message,
        uncompressed."""
        self._create(name, partitions, durability)
        return lambda: run_client([self.tool, "produce", self.broker.bootstrap, name, count, size,
                                   self._acks(durability), partitions] + ([codec] if codec else []))

    def consume(self, name, count):
        return lambda: run_client([self.tool, "consume", self.broker.bootstrap, name, 1, count])

    def delete(self, name, partitions):
        run_client([self.tool, "delete", self.broker.bootstrap, name])

    def latency(self, name, rate, seconds, size, durability):
        self._create(name, 1, durability)
        return lambda: run_client([self.tool, "e2e", self.broker.bootstrap, name, rate, seconds, size,
                                   self._acks(durability)])

    def raw_latency(self, raw_e2e, name, rate, seconds, size, durability):
        """latency() through raw_e2e.c, a one-thread client with no library."""
        self._create(name, 1, durability)
        return lambda: run_client([raw_e2e, self.broker.bootstrap, name, rate, seconds, size, self._acks(durability)])

    def segment_files(self, topic):
        d = os.path.join(self.broker.data_dir, "%s-0" % topic)
        return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".log"))


class JetStreamSystem:
    """nats-server with JetStream; stream PREFIX_i (subject PREFIX.i) stands
    for partition i of topic PREFIX (see METHOD.md for why streams, not
    subjects of one stream)."""

    name = "JetStream"

    def __init__(self, tool, work_dir, max_pending_bytes=64 << 20, max_pending_msgs=65536):
        self.tool = tool
        self.tmp = tempfile.mkdtemp(prefix="jetstream-", dir=work_dir)
        self.store_dir = os.path.join(self.tmp, "store")
        self.proc = None
        self.url = None
        self.meter = None
        self.max_pending_bytes = max_pending_bytes
        self.max_pending_msgs = max_pending_msgs

    def version(self):
        out = subprocess.run(["nats-server", "--version"], capture_output=True, text=True)
        return out.stdout.strip()

    def start(self, timeout=30):
        conf = os.path.join(self.tmp, "nats-server.conf")
        with open(conf, "w") as f:
            # Defaults everywhere but where the store lives and how big it may
            # grow; JetStream's file store syncs on its own schedule (2.9 has
            # no sync_interval option: see METHOD.md).
            f.write('listen: "127.0.0.1:-1"\n'
                    'jetstream {\n  store_dir: "%s"\n  max_file_store: 64G\n  max_memory_store: 256M\n}\n'
                    % self.store_dir)
        self.log_path = os.path.join(self.tmp, "nats-server.log")
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(["nats-server", "-c", conf, "--ports_file_dir", self.tmp],
                                     stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log)
        ports = os.path.join(self.tmp, "nats-server_%d.ports" % self.proc.pid)

        def ready():
            if self.proc.poll() is not None:
                raise RuntimeError("nats-server exited with %s:\n%s" % (self.proc.returncode, self.log_text()))
            if not os.path.exists(ports) or b"Server is ready" not in open(self.log_path, "rb").read():
                return None
            try:
                with open(ports) as f:
                    return json.load(f)["nats"][0]
            except (ValueError, KeyError, IndexError):
                return None

        self.url = eddy_fixture.wait_until(ready, timeout, "nats-server to be ready")
        self.meter = ProcessMeter(self.proc.pid)

    def log_text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def stop(self):
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()
        self.proc = None

    def close(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
        shutil.rmtree(self.tmp, ignore_errors=True)

    def data_dir(self):
        return self.store_dir

    @staticmethod
    def _prefix(name):
        return name.replace("-", "_").replace(".", "_")

    def _max_pending(self, size):
        return max(1, min(self.max_pending_msgs, self.max_pending_bytes // size))

    @staticmethod
    def variant(durability):
        """One publish mode for all of Eddy's: measured once per workload."""
        return "publish"

    @staticmethod
    def matches(durability):
        """A JetStream publish ack (2.9, file storage) means the message was
        written to the page cache: Eddy's acks=1 and acks=all with
        page-cache. nats-server 2.9 cannot fsync before acknowledging, so
        nothing in it matches acks=all with disk."""
        return durability != "acks_all_disk"

    @staticmethod
    def syncs(durability):
        """nats-server 2.9 syncs its stream files every 2 minutes, not per
        publish."""
        return False

    def produce(self, name, count, size, partitions, durability=None):
        return lambda: run_client([self.tool, "produce", self.url, self._prefix(name), partitions, count, size,
                                   self._max_pending(size)])

    def consume(self, name, count):
        return lambda: run_client([self.tool, "consume", self.url, self._prefix(name), count])

    def delete(self, name, partitions):
        run_client([self.tool, "delete", self.url, self._prefix(name), partitions])

    def latency(self, name, rate, seconds, size, durability=None):
        return lambda: run_client([self.tool, "latency", self.url, self._prefix(name), rate, seconds, size])


# --------------------------------------------------------------------------
# Apache Kafka
# --------------------------------------------------------------------------

# How bin/kafka-server-start.sh starts a broker (KAFKA_HEAP_OPTS, with the
# heap below) and bin/kafka-run-class.sh's KAFKA_JVM_PERFORMANCE_OPTS: G1,
# the full JIT. (kafka_fixture's test world runs C1 only with the serial
# collector, for fast start-up; that is not how Kafka is deployed.)
KAFKA_JVM_PERFORMANCE_OPTS = ["-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
                              "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
                              "-XX:MaxInlineLevel=15", "-Djava.awt.headless=true"]
KAFKA_HEAP_MB = 1024
# Kafka's defaults where kafka_fixture's test world changes them on the data
# path (it makes segments 64 MiB and __consumer_offsets 4 partitions).
# Everything else the fixture sets is what one node needs (replication
# factors 1, KRaft quorum of one, listeners on loopback) or is never
# exercised here (auto-creation: every topic is created explicitly, as for
# Eddy; transactions; group rebalance delay).
KAFKA_BROKER_DEFAULTS = {
    "log.segment.bytes": str(1 << 30),
    "offsets.topic.num.partitions": "50",
    "group.initial.rebalance.delay.ms": "3000",
    # Not a data-path setting: the node's controller fences its own broker
    # when heartbeats stop for this long (default 9 s), and the latency rows
    # stop the JVM while the other systems are measured (compare_bench.py,
    # Context.alone), for about a minute. One node has no other broker to
    # fail over to, so a long session only keeps the node serving.
    "broker.session.timeout.ms": "600000",
}
# Per durability mode: the producer's acks and the topic configs (see
# METHOD.md). flush.messages=1 makes the partition's log fsync after every
# append, in the request's own path, before the produce response.
KAFKA_MODES = {
    "acks1": ("acks=1", []),
    "acks_all_page_cache": ("acks=all", []),
    "acks_all_disk": ("acks=all, flush.messages=1", ["flush.messages=1"]),
}


class _BenchKafkaCluster(kafka_fixture.KafkaCluster):
    """kafka_fixture's cluster with the JVM started the way Kafka's own
    scripts start a broker (heap -Xms = -Xmx, G1, C2). The rest (config
    files, storage formatting, readiness, tools) is the fixture's."""

    def start_node(self, i, wait=True, timeout=90):
        if self.procs.get(i) is not None and self.procs[i].poll() is None:
            raise eddy_fixture.FixtureError("kafka node %d already running" % i)
        n = len([k for k in self.logs if k[0] == i]) + 1
        path = os.path.join(self.tmp, "kafka-%d-%d.log" % (i, n))
        self.logs[(i, n)] = path
        with open(path, "wb") as log:
            self.procs[i] = subprocess.Popen(
                ["java", "-Xmx%dm" % self.heap_mb, "-Xms%dm" % self.heap_mb] + KAFKA_JVM_PERFORMANCE_OPTS +
                ["-Dlog4j2.configurationFile=" + self.log4j, "-cp", self.cp, "kafka.Kafka", self._config_path(i)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        if wait:
            self.wait_node(i, timeout)
            self.wait_ready(timeout)


class KafkaSystem:
    """One Apache Kafka node (KRaft, broker and controller in one JVM) with
    its log.dirs under work_dir, driven by the same rdkafka_bench as Eddy."""

    name = "Kafka"

    def __init__(self, tool, work_dir, heap_mb=KAFKA_HEAP_MB):
        self.tool = tool
        self.work_dir = work_dir
        self.heap_mb = heap_mb
        self.cluster = None
        self.meter = None

    @staticmethod
    def version():
        return "Apache Kafka %s" % kafka_fixture.KAFKA_VERSION

    @staticmethod
    def java_version():
        out = subprocess.run(["java", "-version"], capture_output=True, text=True)
        text = (out.stderr or out.stdout).strip().splitlines()
        return " ".join(line.strip() for line in text[:2]) if text else "java"

    @staticmethod
    def provision():
        """Kafka's jars (Maven resolves them into ~/.cache/eddy-test on first
        use; later runs find them there). Raises KafkaUnavailable."""
        return kafka_fixture.classpath()

    def start(self, timeout=180):
        # The fixture puts the node's directory (config, log.dirs, its log)
        # in tempfile.mkdtemp(): under the bench's work directory, so
        # Kafka's data are on the filesystem Eddy's and JetStream's are on.
        saved = tempfile.tempdir
        tempfile.tempdir = self.work_dir
        try:
            self.cluster = _BenchKafkaCluster(1, broker_configs=KAFKA_BROKER_DEFAULTS, heap_mb=self.heap_mb)
        finally:
            tempfile.tempdir = saved
        self.cluster.start(timeout=timeout)
        self.meter = ProcessMeter(self.cluster.procs[1].pid)

    @property
    def bootstrap(self):
        return self.cluster.bootstrap

    @property
    def url(self):
        return self.cluster.bootstrap

    def data_dir(self):
        return self.cluster.data_dir(1)

    def log_text(self):
        return self.cluster.log_text(1) if self.cluster else ""

    def stop(self):
        """SIGTERM and a clean shutdown (the fixture's close() kills)."""
        if self.cluster is None:
            return
        proc = self.cluster.procs.get(1)
        self.cluster.stop_node(1)
        if proc is not None and proc.returncode not in (0, 143, -15):
            raise RuntimeError("kafka exited with %s" % proc.returncode)

    def close(self):
        if self.cluster is not None:
            self.cluster.close()
            self.cluster = None

    @staticmethod
    def variant(durability):
        return durability

    @staticmethod
    def mode_label(durability):
        return KAFKA_MODES[durability][0]

    @staticmethod
    def matches(durability):
        """acks=1 and acks=all without fsync: acknowledged once in the page
        cache, as Eddy's acks=1 and page-cache modes; acks=all with
        flush.messages=1: fsynced before the acknowledgement, as Eddy's disk
        mode."""
        return True

    @staticmethod
    def syncs(durability):
        """flush.messages=1 (acks=all/disk) fsyncs every append; otherwise
        Kafka leaves writeback to the kernel."""
        return durability == "acks_all_disk"

    @staticmethod
    def _acks(durability):
        return "1" if durability == "acks1" else "all"

    def create(self, topic, partitions, durability):
        run_client([self.tool, "create", self.bootstrap, topic, partitions] + KAFKA_MODES[durability][1])

    def produce(self, name, count, size, partitions, durability, codec=None):
        self.create(name, partitions, durability)
        return lambda: run_client([self.tool, "produce", self.bootstrap, name, count, size,
                                   self._acks(durability), partitions] + ([codec] if codec else []))

    def consume(self, name, count):
        return lambda: run_client([self.tool, "consume", self.bootstrap, name, 1, count])

    def delete(self, name, partitions):
        run_client([self.tool, "delete", self.bootstrap, name])

    def latency(self, name, rate, seconds, size, durability):
        self.create(name, 1, durability)
        return lambda: run_client([self.tool, "e2e", self.bootstrap, name, rate, seconds, size,
                                   self._acks(durability)])

    def raw_latency(self, raw_e2e, name, rate, seconds, size, durability):
        """latency() through raw_e2e.c, a one-thread client with no library."""
        self.create(name, 1, durability)
        return lambda: run_client([raw_e2e, self.bootstrap, name, rate, seconds, size, self._acks(durability)])


# --------------------------------------------------------------------------
# kafka-producer-perf-test (the Java client)
# --------------------------------------------------------------------------

# bin/kafka-producer-perf-test.sh: KAFKA_HEAP_OPTS=-Xmx512M, then
# kafka-run-class.sh's performance options.
PERF_TEST_HEAP_MB = 512
PERF_TEST_LOG4J = kafka_fixture.TOOLS_LOG4J2
_PERF_TOTAL = re.compile(
    r"^(\d+)( steady state)? records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, "
    r"([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99.9th\.", re.M)


def perf_test_argv(bootstrap, topic, records, warmup_records, size, acks, work_dir):
    """kafka-producer-perf-test as its script runs it, unthrottled, with the
    Java producer's defaults except acks (bootstrap, topic, acks are the
    only properties given)."""
    log4j = os.path.join(work_dir, "perf-test-log4j2.properties")
    if not os.path.exists(log4j):
        with open(log4j, "w") as f:
            f.write(PERF_TEST_LOG4J)
    return (["java", "-Xmx%dM" % PERF_TEST_HEAP_MB] + KAFKA_JVM_PERFORMANCE_OPTS +
            ["-Dlog4j2.configurationFile=" + log4j, "-cp", kafka_fixture.classpath(),
             "org.apache.kafka.tools.ProducerPerformance", "--bootstrap-server", bootstrap, "--topic", topic,
             "--num-records", str(records), "--warmup-records", str(warmup_records), "--record-size", str(size),
             "--throughput", "-1", "--command-property", "acks=%s" % acks])


def parse_perf_test(stdout, size):
    """The summary lines: {"total": {...}, "steady": {...}} (steady only
    with --warmup-records), each with msgs, msgs_per_s, mb_per_s (10^6 B/s),
    bytes, seconds and the latencies in us (avg, max, p50, p95, p99,
    p99.9: milliseconds as the tool prints them, whole ms for percentiles)."""
    out = {}
    for m in _PERF_TOTAL.finditer(stdout):
        msgs, rate = int(m.group(1)), float(m.group(3))
        vals = {"msgs": msgs, "msgs_per_s": rate, "bytes": float(msgs * size),
                "seconds": msgs / rate if rate > 0 else 0.0, "mb_per_s": rate * size / 1e6,
                "avg_us": 1000 * float(m.group(5)), "max_us": 1000 * float(m.group(6)),
                "p50_us": 1000 * int(m.group(7)), "p95_us": 1000 * int(m.group(8)),
                "p99_us": 1000 * int(m.group(9)), "p999_us": 1000 * int(m.group(10))}
        out["steady" if m.group(2) else "total"] = vals
    return out


def run_perf_test(argv, records, warmup_records, size, timeout=900):
    """Runs kafka-producer-perf-test; returns the steady-state figures (the
    records after the warm-up ones, timed from the first of them to the
    producer's close) plus the whole run's as total_*, bytes = all the bytes
    sent (for CPU per GB), and errors = records never acknowledged. Raises
    ClientFailed like run_client."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise ClientFailed("kafka-producer-perf-test timed out after %d s" % timeout, {})
    parsed = parse_perf_test(out, size)
    total = parsed.get("total", {})
    values = dict(parsed.get("steady") or total)
    for k, v in total.items():
        values["total_" + k] = v
    # The broker's CPU per GB is over everything it received in the run,
    # warm-up records included.
    values["bytes"] = total.get("bytes", 0.0)
    values["wall_s"] = time.monotonic() - start
    sent = total.get("msgs", 0)
    values["errors"] = records - sent
    if proc.returncode != 0 or not parsed or sent != records:
        lines = [line for line in err.strip().splitlines() if "Exception" in line or "ERROR" in line]
        raise ClientFailed("kafka-producer-perf-test exited %d, %d of %d records acknowledged: %s" % (
            proc.returncode, sent, records, "; ".join(lines[:3]) or err.strip()[-600:]), values)
    return values
