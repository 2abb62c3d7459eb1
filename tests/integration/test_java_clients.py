"""Apache Kafka's own Java clients (kafka-clients 4.4.0, from
kafka_fixture.classpath()) against one eddy:

  producer  java/ProducerChecks.java: acks=all + enable.idempotence with
            every compression type; keys, values, headers and timestamps
            read back intact; 20k records through 5 in-flight requests; the
            consumer's offset API (seek, offsetsForTimes also inside one
            uncompressed / lz4 batch, beginningOffsets/endOffsets); fetch
            sizes below a batch; a topic's max.message.bytes
  groups    java/GroupChecks.java: range and cooperative-sticky with two
            members and a leave, static membership (restart keeps the
            assignment, expiry after the session timeout, fencing of a
            duplicate instance id), commitSync/commitAsync, subscribe(Pattern)
  admin     java/AdminChecks.java: topics, configs, listOffsets,
            deleteRecords, describeCluster, consumer groups and their offsets

Each program prints a line per check (PASS name / FAIL name: detail); a
FAIL line fails the pytest test that ran the program. The programs are compiled once (javac) into
a cache keyed by their sources; GroupChecks, which mostly waits for
rebalances, runs alongside the other two. After ProducerChecks the stored
batches are fetched raw (Fetch v11) to see that each is compressed with the
producer's codec and carries the idempotent producer's id and sequences.

Run alone: EDDY_BIN=build/eddy EDDY_SOURCE_DIR=. /usr/bin/python3 -m pytest
tests/integration/test_java_clients.py [-k producer|groups|admin]
(EDDY_KEEP_TMP=1 keeps eddy's log and the programs' stderr)."""

import hashlib
import os
import shutil
import struct
import subprocess
import time

import pytest

import eddy_fixture
import kafka_fixture
import kafka_wire

HERE = os.path.dirname(os.path.abspath(__file__))
JAVA_DIR = os.path.join(HERE, "java")
JAVA_SOURCES = ["Checks.java", "ProducerChecks.java", "GroupChecks.java", "AdminChecks.java"]
JVM_FLAGS = ["-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]
CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}

LOG4J2 = kafka_fixture.TOOLS_LOG4J2


def compiled_classes(cp, sources=JAVA_SOURCES):
    """The directory of the compiled sources (javac runs only when the
    sources, the classpath or the JDK changed: the output is cached under
    kafka_fixture.cache_dir()/java-checks/<hash>)."""
    javac_version = subprocess.run(["javac", "-version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout
    h = hashlib.sha256(javac_version + cp.encode())
    paths = [os.path.join(JAVA_DIR, s) for s in sources]
    for p in paths:
        with open(p, "rb") as f:
            h.update(os.path.basename(p).encode() + b"\0" + f.read() + b"\0")
    out = os.path.join(kafka_fixture.cache_dir(), "java-checks", h.hexdigest()[:20])
    if os.path.isdir(out):
        return out
    os.makedirs(os.path.dirname(out), exist_ok=True)
    tmp = "%s.tmp-%d" % (out, os.getpid())
    shutil.rmtree(tmp, ignore_errors=True)
    t0 = time.monotonic()
    proc = subprocess.run(["javac", "-nowarn", "-encoding", "UTF-8", "-d", tmp, "-cp", cp] + paths,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    if proc.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise eddy_fixture.FixtureError("javac failed:\n" + proc.stdout.decode(errors="replace")[-5000:])
    try:
        os.rename(tmp, out)
    except OSError:  # compiled concurrently by another run
        shutil.rmtree(tmp, ignore_errors=True)
    print("compiled %s in %.1f s" % (", ".join(sources), time.monotonic() - t0), flush=True)
    return out


class JavaProgram:
    """One JVM running a main class of the compiled checks; its stdout is
    read when it ends, its stderr goes to a file in tmp."""

    def __init__(self, tmp, cp, classes, main_class, args, label):
        self.label = label
        self.main_class = main_class
        self.stderr_path = os.path.join(tmp, "%s.stderr" % main_class)
        log4j = os.path.join(tmp, "log4j2.properties")
        if not os.path.exists(log4j):
            with open(log4j, "w") as f:
                f.write(LOG4J2)
        self._err = open(self.stderr_path, "wb")
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            ["java"] + JVM_FLAGS + ["-Dlog4j2.configurationFile=" + log4j, "-cp", classes + ":" + cp,
                                    main_class] + list(args),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self._err)

    def finish(self, timeout=240):
        """Waits for the program; its FAIL lines fail the test (all listed),
        as does a program that did not run to its DONE line."""
        try:
            out, _ = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
            raise AssertionError("%s: %s" % ("%s: finished within %d s" % (self.label, timeout), "killed"))
        self._err.close()
        took = time.monotonic() - self.started
        text = out.decode("utf-8", "replace")
        done = False
        passed, failed = 0, []
        for line in text.splitlines():
            if line.startswith("PASS "):
                passed += 1
            elif line.startswith("FAIL "):
                name, _sep, detail = line[5:].partition(": ")
                failed.append("%s: %s: %s" % (self.label, name, detail or "failed"))
                print("  %s| %s" % (self.label, line), flush=True)
            elif line.startswith("DONE "):
                done = True
                print("%s: %s (%.1f s)" % (self.label, line, took), flush=True)
            else:
                print("  %s| %s" % (self.label, line), flush=True)
        rc = self.proc.returncode
        assert done and rc in (0, 1), "%s: %s ran to the end: exit code %s, no DONE line; stderr tail:\n%s" \
            % (self.label, self.main_class, rc, self.stderr_tail())
        if rc != 0:
            print("---- %s stderr (tail) ----\n%s" % (self.main_class, self.stderr_tail()), flush=True)
        assert failed == [], "%d of the Java program's checks failed:\n%s" % (len(failed), "\n".join(failed))
        assert passed > 0, "%s: the Java program reported no PASS line" % self.label

    def stderr_tail(self, n=4000):
        try:
            with open(self.stderr_path, "rb") as f:
                return f.read().decode("utf-8", "replace")[-n:]
        except OSError:
            return ""


# ------------------------------------------------------------------ raw batch checks

def fetch_v11_batches(conn, topic, partition):
    """Every stored batch of a partition, through Fetch v11 (the version
    range where zstd batches may be returned), as raw bytes."""
    from kafka.protocol.fetch import FetchRequest, FetchResponse
    out = []
    offset = 0
    while True:
        request = FetchRequest[11](replica_id=-1, max_wait_time=0, min_bytes=0, max_bytes=4 << 20,
                                   isolation_level=0, session_id=0, session_epoch=-1,
                                   topics=[(topic, [(partition, -1, offset, 0, 4 << 20)])],
                                   forgotten_topics_data=[], rack_id="")
        response = conn.request(1, 11, request.encode(), response_class=FetchResponse[11])
        if response.error_code:
            raise AssertionError("fetch v11 error %d" % response.error_code)
        (_t, partitions), = response.topics
        (_p, error_code, high_watermark, _lso, _lstart, _aborted, _replica, records), = partitions
        if error_code:
            raise AssertionError("fetch v11 %s-%d at %d: error %d" % (topic, partition, offset, error_code))
        batches = [b for b in kafka_wire.parse_batches(records or b"") if b[1] >= offset]
        if not batches:
            if offset >= high_watermark:
                return out
            raise AssertionError("fetch v11 %s-%d at %d below the high watermark %d returned no batch"
                                 % (topic, partition, offset, high_watermark))
        for base, last, data in batches:
            out.append(data)
            offset = last + 1
        if offset >= high_watermark:
            return out


def check_stored_batches(port, topic, partitions, codec):
    """The Java producer's batches as eddy stored them: compressed with the
    codec it was configured with, one producer id (>= 0: idempotent) and
    base sequences that continue from batch to batch from 0."""
    codecs, pids, epochs, sequences_ok = set(), set(), set(), True
    detail = ""
    batches = 0
    with kafka_wire.Connection(port) as conn:
        for p in range(partitions):
            expected_seq = 0
            for data in fetch_v11_batches(conn, topic, p):
                batches += 1
                attributes = struct.unpack_from(">h", data, 21)[0]
                last_delta = struct.unpack_from(">i", data, 23)[0]
                pid, epoch, base_seq = struct.unpack_from(">qhi", data, 43)
                codecs.add(attributes & 7)
                pids.add(pid)
                epochs.add(epoch)
                if base_seq != expected_seq:
                    if sequences_ok:
                        detail = "partition %d: base sequence %d, want %d" % (p, base_seq, expected_seq)
                    sequences_ok = False
                expected_seq = base_seq + last_delta + 1
    name = "stored %s batches" % topic
    assert batches > 0, "%s: %s" % ("%s: found" % name, "no batch")
    assert sorted(codecs) == [CODECS[codec]], "%s: compression codec %s" % (name, codec)
    assert len(pids) == 1 and min(pids) >= 0, \
        "%s: %s" % ("%s: one idempotent producer id (>= 0)" % name, "producer ids %s" % sorted(pids))
    assert epochs and min(epochs) >= 0, "%s: %s" % ("%s: producer epoch >= 0" % name, sorted(epochs))
    assert sequences_ok, "%s: %s" % ("%s: base sequences continue from 0" % name, detail)


@pytest.fixture(scope="module")
def eddy_overrides():
    # The Kafka test cluster's setting: a new group's first rebalance does not wait 3 s for more members.
    return {"group.initial.rebalance.delay.ms": "0"}


@pytest.fixture(scope="module")
def broker(eddy):
    return eddy


@pytest.fixture(scope="module")
def java(broker):
    """(classpath, compiled classes, the GroupChecks program, started first
    so that it runs while the producer and admin checks do)."""
    cp = kafka_fixture.classpath()
    classes = compiled_classes(cp)
    groups = JavaProgram(broker.tmp, cp, classes, "GroupChecks", [broker.bootstrap], "groups")
    yield cp, classes, groups
    if groups.proc.poll() is None:
        groups.proc.kill()
        groups.proc.wait()


def test_producer(broker, java):
    cp, classes, _groups = java
    producer = JavaProgram(broker.tmp, cp, classes, "ProducerChecks", [broker.bootstrap], "producer")
    producer.finish()
    for codec in CODECS:
        check_stored_batches(broker.port, "codec-" + codec, 2, codec)
    check_stored_batches(broker.port, "producer-bulk", 3, "lz4")


def test_admin(broker, java):
    cp, classes, _groups = java
    admin = JavaProgram(broker.tmp, cp, classes, "AdminChecks",
                        [broker.bootstrap, "node.id=1", "log.segment.bytes=8388608", "num.partitions=1",
                         "auto.create.topics.enable=true"], "admin")
    admin.finish()


def test_groups(java):
    java[2].finish()


def test_no_closed_connections(broker):
    """Java clients negotiate versions with ApiVersions: eddy should never
    have to close one of their connections for a bad request."""
    closed = [line for line in broker.log_text().splitlines() if "closing connection from" in line]
    assert not closed, "eddy closed no client connection for a bad request: %r" % ("\n".join(closed[:10]),)
