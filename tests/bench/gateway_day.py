"""The "gateway day" workload of compare_bench.py: many small sensor
producers at a low fixed rate, a live local consumer, and a store-and-forward
link to a central cluster, Eddy and NATS JetStream side by side.

  Eddy       an edge eddy (gateway config) whose link `central`
             (eddy.forward.links) forwards the run's topics to a second eddy
             standing in for the central cluster (auto-create off; the
             central topics are created first).
  JetStream  an edge nats-server (JetStream domain `edge`) connected as a
             leaf node to a central nats-server (domain `central`) whose
             stream sources every edge stream through `$JS.edge.API`: NATS's
             own store-and-forward.

Each sensor is one bench client process in its existing e2e mode
(`rdkafka_bench e2e`, `nats_bench latency`): it publishes SIZE-byte
messages at RATE msg/s to its own topic (stream) and follows that topic with
a consumer in the same process. So the "one local consumer" of the issue is
SENSORS consumers of one topic each, the same messages in total (see
METHOD.md). While the sensors run, the bench samples how far the link is
behind; when the last sensor has exited it times how long the central side
needs to hold everything.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import eddy_fixture  # noqa: E402
from bench_measure import ProcessMeter, parse_result  # noqa: E402
from bench_systems import BENCH_DISK_BUDGET_BYTES  # noqa: E402
from nats_wire import NatsWire  # noqa: E402

SENSORS = 16
RATE = 100  # msg/s per sensor
SIZE = 200  # bytes per message
SAMPLE_INTERVAL_S = 1.0
DRAIN_TIMEOUT_S = 60.0
# What the sensors offer together: the ceiling of the forwarding rate.
OFFERED_MB_PER_S = SENSORS * RATE * SIZE / 1e6
SOURCE_ATTEMPTS = 3
SOURCE_SETUP_TIMEOUT_S = 5.0
# Topic configuration of the Eddy topics, edge and central: the durability
# JetStream matches (an ack means "in the page cache", see METHOD.md).
EDDY_TOPIC_CONFIG = "eddy.acks.all.waits.for=page-cache"


def _parallel(argvs):
    """Runs short client commands at once; raises on the first failure."""
    procs = [subprocess.Popen([str(a) for a in argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for argv in argvs]
    failed = []
    for argv, p in zip(argvs, procs):
        out, err = p.communicate(timeout=120)
        if p.returncode != 0:
            failed.append("%s: %s" % (" ".join(str(a) for a in argv[:4]), err.strip()[-300:]))
    if failed:
        raise RuntimeError("; ".join(failed[:3]))


class EddyGateway:
    """An edge eddy forwarding to a central eddy, both on loopback under
    work_dir. topics(prefix) are the run's sensor topics."""

    name = "Eddy"

    def __init__(self, eddy_bin, source_dir, tool, work_dir):
        self.bin = eddy_bin
        self.tool = tool
        config = os.path.join(source_dir, "config", "gateway.properties")
        big = 1 << 30
        # Six topics of 1 GiB each preallocate more than the gateway's 4 GiB
        # disk budget: both brokers get the bench's (bench_systems.py).
        self.central = eddy_fixture.Broker(config=config, keep=False, overrides={
            "log.retention.bytes": big, "num.partitions": 1, "auto.create.topics.enable": "false",
            "eddy.disk.budget.bytes": BENCH_DISK_BUDGET_BYTES})
        self.edge = None
        self.edge_args = (config, big)
        self.work_dir = work_dir
        for b in (self.central,):
            self._move(b)
        self.meter = None
        self.central_meter = None

    def _move(self, broker):
        shutil.rmtree(broker.tmp, ignore_errors=True)
        broker.tmp = tempfile.mkdtemp(prefix="eddy-gd-", dir=self.work_dir)
        broker.data_dir = os.path.join(broker.tmp, "data")

    def start(self):
        self.central.start()
        config, big = self.edge_args
        self.edge = eddy_fixture.Broker(config=config, keep=False, overrides={
            "log.retention.bytes": big, "num.partitions": 1, "eddy.disk.budget.bytes": BENCH_DISK_BUDGET_BYTES,
            "eddy.forward.links": "central",
            "eddy.forward.central.bootstrap.servers": self.central.bootstrap,
            "eddy.forward.central.topics": "gd-.*"})
        self._move(self.edge)
        self.edge.start()
        self.meter = ProcessMeter(self.edge.proc.pid)
        self.central_meter = ProcessMeter(self.central.proc.pid)

    def close(self):
        for b in (self.edge, self.central):
            if b is not None:
                b.close()

    @staticmethod
    def topics(prefix):
        return ["%s-s%d" % (prefix, j) for j in range(SENSORS)]

    def prepare(self, prefix):
        """Central topics first (the link pauses a topic whose central
        topic is missing), then the edge topics."""
        _parallel([[self.tool, "create", self.central.bootstrap, t, 1, EDDY_TOPIC_CONFIG]
                   for t in self.topics(prefix)])
        _parallel([[self.tool, "create", self.edge.bootstrap, t, 1, EDDY_TOPIC_CONFIG] for t in self.topics(prefix)])

    def sensor(self, topic, seconds):
        return [self.tool, "e2e", self.edge.bootstrap, topic, RATE, seconds, SIZE, "all"]

    def progress(self, prefix):
        """(messages stored at the edge, messages acknowledged by the
        central cluster) over the run's topics, from `eddy forward status`."""
        r = subprocess.run([self.bin, "forward", "status", "--data-dir", self.edge.data_dir, "--json"],
                           capture_output=True, text=True, timeout=20)
        if r.returncode != 0:
            raise RuntimeError("eddy forward status: %s" % r.stderr.strip()[-300:])
        local = forwarded = 0
        for link in json.loads(r.stdout)["links"]:
            for p in link["partitions"]:
                if p.get("topic", "").startswith(prefix + "-"):
                    local += p["local_end_offset"]
                    forwarded += p["forwarded_offset"]
        return local, forwarded

    def delete(self, prefix):
        for broker in (self.edge, self.central):
            _parallel([[self.tool, "delete", broker.bootstrap, t] for t in self.topics(prefix)])


class JetStreamGateway:
    """An edge nats-server (JetStream domain edge) that is a leaf node of a
    central nats-server (domain central); the central stream PREFIX sources
    the edge streams PREFIX_sJ_0 through $JS.edge.API."""

    name = "JetStream"

    def __init__(self, tool, work_dir):
        self.tool = tool
        self.tmp = tempfile.mkdtemp(prefix="jetstream-gd-", dir=work_dir)
        self.procs = {}
        self.logs = {}
        self.urls = {}
        self.meter = None
        self.central_meter = None
        self.edge_api = None
        self.central_api = None
        self.source_retries = 0

    def _start_server(self, role, body):
        conf = os.path.join(self.tmp, role + ".conf")
        with open(conf, "w") as f:
            f.write('listen: "127.0.0.1:-1"\nserver_name: gd_%s\n'
                    'jetstream {\n  store_dir: "%s"\n  domain: %s\n  max_file_store: 64G\n'
                    '  max_memory_store: 256M\n}\n%s' % (role, os.path.join(self.tmp, role), role, body))
        log_path = os.path.join(self.tmp, role + ".log")
        self.logs[role] = log_path
        log = open(log_path, "wb")
        proc = subprocess.Popen(["nats-server", "-c", conf, "--ports_file_dir", self.tmp],
                                stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        log.close()
        self.procs[role] = proc
        ports = os.path.join(self.tmp, "nats-server_%d.ports" % proc.pid)

        def ready():
            if proc.poll() is not None:
                raise RuntimeError("nats-server (%s) exited with %s:\n%s" % (role, proc.returncode, self._log(role)))
            if not os.path.exists(ports) or "Server is ready" not in self._log(role):
                return None
            try:
                with open(ports) as f:
                    return json.load(f)["nats"][0]
            except (ValueError, KeyError, IndexError):
                return None

        self.urls[role] = eddy_fixture.wait_until(ready, 30, "nats-server (%s) to be ready" % role)
        return proc

    def _log(self, role):
        with open(self.logs[role], "rb") as f:
            return f.read().decode("utf-8", "replace")

    def start(self):
        self._start_server("central", 'leafnodes {\n  listen: "127.0.0.1:-1"\n}\n')
        leaf_port = eddy_fixture.wait_until(
            lambda: (lambda i: self._log("central")[i:].split()[0].rsplit(":", 1)[1] if i > 0 else None)(
                self._log("central").find("leafnode connections on ") + len("leafnode connections on ")),
            30, "the central leafnode port")
        self._start_server("edge", 'leafnodes {\n  remotes [ { url: "nats-leaf://127.0.0.1:%s" } ]\n}\n' % leaf_port)
        eddy_fixture.wait_until(lambda: "JetStream Domain Mapping" in self._log("edge"), 30,
                                "the edge's leafnode connection")
        self.meter = ProcessMeter(self.procs["edge"].pid)
        self.central_meter = ProcessMeter(self.procs["central"].pid)
        self.edge_api = NatsWire(self.urls["edge"])
        self.central_api = NatsWire(self.urls["central"])

    def close(self):
        for api in (self.edge_api, self.central_api):
            if api is not None:
                api.close()
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self.procs = {}
        shutil.rmtree(self.tmp, ignore_errors=True)

    @staticmethod
    def _stream_prefix(prefix, j):
        return "%s_s%d" % (prefix.replace("-", "_"), j)

    def _edge_streams(self, prefix):
        return ["%s_0" % self._stream_prefix(prefix, j) for j in range(SENSORS)]

    @staticmethod
    def _central_stream(prefix):
        return prefix.replace("-", "_").upper()

    def prepare(self, prefix):
        """The edge streams (the configuration nats_bench creates: file
        storage, 1 replica, subject PREFIX.0; its own create is then a no-op)
        and the central stream sourcing them."""
        for j, name in enumerate(self._edge_streams(prefix)):
            self.edge_api.api("STREAM.CREATE." + name, {
                "name": name, "subjects": ["%s.0" % self._stream_prefix(prefix, j)], "storage": "file",
                "num_replicas": 1})
        central = self._central_stream(prefix)
        config = {"name": central, "storage": "file", "num_replicas": 1,
                  "sources": [{"name": s, "external": {"api": "$JS.edge.API", "deliver": ""}}
                              for s in self._edge_streams(prefix)]}
        # The server sets up a stream's sources after answering the create:
        # wait until every source is active (else create the stream again),
        # so that no run starts with the link not yet there.
        for attempt in range(SOURCE_ATTEMPTS):
            self.central_api.api("STREAM.CREATE." + central, config)
            deadline = time.monotonic() + SOURCE_SETUP_TIMEOUT_S
            while time.monotonic() < deadline:
                info = self.central_api.api("STREAM.INFO." + central)
                if len(info.get("sources") or []) == SENSORS:
                    self.source_retries += attempt
                    return
                time.sleep(0.1)
            self.central_api.api("STREAM.DELETE." + central)
        raise RuntimeError("the central stream's %d sources never became active" % SENSORS)

    def sensor(self, topic_index_prefix, seconds):
        prefix, j = topic_index_prefix
        return [self.tool, "latency", self.urls["edge"], self._stream_prefix(prefix, j), RATE, seconds, SIZE]

    def progress(self, prefix):
        local = sum(self.edge_api.api("STREAM.INFO." + s)["state"]["messages"] for s in self._edge_streams(prefix))
        central = self.central_api.api("STREAM.INFO." + self._central_stream(prefix))["state"]["messages"]
        return local, central

    def delete(self, prefix):
        self.central_api.api("STREAM.DELETE." + self._central_stream(prefix))
        for s in self._edge_streams(prefix):
            self.edge_api.api("STREAM.DELETE." + s)


def _sensor_argvs(system, prefix, seconds):
    if isinstance(system, EddyGateway):
        return [system.sensor(t, seconds) for t in system.topics(prefix)]
    return [system.sensor((prefix, j), seconds) for j in range(SENSORS)]


def run_day(system, prefix, seconds):
    """One gateway day on a prepared system (system.prepare(prefix) done):
    SENSORS sensor processes for `seconds`, the link sampled meanwhile, then
    the drain timed. Returns the values for measure() (what went wrong, if
    anything, under "error", as measure() does for a failed client)."""
    central_cpu0 = system.central_meter.cpu_s()
    start = time.monotonic()
    procs = [subprocess.Popen([str(a) for a in argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for argv in _sensor_argvs(system, prefix, seconds)]
    max_lag = 0
    next_sample = start + SAMPLE_INTERVAL_S
    while any(p.poll() is None for p in procs):
        if time.monotonic() >= next_sample:
            local, forwarded = system.progress(prefix)
            max_lag = max(max_lag, local - forwarded)
            next_sample += SAMPLE_INTERVAL_S
        time.sleep(0.05)
    produced_end = time.monotonic()
    local, forwarded = system.progress(prefix)
    lag_at_end = local - forwarded
    max_lag = max(max_lag, lag_at_end)
    # done: when the poll that first saw everything forwarded began (the
    # state it read is from within that call).
    done = produced_end
    while forwarded < local and time.monotonic() - produced_end < DRAIN_TIMEOUT_S:
        time.sleep(0.01)
        done = time.monotonic()
        local, forwarded = system.progress(prefix)
    central_cpu_s = system.central_meter.cpu_s() - central_cpu0

    results, errors = [], []
    for p in procs:
        out, err = p.communicate()
        r = parse_result(out)
        if r:
            results.append(r)
        if p.returncode != 0:
            errors.append("sensor exited %d: %s" % (p.returncode, err.strip()[-200:]))
    acked = sum(r.get("msgs", 0) for r in results)
    undelivered = sum(r.get("errors", 0) for r in results) + RATE * seconds * (len(procs) - len(results))
    if forwarded < local:
        errors.append("the central side held %d of %d messages %.0f s after the sensors stopped"
                      % (forwarded, local, DRAIN_TIMEOUT_S))
    # Every sensor also primes its topic with one message.
    if local != acked + len(procs):
        errors.append("the edge holds %d messages, sensors had %d acknowledged (+%d priming)"
                      % (local, acked, len(procs)))
    def across(key, how=statistics.median):
        vals = [r[key] for r in results if key in r]
        return how(vals) if vals else None

    values = {
        "sensors": len(procs), "msgs": acked, "errors": undelivered,
        "produced_msgs_per_s": acked / seconds,
        "forwarded_share_at_end": (local - lag_at_end) / local if local else None,
        "lag_msgs_at_end": lag_at_end, "max_lag_msgs": max_lag,
        "drain_ms": 1000.0 * (done - produced_end),
        # The rate the link sustained: the timed messages forwarded over the
        # sensors' sending time plus the drain after the last one exited
        # (client start-up and teardown are not the link's; see METHOD.md).
        "mb_per_s": acked * SIZE / (seconds + (done - produced_end)) / 1e6,
        "msgs_per_s": acked / (seconds + (done - produced_end)),
        "ack_p50_us": across("ack_p50_us"), "ack_p99_us": across("ack_p99_us"),
        "ack_p99_us_worst": across("ack_p99_us", max),
        "e2e_p50_us": across("e2e_p50_us"), "e2e_p99_us": across("e2e_p99_us"),
        "e2e_p999_us": across("e2e_p999_us"), "e2e_p99_us_worst": across("e2e_p99_us", max),
        "central_cpu_s": central_cpu_s, "central_cpu_pct": 100.0 * central_cpu_s / (done - start),
        "day_wall_s": done - start, "sensor_wall_s": produced_end - start,
    }
    if errors:
        values["error"] = "; ".join(errors[:3])
    return values


def measure_day(ctx, system, label, seconds):
    """Warm-up (half as long) + runs via ctx.measure; the central broker's
    CPU is taken out of the "other processes" noise figure."""
    def prefix(i):
        return "gd-r%d" % i

    def run_once(i, warmup):
        return run_day(system, prefix(i), max(2, seconds // 2) if warmup else seconds)

    def cleanup(i):
        """Outside the measurement: this run's topics go, the next run's
        topics (and, for JetStream, its sourcing stream) are set up."""
        system.delete(prefix(i))
        if i < ctx.opts.runs:
            system.prepare(prefix(i + 1))

    system.prepare(prefix(0))
    series = ctx.measure(label, system, run_once, cleanup=cleanup)
    ncpu = os.cpu_count() or 1
    for r in series.runs + series.failures + ([series.warmup] if series.warmup else []):
        if r.get("other_cpu_pct") is not None and r.get("day_wall_s"):
            r["other_cpu_pct"] = max(0.0, r["other_cpu_pct"] - 100.0 * r["central_cpu_s"] / (r["day_wall_s"] * ncpu))
            r["client_cpu_pct"] = 100.0 * r["client_cpu_s"] / r["day_wall_s"]
    return series



