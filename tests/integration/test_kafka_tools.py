"""Apache Kafka's own command-line tools (4.4.0, run by their main classes as
kafka-run-class.sh does, with Kafka's classpath from kafka_fixture) against
one eddy, driven as a user drives them:

  kafka-topics            TopicCommand: --create (with --config), --list,
                          --describe (by name, regex, --topic-id),
                          --alter --partitions, --delete
  kafka-console-producer  ConsoleProducer: keys, headers, lz4, acks=all,
                          the topic auto-created
  kafka-console-consumer  consumer.ConsoleConsumer: --from-beginning with
                          every print.* property, --partition/--offset,
                          --group
  kafka-consumer-groups   consumer.group.ConsumerGroupCommand: --list,
                          --describe (--state, --members, a live member),
                          --reset-offsets --execute (earliest, datetime,
                          offset), --delete-offsets, --delete
  kafka-configs           ConfigCommand: topics --describe (--all),
                          --alter --add-config / --delete-config; brokers
                          --describe (one broker, --all, --entity-default)
  kafka-*-perf-test       ProducerPerformance, ConsumerPerformance
  kafka-log-dirs          LogDirsCommand: --describe (the disk budget's view)

What a tool prints is checked where a user reads it; what it did is also
checked independently with raw requests (kafka_wire) or kafka-python.
Each tool run is one JVM (~2 s); two independent sequences run side by
side (perf and configs on a thread, the others as the tests run). Run
alone: EDDY_BIN=build/eddy EDDY_SOURCE_DIR=. /usr/bin/python3 -m pytest
tests/integration/test_kafka_tools.py (EDDY_KEEP_TMP=1 keeps the logs)."""

import datetime
import hashlib
import json
import os
import re
import signal
import struct
import subprocess
import threading
import time

from kafka import KafkaAdminClient
from kafka.protocol.metadata import MetadataResponse

import pytest

import eddy_fixture
import kafka_fixture
import kafka_wire

JVM_FLAGS = ["-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]
TOPICS = "org.apache.kafka.tools.TopicCommand"
PRODUCER = "org.apache.kafka.tools.ConsoleProducer"
CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"
GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
CONFIGS = "org.apache.kafka.tools.ConfigCommand"
LOG_DIRS = "org.apache.kafka.tools.LogDirsCommand"
PRODUCER_PERF = "org.apache.kafka.tools.ProducerPerformance"
CONSUMER_PERF = "org.apache.kafka.tools.ConsumerPerformance"

# What bin/kafka-run-class.sh gives the tools (config/tools-log4j2.yaml):
# warnings and errors on stderr, stdout left to the tool's own output.
LOG4J2 = kafka_fixture.TOOLS_LOG4J2

CONSOLE_COUNT = 200
PERF_COUNT = 50000


class Tools:
    """Runs Kafka's tools as kafka-run-class.sh does. Class data sharing:
    the first run writes a dynamic CDS archive of the classes it loaded
    (cached under kafka_fixture.cache_dir() by classpath and JDK), later
    runs map it, which halves a tool's start-up CPU time."""

    def __init__(self, broker):
        self.broker = broker
        self.cp = kafka_fixture.classpath()
        self.log4j = os.path.join(broker.tmp, "tools-log4j2.properties")
        with open(self.log4j, "w") as f:
            f.write(LOG4J2)
        self.runs = []  # (seconds, main class)
        self.lock = threading.Lock()
        java_version = subprocess.run(["java", "-version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout
        key = hashlib.sha256(java_version + b"\0" + self.cp.encode() + b"\0" + " ".join(JVM_FLAGS).encode())
        self.archive = os.path.join(kafka_fixture.cache_dir(), "cds", "kafka-tools-%s.jsa" % key.hexdigest()[:20])
        self.dumping = None  # the temporary archive path while the first run writes it

    def command(self, main_class, args, share=None):
        # CDS messages (an archive that does not match) go to stderr, never into a tool's stdout.
        flags = ["-Xlog:disable", "-Xlog:all=warning:stderr"]
        if share is not None:
            flags += share
        elif os.path.exists(self.archive):
            flags += ["-XX:SharedArchiveFile=" + self.archive]
        return (["java"] + JVM_FLAGS + flags + ["-Dlog4j2.configurationFile=" + self.log4j, "-cp", self.cp, main_class]
                + list(args))

    def _share_flags(self):
        """For a run: use the archive, or write it if nobody has yet."""
        if os.path.exists(self.archive):
            return None, None
        with self.lock:
            if self.dumping is not None:
                return [], None
            os.makedirs(os.path.dirname(self.archive), exist_ok=True)
            self.dumping = "%s.tmp-%d" % (self.archive, os.getpid())
            return ["-XX:ArchiveClassesAtExit=" + self.dumping], self.dumping

    def _archive_written(self, tmp, rc):
        if tmp is None:
            return
        if rc == 0 and os.path.exists(tmp):
            os.replace(tmp, self.archive)
        elif os.path.exists(tmp):
            os.unlink(tmp)

    def run(self, main_class, args, input_bytes=None, timeout=120):
        """Runs a tool to its end: (exit code, stdout text, stderr text)."""
        t0 = time.monotonic()
        share, dump = self._share_flags()
        try:
            proc = subprocess.run(self.command(main_class, args, share), input=input_bytes, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, timeout=timeout,
                                  stdin=None if input_bytes is not None else subprocess.DEVNULL)
            rc, out, err = proc.returncode, proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as e:
            rc, out, err = "timeout", e.stdout or b"", (e.stderr or b"") + b"\n[killed after %d s]" % timeout
        self._archive_written(dump, rc)
        with self.lock:
            self.runs.append((time.monotonic() - t0, main_class.rsplit(".", 1)[1]))
        return rc, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")

    def start(self, main_class, args):
        """Starts a long-running tool (stdout and stderr to files)."""
        out = open(os.path.join(self.broker.tmp, "%s-%d.out" % (main_class.rsplit(".", 1)[1], time.monotonic_ns())), "w+b")
        proc = subprocess.Popen(self.command(main_class, args), stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT)
        return proc, out

    def bs(self):
        return ["--bootstrap-server", self.broker.bootstrap]


def show(rc, out, err, n=1500):
    return "exit %s; stdout: %s; stderr: %s" % (rc, out[-n:].strip(), err[-n:].strip())


def ran(name, result, want_rc=0):
    rc, out, err = result
    assert rc == want_rc, "%s: %s" % (name, show(rc, out, err))


# ------------------------------------------------------------------ raw verifiers

def partition_count(port, topic):
    """(error code, partitions) from Metadata v4 with
    allow_auto_topic_creation=false (v1 would create a missing topic)."""
    from kafka.protocol.metadata import MetadataRequest
    request = MetadataRequest[4](topics=[topic], allow_auto_topic_creation=False)
    body = request.encode()
    with kafka_wire.Connection(port) as conn:
        response = conn.request(3, 4, body, response_class=MetadataResponse[4])
    (error_code, _name, _internal, partitions) = response.topics[0]
    return error_code, len(partitions)


def end_offset(port, topic, partition):
    from kafka.protocol.offset import OffsetResponse
    with kafka_wire.Connection(port) as conn:
        response = conn.request(2, 1, kafka_wire.list_offsets_v1(topic, partition, -1), response_class=OffsetResponse[1])
    (_t, parts), = response.topics
    (_p, error_code, _ts, offset), = parts
    return error_code, offset


def stored_codecs(port, topic, partition):
    with kafka_wire.Connection(port) as conn:
        batches = kafka_wire.fetch_all(conn, topic, partition)
    return sorted({struct.unpack_from(">h", data, 21)[0] & 7 for _b, _l, data in batches})


def group_offsets(broker, group):
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=15000)
    try:
        return {(tp.topic, tp.partition): om.offset for tp, om in admin.list_consumer_group_offsets(group).items()}
    finally:
        admin.close()


def group_ids(broker):
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=15000)
    try:
        return {g[0] for g in admin.list_consumer_groups()}
    finally:
        admin.close()


def table(out, first_column="GROUP"):
    """The rows of a kafka-consumer-groups table: list of dicts by header."""
    rows, header = [], None
    for line in out.splitlines():
        cells = line.split()
        if not cells:
            header = None if rows else header
            continue
        if cells[0] == first_column:
            header = cells
            continue
        if header is not None and len(cells) >= len(header) - 1:
            rows.append(dict(zip(header, cells)))
    return rows


# ------------------------------------------------------------------ kafka-topics

def topics_scenario(t):
    port = t.broker.port
    ran("kafka-topics --create 3 partitions", t.run(TOPICS, t.bs() + ["--create", "--topic", "tools-a",
                                                                         "--partitions", "3", "--replication-factor", "1"]))
    rc, out, err = t.run(TOPICS, t.bs() + ["--create", "--topic", "tools-cfg", "--partitions", "2",
                                           "--config", "retention.ms=3600000", "--config", "max.message.bytes=200000"])
    assert rc == 0 and "Created topic tools-cfg." in out, \
        "kafka-topics --create with --config: %r" % (show(rc, out, err),)
    rc, out, err = t.run(TOPICS, t.bs() + ["--create", "--topic", "tools-a", "--partitions", "3"])
    assert rc == 1 and "Topic 'tools-a' already exists." in out + err, \
        "kafka-topics --create of an existing topic: exit 1, 'already exists': %r" % (show(rc, out, err),)

    rc, out, err = t.run(TOPICS, t.bs() + ["--list"])
    listed = set(out.split())
    assert rc == 0 and {"tools-a", "tools-cfg"} <= listed, "kafka-topics --list: %r" % (show(rc, out, err),)

    rc, out, err = t.run(TOPICS, t.bs() + ["--describe", "--topic", "tools-(a|cfg)"])
    headers = {m.group(1): m.group(0) for m in re.finditer(r"^Topic: (\S+)\tTopicId: .*$", out, re.M)}
    assert rc == 0 and set(headers) == {"tools-a", "tools-cfg"}, \
        "kafka-topics --describe (regex): both topics: %r" % (show(rc, out, err),)
    a = headers.get("tools-a", "")
    assert "PartitionCount: 3\tReplicationFactor: 1" in a and re.search(r"TopicId: [A-Za-z0-9_-]{22}\t", a), \
        "kafka-topics --describe: PartitionCount 3, ReplicationFactor 1, a TopicId: %r" % (a,)
    parts = re.findall(r"^\tTopic: tools-a\tPartition: (\d+)\tLeader: (\S+)\tReplicas: (\S+)\tIsr: (\S+)", out, re.M)
    assert sorted(parts) == [(str(p), "1", "1", "1") for p in range(3)], \
        "kafka-topics --describe: partitions led by node 1, replicas and isr 1"
    cfg = headers.get("tools-cfg", "")
    configs = dict(kv.split("=", 1) for kv in cfg.split("Configs: ", 1)[-1].split(",") if "=" in kv)
    assert configs.get("retention.ms") == "3600000" and configs.get("max.message.bytes") == "200000", \
        "kafka-topics --describe: Configs shows the --config values: %r" % (cfg,)

    topic_id = re.search(r"TopicId: ([A-Za-z0-9_-]{22})\t", a)
    if topic_id:
        rc, out, err = t.run(TOPICS, t.bs() + ["--describe", "--topic-id", topic_id.group(1)])
        assert (rc == 0 and re.search(r"^Topic: tools-a\tTopicId: %s\tPartitionCount: 3\t" % re.escape(topic_id.group(1)),
                                      out, re.M)), \
            "kafka-topics --describe --topic-id (Metadata by topic id): %r" % (show(rc, out, err),)
    else:
        raise AssertionError("kafka-topics --describe --topic-id (Metadata by topic id): %s" % ("no TopicId in --describe",))

    ran("kafka-topics --alter --partitions 5", t.run(TOPICS, t.bs() + ["--alter", "--topic", "tools-a", "--partitions", "5"]))
    rc, out, err = t.run(TOPICS, t.bs() + ["--describe", "--topic", "tools-a"])
    assert rc == 0 and "PartitionCount: 5\t" in out, \
        "kafka-topics --describe after --alter: PartitionCount 5: %r" % (show(rc, out, err),)
    assert partition_count(port, "tools-a") == (0, 5), "metadata after --alter: 5 partitions"
    # DescribeLogDirs: each partition's share of the disk budget, its ring
    # (gateway.properties: 64 MiB of 8 MiB segments, plus their index files).
    rc, out, err = t.run(LOG_DIRS, t.bs() + ["--describe", "--topic-list", "tools-a"])
    doc = re.search(r"^\{.*\}$", out, re.M)
    sizes = {}
    if doc:
        for b in json.loads(doc.group(0))["brokers"]:
            for d in b["logDirs"]:
                sizes.update({p["partition"]: p["size"] for p in d["partitions"]})
    assert (rc == 0 and sorted(sizes) == ["tools-a-%d" % p for p in range(5)]
            and all(64 << 20 <= v < 65 << 20 for v in sizes.values())), \
        "kafka-log-dirs --describe: tools-a's 5 partitions, each sized its 64 MiB ring: %r" % (show(rc, out, err),)
    rc, out, err = t.run(TOPICS, t.bs() + ["--alter", "--topic", "tools-a", "--partitions", "2"])
    assert rc != 0 and "InvalidPartitionsException" in out + err, \
        "kafka-topics --alter to fewer partitions fails: %r" % (show(rc, out, err),)

    ran("kafka-topics --delete", t.run(TOPICS, t.bs() + ["--delete", "--topic", "tools-cfg"]))
    assert partition_count(port, "tools-cfg")[0] == 3, "metadata after --delete: unknown topic (3)"
    rc, out, err = t.run(TOPICS, t.bs() + ["--delete", "--topic", "tools-nope"])
    assert rc != 0 and "does not exist" in out + err, \
        "kafka-topics --delete of a missing topic fails: %r" % (show(rc, out, err),)


# ------------------------------------------------------------------ console producer / consumer

def console_lines():
    lines = []
    for i in range(CONSOLE_COUNT):
        value = "value-%d" % i if i != 5 else "température=21.5°C"
        lines.append("src:sensor-%d,seq:%d\tkey-%d\t%s" % (i % 4, i, i % 7, value))
    return lines


def console_scenario(t, state):
    port = t.broker.port
    topic = "tools-console"
    lines = console_lines()
    rc, out, err = t.run(PRODUCER, t.bs() + [
        "--topic", topic, "--compression-codec", "lz4",
        "--reader-property", "parse.key=true", "--reader-property", "parse.headers=true",
        "--command-property", "acks=all", "--command-property", "enable.idempotence=true",
        "--command-property", "linger.ms=50"], input_bytes=("\n".join(lines) + "\n").encode())
    assert rc == 0, "kafka-console-producer: 200 lines with headers and keys, exit 0: %r" % (show(rc, out, err),)
    assert partition_count(port, topic) == (0, 1), "the console producer auto-created the topic (1 partition)"
    assert end_offset(port, topic, 0) == (0, CONSOLE_COUNT), "200 records in the log"
    assert stored_codecs(port, topic, 0) == [3], "stored batches are lz4 (--compression-codec lz4)"

    rc, out, err = t.run(CONSUMER, t.bs() + [
        "--topic", topic, "--from-beginning", "--max-messages", str(CONSOLE_COUNT), "--timeout-ms", "30000",
        "--formatter-property", "print.timestamp=true", "--formatter-property", "print.partition=true",
        "--formatter-property", "print.offset=true", "--formatter-property", "print.headers=true",
        "--formatter-property", "print.key=true"])
    got = out.splitlines()
    assert rc == 0 and "Processed a total of %d messages" % CONSOLE_COUNT in err, \
        "kafka-console-consumer --from-beginning --max-messages 200: exit 0, 'Processed a total of 200 messages': %r" % (show(rc, out[-300:], err),)
    pattern = re.compile(r"^CreateTime:(\d+)\tPartition:(\d+)\tOffset:(\d+)\t(.*)\t(.*)\t(.*)$")
    parsed = [pattern.match(line) for line in got]
    assert (len(got) == CONSOLE_COUNT
            and all(parsed)), \
        "console consumer lines: CreateTime, Partition, Offset, headers, key, value: %r" % ("%d lines, first %r" % (len(got), got[:2]),)
    if len(got) == CONSOLE_COUNT and all(parsed):
        want = [line.split("\t") for line in lines]
        assert [int(m.group(3)) for m in parsed] == list(range(CONSOLE_COUNT)), "offsets 0..199 in order"
        assert [m.group(4) for m in parsed] == [w[0] for w in want], "headers as produced"
        assert [m.group(5) for m in parsed] == [w[1] for w in want], "keys as produced"
        assert [m.group(6) for m in parsed] == [w[2] for w in want], "values as produced (UTF-8 intact)"
        stamps = [int(m.group(1)) for m in parsed]
        now_ms = int(time.time() * 1000)
        assert stamps == sorted(stamps) and now_ms - 600000 < stamps[0] <= now_ms, \
            "CreateTime stamps from the producer, non-decreasing, recent: %r" % (stamps[:3],)
        state["stamps"] = stamps

    rc, out, err = t.run(CONSUMER, t.bs() + ["--topic", topic, "--partition", "0", "--offset", "150",
                                             "--max-messages", "5", "--timeout-ms", "30000",
                                             "--formatter-property", "print.offset=true"])
    assert (rc, out.splitlines()) == (0, ["Offset:%d\tvalue-%d" % (i, i) for i in range(150, 155)]), \
        "kafka-console-consumer --partition 0 --offset 150 --max-messages 5"

    rc, out, err = t.run(CONSUMER, t.bs() + ["--topic", topic, "--group", "tools-console-group", "--from-beginning",
                                             "--max-messages", str(CONSOLE_COUNT), "--timeout-ms", "30000"])
    assert rc == 0 and len(out.splitlines()) == CONSOLE_COUNT, \
        "kafka-console-consumer --group: reads all 200: %r" % (show(rc, out[-300:], err),)
    assert group_offsets(t.broker, "tools-console-group") == {(topic, 0): CONSOLE_COUNT}, \
        "the group committed offset 200 on close (kafka-python OffsetFetch)"


# ------------------------------------------------------------------ kafka-consumer-groups

def groups_scenario(t, state):
    topic, group = "tools-console", "tools-console-group"
    rc, out, err = t.run(GROUPS, t.bs() + ["--list"])
    assert rc == 0 and group in out.split(), \
        "kafka-consumer-groups --list has the console consumer's group: %r" % (show(rc, out, err),)

    rc, out, err = t.run(GROUPS, t.bs() + ["--describe", "--group", group])
    rows = table(out)
    assert ("Consumer group '%s' has no active members." % group
            in out + err), \
        "kafka-consumer-groups --describe: no active members: %r" % (show(rc, out, err),)
    assert [(r.get("TOPIC"), r.get("PARTITION"), r.get("CURRENT-OFFSET"), r.get("LOG-END-OFFSET"), r.get("LAG"))
             for r in rows] == [(topic, "0", "200", "200", "0")], \
        "kafka-consumer-groups --describe: offset 200, log end 200, lag 0"
    rc, out, err = t.run(GROUPS, t.bs() + ["--describe", "--group", group, "--state"])
    rows = table(out)
    assert len(rows) == 1 and rows[0].get("STATE") == "Empty" and out.split()[-1] == "0" and "(1)" in out, \
        "kafka-consumer-groups --describe --state: Empty, 0 members, coordinator (1): %r" % (show(rc, out, err),)

    # A live member: a console consumer in group tools-live on tools-a (5 partitions).
    live, live_out = t.start(CONSUMER, t.bs() + ["--topic", "tools-a", "--group", "tools-live"])
    try:
        last = [""]

        def member_listed():
            rc, out, err = t.run(GROUPS, t.bs() + ["--describe", "--group", "tools-live", "--members"])
            last[0] = show(rc, out, err)
            rows = table(out)
            return rows if rows and rows[0].get("#PARTITIONS") == "5" else None
        try:
            rows = eddy_fixture.wait_until(member_listed, 90, "the live console consumer in --describe --members",
                                           interval=0.5)
            assert rows[0].get("CLIENT-ID", "").startswith("console-consumer") and rows[0].get("HOST", "").startswith("/127.0.0.1"), \
                "kafka-consumer-groups --describe --members: the live console consumer with 5 partitions: %r" % (rows,)
        except eddy_fixture.FixtureError as e:
            raise AssertionError("kafka-consumer-groups --describe --members: the live console consumer with 5 partitions: %s" % ("%s; last: %s" % (e, last[0]),))
        rc, out, err = t.run(GROUPS, t.bs() + ["--describe", "--group", "tools-live", "--state"])
        rows = table(out)
        assert (len(rows) == 1 and rows[0].get("STATE") == "Stable" and rows[0].get("ASSIGNMENT-STRATEGY") == "range"
                and out.split()[-1] == "1"), \
            "kafka-consumer-groups --describe --state of the live group: Stable, range, 1 member: %r" % (show(rc, out, err),)
        rc, out, err = t.run(GROUPS, t.bs() + ["--reset-offsets", "--group", "tools-live", "--topic", "tools-a",
                                               "--to-earliest", "--execute"])
        assert "can only be reset if the group 'tools-live' is inactive" in out + err, \
            "kafka-consumer-groups --reset-offsets of an active group is refused: %r" % (show(rc, out, err),)
    finally:
        live.send_signal(signal.SIGTERM)
        try:
            live.wait(30)
        except subprocess.TimeoutExpired:
            live.kill()
            live.wait()
        live_out.close()
    assert live.returncode in (0, 143), \
        "the live console consumer stopped cleanly on SIGTERM: %r" % ("exit %s" % live.returncode,)

    rc, out, err = t.run(GROUPS, t.bs() + ["--reset-offsets", "--group", group, "--topic", topic, "--to-earliest",
                                           "--execute"])
    rows = table(out)
    assert rc == 0 and [(r.get("PARTITION"), r.get("NEW-OFFSET")) for r in rows] == [("0", "0")], \
        "kafka-consumer-groups --reset-offsets --to-earliest --execute: NEW-OFFSET 0: %r" % (show(rc, out, err),)
    assert group_offsets(t.broker, group) == {(topic, 0): 0}, "after --to-earliest: committed offset 0"
    rc, out, err = t.run(GROUPS, t.bs() + ["--describe", "--group", group])
    rows = table(out)
    assert [(r.get("CURRENT-OFFSET"), r.get("LAG")) for r in rows] == [("0", "200")], \
        "kafka-consumer-groups --describe after the reset: lag 200"

    stamps = state.get("stamps")
    if stamps:
        # The first record stamped at or after record 120's time (ListOffsets by timestamp).
        target = stamps[120]
        want = next(i for i, s in enumerate(stamps) if s >= target)
        when = datetime.datetime.fromtimestamp(target / 1000.0, datetime.timezone.utc)
        text = when.strftime("%Y-%m-%dT%H:%M:%S.") + "%03d+00:00" % (target % 1000)
        rc, out, err = t.run(GROUPS, t.bs() + ["--reset-offsets", "--group", group, "--topic", topic,
                                               "--to-datetime", text, "--execute"])
        rows = table(out)
        assert rc == 0 and [(r.get("PARTITION"), r.get("NEW-OFFSET")) for r in rows] == [("0", str(want))], \
            "kafka-consumer-groups --reset-offsets --to-datetime: the first record at that time: %r" % ("want %d; %s" % (want, show(rc, out, err)),)
        assert group_offsets(t.broker, group) == {(topic, 0): want}, "after --to-datetime: committed offset"
    else:
        raise AssertionError("kafka-consumer-groups --reset-offsets --to-datetime: the first record at that time: %s" % ("no timestamps from the console consumer",))
    rc, out, err = t.run(GROUPS, t.bs() + ["--reset-offsets", "--group", group, "--topic", topic + ":0",
                                           "--to-offset", "150", "--execute"])
    assert rc == 0 and [(r.get("PARTITION"), r.get("NEW-OFFSET")) for r in table(out)] == [("0", "150")], \
        "kafka-consumer-groups --reset-offsets --topic t:0 --to-offset 150 --execute: %r" % (show(rc, out, err),)
    assert group_offsets(t.broker, group) == {(topic, 0): 150}, "after --to-offset: committed offset 150"

    rc, out, err = t.run(GROUPS, t.bs() + ["--delete-offsets", "--group", group, "--topic", topic])
    assert (rc == 0 and "Request succeeded for deleting offsets from group %s." % group in out
            and [(r.get("PARTITION"), r.get("STATUS")) for r in table(out, "TOPIC")] == [("0", "Successful")]), \
        "kafka-consumer-groups --delete-offsets: 'Request succeeded', partition 0 Successful: %r" % (show(rc, out, err),)
    assert group_offsets(t.broker, group) == {}, "after --delete-offsets: no committed offsets"

    rc, out, err = t.run(GROUPS, t.bs() + ["--delete", "--group", group])
    assert rc == 0 and "Deletion of requested consumer groups ('%s') was successful." % group in out, \
        "kafka-consumer-groups --delete: successful: %r" % (show(rc, out, err),)
    assert group not in group_ids(t.broker), "the deleted group is no longer listed (kafka-python ListGroups)"

    rc, out, err = t.run(GROUPS, t.bs() + ["--describe", "--group", "tools-no-such-group"])
    # Kafka 4.4 answers DescribeGroups v6 with GROUP_ID_NOT_FOUND ("Group ... not found."); a broker that
    # speaks DescribeGroups v5 at most describes the group as Dead ("... does not exist."). Both tell the
    # user; the Admin API difference is checked in test_java_clients (AdminChecks).
    assert ("GroupIdNotFoundException: Group tools-no-such-group not found." in out + err
            or "Consumer group 'tools-no-such-group' does not exist." in out + err), \
        "kafka-consumer-groups --describe of a missing group says it does not exist: %r" % (show(rc, out, err),)


# ------------------------------------------------------------------ kafka-configs

def config_lines(out):
    """{name: value} from 'name=value sensitive=... synonyms={...}' lines."""
    found = {}
    for m in re.finditer(r"^  ([a-z0-9._-]+)=(.*?) sensitive=(true|false) synonyms=\{(.*)\}$", out, re.M):
        found[m.group(1)] = (m.group(2), m.group(4))
    return found


def configs_scenario(t):
    topic = "tools-conf"
    ran("kafka-topics --create (for kafka-configs)", t.run(TOPICS, t.bs() + ["--create", "--topic", topic,
                                                                               "--partitions", "1"]))
    ent = t.bs() + ["--entity-type", "topics", "--entity-name", topic]
    rc, out, err = t.run(CONFIGS, ent + ["--describe"])
    assert rc == 0 and "Dynamic configs for topic %s are:" % topic in out and not config_lines(out), \
        "kafka-configs topics --describe of a fresh topic: no dynamic configs: %r" % (show(rc, out, err),)
    rc, out, err = t.run(CONFIGS, ent + ["--alter", "--add-config", "retention.ms=7200000,max.message.bytes=300000"])
    assert rc == 0 and "Completed updating config for topic %s." % topic in out, \
        "kafka-configs --alter --add-config: 'Completed updating config': %r" % (show(rc, out, err),)
    rc, out, err = t.run(CONFIGS, ent + ["--describe"])
    found = config_lines(out)
    assert {k: v[0] for k, v in found.items()} == {"retention.ms": "7200000", "max.message.bytes": "300000"}, \
        "kafka-configs --describe after --add-config: both values"
    assert (found.get("max.message.bytes", ("", ""))[1].startswith("DYNAMIC_TOPIC_CONFIG:max.message.bytes=300000")
            and "message.max.bytes=" in found.get("max.message.bytes", ("", ""))[1]), \
        "kafka-configs --describe: synonyms name the topic override and the broker default: %r" % (found,)
    rc, out, err = t.run(CONFIGS, ent + ["--alter", "--delete-config", "max.message.bytes"])
    assert rc == 0 and "Completed updating config" in out, \
        "kafka-configs --alter --delete-config: %r" % (show(rc, out, err),)
    rc, out, err = t.run(CONFIGS, ent + ["--describe", "--all"])
    found = config_lines(out)
    assert rc == 0 and "All configs for topic %s are:" % topic in out, \
        "kafka-configs --describe --all: All configs header: %r" % (show(rc, out, err),)
    assert found.get("retention.ms", ("absent",))[0] == "7200000", \
        "kafka-configs --describe --all: retention.ms override kept"
    assert (found.get("max.message.bytes", ("", ""))[0] == "1048588"
            and not found["max.message.bytes"][1].startswith("DYNAMIC_TOPIC_CONFIG")), \
        "kafka-configs --describe --all: max.message.bytes back to the broker's default: %r" % (found.get("max.message.bytes"),)
    assert {"cleanup.policy", "segment.bytes", "min.insync.replicas", "compression.type"} <= set(found), \
        "%s: %s" % (("kafka-configs --describe --all: Kafka's topic configs listed (cleanup.policy, segment.bytes, "
            "min.insync.replicas, compression.type)"), sorted(found))
    rc, out, err = t.run(CONFIGS, ent + ["--alter", "--add-config", "no.such.config=1"])
    assert rc != 0 and "InvalidConfigurationException" in out + err, \
        "kafka-configs --alter of an unknown config fails: InvalidConfigurationException: %r" % (show(rc, out, err),)

    brokers = t.bs() + ["--entity-type", "brokers"]
    rc, out, err = t.run(CONFIGS, brokers + ["--entity-name", "1", "--describe"])
    assert rc == 0 and "Dynamic configs for broker 1 are:" in out, \
        "kafka-configs brokers --entity-name 1 --describe: %r" % (show(rc, out, err),)
    rc, out, err = t.run(CONFIGS, brokers + ["--entity-name", "1", "--describe", "--all"])
    found = config_lines(out)
    assert rc == 0 and "All configs for broker 1 are:" in out, \
        "kafka-configs brokers --describe --all: All configs header: %r" % (show(rc, out, err),)
    assert (found.get("log.segment.bytes", ("", ""))[0] == "8388608"
            and found["log.segment.bytes"][1].startswith("STATIC_BROKER_CONFIG:log.segment.bytes=8388608")), \
        "kafka-configs brokers --describe --all: log.segment.bytes=8388608 from the config file: %r" % (found.get("log.segment.bytes"),)
    rc, out, err = t.run(CONFIGS, brokers + ["--entity-default", "--describe"])
    assert rc == 0 and "Default configs for brokers in the cluster are:" in out, \
        "kafka-configs brokers --entity-default --describe: %r" % (show(rc, out, err),)
    rc, out, err = t.run(CONFIGS, brokers + ["--describe"])
    assert rc == 0 and "Dynamic configs for broker 1 are:" in out and "Default configs for brokers in the cluster are:" in out, \
        "kafka-configs brokers --describe (every broker and the default): %r" % (show(rc, out, err),)


# ------------------------------------------------------------------ perf tests

def perf_scenario(t):
    topic = "tools-perf"
    rc, out, err = t.run(PRODUCER_PERF, ["--topic", topic, "--num-records", str(PERF_COUNT), "--record-size", "100",
                                         "--throughput", "-1", "--command-property", "bootstrap.servers=" + t.broker.bootstrap,
                                         "acks=all", "linger.ms=5"], timeout=180)
    summary = [line for line in out.splitlines() if line.startswith("%d records sent" % PERF_COUNT)]
    assert rc == 0 and summary, \
        "%s: %s" % ("kafka-producer-perf-test: '%d records sent', exit 0" % PERF_COUNT, show(rc, out, err))
    assert end_offset(t.broker.port, topic, 0) == (0, PERF_COUNT), "the perf topic holds %d records" % PERF_COUNT
    rc, out, err = t.run(CONSUMER_PERF, t.bs() + ["--topic", topic, "--num-records", str(PERF_COUNT),
                                                  "--timeout", "60000"], timeout=180)
    lines = out.strip().splitlines()
    consumed = None
    if len(lines) >= 2 and lines[-2].startswith("start.time"):
        header = [h.strip() for h in lines[-2].split(",")]
        values = [v.strip() for v in lines[-1].split(",")]
        consumed = dict(zip(header, values)).get("data.consumed.in.nMsg")
    assert rc == 0 and consumed == str(PERF_COUNT), \
        "%s: %s" % ("kafka-consumer-perf-test: consumed %d records, exit 0" % PERF_COUNT, show(rc, out, err))


@pytest.fixture(scope="module")
def eddy_overrides():
    return {"group.initial.rebalance.delay.ms": "0"}


@pytest.fixture(scope="module")
def tools(eddy):
    t = Tools(eddy)
    yield t
    total = sum(s for s, _ in t.runs)
    print("%d tool runs, %.1f s of JVM time (longest: %s)" % (
        len(t.runs), total, ", ".join("%s %.1f s" % (n, s) for s, n in sorted(t.runs, reverse=True)[:4])))


@pytest.fixture(scope="module")
def second_sequence(tools):
    """perf then configs, on a thread of their own while the topics,
    console and groups tests run (each tool run is a JVM: side by side
    they take half the time). Each one's exception, if any, is re-raised
    by its test."""
    outcome = {}

    def run():
        for name, scenario in (("perf", perf_scenario), ("configs", configs_scenario)):
            try:
                scenario(tools)
                outcome[name] = None
            except BaseException as e:  # noqa: BLE001 - re-raised in the test's own thread
                outcome[name] = e
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    yield thread, outcome
    thread.join(300)


@pytest.fixture(scope="module")
def console_done(tools):
    """tools-console after console_scenario (its checks run here): 200
    records, group tools-console-group committed at 200; returns what it
    learnt ({"stamps": the records' CreateTime stamps})."""
    state = {}
    console_scenario(tools, state)
    return state


@pytest.fixture(scope="module")
def tools_a(tools):
    """tools-a with 5 partitions, as topics_scenario leaves it (created here
    with a raw CreateTopics when test_topics did not run first)."""
    port = tools.broker.port
    if partition_count(port, "tools-a")[0] != 0:
        from kafka.protocol.admin import CreateTopicsResponse
        with kafka_wire.Connection(port) as conn:
            r = conn.request(19, 1, kafka_wire.create_topics_v1("tools-a", 5), response_class=CreateTopicsResponse[1])
        assert r.topic_errors[0][1] == 0, "create tools-a (5 partitions)"
    assert partition_count(port, "tools-a") == (0, 5), "tools-a has 5 partitions"
    return "tools-a"


def test_topics(tools, second_sequence):
    topics_scenario(tools)


def test_console(console_done):
    """The console producer and consumer: checked by console_scenario
    (fixture console_done)."""
    assert console_done.get("stamps"), "the console consumer printed the records' CreateTime"


def test_groups(tools, console_done, tools_a):
    groups_scenario(tools, console_done)


def finished(second_sequence, name):
    thread, outcome = second_sequence
    thread.join(300)
    assert name in outcome, "the %s scenario did not run to its end" % name
    if outcome[name] is not None:
        raise outcome[name]


def test_perf(second_sequence):
    finished(second_sequence, "perf")


def test_configs(second_sequence):
    finished(second_sequence, "configs")


def test_no_closed_connection(eddy):
    closed = [line for line in eddy.log_text().splitlines() if "closing connection from" in line]
    assert not closed, "eddy closed no tool's connection for a bad request: %r" % ("\n".join(closed[:10]),)
