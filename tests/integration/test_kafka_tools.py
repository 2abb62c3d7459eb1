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
side. Run alone: EDDY_BIN=build/eddy EDDY_SOURCE_DIR=. /usr/bin/python3
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


class Collected:
    """Checks recorded by a scenario running on its own thread, replayed
    into eddy_fixture.Checks in a fixed order afterwards."""

    def __init__(self):
        self.items = []

    def check(self, name, condition, detail=""):
        self.items.append((name, bool(condition), detail))
        return bool(condition)

    def equal(self, name, actual, expected):
        if actual == expected:
            return self.check(name, True)
        return self.check(name, False, "got %r, want %r" % (actual, expected))

    def fail(self, name, detail):
        return self.check(name, False, detail)

    def replay(self, checks):
        for name, ok, detail in self.items:
            checks.check(name, ok, detail)


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


def ran(c, name, result, want_rc=0):
    rc, out, err = result
    return c.check(name, rc == want_rc, show(rc, out, err))


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

def topics_scenario(t, c):
    port = t.broker.port
    ran(c, "kafka-topics --create 3 partitions", t.run(TOPICS, t.bs() + ["--create", "--topic", "tools-a",
                                                                         "--partitions", "3", "--replication-factor", "1"]))
    rc, out, err = t.run(TOPICS, t.bs() + ["--create", "--topic", "tools-cfg", "--partitions", "2",
                                           "--config", "retention.ms=3600000", "--config", "max.message.bytes=200000"])
    c.check("kafka-topics --create with --config", rc == 0 and "Created topic tools-cfg." in out, show(rc, out, err))
    rc, out, err = t.run(TOPICS, t.bs() + ["--create", "--topic", "tools-a", "--partitions", "3"])
    c.check("kafka-topics --create of an existing topic: exit 1, 'already exists'",
            rc == 1 and "Topic 'tools-a' already exists." in out + err, show(rc, out, err))

    rc, out, err = t.run(TOPICS, t.bs() + ["--list"])
    listed = set(out.split())
    c.check("kafka-topics --list", rc == 0 and {"tools-a", "tools-cfg"} <= listed, show(rc, out, err))

    rc, out, err = t.run(TOPICS, t.bs() + ["--describe", "--topic", "tools-(a|cfg)"])
    headers = {m.group(1): m.group(0) for m in re.finditer(r"^Topic: (\S+)\tTopicId: .*$", out, re.M)}
    c.check("kafka-topics --describe (regex): both topics", rc == 0 and set(headers) == {"tools-a", "tools-cfg"},
            show(rc, out, err))
    a = headers.get("tools-a", "")
    c.check("kafka-topics --describe: PartitionCount 3, ReplicationFactor 1, a TopicId",
            "PartitionCount: 3\tReplicationFactor: 1" in a and re.search(r"TopicId: [A-Za-z0-9_-]{22}\t", a), a)
    parts = re.findall(r"^\tTopic: tools-a\tPartition: (\d+)\tLeader: (\S+)\tReplicas: (\S+)\tIsr: (\S+)", out, re.M)
    c.equal("kafka-topics --describe: partitions led by node 1, replicas and isr 1", sorted(parts),
            [(str(p), "1", "1", "1") for p in range(3)])
    cfg = headers.get("tools-cfg", "")
    configs = dict(kv.split("=", 1) for kv in cfg.split("Configs: ", 1)[-1].split(",") if "=" in kv)
    c.check("kafka-topics --describe: Configs shows the --config values",
            configs.get("retention.ms") == "3600000" and configs.get("max.message.bytes") == "200000", cfg)

    topic_id = re.search(r"TopicId: ([A-Za-z0-9_-]{22})\t", a)
    if topic_id:
        rc, out, err = t.run(TOPICS, t.bs() + ["--describe", "--topic-id", topic_id.group(1)])
        c.check("kafka-topics --describe --topic-id (Metadata by topic id)",
                rc == 0 and re.search(r"^Topic: tools-a\tTopicId: %s\tPartitionCount: 3\t" % re.escape(topic_id.group(1)),
                                      out, re.M), show(rc, out, err))
    else:
        c.fail("kafka-topics --describe --topic-id (Metadata by topic id)", "no TopicId in --describe")

    ran(c, "kafka-topics --alter --partitions 5", t.run(TOPICS, t.bs() + ["--alter", "--topic", "tools-a", "--partitions", "5"]))
    rc, out, err = t.run(TOPICS, t.bs() + ["--describe", "--topic", "tools-a"])
    c.check("kafka-topics --describe after --alter: PartitionCount 5", rc == 0 and "PartitionCount: 5\t" in out,
            show(rc, out, err))
    c.equal("metadata after --alter: 5 partitions", partition_count(port, "tools-a"), (0, 5))
    # DescribeLogDirs: each partition's share of the disk budget, its ring
    # (gateway.properties: 64 MiB of 8 MiB segments, plus their index files).
    rc, out, err = t.run(LOG_DIRS, t.bs() + ["--describe", "--topic-list", "tools-a"])
    doc = re.search(r"^\{.*\}$", out, re.M)
    sizes = {}
    if doc:
        for b in json.loads(doc.group(0))["brokers"]:
            for d in b["logDirs"]:
                sizes.update({p["partition"]: p["size"] for p in d["partitions"]})
    c.check("kafka-log-dirs --describe: tools-a's 5 partitions, each sized its 64 MiB ring",
            rc == 0 and sorted(sizes) == ["tools-a-%d" % p for p in range(5)]
            and all(64 << 20 <= v < 65 << 20 for v in sizes.values()), show(rc, out, err))
    rc, out, err = t.run(TOPICS, t.bs() + ["--alter", "--topic", "tools-a", "--partitions", "2"])
    c.check("kafka-topics --alter to fewer partitions fails", rc != 0 and "InvalidPartitionsException" in out + err,
            show(rc, out, err))

    ran(c, "kafka-topics --delete", t.run(TOPICS, t.bs() + ["--delete", "--topic", "tools-cfg"]))
    c.equal("metadata after --delete: unknown topic (3)", partition_count(port, "tools-cfg")[0], 3)
    rc, out, err = t.run(TOPICS, t.bs() + ["--delete", "--topic", "tools-nope"])
    c.check("kafka-topics --delete of a missing topic fails", rc != 0 and "does not exist" in out + err,
            show(rc, out, err))


# ------------------------------------------------------------------ console producer / consumer

def console_lines():
    lines = []
    for i in range(CONSOLE_COUNT):
        value = "value-%d" % i if i != 5 else "température=21.5°C"
        lines.append("src:sensor-%d,seq:%d\tkey-%d\t%s" % (i % 4, i, i % 7, value))
    return lines


def console_scenario(t, c, state):
    port = t.broker.port
    topic = "tools-console"
    lines = console_lines()
    rc, out, err = t.run(PRODUCER, t.bs() + [
        "--topic", topic, "--compression-codec", "lz4",
        "--reader-property", "parse.key=true", "--reader-property", "parse.headers=true",
        "--command-property", "acks=all", "--command-property", "enable.idempotence=true",
        "--command-property", "linger.ms=50"], input_bytes=("\n".join(lines) + "\n").encode())
    c.check("kafka-console-producer: 200 lines with headers and keys, exit 0", rc == 0, show(rc, out, err))
    c.equal("the console producer auto-created the topic (1 partition)", partition_count(port, topic), (0, 1))
    c.equal("200 records in the log", end_offset(port, topic, 0), (0, CONSOLE_COUNT))
    c.equal("stored batches are lz4 (--compression-codec lz4)", stored_codecs(port, topic, 0), [3])

    rc, out, err = t.run(CONSUMER, t.bs() + [
        "--topic", topic, "--from-beginning", "--max-messages", str(CONSOLE_COUNT), "--timeout-ms", "30000",
        "--formatter-property", "print.timestamp=true", "--formatter-property", "print.partition=true",
        "--formatter-property", "print.offset=true", "--formatter-property", "print.headers=true",
        "--formatter-property", "print.key=true"])
    got = out.splitlines()
    c.check("kafka-console-consumer --from-beginning --max-messages 200: exit 0, 'Processed a total of 200 messages'",
            rc == 0 and "Processed a total of %d messages" % CONSOLE_COUNT in err, show(rc, out[-300:], err))
    pattern = re.compile(r"^CreateTime:(\d+)\tPartition:(\d+)\tOffset:(\d+)\t(.*)\t(.*)\t(.*)$")
    parsed = [pattern.match(line) for line in got]
    c.check("console consumer lines: CreateTime, Partition, Offset, headers, key, value", len(got) == CONSOLE_COUNT
            and all(parsed), "%d lines, first %r" % (len(got), got[:2]))
    if len(got) == CONSOLE_COUNT and all(parsed):
        want = [line.split("\t") for line in lines]
        c.equal("offsets 0..199 in order", [int(m.group(3)) for m in parsed], list(range(CONSOLE_COUNT)))
        c.equal("headers as produced", [m.group(4) for m in parsed], [w[0] for w in want])
        c.equal("keys as produced", [m.group(5) for m in parsed], [w[1] for w in want])
        c.equal("values as produced (UTF-8 intact)", [m.group(6) for m in parsed], [w[2] for w in want])
        stamps = [int(m.group(1)) for m in parsed]
        now_ms = int(time.time() * 1000)
        c.check("CreateTime stamps from the producer, non-decreasing, recent",
                stamps == sorted(stamps) and now_ms - 600000 < stamps[0] <= now_ms, stamps[:3])
        state["stamps"] = stamps

    rc, out, err = t.run(CONSUMER, t.bs() + ["--topic", topic, "--partition", "0", "--offset", "150",
                                             "--max-messages", "5", "--timeout-ms", "30000",
                                             "--formatter-property", "print.offset=true"])
    c.equal("kafka-console-consumer --partition 0 --offset 150 --max-messages 5",
            (rc, out.splitlines()), (0, ["Offset:%d\tvalue-%d" % (i, i) for i in range(150, 155)]))

    rc, out, err = t.run(CONSUMER, t.bs() + ["--topic", topic, "--group", "tools-console-group", "--from-beginning",
                                             "--max-messages", str(CONSOLE_COUNT), "--timeout-ms", "30000"])
    c.check("kafka-console-consumer --group: reads all 200", rc == 0 and len(out.splitlines()) == CONSOLE_COUNT,
            show(rc, out[-300:], err))
    c.equal("the group committed offset 200 on close (kafka-python OffsetFetch)",
            group_offsets(t.broker, "tools-console-group"), {(topic, 0): CONSOLE_COUNT})


# ------------------------------------------------------------------ kafka-consumer-groups

def groups_scenario(t, c, state):
    topic, group = "tools-console", "tools-console-group"
    rc, out, err = t.run(GROUPS, t.bs() + ["--list"])
    c.check("kafka-consumer-groups --list has the console consumer's group", rc == 0 and group in out.split(),
            show(rc, out, err))

    rc, out, err = t.run(GROUPS, t.bs() + ["--describe", "--group", group])
    rows = table(out)
    c.check("kafka-consumer-groups --describe: no active members", "Consumer group '%s' has no active members." % group
            in out + err, show(rc, out, err))
    c.equal("kafka-consumer-groups --describe: offset 200, log end 200, lag 0",
            [(r.get("TOPIC"), r.get("PARTITION"), r.get("CURRENT-OFFSET"), r.get("LOG-END-OFFSET"), r.get("LAG"))
             for r in rows], [(topic, "0", "200", "200", "0")])
    rc, out, err = t.run(GROUPS, t.bs() + ["--describe", "--group", group, "--state"])
    rows = table(out)
    c.check("kafka-consumer-groups --describe --state: Empty, 0 members, coordinator (1)",
            len(rows) == 1 and rows[0].get("STATE") == "Empty" and out.split()[-1] == "0" and "(1)" in out,
            show(rc, out, err))

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
            c.check("kafka-consumer-groups --describe --members: the live console consumer with 5 partitions",
                    rows[0].get("CLIENT-ID", "").startswith("console-consumer") and rows[0].get("HOST", "").startswith("/127.0.0.1"),
                    rows)
        except eddy_fixture.FixtureError as e:
            c.fail("kafka-consumer-groups --describe --members: the live console consumer with 5 partitions",
                   "%s; last: %s" % (e, last[0]))
        rc, out, err = t.run(GROUPS, t.bs() + ["--describe", "--group", "tools-live", "--state"])
        rows = table(out)
        c.check("kafka-consumer-groups --describe --state of the live group: Stable, range, 1 member",
                len(rows) == 1 and rows[0].get("STATE") == "Stable" and rows[0].get("ASSIGNMENT-STRATEGY") == "range"
                and out.split()[-1] == "1", show(rc, out, err))
        rc, out, err = t.run(GROUPS, t.bs() + ["--reset-offsets", "--group", "tools-live", "--topic", "tools-a",
                                               "--to-earliest", "--execute"])
        c.check("kafka-consumer-groups --reset-offsets of an active group is refused",
                "can only be reset if the group 'tools-live' is inactive" in out + err, show(rc, out, err))
    finally:
        live.send_signal(signal.SIGTERM)
        try:
            live.wait(30)
        except subprocess.TimeoutExpired:
            live.kill()
            live.wait()
        live_out.close()
    c.check("the live console consumer stopped cleanly on SIGTERM", live.returncode in (0, 143),
            "exit %s" % live.returncode)

    rc, out, err = t.run(GROUPS, t.bs() + ["--reset-offsets", "--group", group, "--topic", topic, "--to-earliest",
                                           "--execute"])
    rows = table(out)
    c.check("kafka-consumer-groups --reset-offsets --to-earliest --execute: NEW-OFFSET 0",
            rc == 0 and [(r.get("PARTITION"), r.get("NEW-OFFSET")) for r in rows] == [("0", "0")], show(rc, out, err))
    c.equal("after --to-earliest: committed offset 0", group_offsets(t.broker, group), {(topic, 0): 0})
    rc, out, err = t.run(GROUPS, t.bs() + ["--describe", "--group", group])
    rows = table(out)
    c.equal("kafka-consumer-groups --describe after the reset: lag 200",
            [(r.get("CURRENT-OFFSET"), r.get("LAG")) for r in rows], [("0", "200")])

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
        c.check("kafka-consumer-groups --reset-offsets --to-datetime: the first record at that time",
                rc == 0 and [(r.get("PARTITION"), r.get("NEW-OFFSET")) for r in rows] == [("0", str(want))],
                "want %d; %s" % (want, show(rc, out, err)))
        c.equal("after --to-datetime: committed offset", group_offsets(t.broker, group), {(topic, 0): want})
    else:
        c.fail("kafka-consumer-groups --reset-offsets --to-datetime: the first record at that time",
               "no timestamps from the console consumer")
    rc, out, err = t.run(GROUPS, t.bs() + ["--reset-offsets", "--group", group, "--topic", topic + ":0",
                                           "--to-offset", "150", "--execute"])
    c.check("kafka-consumer-groups --reset-offsets --topic t:0 --to-offset 150 --execute",
            rc == 0 and [(r.get("PARTITION"), r.get("NEW-OFFSET")) for r in table(out)] == [("0", "150")],
            show(rc, out, err))
    c.equal("after --to-offset: committed offset 150", group_offsets(t.broker, group), {(topic, 0): 150})

    rc, out, err = t.run(GROUPS, t.bs() + ["--delete-offsets", "--group", group, "--topic", topic])
    c.check("kafka-consumer-groups --delete-offsets: 'Request succeeded', partition 0 Successful",
            rc == 0 and "Request succeeded for deleting offsets from group %s." % group in out
            and [(r.get("PARTITION"), r.get("STATUS")) for r in table(out, "TOPIC")] == [("0", "Successful")],
            show(rc, out, err))
    c.equal("after --delete-offsets: no committed offsets", group_offsets(t.broker, group), {})

    rc, out, err = t.run(GROUPS, t.bs() + ["--delete", "--group", group])
    c.check("kafka-consumer-groups --delete: successful",
            rc == 0 and "Deletion of requested consumer groups ('%s') was successful." % group in out, show(rc, out, err))
    c.check("the deleted group is no longer listed (kafka-python ListGroups)", group not in group_ids(t.broker))

    rc, out, err = t.run(GROUPS, t.bs() + ["--describe", "--group", "tools-no-such-group"])
    # Kafka 4.4 answers DescribeGroups v6 with GROUP_ID_NOT_FOUND ("Group ... not found."); a broker that
    # speaks DescribeGroups v5 at most describes the group as Dead ("... does not exist."). Both tell the
    # user; the Admin API difference is checked in test_java_clients (AdminChecks).
    c.check("kafka-consumer-groups --describe of a missing group says it does not exist",
            "GroupIdNotFoundException: Group tools-no-such-group not found." in out + err
            or "Consumer group 'tools-no-such-group' does not exist." in out + err, show(rc, out, err))


# ------------------------------------------------------------------ kafka-configs

def config_lines(out):
    """{name: value} from 'name=value sensitive=... synonyms={...}' lines."""
    found = {}
    for m in re.finditer(r"^  ([a-z0-9._-]+)=(.*?) sensitive=(true|false) synonyms=\{(.*)\}$", out, re.M):
        found[m.group(1)] = (m.group(2), m.group(4))
    return found


def configs_scenario(t, c):
    topic = "tools-conf"
    ran(c, "kafka-topics --create (for kafka-configs)", t.run(TOPICS, t.bs() + ["--create", "--topic", topic,
                                                                               "--partitions", "1"]))
    ent = t.bs() + ["--entity-type", "topics", "--entity-name", topic]
    rc, out, err = t.run(CONFIGS, ent + ["--describe"])
    c.check("kafka-configs topics --describe of a fresh topic: no dynamic configs",
            rc == 0 and "Dynamic configs for topic %s are:" % topic in out and not config_lines(out), show(rc, out, err))
    rc, out, err = t.run(CONFIGS, ent + ["--alter", "--add-config", "retention.ms=7200000,max.message.bytes=300000"])
    c.check("kafka-configs --alter --add-config: 'Completed updating config'",
            rc == 0 and "Completed updating config for topic %s." % topic in out, show(rc, out, err))
    rc, out, err = t.run(CONFIGS, ent + ["--describe"])
    found = config_lines(out)
    c.equal("kafka-configs --describe after --add-config: both values",
            {k: v[0] for k, v in found.items()}, {"retention.ms": "7200000", "max.message.bytes": "300000"})
    c.check("kafka-configs --describe: synonyms name the topic override and the broker default",
            found.get("max.message.bytes", ("", ""))[1].startswith("DYNAMIC_TOPIC_CONFIG:max.message.bytes=300000")
            and "message.max.bytes=" in found.get("max.message.bytes", ("", ""))[1], found)
    rc, out, err = t.run(CONFIGS, ent + ["--alter", "--delete-config", "max.message.bytes"])
    c.check("kafka-configs --alter --delete-config", rc == 0 and "Completed updating config" in out, show(rc, out, err))
    rc, out, err = t.run(CONFIGS, ent + ["--describe", "--all"])
    found = config_lines(out)
    c.check("kafka-configs --describe --all: All configs header", rc == 0 and "All configs for topic %s are:" % topic in out,
            show(rc, out, err))
    c.equal("kafka-configs --describe --all: retention.ms override kept", found.get("retention.ms", ("absent",))[0], "7200000")
    c.check("kafka-configs --describe --all: max.message.bytes back to the broker's default",
            found.get("max.message.bytes", ("", ""))[0] == "1048588"
            and not found["max.message.bytes"][1].startswith("DYNAMIC_TOPIC_CONFIG"), found.get("max.message.bytes"))
    c.check("kafka-configs --describe --all: Kafka's topic configs listed (cleanup.policy, segment.bytes, "
            "min.insync.replicas, compression.type)",
            {"cleanup.policy", "segment.bytes", "min.insync.replicas", "compression.type"} <= set(found), sorted(found))
    rc, out, err = t.run(CONFIGS, ent + ["--alter", "--add-config", "no.such.config=1"])
    c.check("kafka-configs --alter of an unknown config fails: InvalidConfigurationException",
            rc != 0 and "InvalidConfigurationException" in out + err, show(rc, out, err))

    brokers = t.bs() + ["--entity-type", "brokers"]
    rc, out, err = t.run(CONFIGS, brokers + ["--entity-name", "1", "--describe"])
    c.check("kafka-configs brokers --entity-name 1 --describe", rc == 0 and "Dynamic configs for broker 1 are:" in out,
            show(rc, out, err))
    rc, out, err = t.run(CONFIGS, brokers + ["--entity-name", "1", "--describe", "--all"])
    found = config_lines(out)
    c.check("kafka-configs brokers --describe --all: All configs header", rc == 0 and "All configs for broker 1 are:" in out,
            show(rc, out, err))
    c.check("kafka-configs brokers --describe --all: log.segment.bytes=8388608 from the config file",
            found.get("log.segment.bytes", ("", ""))[0] == "8388608"
            and found["log.segment.bytes"][1].startswith("STATIC_BROKER_CONFIG:log.segment.bytes=8388608"),
            found.get("log.segment.bytes"))
    rc, out, err = t.run(CONFIGS, brokers + ["--entity-default", "--describe"])
    c.check("kafka-configs brokers --entity-default --describe",
            rc == 0 and "Default configs for brokers in the cluster are:" in out, show(rc, out, err))
    rc, out, err = t.run(CONFIGS, brokers + ["--describe"])
    c.check("kafka-configs brokers --describe (every broker and the default)",
            rc == 0 and "Dynamic configs for broker 1 are:" in out and "Default configs for brokers in the cluster are:" in out,
            show(rc, out, err))


# ------------------------------------------------------------------ perf tests

def perf_scenario(t, c):
    topic = "tools-perf"
    rc, out, err = t.run(PRODUCER_PERF, ["--topic", topic, "--num-records", str(PERF_COUNT), "--record-size", "100",
                                         "--throughput", "-1", "--command-property", "bootstrap.servers=" + t.broker.bootstrap,
                                         "acks=all", "linger.ms=5"], timeout=180)
    summary = [line for line in out.splitlines() if line.startswith("%d records sent" % PERF_COUNT)]
    c.check("kafka-producer-perf-test: '%d records sent', exit 0" % PERF_COUNT, rc == 0 and summary,
            show(rc, out, err))
    c.equal("the perf topic holds %d records" % PERF_COUNT, end_offset(t.broker.port, topic, 0), (0, PERF_COUNT))
    rc, out, err = t.run(CONSUMER_PERF, t.bs() + ["--topic", topic, "--num-records", str(PERF_COUNT),
                                                  "--timeout", "60000"], timeout=180)
    lines = out.strip().splitlines()
    consumed = None
    if len(lines) >= 2 and lines[-2].startswith("start.time"):
        header = [h.strip() for h in lines[-2].split(",")]
        values = [v.strip() for v in lines[-1].split(",")]
        consumed = dict(zip(header, values)).get("data.consumed.in.nMsg")
    c.check("kafka-consumer-perf-test: consumed %d records, exit 0" % PERF_COUNT, rc == 0 and consumed == str(PERF_COUNT),
            show(rc, out, err))


def body(broker, checks):
    t = Tools(broker)
    first, second = Collected(), Collected()
    state = {}

    def sequence_a():
        try:
            topics_scenario(t, first)
            console_scenario(t, first, state)
            groups_scenario(t, first, state)
        except Exception as e:  # noqa: BLE001 - reported as a failed check
            import traceback
            traceback.print_exc()
            first.fail("topics/console/groups sequence completed", "%s: %s" % (type(e).__name__, e))

    def sequence_b():
        try:
            perf_scenario(t, second)
            configs_scenario(t, second)
        except Exception as e:  # noqa: BLE001
            import traceback
            traceback.print_exc()
            second.fail("perf/configs sequence completed", "%s: %s" % (type(e).__name__, e))

    threads = [threading.Thread(target=sequence_a), threading.Thread(target=sequence_b)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    first.replay(checks)
    second.replay(checks)
    closed = [line for line in broker.log_text().splitlines() if "closing connection from" in line]
    checks.check("eddy closed no tool's connection for a bad request", not closed, "\n".join(closed[:10]))
    total = sum(s for s, _ in t.runs)
    print("%d tool runs, %.1f s of JVM time (longest: %s)" % (
        len(t.runs), total, ", ".join("%s %.1f s" % (n, s) for s, n in sorted(t.runs, reverse=True)[:4])))
    if checks.failed:
        print("---- eddy stderr (tail) ----\n" + broker.log_text()[-4000:], flush=True)


if __name__ == "__main__":
    eddy_fixture.run_test(body, broker_overrides={"group.initial.rebalance.delay.ms": "0"})
