"""The systems compare_bench.py sets side by side, each one broker process
on loopback with its data directory under the bench's work directory (one
filesystem for all), driven by its own bench client:

  EddySystem       eddy serve on config/gateway.properties, librdkafka
                   client tests/bench/rdkafka_bench.c
  JetStreamSystem  Debian's nats-server with JetStream file storage, libnats
                   client tests/bench/nats_bench.c

Both offer the same operations with the same arguments, so a workload is
written once for both: produce(name, count, size, partitions, durability),
consume(name, count), latency(name, rate, seconds, size, durability), each
returning a function that runs the client once, delete(name, partitions),
plus meter (CPU and RSS of the broker process). `durability` is one of the DURABILITY keys below.
JetStream has a single publish mode; matches(durability) tells whether it
gives the same guarantee as Eddy's mode of that name, so the report can say
when a pairing is not like for like.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from bench_measure import ProcessMeter, run_client

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import eddy_fixture  # noqa: E402

# What a positive produce acknowledgement means, per mode (see METHOD.md).
DURABILITY = {
    "acks1": "acks=1: acknowledged once written to the broker's page cache",
    "acks_all_page_cache": "acks=all, written to the page cache (survives a broker crash, not a power cut)",
    "acks_all_disk": "acks=all, fdatasync before the acknowledgement (survives a power cut)",
}


class EddySystem:
    name = "Eddy"

    def __init__(self, eddy_bin, source_dir, tool, work_dir, retention_bytes):
        os.environ["EDDY_BIN"] = eddy_bin
        os.environ["EDDY_SOURCE_DIR"] = source_dir
        self.tool = tool
        self.broker = eddy_fixture.Broker(
            config=os.path.join(source_dir, "config", "gateway.properties"),
            overrides={"log.retention.bytes": retention_bytes, "num.partitions": 1}, keep=False)
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
    def _acks(durability):
        return "1" if durability == "acks1" else "all"

    def produce(self, name, count, size, partitions, durability):
        self._create(name, partitions, durability)
        return lambda: run_client([self.tool, "produce", self.broker.bootstrap, name, count, size,
                                   self._acks(durability), partitions])

    def consume(self, name, count):
        return lambda: run_client([self.tool, "consume", self.broker.bootstrap, name, 1, count])

    def delete(self, name, partitions):
        run_client([self.tool, "delete", self.broker.bootstrap, name])

    def latency(self, name, rate, seconds, size, durability):
        self._create(name, 1, durability)
        return lambda: run_client([self.tool, "e2e", self.broker.bootstrap, name, rate, seconds, size,
                                   self._acks(durability)])

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
    def matches(durability):
        """A JetStream publish ack (2.9, file storage) means the message was
        written to the page cache: Eddy's acks=1 and acks=all with
        page-cache. nats-server 2.9 cannot fsync before acknowledging, so
        nothing in it matches acks=all with disk."""
        return durability != "acks_all_disk"

    def produce(self, name, count, size, partitions, durability=None):
        return lambda: run_client([self.tool, "produce", self.url, self._prefix(name), partitions, count, size,
                                   self._max_pending(size)])

    def consume(self, name, count):
        return lambda: run_client([self.tool, "consume", self.url, self._prefix(name), count])

    def delete(self, name, partitions):
        run_client([self.tool, "delete", self.url, self._prefix(name), partitions])

    def latency(self, name, rate, seconds, size, durability=None):
        return lambda: run_client([self.tool, "latency", self.url, self._prefix(name), rate, seconds, size])
