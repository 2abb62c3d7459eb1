"""The newest Kafka clients, next to Debian's (run under /usr/bin/python3).

Debian 12 gives the other tests librdkafka 2.0.2 and kafka-python 2.0.2,
which speak old protocol versions. These are current releases, pinned:

    confluent-kafka (PyPI, bundles its own librdkafka)  CONFLUENT_KAFKA
    kafka-python (PyPI)                                  KAFKA_PYTHON
    kafkajs (npm)                                        clients/kafkajs/package-lock.json
    franz-go kgo + kadm (Go module proxy)                clients/franzgo/go.mod, go.sum

    py = newest_clients.venv_python()       # a venv with confluent-kafka and kafka-python
    node, env = newest_clients.kafkajs()     # node, and NODE_PATH finding kafkajs
    exe = newest_clients.franz_go()         # the built franz-go client program

Everything is installed into a cache outside the work tree,
$EDDY_TEST_CACHE (default ~/.cache/eddy-test): venv-newest/ (made with
/usr/bin/python3 -m venv, so Debian's python3-kafka under /usr/bin/python3
is not visible inside it), node-kafkajs/ (npm ci of the committed
package-lock.json) and franz-go/ (go build; modules in Go's own module
cache, ~/go/pkg/mod). Each has a stamp file naming what was installed;
when the stamp matches, nothing is run and nothing is downloaded. A lock
file serialises provisioning between tests that ctest runs in parallel.

When a registry cannot be reached, or go / node / npm is missing, a
ProvisionError says so and the test fails (it never skips).

ClientRun runs one client command (a subprocess printing JSON lines, see
clients/) and collects its events and its final result.
"""

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import threading
import time

import eddy_fixture

CONFLUENT_KAFKA = "2.16.1"
KAFKA_PYTHON = "3.0.12"
KAFKAJS = "2.2.4"          # must match clients/kafkajs/package-lock.json
FRANZ_GO = "v1.22.3"       # must match clients/franzgo/go.mod
FRANZ_GO_KADM = "v1.20.0"

HERE = os.path.dirname(os.path.abspath(__file__))
CLIENTS = os.path.join(HERE, "clients")


class ProvisionError(eddy_fixture.FixtureError):
    pass


def cache_dir():
    return os.environ.get("EDDY_TEST_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "eddy-test")


class _Lock:
    """An exclusive flock on cache_dir()/name.lock."""

    def __init__(self, name):
        os.makedirs(cache_dir(), exist_ok=True)
        self.path = os.path.join(cache_dir(), name + ".lock")

    def __enter__(self):
        self.f = open(self.path, "w")
        fcntl.flock(self.f, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.f, fcntl.LOCK_UN)
        self.f.close()


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def _write_stamp(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


# Bounds of one install command, each below the ctest TIMEOUT of the
# shortest entry that provisions it (tests/integration/CMakeLists.txt: 300 s
# for the venv and kafkajs entries, some of which provision Kafka first,
# kafka_fixture.MAVEN_TIMEOUT_S; 420 s for franz-go, whose first build
# compiles its modules), so that an unreachable or stalled registry is
# reported as such and not as ctest's kill.
PIP_TIMEOUT_S = 120
NPM_TIMEOUT_S = 120
GO_BUILD_TIMEOUT_S = 300


def _run(cmd, what, registry, timeout, **kw):
    """Runs an install command; a failure or a timeout is a ProvisionError
    that names the registry (the usual cause on a machine that has the
    tools) and the command."""
    started = time.monotonic()
    print("provisioning %s: %s" % (what, " ".join(cmd)), flush=True)
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, **kw)
    except subprocess.TimeoutExpired as e:
        raise ProvisionError("installing %s timed out after %d s (killed): is %s reachable?\n$ %s\n%s"
                             % (what, timeout, registry, " ".join(cmd),
                                (e.stdout or b"").decode(errors="replace")[-3000:])) from None
    out = proc.stdout.decode(errors="replace")
    if proc.returncode != 0:
        raise ProvisionError("could not install %s (exit code %d): is %s reachable?\n$ %s\n%s"
                             % (what, proc.returncode, registry, " ".join(cmd), out[-3000:]))
    print("provisioned %s in %.1f s" % (what, time.monotonic() - started), flush=True)
    return out


def _tool(name, *fallbacks):
    path = shutil.which(name)
    if path:
        return path
    for f in fallbacks:
        if os.path.exists(f):
            return f
    return None


# ------------------------------------------------------------ Python (PyPI)

def venv_python():
    """The python of a venv holding the pinned confluent-kafka and
    kafka-python (made on first use)."""
    root = os.path.join(cache_dir(), "venv-newest")
    python = os.path.join(root, "bin", "python")
    stamp_path = os.path.join(root, ".eddy-stamp")
    want = "confluent-kafka==%s\nkafka-python==%s\n" % (CONFLUENT_KAFKA, KAFKA_PYTHON)
    with _Lock("venv-newest"):
        if _read(stamp_path) == want and os.path.exists(python):
            return python
        base = "/usr/bin/python3"
        if not os.path.exists(base):
            raise ProvisionError("/usr/bin/python3 is missing (scripts/install-deps.sh host)")
        shutil.rmtree(root, ignore_errors=True)
        proc = subprocess.run([base, "-m", "venv", root], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if proc.returncode != 0:
            raise ProvisionError("/usr/bin/python3 -m venv failed (python3-venv missing? scripts/install-deps.sh "
                                 "host installs it):\n" + proc.stdout.decode(errors="replace")[-2000:])
        _run([python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--timeout", "30",
              "--retries", "2", "confluent-kafka==" + CONFLUENT_KAFKA, "kafka-python==" + KAFKA_PYTHON],
             "confluent-kafka %s and kafka-python %s" % (CONFLUENT_KAFKA, KAFKA_PYTHON), "PyPI", PIP_TIMEOUT_S)
        # What the venv has is what its own python imports.
        check = subprocess.run([python, "-c", "import confluent_kafka, kafka; print(confluent_kafka.__version__, "
                                "confluent_kafka.libversion()[0], kafka.__version__, kafka.__file__)"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print("venv-newest: " + check.stdout.strip(), flush=True)
        parts = check.stdout.split()
        if check.returncode != 0 or len(parts) < 4 or parts[0] != CONFLUENT_KAFKA or parts[2] != KAFKA_PYTHON \
                or not parts[3].startswith(root):
            raise ProvisionError("the venv does not import the pinned clients: " + check.stdout[-2000:])
        _write_stamp(stamp_path, want)
        return python


# -------------------------------------------------------------- Node (npm)

def kafkajs():
    """(node, env): node, and an environment whose NODE_PATH finds the
    kafkajs of the committed package-lock.json (npm ci on first use; a
    warm cache needs no npm)."""
    node = _tool("node", "/usr/bin/node", "/usr/local/bin/node")
    if node is None:
        raise ProvisionError("node is needed for the kafkajs test but is missing (Node 20: /usr/bin/node)")
    src = os.path.join(CLIENTS, "kafkajs")
    root = os.path.join(cache_dir(), "node-kafkajs")
    stamp_path = os.path.join(root, ".eddy-stamp")
    digest = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        with open(os.path.join(src, name), "rb") as f:
            digest.update(f.read())
    want = "kafkajs %s %s\n" % (KAFKAJS, digest.hexdigest())
    env = dict(os.environ, NODE_PATH=os.path.join(root, "node_modules"))
    with _Lock("node-kafkajs"):
        if _read(stamp_path) == want and os.path.exists(os.path.join(root, "node_modules", "kafkajs", "package.json")):
            return node, env
        npm = _tool("npm", "/usr/bin/npm", "/usr/local/bin/npm")
        if npm is None:
            raise ProvisionError("npm is needed to install kafkajs but is missing (Node 20: /usr/bin/npm)")
        shutil.rmtree(root, ignore_errors=True)
        os.makedirs(root)
        for name in ("package.json", "package-lock.json"):
            shutil.copy(os.path.join(src, name), root)
        _run([npm, "ci", "--no-audit", "--no-fund", "--fetch-timeout=30000", "--fetch-retries=1"],
             "kafkajs %s" % KAFKAJS, "the npm registry", NPM_TIMEOUT_S, cwd=root)
        with open(os.path.join(root, "node_modules", "kafkajs", "package.json")) as f:
            got = json.load(f).get("version")
        if got != KAFKAJS:
            raise ProvisionError("npm ci installed kafkajs %s, the test pins %s" % (got, KAFKAJS))
        _write_stamp(stamp_path, want)
        return node, env


# ------------------------------------------------- Go (Go module proxy)

def franz_go():
    """The franz-go client program (clients/franzgo), built on first use.
    The stamp is "franz-go V kadm V GOVERSION SOURCES-SHA256"; the Go
    version that built it is recorded but not compared, so a warm cache
    runs no go at all (a newer Go rebuilds only when pins or sources
    change)."""
    src = os.path.join(CLIENTS, "franzgo")
    root = os.path.join(cache_dir(), "franz-go")
    exe = os.path.join(root, "franzgo_client")
    stamp_path = os.path.join(root, ".eddy-stamp")
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum", "main.go"):
        with open(os.path.join(src, name), "rb") as f:
            digest.update(name.encode() + b"\0" + f.read())
    pins = ["franz-go", FRANZ_GO, "kadm", FRANZ_GO_KADM]
    with _Lock("franz-go"):
        stamp = (_read(stamp_path) or "").split()
        if len(stamp) == 6 and stamp[:4] == pins and stamp[5] == digest.hexdigest() and os.path.exists(exe):
            return exe
        go = _tool("go", "/usr/local/go/bin/go")
        if go is None:
            raise ProvisionError("go is needed to build the franz-go client but is missing (Go 1.26: /usr/local/go/bin/go)")
        env = dict(os.environ, GOFLAGS="-mod=mod", GOTOOLCHAIN="local")
        version = subprocess.run([go, "env", "GOVERSION"], stdout=subprocess.PIPE, text=True, env=env).stdout.strip()
        shutil.rmtree(root, ignore_errors=True)
        build = os.path.join(root, "src")
        os.makedirs(build)
        # Built from a copy: the work tree stays untouched.
        for name in ("go.mod", "go.sum", "main.go"):
            shutil.copy(os.path.join(src, name), build)
        _run([go, "build", "-o", exe, "."], "franz-go %s (kadm %s)" % (FRANZ_GO, FRANZ_GO_KADM),
             "the Go module proxy", GO_BUILD_TIMEOUT_S, cwd=build, env=env)
        for name in ("go.mod", "go.sum"):
            if _read(os.path.join(build, name)) != _read(os.path.join(src, name)):
                raise ProvisionError("go build changed %s: run go mod tidy in %s and commit it" % (name, src))
        _write_stamp(stamp_path, " ".join(pins + [version or "unknown-go", digest.hexdigest()]) + "\n")
        return exe


def provision(what, fn):
    """fn() or, on a ProvisionError, the test's failure (call it from a
    fixture)."""
    import pytest
    started = time.monotonic()
    try:
        value = fn()
    except ProvisionError as e:
        pytest.fail("provisioning %s: %s" % (what, e), pytrace=False)
    print("%s ready (%.1f s)" % (what, time.monotonic() - started), flush=True)
    return value


# ---------------------------------------------------------- client runs

class ClientRun:
    """One client command in its own process. Its stdout is JSON lines:
    {"event": ...} lines and a final {"result": {...}}; other lines are
    kept as text. stderr (the client's logs) goes to a file in log_dir."""

    _n = 0

    def __init__(self, cmd, log_dir, label, env=None):
        ClientRun._n += 1
        self.label = label
        safe = re.sub(r"[^A-Za-z0-9]+", "-", label).strip("-")
        self.stderr_path = os.path.join(log_dir, "client-%02d-%s.stderr" % (ClientRun._n, safe))
        self._stderr = open(self.stderr_path, "wb")
        full_env = dict(env if env is not None else os.environ)
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self._stderr,
                                     env=full_env, text=True)
        self.events = []
        self.other = []
        self.result = None
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            line = line.strip()
            try:
                obj = json.loads(line)
            except ValueError:
                obj = None
            with self.lock:
                if isinstance(obj, dict) and "result" in obj:
                    self.result = obj["result"]
                elif isinstance(obj, dict) and "event" in obj:
                    self.events.append(obj)
                elif line:
                    self.other.append(line)

    def event(self, predicate):
        with self.lock:
            for e in self.events:
                if predicate(e):
                    return e
        return None

    def wait_event(self, predicate, timeout, what):
        def found():
            e = self.event(predicate)
            if e is None and self.proc.poll() is not None:
                self.thread.join(5)
                e = self.event(predicate)
                if e is None:
                    raise eddy_fixture.FixtureError("%s exited (code %s) before %s\n%s"
                                                    % (self.label, self.proc.returncode, what, self.tail()))
            return e
        return eddy_fixture.wait_until(found, timeout, "%s: %s" % (self.label, what), interval=0.05)

    def wait(self, timeout):
        """Waits for the process to end; returns its result (None when it
        printed none). A process still running after timeout is killed and
        a FixtureError raised."""
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            self.thread.join(5)
            self._stderr.close()
            raise eddy_fixture.FixtureError("%s still running after %d s (killed)\n%s"
                                            % (self.label, timeout, self.tail()))
        self.thread.join(10)
        self._stderr.close()
        return self.result

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.thread.join(5)
        self._stderr.close()

    def tail(self, n=4000):
        try:
            with open(self.stderr_path, "rb") as f:
                err = f.read().decode(errors="replace")
        except OSError:
            err = ""
        with self.lock:
            other = "\n".join(self.other[-20:])
        return "---- %s stdout (non-JSON) ----\n%s\n---- %s stderr (%s) ----\n%s" % (
            self.label, other, self.label, self.stderr_path, err[-n:])


def run_client(cmd, log_dir, label, timeout, env=None):
    """Runs a client command to its end: (result dict or None, ClientRun)."""
    run = ClientRun(cmd, log_dir, label, env=env)
    return run.wait(timeout), run


# ----------------------------------------------------- shared scenarios
#
# A client is a command prefix (e.g. [venv python, clients/confluent_client.py])
# taking the subcommands of clients/: produce, consume, metadata.

def value_of(i):
    return "v-%06d" % i


def create_topic(broker, name, partitions):
    """Creates a topic with Debian's kafka-python (the harness's client)."""
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=10000)
    try:
        admin.create_topics([NewTopic(name, partitions, 1)])
    finally:
        admin.close()


def ensure_topic(broker, name, partitions):
    """name exists (created with partitions unless an earlier test made
    it): the topic a test needs whether or not the test creating it ran."""
    from kafka import KafkaAdminClient
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=10000)
    try:
        exists = name in admin.list_topics()
    finally:
        admin.close()
    if not exists:
        create_topic(broker, name, partitions)


def batch_headers(broker, topic, partitions):
    """{partition: [(base offset, records, producer id, epoch, base sequence)]}
    read with raw Fetch v4 (headers only: compressed batches are fine)."""
    import struct
    import kafka_wire
    out = {}
    with kafka_wire.Connection(broker.port) as conn:
        for p in range(partitions):
            rows = []
            for base, last, data in kafka_wire.fetch_all(conn, topic, p):
                producer_id, epoch, sequence, count = struct.unpack_from(">qhii", data, 43)
                rows.append((base, count, producer_id, epoch, sequence))
            out[p] = rows
    return out


def assert_idempotent_log(label, broker, topic, partitions, expected_records):
    """Every batch carries a producer id, and each producer's sequence
    numbers run from 0 without a gap or repeat in each partition."""
    headers = batch_headers(broker, topic, partitions)
    total = sum(count for rows in headers.values() for _b, count, _pid, _e, _s in rows)
    assert total == expected_records, "%s: records in the log" % label
    no_pid = [(p, b) for p, rows in headers.items() for b, _c, pid, _e, _s in rows if pid < 0]
    assert no_pid == [], "%s: every batch has a producer id (idempotent)" % label
    bad = []
    for p, rows in headers.items():
        nxt = {}
        for base, count, pid, epoch, seq in rows:
            if pid < 0:
                continue
            want = nxt.get((pid, epoch), 0)
            if seq != want:
                bad.append("partition %d offset %d: producer %d epoch %d sequence %d, expected %d"
                           % (p, base, pid, epoch, seq, want))
            nxt[(pid, epoch)] = seq + count
    assert bad[:5] == [], "%s: sequence numbers contiguous per producer and partition" % label
    return headers


def end_offsets(broker, topic, partitions):
    import kafka_wire
    with kafka_wire.Connection(broker.port) as conn:
        return {p: kafka_wire.fetch(conn, topic, p, 0, max_bytes=1)[1] for p in range(partitions)}


def committed_offsets(broker, group):
    """{(topic, partition): offset} as the broker has them (OffsetFetch
    through Debian's kafka-python)."""
    from kafka import KafkaAdminClient
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=10000)
    try:
        return {(tp.topic, tp.partition): meta.offset for tp, meta in admin.list_consumer_group_offsets(group).items()}
    finally:
        admin.close()


def run_for_result(cmd, log_dir, label, timeout, env=None):
    """run_client() that asserts the client printed a result."""
    result, run = run_client(cmd, log_dir, label, timeout, env=env)
    assert result is not None, "%s: printed no result (exit code %s):\n%s" % (label, run.proc.returncode, run.tail())
    return result, run


def produce_step(client, env, broker, log_dir, label, topic, first, count):
    result, run = run_for_result(client + ["produce", broker.bootstrap, topic, str(first), str(count)],
                                 log_dir, label, 120, env)
    tail = run.tail()
    assert result.get("errors") == [], "%s: delivery errors\n%s" % (label, tail)
    assert result.get("delivered") == count, "%s: messages acknowledged\n%s" % (label, tail)
    for key in ("undelivered", "flush_error", "producer_id_error"):
        if key in result:
            assert result[key] == (0 if key == "undelivered" else None), "%s: %s\n%s" % (label, key, tail)
    if "client_errors" in result:
        assert result["client_errors"] == [], "%s: client errors (error_cb)\n%s" % (label, tail)


def consume_step(client, env, broker, log_dir, label, group, topic, expected_values, timeout=60):
    """One consumer group member run: it subscribes, reads until it has
    len(expected_values) records (or timeout), commits and leaves. The
    records must be exactly expected_values, each once."""
    result, run = run_for_result(client + ["consume", broker.bootstrap, group, topic,
                                           str(len(expected_values)), str(timeout)],
                                 log_dir, label, timeout + 60, env)
    tail = run.tail()
    records = result.get("records", [])
    values = [r[3] for r in records]
    assert len(values) == len(expected_values), "%s: records read\n%s" % (label, tail)
    unexpected = sorted(set(values) - set(expected_values))
    missing = sorted(set(expected_values) - set(values))
    assert sorted(values) == sorted(expected_values) and len(set(values)) == len(values), \
        "%s: exactly the expected values, each once: %d unexpected (e.g. %s), %d missing (e.g. %s)" \
        % (label, len(unexpected), unexpected[:5], len(missing), missing[:5])
    disorder = []
    last = {}
    for t, p, off, _v in records:
        if last.get((t, p), -1) >= off:
            disorder.append((t, p, off))
        last[(t, p)] = off
    assert disorder[:5] == [], "%s: offsets increase within each partition" % label
    assert result.get("commit_error") is None, "%s: commit error\n%s" % (label, tail)
    assert result.get("errors") == [], "%s: consumer errors\n%s" % (label, tail)
    if "client_errors" in result:
        assert result["client_errors"] == [], "%s: client errors (error_cb)\n%s" % (label, tail)
    assert run.event(lambda e: e.get("event") == "assigned"), "%s: an assignment was reported\n%s" % (label, tail)
    return result


def group_scenario(client, env, broker, log_dir, name, first_count=300, second_count=120):
    """Idempotent produce, then a consumer group reading it all and
    committing, more produced, and a second run of the same group reading
    only the new records (it resumes from the committed offsets)."""
    topic, group, partitions = name + "-events", name + "-group", 3
    create_topic(broker, topic, partitions)
    produce_step(client, env, broker, log_dir, "produce 1", topic, 0, first_count)
    assert_idempotent_log("produce 1", broker, topic, partitions, first_count)
    first = [value_of(i) for i in range(first_count)]
    consume_step(client, env, broker, log_dir, "consume 1", group, topic, first)
    ends = end_offsets(broker, topic, partitions)
    assert committed_offsets(broker, group) == {(topic, p): ends[p] for p in range(partitions)}, \
        "consume 1: committed offsets (broker side) are the end offsets"
    produce_step(client, env, broker, log_dir, "produce 2", topic, first_count, second_count)
    assert_idempotent_log("produce 2", broker, topic, partitions, first_count + second_count)
    second = [value_of(i) for i in range(first_count, first_count + second_count)]
    consume_step(client, env, broker, log_dir, "consume 2 (resumes)", group, topic, second)
    ends = end_offsets(broker, topic, partitions)
    assert committed_offsets(broker, group) == {(topic, p): ends[p] for p in range(partitions)}, \
        "consume 2: committed offsets (broker side) are the end offsets"


def assert_topics(label, topics, expected):
    """topics: {name: partitions or {"partitions": n, ...}}; expected:
    {name: partitions} that must be among them."""
    got = {}
    for name, v in (topics or {}).items():
        got[name] = v["partitions"] if isinstance(v, dict) else v
    assert {n: got.get(n) for n in expected} == expected, "%s: topics present with their partition counts" % label
