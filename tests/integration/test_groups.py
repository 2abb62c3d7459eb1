"""Consumer groups with real clients:
  1. three kafka-python consumers in one group on a 6-partition topic get
     two partitions each and together read every message exactly once;
  2. one is SIGKILLed: after the session timeout its partitions move to the
     other two, which read the new messages; nothing committed is read again;
  3. the broker restarts: committed offsets and lag are unchanged;
  4. librdkafka (kcat -G, cooperative-sticky) members join and leave a group;
  5. static members (group.instance.id): one restarted within the session
     timeout keeps its partitions and the group sees no rebalance; a second
     live consumer with the same instance id fences the older;
  6. raw bad input: unknown group/member, illegal generation, transaction
     coordinator lookup."""

import os
import signal
import struct
import subprocess
import sys
import threading
import time

from kafka import KafkaAdminClient, KafkaProducer
from kafka import errors as kafka_errors
from kafka.admin import NewTopic

import pytest

import eddy_fixture
import kafka_wire

PYTHON = sys.executable
SESSION_MS = 6000

CONSUMER = r'''
import signal
import sys
from kafka import KafkaConsumer
bootstrap, group, topic = sys.argv[1:4]
stopping = []
signal.signal(signal.SIGTERM, lambda *a: stopping.append(1))
c = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                  enable_auto_commit=False, session_timeout_ms=6000, heartbeat_interval_ms=1000,
                  max_poll_interval_ms=10000, client_id="it-consumer")
last = None
while not stopping:
    batches = c.poll(timeout_ms=200)
    for tp, records in batches.items():
        for r in records:
            print("MSG %d %d %s" % (r.partition, r.offset, r.value.decode()), flush=True)
    if batches:
        c.commit()
    a = sorted(tp.partition for tp in c.assignment())
    if a != last:
        print("ASSIGN %s" % ",".join(map(str, a)), flush=True)
        last = a
c.close()  # LeaveGroup
'''


class Consumer:
    """A kafka-python group consumer in its own process."""

    def __init__(self, broker, group, topic):
        self.proc = subprocess.Popen([PYTHON, "-c", CONSUMER, broker.bootstrap, group, topic],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.assignment = None
        self.messages = []
        self.offsets = []
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            parts = line.split()
            with self.lock:
                if parts[0] == "ASSIGN":
                    self.assignment = [int(p) for p in parts[1].split(",")] if len(parts) > 1 else []
                elif parts[0] == "MSG":
                    self.messages.append(parts[3])
                    self.offsets.append((int(parts[1]), int(parts[2])))

    def stop(self, sig=signal.SIGTERM):
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def broker(eddy):
    return eddy


def produce(broker, topic, start, count, partitions):
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all")
    for i in range(start, start + count):
        producer.send(topic, value=b"m%d" % i, partition=i % partitions)
    producer.flush()
    producer.close()
    return ["m%d" % i for i in range(start, start + count)]


def all_messages(consumers):
    out = []
    for c in consumers:
        with c.lock:
            out += c.messages
    return out


def committed(admin, group):
    return {tp.partition: meta.offset for tp, meta in admin.list_consumer_group_offsets(group).items()}


def test_kafka_python_group(broker):
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=10000)
    admin.create_topics([NewTopic("orders", 6, 1)])
    admin.close()
    consumers = [Consumer(broker, "g1", "orders") for _ in range(3)]
    try:
        eddy_fixture.wait_until(lambda: all(c.assignment is not None and len(c.assignment) == 2 for c in consumers),
                                60, "three consumers with two partitions each")
        parts = sorted(p for c in consumers for p in c.assignment)
        assert parts == list(range(6)), "three consumers: two partitions each, all six covered"
        sent = produce(broker, "orders", 0, 600, 6)
        eddy_fixture.wait_until(lambda: len(all_messages(consumers)) >= 600, 60, "600 messages consumed")
        eddy_fixture.nothing_happens_for(lambda: len(all_messages(consumers)) > 600, 1000,
                                         "a message read twice")
        got = all_messages(consumers)
        assert sorted(got) == sorted(sent), "every message read exactly once"

        victim = consumers.pop()
        moved = victim.assignment
        killed_at = time.monotonic()
        victim.stop(signal.SIGKILL)
        eddy_fixture.wait_until(lambda: all(c.assignment is not None and len(c.assignment) == 3 for c in consumers),
                                60, "survivors take over the killed consumer's partitions")
        took = time.monotonic() - killed_at
        assert sorted(p for c in consumers for p in c.assignment) == list(range(6)), \
            "survivors cover all six partitions"
        assert took >= SESSION_MS / 1000 - 1.5, \
            "%s: %s" % ("partitions %s moved after the session timeout (%.1f s)" % (moved, took), took)
        sent2 = produce(broker, "orders", 600, 600, 6)
        eddy_fixture.wait_until(lambda: len(all_messages(consumers)) >= 600 + len(sent2) - len(victim.messages),
                                60, "the second 600 messages consumed")
        eddy_fixture.nothing_happens_for(
            lambda: len(all_messages(consumers)) > 600 + len(sent2) - len(victim.messages), 1000,
            "a committed message read again")
        got = all_messages(consumers) + victim.messages
        assert sorted(got) == sorted(sent + sent2), "after the kill every message read, nothing committed read again"
    finally:
        for c in consumers:
            c.stop()
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=10000)
    before = committed(admin, "g1")
    assert before == {p: 200 for p in range(6)}, "committed offsets: 200 on each partition"
    groups = dict(admin.list_consumer_groups())
    assert "g1" in groups, "ListGroups shows g1: %r" % (groups,)
    admin.close()
    broker.restart(signal.SIGTERM)
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=10000)
    assert committed(admin, "g1") == before, "committed offsets unchanged after a broker restart"
    admin.close()
    # A new consumer of the group starts at the committed offsets.
    late = Consumer(broker, "g1", "orders")
    try:
        extra = produce(broker, "orders", 1200, 6, 6)
        eddy_fixture.wait_until(lambda: len(late.messages) >= 6, 60, "new consumer reads new messages")
        eddy_fixture.nothing_happens_for(lambda: len(late.messages) > 6, 1000, "an old message read again")
        assert sorted(late.messages) == sorted(extra), "a consumer after the restart reads only what is new"
        eddy_tools(broker, late)
    finally:
        late.stop()


def eddy_groups(broker, *args):
    r = subprocess.run([os.environ["EDDY_BIN"], "groups", "--bootstrap-server", broker.bootstrap] + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr


def describe_rows(out):
    rows = [line.split() for line in out.splitlines() if line.strip()]
    header = rows[0]
    return header, [dict(zip(header, r)) for r in rows[1:]]


def eddy_tools(broker, live):
    rc, out, err = eddy_groups(broker, "--list")
    assert rc == 0 and "g1" in out.split(), "eddy groups --list shows g1: %r" % ((rc, out, err),)
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=10000)
    eddy_fixture.wait_until(lambda: committed(admin, "g1") == {p: 201 for p in range(6)}, 30, "commits at 201")
    rc, out, err = eddy_groups(broker, "--describe", "--group", "g1")
    header, rows = describe_rows(out)
    assert header == ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST",
                  "CLIENT-ID"], \
        "eddy groups --describe: columns"
    assert [(r["TOPIC"], r["PARTITION"], r["CURRENT-OFFSET"], r["LOG-END-OFFSET"], r["LAG"], r["CLIENT-ID"])
                  for r in rows] == [("orders", str(p), "201", "201", "0", "it-consumer") for p in range(6)], \
        "eddy groups --describe: offsets and lag as committed"
    rc, out, err = eddy_groups(broker, "--describe", "--group", "g1", "--members")
    assert rc == 0 and [l.split()[4:] for l in out.splitlines() if "it-consumer" in l] == [["6", "orders(0,1,2,3,4,5)"]], \
        "eddy groups --members: one member with six partitions: %r" % (out + err,)
    rc, out, err = eddy_groups(broker, "--reset-offsets", "--group", "g1", "--topic", "orders", "--to-earliest", "--execute")
    assert rc == 1 and "inactive" in err, "--reset-offsets refused while the group is active: %r" % ((rc, out, err),)
    live.stop()
    eddy_fixture.wait_until(lambda: dict(admin.list_consumer_groups()).get("g1") is not None and
                            admin.describe_consumer_groups(["g1"])[0].state == "Empty", 30, "g1 empty")
    rc, out, err = eddy_groups(broker, "--reset-offsets", "--group", "g1", "--topic", "orders", "--to-offset", "150")
    assert rc == 0 and out.count(" 150") == 6, "--reset-offsets --dry-run prints the new offsets: %r" % (out + err,)
    assert committed(admin, "g1") == {p: 201 for p in range(6)}, "--dry-run commits nothing"
    rc, out, err = eddy_groups(broker, "--reset-offsets", "--group", "g1", "--topic", "orders:2", "--to-datetime",
                        "2001-01-01T00:00:00.000")
    assert rc == 0 and out.split()[-1] == "0", "--to-datetime in the past: the log start: %r" % (out + err,)
    rc, out, err = eddy_groups(broker, "--reset-offsets", "--group", "g1", "--topic", "orders:2", "--to-datetime",
                        "2100-01-01T00:00:00")
    assert rc == 0 and out.split()[-1] == "201", "--to-datetime in the future: the log end: %r" % (out + err,)
    rc, out, err = eddy_groups(broker, "--reset-offsets", "--group", "g1", "--topic", "orders:0,1", "--to-earliest",
                        "--execute")
    assert (rc, committed(admin, "g1")) == (0, {0: 0, 1: 0, 2: 201, 3: 201, 4: 201, 5: 201}), \
        "--reset-offsets --to-earliest --execute on partitions 0,1"
    rc, out, err = eddy_groups(broker, "--reset-offsets", "--group", "g1", "--topic", "orders", "--to-offset", "150",
                        "--execute")
    assert (rc, committed(admin, "g1")) == (0, {p: 150 for p in range(6)}), \
        "--reset-offsets --to-offset 150 --execute"
    admin.close()
    again = Consumer(broker, "g1", "orders")
    try:
        eddy_fixture.wait_until(lambda: len(again.offsets) >= 6 * 51, 60, "consumer after the reset")
        eddy_fixture.nothing_happens_for(lambda: len(again.offsets) > 6 * 51, 1000, "a record read twice")
        assert sorted(set(o for p, o in again.offsets)) == list(range(150, 201)), \
            "the next consumer starts at the reset offsets"
        assert len(again.offsets) == 6 * 51, "... and reads each record once"
    finally:
        again.stop()


def kcat(broker, group, topic, *extra):
    cmd = ["kcat", "-b", broker.bootstrap, "-G", group, "-q", "-f", "%p %o %s\n",
           "-X", "session.timeout.ms=%d" % SESSION_MS, "-X", "heartbeat.interval.ms=500",
           "-X", "auto.offset.reset=earliest", "-X", "topic.metadata.refresh.interval.ms=1000",
           "-X", "auto.commit.interval.ms=500"]
    for e in extra:
        cmd += ["-X", e]
    cmd.append(topic)
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def assignment_partitions(raw):
    """ConsumerProtocolAssignment bytes -> [(topic, [partitions])]."""
    if not raw:
        return []
    if not isinstance(raw, (bytes, bytearray)):
        return list(raw.assignment)
    pos = 2
    (n,) = struct.unpack_from(">i", raw, pos)
    pos += 4
    out = []
    for _ in range(max(n, 0)):
        (tlen,) = struct.unpack_from(">h", raw, pos)
        topic = raw[pos + 2:pos + 2 + tlen].decode()
        pos += 2 + tlen
        (k,) = struct.unpack_from(">i", raw, pos)
        pos += 4
        ps = list(struct.unpack_from(">%di" % k, raw, pos))
        pos += 4 * k
        out.append((topic, ps))
    return out


def describe(admin, group):
    """member id -> (client id, instance id-less assignment partitions)."""
    d = admin.describe_consumer_groups([group])[0]
    out = {}
    for m in d.members:
        parts = []
        for topic, ps in assignment_partitions(m.member_assignment):
            parts += ps
        out[m.member_id] = sorted(parts)
    return d.state, out


def rebalances(broker, group):
    """Rebalances the broker logged for group: no API counts them
    (DescribeGroups has no generation id)."""
    return broker.log_text().count("group %s: preparing rebalance" % group)


def test_librdkafka_groups(broker):
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=10000)
    admin.create_topics([NewTopic("rd", 4, 1), NewTopic("st", 4, 1)])
    produce(broker, "rd", 0, 40, 4)

    # cooperative-sticky: a member joins an existing group and leaves it.
    coop = "partition.assignment.strategy=cooperative-sticky"
    first = kcat(broker, "coop", "rd", coop)
    try:
        eddy_fixture.wait_until(lambda: describe(admin, "coop")[0] == "Stable" and
                                sum(len(p) for p in describe(admin, "coop")[1].values()) == 4,
                                60, "first cooperative-sticky member owns all partitions")
        second = kcat(broker, "coop", "rd", coop)
        eddy_fixture.wait_until(lambda: describe(admin, "coop")[0] == "Stable" and
                                sorted(len(p) for p in describe(admin, "coop")[1].values()) == [2, 2],
                                60, "second cooperative-sticky member joins: two partitions each")
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=20)
        eddy_fixture.wait_until(lambda: describe(admin, "coop")[0] == "Stable" and
                                [len(p) for p in describe(admin, "coop")[1].values()] == [4],
                                30, "after the second leaves the first owns all partitions again")
        eddy_fixture.wait_until(lambda: sum(committed(admin, "coop").values()) == 40, 30,
                                "kcat (auto commit) to commit offsets for all 40 messages")
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(timeout=20)
    eddy_fixture.wait_until(lambda: describe(admin, "coop")[0] == "Empty", 30, "group coop empty")
    assert sum(committed(admin, "coop").values()) == 40, "the group's offsets are kept after its last member left"
    assert admin.delete_consumer_groups(["coop"]) == [("coop", kafka_errors.NoError)], \
        "DeleteGroups of the empty group"
    assert "coop" not in dict(admin.list_consumer_groups()), "deleted group is gone from ListGroups"

    # Static membership.
    s1 = kcat(broker, "static", "st", "group.instance.id=inst-1")
    s2 = kcat(broker, "static", "st", "group.instance.id=inst-2")
    procs = [s1, s2]
    try:
        eddy_fixture.wait_until(lambda: describe(admin, "static")[0] == "Stable" and
                                sorted(len(p) for p in describe(admin, "static")[1].values()) == [2, 2],
                                60, "two static members with two partitions each")
        state, before = describe(admin, "static")
        count = rebalances(broker, "static")
        s1.kill()
        s1.wait()
        s1 = kcat(broker, "static", "st", "group.instance.id=inst-1")
        procs.append(s1)

        def rejoined():
            state, members = describe(admin, "static")
            return state == "Stable" and len(members) == 2 and set(members) != set(before)
        eddy_fixture.wait_until(rejoined, 30, "inst-1 to rejoin (a new member id in DescribeGroups)")
        eddy_fixture.nothing_happens_for(lambda: rebalances(broker, "static") != count, 2000,
                                         "a rebalance of the static group")
        state, after = describe(admin, "static")
        assert state == "Stable", "static restart: group stays Stable"
        assert sorted(after.values()) == sorted(before.values()), "static restart: assignments unchanged"
        assert rebalances(broker, "static") == count, "static restart: no rebalance"
        # A second live consumer with inst-2: the older one is fenced.
        s3 = kcat(broker, "static", "st", "group.instance.id=inst-2")
        procs.append(s3)
        try:
            s2.wait(timeout=30)
            fenced = True
        except subprocess.TimeoutExpired:
            fenced = False
        err = s2.stderr.read() if fenced else ""
        assert fenced, "same instance id: the older consumer is fenced and stops"
        assert "fenced" in err.lower(), "the fenced consumer was told FENCED_INSTANCE_ID: %r" % (err[-500:],)
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
    admin.close()


@pytest.fixture(scope="module")
def g1_committed(broker):
    """Group g1 with offsets committed on orders (6 partitions), as
    test_kafka_python_group leaves it (201 on each); made here (1 206
    records, offsets 201 committed) when that test did not run first."""
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=10000)
    try:
        if not committed(admin, "g1"):
            if "orders" not in admin.list_topics():
                admin.create_topics([NewTopic("orders", 6, 1)])
            produce(broker, "orders", 0, 6 * 201, 6)
            consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id="g1", enable_auto_commit=False)
            tps = [TopicPartition("orders", p) for p in range(6)]
            consumer.assign(tps)
            consumer.commit({tp: OffsetAndMetadata(201, "") for tp in tps})
            consumer.close()
        return committed(admin, "g1")
    finally:
        admin.close()


@pytest.fixture(scope="module")
def st_topic(broker):
    """Topic st with 4 partitions, as test_librdkafka_groups creates it."""
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=10000)
    try:
        if "st" not in admin.list_topics():
            admin.create_topics([NewTopic("st", 4, 1)])
    finally:
        admin.close()
    return "st"


def test_raw_bad_input(broker, g1_committed):
    s = kafka_wire.string
    with kafka_wire.Connection(broker.port) as conn:
        # FindCoordinator v1 for a transactional id: this broker.
        body = conn.request(10, 1, s("tx") + b"\x01")
        assert struct.unpack_from(">hhi", body, 4) == (0, -1, 1), \
            "FindCoordinator for a transaction: no error, no message, node 1"
        body = conn.request(10, 1, s("g1") + b"\x00")
        assert struct.unpack_from(">h", body, 4)[0] == 0, "FindCoordinator for a group: no error"
        # FindCoordinator v4 (flexible): batched keys, each answered.
        body = conn.request(10, 4, b"\x00" + kafka_wire.uvarint(3) + kafka_wire.compact_string("a") +
                            kafka_wire.compact_string("b") + b"\x00", flexible=True)
        pos = 4
        count = body[pos] - 1
        pos += 1
        answers = []
        for _ in range(count):
            klen = body[pos] - 1
            key = body[pos + 1:pos + 1 + klen].decode()
            pos += 1 + klen
            node = struct.unpack_from(">i", body, pos)[0]
            hlen = body[pos + 4] - 1
            pos += 5 + hlen
            port, err = struct.unpack_from(">ih", body, pos)
            pos += 6
            mlen = body[pos]
            pos += 1 + max(mlen - 1, 0) + 1  # message, tagged fields
            answers.append((key, node, port, err))
        assert answers == [("a", 1, broker.port, 0), ("b", 1, broker.port, 0)], \
            "FindCoordinator v4: two keys, this node for both"
        # Heartbeat v0 to an unknown group.
        body = conn.request(12, 0, s("no-such-group") + struct.pack(">i", 1) + s("m"))
        assert struct.unpack_from(">h", body, 0)[0] == 25, "Heartbeat for an unknown group: UNKNOWN_MEMBER_ID"
        # OffsetCommit v2 with a generation for a group that has no members.
        commit = (s("nobody-home") + struct.pack(">i", 5) + s("ghost") + struct.pack(">q", -1) +
                  kafka_wire.array([s("orders") + kafka_wire.array([struct.pack(">iq", 0, 0) + s("")])]))
        body = conn.request(8, 2, commit)
        assert struct.unpack_from(">h", body, len(body) - 2)[0] == 22, \
            "OffsetCommit with an illegal generation: ILLEGAL_GENERATION"
        # SyncGroup v0 from an unknown member.
        body = conn.request(14, 0, s("g1") + struct.pack(">i", 1) + s("ghost") + kafka_wire.array([]))
        assert struct.unpack_from(">h", body, 0)[0] == 25, "SyncGroup from an unknown member: UNKNOWN_MEMBER_ID"
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=10000)
    assert committed(admin, "g1").get(0) == 201, "nothing stored was damaged"
    admin.close()


def test_static_member_restart(broker, st_topic):
    """A static member (raw JoinGroup v5 / SyncGroup v3 / Heartbeat v3)
    survives a broker restart: same member id, generation and assignment."""
    s = kafka_wire.string
    nbytes = kafka_wire.nbytes
    join = (s("raw-static") + struct.pack(">ii", SESSION_MS, 10000) + s("") + s("raw-1") + s("consumer") +
            kafka_wire.array([s("range") + nbytes(b"\x00\x00\x00\x00\x00\x01\x00\x02st\xff\xff\xff\xff")]))
    with kafka_wire.Connection(broker.port) as conn:
        body = conn.request(11, 5, join)
        err, generation = struct.unpack_from(">hi", body, 4)
        pos = 10
        name_len = struct.unpack_from(">h", body, pos)[0]
        pos += 2 + name_len
        leader_len = struct.unpack_from(">h", body, pos)[0]
        pos += 2 + leader_len
        member_len = struct.unpack_from(">h", body, pos)[0]
        member = body[pos + 2:pos + 2 + member_len].decode()
        assert err == 0, "raw static JoinGroup v5: no error"
        assignment = b"\x00\x00" + kafka_wire.array([s("st") + kafka_wire.array([struct.pack(">i", 3)])]) + \
            b"\xff\xff\xff\xff"
        sync = (s("raw-static") + struct.pack(">i", generation) + s(member) + s("raw-1") +
                kafka_wire.array([s(member) + nbytes(assignment)]))
        body = conn.request(14, 3, sync)
        assert (struct.unpack_from(">h", body, 4)[0], body[10:]) == (0, assignment), "raw static SyncGroup v3"
    broker.restart(signal.SIGTERM)
    heartbeat = s("raw-static") + struct.pack(">i", generation) + s(member) + s("raw-1")
    with kafka_wire.Connection(broker.port) as conn:
        body = conn.request(12, 3, heartbeat)
        assert struct.unpack_from(">h", body, 4)[0] == 0, \
            "after a broker restart the static member heartbeats with its old id and generation"
        # Rejoining as a restarted process (no member id) gives the old assignment without a rebalance.
        body = conn.request(11, 5, join)
        err, generation2 = struct.unpack_from(">hi", body, 4)
        pos = 10
        for _ in range(2):
            pos += 2 + struct.unpack_from(">h", body, pos)[0]
        member_len = struct.unpack_from(">h", body, pos)[0]
        member2 = body[pos + 2:pos + 2 + member_len].decode()
        assert (err, generation2) == (0, generation), "static rejoin after the restart: same generation"
        body = conn.request(14, 3, s("raw-static") + struct.pack(">i", generation) + s(member2) + s("raw-1") +
                            kafka_wire.array([]))
        assert body[10:] == assignment, "static rejoin after the restart: the stored assignment"
        body = conn.request(12, 3, heartbeat)
        assert struct.unpack_from(">h", body, 4)[0] == 82, "the old member id is fenced"
        # OffsetCommit v7 from the fenced member: refused, nothing stored.
        commit = (s("raw-static") + struct.pack(">i", generation) + s(member) + s("raw-1") +
                  kafka_wire.array([s("st") + kafka_wire.array([struct.pack(">iqi", 3, 7, -1) + s("")])]))
        body = conn.request(8, 7, commit)
        assert struct.unpack_from(">h", body, len(body) - 2)[0] == 82, \
            "OffsetCommit from a fenced member: FENCED_INSTANCE_ID"
        # The same commit from the live member is stored.
        commit = (s("raw-static") + struct.pack(">i", generation) + s(member2) + s("raw-1") +
                  kafka_wire.array([s("st") + kafka_wire.array([struct.pack(">iqi", 3, 7, -1) + s("")])]))
        body = conn.request(8, 7, commit)
        assert struct.unpack_from(">h", body, len(body) - 2)[0] == 0, "OffsetCommit from the live static member"
        # Oversized member metadata: INVALID_REQUEST, the group is untouched.
        big = (s("raw-static") + struct.pack(">ii", SESSION_MS, 10000) + s("") + s("raw-2") + s("consumer") +
               kafka_wire.array([s("range") + nbytes(b"\x00" * (300 * 1024))]))
        body = conn.request(11, 5, big)
        assert struct.unpack_from(">h", body, 4)[0] == 42, "JoinGroup with oversized member metadata: INVALID_REQUEST"
        body = conn.request(12, 3, s("raw-static") + struct.pack(">i", generation) + s(member2) + s("raw-1"))
        assert struct.unpack_from(">h", body, 4)[0] == 0, "... and the group still has its member"
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=10000)
    assert committed(admin, "raw-static") == {3: 7}, "only the live member's commit is stored"
    admin.close()
    assert rebalances(broker, "raw-static") == 0, "no rebalance of the static group after the restart"
