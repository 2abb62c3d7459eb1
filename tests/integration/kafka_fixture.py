"""Apache Kafka in the test world: the real broker (KRaft), its tools and its
Java clients, from Maven Central (run under /usr/bin/python3).

    cp = kafka_fixture.classpath()          # resolves once, then from the cache
    with kafka_fixture.KafkaCluster(1) as kafka:      # or KafkaCluster(3)
        kafka.bootstrap                      # "127.0.0.1:port,..."
        kafka.run_tool("org.apache.kafka.tools.TopicCommand", ["--create", ...])
        kafka.kill(node_id) / kafka.start_node(node_id)

Provisioning: tests/kafka/pom.xml lists the artifacts; Maven resolves them
into $EDDY_TEST_CACHE (default ~/.cache/eddy-test) and the resolved classpath
is written there too. A later run finds the classpath file with every jar
present and runs no Maven at all, so it downloads nothing. When Maven Central
cannot be reached the test fails with a message that says so (never skips).

Each node runs broker and controller in one JVM (process.roles=broker,
controller), on ports chosen free on 127.0.0.1, with its own temporary
log.dirs (data_dir(i)). A 3-node cluster has 3 voters, so it survives one
node's death.

Behind proxies: KafkaCluster(n, external={node: port}) gives every node a
second client listener, EXTERNAL, advertised as 127.0.0.1:external[node]
(a fault proxy's port, relaying to kafka.external_ports[node]), next to the
INTERNAL one that brokers replicate over (inter.broker.listener.name) and
that .bootstrap names. A client bootstrapped through the proxies is told
the proxies' addresses for every broker, so all its connections cross them;
the tests' own tools use .bootstrap and never do.

Java programs of the tests (tests/integration/java/*.java) are compiled
once with javac against classpath() into the cache (java_program()); the
numbered-message check and the record dump run through numbered_check() and
dump_records().
"""

import fcntl
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import eddy_fixture

KAFKA_VERSION = "4.4.0"


class KafkaUnavailable(eddy_fixture.FixtureError):
    pass


def cache_dir():
    return os.environ.get("EDDY_TEST_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "eddy-test")


def _source_dir():
    src = os.environ.get("EDDY_SOURCE_DIR")
    if not src:
        src = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    return src


def _cached_classpath(cp_file):
    """The cached classpath when every jar it names is still there, else None."""
    if not os.path.exists(cp_file):
        return None
    with open(cp_file) as f:
        cp = f.read().strip()
    if cp and all(os.path.exists(jar) for jar in cp.split(":")):
        return cp
    return None


# Whole-run bound of the Maven download, below the shortest ctest TIMEOUT
# of an entry that provisions Kafka (180 s, tests/integration/CMakeLists.txt),
# so an unreachable or stalled repository is reported here and not as
# ctest's kill. EDDY_MAVEN_TIMEOUT (seconds) overrides it.
MAVEN_TIMEOUT_S = 150
# Maven's own per-connection bounds (maven-resolver's wagon transport, Maven
# 3.8): a repository that refuses, drops or stalls fails one request in
# seconds rather than after wagon's 30-minute default read timeout.
# maven.wagon.rto (read timeout, ms) is the one seen to work on Maven 3.8.7
# (a listener that accepts and never answers: each request fails in ~rto);
# a full run makes about ten requests before the first artifact, so the
# whole-run bound above still applies.
MAVEN_NETWORK_OPTIONS = ["-Daether.connector.connectTimeout=15000", "-Dmaven.wagon.rto=20000",
                         "-Dmaven.wagon.http.retryHandler.count=1"]


def _maven_command(pom, root, out_file):
    """The mvn command line resolving pom's dependencies into root/m2.
    EDDY_MAVEN_SETTINGS names a settings.xml to use instead of the user's
    (test_provisioning.py points a mirror at an unreachable repository)."""
    cmd = ["mvn", "-B", "-q", "-f", pom, "-Dmaven.repo.local=" + os.path.join(root, "m2")] + MAVEN_NETWORK_OPTIONS
    settings = os.environ.get("EDDY_MAVEN_SETTINGS")
    if settings:
        cmd += ["-s", settings]
    return cmd + ["dependency:build-classpath", "-Dmdep.outputFile=" + out_file]


def _run_maven(cmd, out_file):
    """Runs cmd; KafkaUnavailable naming Maven Central and the command when
    it fails, times out or writes no classpath."""
    timeout = float(os.environ.get("EDDY_MAVEN_TIMEOUT") or MAVEN_TIMEOUT_S)
    what = "could not fetch Apache Kafka %s from Maven Central (is it reachable?)" % KAFKA_VERSION
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        tail = (e.stdout or b"").decode(errors="replace")[-3000:]
        raise KafkaUnavailable("%s: mvn did not finish within %g s (killed)\n$ %s\n%s"
                               % (what, timeout, " ".join(cmd), tail)) from None
    if proc.returncode != 0 or not os.path.exists(out_file):
        tail = proc.stdout.decode(errors="replace")[-3000:]
        raise KafkaUnavailable("%s: mvn exited %d\n$ %s\n%s" % (what, proc.returncode, " ".join(cmd), tail))


def _lock_exclusive(lock, what):
    """flock(LOCK_EX) on lock; says so on stdout when another process holds
    it, so that a test killed while waiting shows why."""
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print("waiting for another test provisioning %s (%s)" % (what, lock.name), flush=True)
        fcntl.flock(lock, fcntl.LOCK_EX)


def classpath():
    """The classpath of Kafka's broker, tools and clients (a ':'-joined
    string). Runs Maven only when the cached classpath is missing or names a
    jar that is gone. Test files run in parallel (ctest -j): on a machine
    with an empty cache several of them get here at once, so the download
    runs under an exclusive flock, and whoever waited finds the cache filled."""
    pom = os.path.join(_source_dir(), "tests", "kafka", "pom.xml")
    root = os.path.join(cache_dir(), "kafka-" + KAFKA_VERSION)
    cp_file = os.path.join(root, "classpath.txt")
    cp = _cached_classpath(cp_file)
    if cp:
        return cp
    os.makedirs(root, exist_ok=True)
    if shutil.which("mvn") is None or shutil.which("java") is None:
        raise KafkaUnavailable("Apache Kafka is needed but java/mvn are missing (scripts/install-deps.sh host installs them)")
    with open(os.path.join(root, "provision.lock"), "w") as lock:
        _lock_exclusive(lock, "Apache Kafka " + KAFKA_VERSION)
        cp = _cached_classpath(cp_file)
        if cp:
            return cp
        tmp_out = "%s.tmp.%d" % (cp_file, os.getpid())
        _run_maven(_maven_command(pom, root, tmp_out), tmp_out)
        os.replace(tmp_out, cp_file)
    with open(cp_file) as f:
        return f.read().strip()


_HANDED_OUT_PORTS = set()


def free_port():
    """A loopback port free now and not handed out before by this process:
    the kernel may give a just-closed ephemeral port again, and two
    listeners of one Kafka node on the same port stop it from starting."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _HANDED_OUT_PORTS:
            _HANDED_OUT_PORTS.add(port)
            return port


# What bin/kafka-run-class.sh gives Kafka's tools and clients
# (config/tools-log4j2.yaml): warnings and errors on stderr, stdout left to
# the program's own output.
TOOLS_LOG4J2 = """\
status = error
appender.err.type = Console
appender.err.name = STDERR
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.err.ref = STDERR
"""


LOG4J2 = """\
status = error
appender.console.type = Console
appender.console.name = STDOUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = {level}
rootLogger.appenderRef.stdout.ref = STDOUT
logger.kafka.name = kafka
logger.kafka.level = {level}
logger.state.name = state.change.logger
logger.state.level = WARN
"""


# Every KafkaCluster not yet closed (conftest.py reports their logs on a
# failure).
LIVE = []


class KafkaCluster:
    """n Kafka nodes (combined broker+controller). broker_configs: extra
    server.properties entries for every node."""

    CLUSTER_ID = "EddyTestKafkaCluster0"[:22]

    def __init__(self, nodes=1, broker_configs=None, heap_mb=384, external=None, tmp=None):
        self.n = nodes
        self.cp = classpath()
        # tmp: the test's directory (conftest.py's kafka fixture).
        self.tmp = str(tmp) if tmp is not None else eddy_fixture.temp_dir("eddy-kafka-")
        os.makedirs(self.tmp, exist_ok=True)
        self.heap_mb = heap_mb
        self.extra = dict(broker_configs or {})
        self.ports = {i: free_port() for i in range(1, nodes + 1)}
        self.controller_ports = {i: free_port() for i in range(1, nodes + 1)}
        # external: node -> the port advertised for its EXTERNAL listener.
        self.external = dict(external or {})
        if self.external and sorted(self.external) != sorted(self.ports):
            raise eddy_fixture.FixtureError("external needs an advertised port for every node %s" % sorted(self.ports))
        self.external_ports = {i: free_port() for i in self.external}
        self.procs = {}
        self.logs = {}
        self.log4j = os.path.join(self.tmp, "log4j2.properties")
        with open(self.log4j, "w") as f:
            f.write(LOG4J2.format(level=os.environ.get("EDDY_KAFKA_LOG_LEVEL", "WARN")))
        for i in self.ports:
            self._write_config(i)
        self.started = False
        LIVE.append(self)

    # -- configuration ---------------------------------------------------

    def _config_path(self, i):
        return os.path.join(self.tmp, "node-%d.properties" % i)

    def data_dir(self, i):
        """Node i's log.dirs (kept across stop_node/kill and start_node)."""
        return os.path.join(self.tmp, "data-%d" % i)

    def _write_config(self, i):
        voters = ",".join("%d@127.0.0.1:%d" % (j, p) for j, p in self.controller_ports.items())
        rf = min(3, self.n)
        if self.external:
            listeners = {
                "listeners": "INTERNAL://127.0.0.1:%d,EXTERNAL://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d" % (
                    self.ports[i], self.external_ports[i], self.controller_ports[i]),
                "advertised.listeners": "INTERNAL://127.0.0.1:%d,EXTERNAL://127.0.0.1:%d" % (
                    self.ports[i], self.external[i]),
                "inter.broker.listener.name": "INTERNAL",
                "listener.security.protocol.map": "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
            }
        else:
            listeners = {
                "listeners": "PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d" % (self.ports[i], self.controller_ports[i]),
                "advertised.listeners": "PLAINTEXT://127.0.0.1:%d" % self.ports[i],
                "inter.broker.listener.name": "PLAINTEXT",
                "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            }
        conf = {
            "process.roles": "broker,controller",
            "node.id": str(i),
            "controller.quorum.voters": voters,
            "controller.listener.names": "CONTROLLER",
            **listeners,
            "log.dirs": self.data_dir(i),
            "num.partitions": "1",
            "default.replication.factor": str(rf),
            "offsets.topic.replication.factor": str(rf),
            "offsets.topic.num.partitions": "4",
            "transaction.state.log.replication.factor": str(rf),
            "transaction.state.log.min.isr": "1",
            "transaction.state.log.num.partitions": "4",
            "min.insync.replicas": "1",
            "group.initial.rebalance.delay.ms": "0",
            "auto.create.topics.enable": "false",
            "log.segment.bytes": str(64 * 1024 * 1024),
            "log.flush.interval.messages": str(2 ** 63 - 1),
        }
        conf.update(self.extra)
        with open(self._config_path(i), "w") as f:
            for k, v in conf.items():
                f.write("%s=%s\n" % (k, v))

    # -- lifecycle -------------------------------------------------------

    def java(self, main_class, args, heap_mb=256, **kw):
        """The command line of a Java main class on Kafka's classpath."""
        return ["java", "-Xmx%dm" % heap_mb, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Dlog4j2.configurationFile=" + self.log4j, "-cp", self.cp, main_class] + list(args)

    def _format_template(self, i):
        """Where a formatted log.dirs of node i is kept: formatting is one
        JVM run (2-3 s) whose result depends only on the Kafka version, the
        cluster id and the node id (meta.properties, the bootstrap metadata
        checkpoint; the static controller.quorum.voters are not stored)."""
        return os.path.join(cache_dir(), "kafka-" + KAFKA_VERSION, "formatted", "%s-node-%d" % (self.CLUSTER_ID, i))

    def format_storage(self):
        """Formats every node's log.dirs (from the cached template when there
        is one; otherwise with kafka.tools.StorageTool, in parallel, and the
        result becomes the template)."""
        formats = {}
        for i in self.ports:
            template = self._format_template(i)
            if os.path.exists(os.path.join(template, "meta.properties")):
                shutil.copytree(template, self.data_dir(i))
                continue
            formats[i] = subprocess.Popen(self.java("kafka.tools.StorageTool",
                                                    ["format", "-t", self.CLUSTER_ID, "-c", self._config_path(i),
                                                     "--ignore-formatted"]),
                                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        for i, proc in formats.items():
            out, _ = proc.communicate(timeout=120)
            if proc.returncode != 0:
                raise eddy_fixture.FixtureError("kafka storage format failed:\n" + out.decode(errors="replace"))
            template = self._format_template(i)
            os.makedirs(os.path.dirname(template), exist_ok=True)
            tmp = tempfile.mkdtemp(prefix="node-%d-" % i, dir=os.path.dirname(template))
            shutil.copytree(self.data_dir(i), os.path.join(tmp, "data"))
            try:
                os.rename(os.path.join(tmp, "data"), template)  # atomic; another test may have been first
            except OSError:
                pass
            shutil.rmtree(tmp, ignore_errors=True)

    def start(self, timeout=90):
        self.format_storage()
        for i in self.ports:
            self.start_node(i, wait=False)
        deadline = time.monotonic() + timeout
        for i in self.ports:
            self.wait_node(i, max(1, deadline - time.monotonic()))
        self.wait_ready(max(1, deadline - time.monotonic()))
        self.started = True
        return self

    def start_node(self, i, wait=True, timeout=60):
        if self.procs.get(i) is not None and self.procs[i].poll() is None:
            raise eddy_fixture.FixtureError("kafka node %d already running" % i)
        n = len([k for k in self.logs if k[0] == i]) + 1
        path = os.path.join(self.tmp, "kafka-%d-%d.log" % (i, n))
        self.logs[(i, n)] = path
        log = open(path, "wb")
        # A broker takes ~1 GiB by default; the test world stays small.
        # C1 only (TieredStopAtLevel=1): the node accepts connections in ~5 s
        # instead of ~8 s on a small machine; test loads do not need C2.
        self.procs[i] = subprocess.Popen(
            ["java", "-Xmx%dm" % self.heap_mb, "-Xms64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
             "-Dlog4j2.configurationFile=" + self.log4j, "-cp", self.cp, "kafka.Kafka", self._config_path(i)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        log.close()
        if wait:
            self.wait_node(i, timeout)
            self.wait_ready(timeout)

    def wait_node(self, i, timeout):
        def up():
            if self.procs[i].poll() is not None:
                raise eddy_fixture.FixtureError("kafka node %d exited with %s:\n%s"
                                                % (i, self.procs[i].returncode, self.log_text(i)))
            return eddy_fixture.port_accepts(self.ports[i])
        eddy_fixture.wait_until(up, timeout, "kafka node %d to accept connections" % i, interval=0.2)

    def wait_ready(self, timeout):
        """Until a metadata request through the live nodes lists all of them
        (the controller has registered every running broker)."""
        running = [i for i, p in self.procs.items() if p.poll() is None]

        def ready():
            try:
                out = subprocess.run(["kcat", "-L", "-b", self.bootstrap_of(running), "-m", "5"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=20).stdout
            except subprocess.TimeoutExpired:
                return False
            return out.count(b" at 127.0.0.1:") >= len(running)
        eddy_fixture.wait_until(ready, timeout, "kafka cluster metadata to list %d brokers" % len(running), interval=0.5)

    def stop_node(self, i, sig=signal.SIGTERM, timeout=60):
        proc = self.procs.get(i)
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)

    def kill(self, i):
        self.stop_node(i, signal.SIGKILL)

    def close(self):
        if self in LIVE:
            LIVE.remove(self)
        for i in list(self.procs):
            self.stop_node(i, signal.SIGKILL if os.environ.get("EDDY_KAFKA_FAST_CLOSE", "1") == "1" else signal.SIGTERM)
        if os.environ.get("EDDY_KEEP_TMP") != "1":
            shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self):
        if not self.started:
            self.start()
        return self

    def __exit__(self, *exc):
        self.close()

    # -- addresses and tools ---------------------------------------------

    def bootstrap_of(self, nodes):
        return ",".join("127.0.0.1:%d" % self.ports[i] for i in nodes)

    @property
    def bootstrap(self):
        return self.bootstrap_of(sorted(self.ports))

    def log_text(self, i):
        paths = [p for (j, _n), p in sorted(self.logs.items()) if j == i]
        out = []
        for p in paths:
            with open(p, "rb") as f:
                out.append(f.read().decode(errors="replace")[-4000:])
        return "\n".join(out)

    def run_tool(self, main_class, args, timeout=120, check=True, input_bytes=None):
        """Runs one of Kafka's tools by its main class (for example
        org.apache.kafka.tools.TopicCommand) and returns its stdout text."""
        proc = subprocess.run(self.java(main_class, args), input=input_bytes, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=timeout)
        if check and proc.returncode != 0:
            raise eddy_fixture.FixtureError("%s %s exited %d:\n%s\n%s" % (
                main_class, " ".join(args), proc.returncode, proc.stdout.decode(errors="replace")[-3000:],
                proc.stderr.decode(errors="replace")[-3000:]))
        return proc.stdout.decode(errors="replace")

    def create_topic(self, name, partitions, replication=None, configs=None):
        args = ["--bootstrap-server", self.bootstrap, "--create", "--topic", name,
                "--partitions", str(partitions)]
        if replication is not None:
            args += ["--replication-factor", str(replication)]
        for k, v in (configs or {}).items():
            args += ["--config", "%s=%s" % (k, v)]
        self.run_tool("org.apache.kafka.tools.TopicCommand", args)


def java_tool(main_class, args, timeout=120, input_bytes=None, heap_mb=256):
    """Runs a Java main class on Kafka's classpath without a Kafka broker
    (for Kafka's tools and clients pointed at Eddy). Returns the
    CompletedProcess (stdout and stderr as bytes)."""
    cp = classpath()
    cmd = ["java", "-Xmx%dm" % heap_mb, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", cp, main_class] + list(args)
    return subprocess.run(cmd, input=input_bytes, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)


# -- the tests' Java programs (tests/integration/java) ----------------------

def java_program(name):
    """The directory holding tests/integration/java/<name>.java compiled
    against classpath() (javac once per source content and Kafka version,
    cached next to the jars; a second run starts the JVM on the class, which
    is about a second faster than the source launcher)."""
    src = os.path.join(_source_dir(), "tests", "integration", "java", name + ".java")
    with open(src, "rb") as f:
        digest = hashlib.sha256(f.read() + KAFKA_VERSION.encode()).hexdigest()[:16]
    root = os.path.join(cache_dir(), "kafka-" + KAFKA_VERSION, "java")
    out = os.path.join(root, "%s-%s" % (name, digest))
    if os.path.exists(os.path.join(out, name + ".class")):
        return out
    cp = classpath()
    if shutil.which("javac") is None:
        raise KafkaUnavailable("javac is needed to compile %s (a JDK: scripts/install-deps.sh host installs it)" % src)
    os.makedirs(root, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=name + "-", dir=root)
    proc = subprocess.run(["javac", "-nowarn", "-encoding", "UTF-8", "-cp", cp, "-d", tmp, src],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    if proc.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise eddy_fixture.FixtureError("javac %s failed:\n%s" % (src, proc.stdout.decode(errors="replace")))
    try:
        os.rename(tmp, out)  # atomic: a concurrent test compiled the same source first
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def java_program_command(name, args, heap_mb=256, log4j2=None):
    """The command line of a compiled test program (java_program(name)) on
    Kafka's classpath. log4j2: a log4j2 properties file for the clients'
    logging (without one, log4j2's default: errors only, to stdout)."""
    cp = java_program(name) + ":" + classpath()
    return (["java", "-Xmx%dm" % heap_mb, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto"] +
            (["-Dlog4j2.configurationFile=" + log4j2] if log4j2 else []) + ["-cp", cp, name] + list(args))


def run_java_program(name, args, timeout=180, heap_mb=256, env=None):
    """Runs a compiled test program (java_program(name)) with Kafka's
    classpath; returns the CompletedProcess (text)."""
    cmd = java_program_command(name, args, heap_mb)
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout,
                          env=dict(os.environ, **(env or {})))


def _last_json(proc, what):
    lines = [line for line in proc.stdout.strip().splitlines() if line.startswith("{")]
    if not lines:
        raise eddy_fixture.FixtureError("%s: exit %d, no result:\n%s\n%s" % (what, proc.returncode, proc.stdout[-3000:],
                                                                           proc.stderr[-3000:]))
    result = json.loads(lines[-1])
    if "error" in result:
        raise eddy_fixture.FixtureError("%s: %s\n%s" % (what, result["error"], proc.stderr[-3000:]))
    return result


def numbered_check(bootstrap, topic, count, partitions, dump=None, timeout_ms=60000, isolation="read_uncommitted"):
    """Reads topic from the beginning to its end offsets with Kafka's Java
    consumer (NumberedCheck.java) and returns its findings about the numbers
    of rdkafka_idempotence.c: a dict with count, distinct, missing,
    missing_examples, records, ok and, per partition, start/end offsets,
    records, duplicates, out_of_order, gaps, misplaced and examples. The
    consumer's report is in result["text"]. dump: a file to receive
    "partition offset number" lines. isolation: the consumer's isolation.level."""
    args = ["numbers", bootstrap, topic, str(count), str(partitions)]
    if dump:
        args += ["--dump", dump]
    proc = run_java_program("NumberedCheck", args, timeout=timeout_ms / 1000 + 120,
                            env={"EDDY_CHECK_TIMEOUT_MS": str(timeout_ms), "EDDY_CHECK_ISOLATION": isolation})
    result = _last_json(proc, "NumberedCheck %s" % topic)
    result["text"] = "\n".join(line for line in proc.stdout.splitlines() if not line.startswith("{"))
    return result


def dump_records(bootstrap, topics, tmp, timeout_ms=60000):
    """Every record of topics ({name: partitions}) read with Kafka's Java
    consumer, in offset order per partition: dicts with topic, partition,
    offset, timestamp, timestamp_type ("CreateTime"...), key and value
    (bytes or None) and headers (list of (key, bytes)). tmp: the test's
    directory, for the program's output file."""
    path = os.path.join(str(tmp), "records-%d.jsonl" % time.monotonic_ns())
    try:
        proc = run_java_program("NumberedCheck", ["records", bootstrap, path] +
                                ["%s:%d" % (t, n) for t, n in sorted(topics.items())],
                                timeout=timeout_ms / 1000 + 120, env={"EDDY_CHECK_TIMEOUT_MS": str(timeout_ms)})
        _last_json(proc, "NumberedCheck records %s" % sorted(topics))
        out = []
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                for k in ("key", "value"):
                    r[k] = None if r[k] is None else bytes.fromhex(r[k])
                r["headers"] = [(k, None if v is None else bytes.fromhex(v)) for k, v in r["headers"]]
                out.append(r)
        return out
    finally:
        if os.path.exists(path):
            os.unlink(path)


def describe_producers(bootstrap, topic, partitions, until_gone=False, timeout_ms=60000):
    """The idempotent producers the leaders of topic's partitions remember
    (Admin.describeProducers): {"partitions": {"0": [{producer_id, epoch,
    last_sequence, last_timestamp}, ...], ...}, "remembered": n}. until_gone:
    waits (at most timeout_ms) until no partition remembers any producer."""
    args = ["producers", bootstrap, topic, str(partitions)] + (["--until-gone"] if until_gone else [])
    proc = run_java_program("NumberedCheck", args, timeout=timeout_ms / 1000 + 120,
                            env={"EDDY_CHECK_TIMEOUT_MS": str(timeout_ms)})
    return _last_json(proc, "NumberedCheck producers %s" % topic)
