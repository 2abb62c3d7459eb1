"""The disk budget (eddy.disk.budget.bytes) bounds the whole data directory.

- No config file: the built-in defaults (16 MiB segments, retention.bytes
  -1, so 2 segments reserved per partition) and a default budget of half the
  filesystem, logged at startup.
- No config file, a 420 MiB budget: topics of 4 partitions are created until
  the budget is used; the next one (CreateTopics, validate_only too),
  CreatePartitions, a larger retention.bytes (AlterConfigs) and an
  auto-created topic get POLICY_VIOLATION with a message naming the budget
  and its use; the broker keeps serving; a restart keeps the accounting;
  deleting a topic frees its share; a restart with a smaller budget than
  the topics take starts, warns and refuses new topics.
- A small budget and far more data than it holds: partitions without
  retention.bytes grow only until the budget is full, then recycle; what the
  data directory allocates (du) stays within the budget.
- A Kafka-style server.properties with log.segment.bytes=1073741824: the
  broker starts, topics that do not fit are refused, smaller ones are not.

`eddy topics --describe` shows each partition's share and the budget's
used and free bytes; these checks read them there."""

import os
import re
import subprocess

import kafka.errors as Errors
from kafka import KafkaAdminClient
from kafka.admin import ConfigResource, ConfigResourceType, NewPartitions, NewTopic
from kafka.protocol.metadata import MetadataResponse

import eddy_fixture
import kafka_wire

MIB = 1 << 20
POLICY_VIOLATION = 44
BUDGET = 420 * MIB


def reservation(segment_bytes, segments, interval=4096):
    """What storage/disk_budget.h charges a new partition: each segment in
    4 KiB blocks plus its index file's bound, and 12 KiB for the directory
    and its checkpoints."""
    def blocks(n):
        return (n + 4095) // 4096 * 4096
    entries = -(-segment_bytes // max(interval, 61))
    index = 60 + 8 * entries + 8 * -(-entries // 8)
    return segments * (blocks(segment_bytes) + blocks(index)) + 3 * 4096


def human(n):
    """storage::human_bytes()"""
    units = ["B", "KiB", "MiB", "GiB", "TiB"]
    unit, scale = 0, 1
    while unit + 1 < len(units) and n // scale >= 1024:
        scale *= 1024
        unit += 1
    return "%d %s" % (n // scale, units[unit]) if n % scale == 0 else "%.1f %s" % (n / scale, units[unit])


def describe(broker):
    """`eddy topics --describe` -> (output, (budget, used, free) strings or None)."""
    out = subprocess.run([broker.bin, "topics", "--bootstrap-server", broker.bootstrap, "--describe"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    text = out.stdout.decode()
    m = re.search(r"^Disk budget of (.*): (.+), (.+) used, (.+) free$", text, re.M)
    return text, (m.group(2), m.group(3), m.group(4)) if m else None


def error_of(call):
    """The exception call() raises (None when it does not)."""
    try:
        call()
    except Exception as e:  # noqa: BLE001 - returned to be checked
        return e
    return None


def metadata_error(port, topic):
    with kafka_wire.Connection(port) as conn:
        response = conn.request(3, 1, kafka_wire.metadata_v1([topic]), response_class=MetadataResponse[1])
    return response.topics[0][0]


def allocated_bytes(path):
    """What du(1) counts: st_blocks x 512 of the tree, directories included."""
    total = os.lstat(path).st_blocks * 512
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except FileNotFoundError:
                pass
    return total


def test_default_budget(eddy_factory):
    broker = eddy_factory(config=eddy_fixture.NO_CONFIG)
    log = broker.log_text()
    m = re.search(r"disk budget (\S+ \S+) \((\d+) bytes: default, half of the", log)
    assert m, "no config: the default budget is logged (half of the filesystem): %r" % (log[-2000:],)
    fs = os.statvfs(broker.data_dir)
    assert m and 0 < int(m.group(2)) <= fs.f_blocks * fs.f_frsize // 2, \
        "no config: the default is at most half of the filesystem: %r" % (m and m.group(2),)
    _text, figures = describe(broker)
    assert figures and m and figures[0] == m.group(1), \
        "no config: eddy topics --describe shows the budget: %r" % (figures,)
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=10000)
    try:
        admin.create_topics([NewTopic("plain", 1, 1)])
        text, _ = describe(broker)
        assert "\tDisk: %s" % human(reservation(16 * MIB, 2)) in text, \
            "no config: a partition reserves 2 segments of the built-in 16 MiB: %r" % (text,)
        assert os.path.getsize(os.path.join(broker.data_dir, "plain-0", "%020d.log" % 0)) == 16 * MIB, \
            "no config: the first segment file is 16 MiB"
    finally:
        admin.close()
    assert broker.stop() == 0, "no config: stops cleanly"


def test_budget_of_four_partition_topics(eddy_factory):
    need = 4 * reservation(16 * MIB, 2)
    overrides = {"eddy.disk.budget.bytes": str(BUDGET)}
    broker = eddy_factory(config=eddy_fixture.NO_CONFIG, overrides=overrides)
    assert "disk budget 420 MiB (%d bytes: eddy.disk.budget.bytes, --override)" % BUDGET in broker.log_text(), \
        "budget logged at startup: %r" % (broker.log_text()[-2000:],)
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=10000)
    created = []
    refusal = None
    for i in range(10):
        e = error_of(lambda: admin.create_topics([NewTopic("t%d" % i, 4, 1)]))
        if e is not None:
            refusal = e
            break
        created.append("t%d" % i)
    fits = (BUDGET - 16 * MIB) // need
    assert len(created) == fits, "topics of 4 partitions are created until the budget is used"
    assert isinstance(refusal, Errors.PolicyViolationError), \
        "the next one gets POLICY_VIOLATION: %r" % (repr(refusal),)
    message = str(refusal)
    used = 16 * MIB + fits * need
    expected = ("topic 't%d' needs %s of disk (4 partitions x 2 segments of 16 MiB, with their indexes) but the "
                "disk budget eddy.disk.budget.bytes=%d (420 MiB) has %s left (%s used)"
                % (fits, human(need), BUDGET, human(BUDGET - used), human(used)))
    assert expected in message, \
        "the refusal names the budget, what is needed and what is used: %r" % ("%s\nwant %s" % (message, expected),)
    assert "t%d" % fits not in admin.list_topics(), \
        "the refused topic does not exist: %r" % (admin.list_topics(),)
    e = error_of(lambda: admin.create_topics([NewTopic("t%d" % fits, 4, 1)], validate_only=True))
    assert (isinstance(e, Errors.PolicyViolationError)
                 and expected in str(e)), \
        "validate_only answers the same: %r" % (repr(e),)
    e = error_of(lambda: admin.create_partitions({"t0": NewPartitions(5)}))
    assert (isinstance(e, Errors.PolicyViolationError) and "1 new partition of topic 't0' needs" in str(e)
                 and "eddy.disk.budget.bytes=%d" % BUDGET in str(e)), \
        "CreatePartitions beyond the budget: POLICY_VIOLATION naming the budget: %r" % (repr(e),)
    response = admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "t0",
                                                   {"retention.bytes": str(1 << 30)})])
    (code, message, _type, _name), = response.resources
    assert (code == POLICY_VIOLATION and "the new configs of topic 't0' need" in message
                 and "4 partitions x 64 segments of 16 MiB" in message), \
        "raising retention.bytes beyond the budget: POLICY_VIOLATION naming what it adds: %r" % ((code, message),)
    response = admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "t0",
                                                   {"retention.bytes": str(32 * MIB)})])
    assert [r[0] for r in response.resources] == [0], \
        "retention.bytes within the reservation (2 segments) is accepted"
    assert metadata_error(broker.port, "typo-topic") == POLICY_VIOLATION, \
        "auto-creation by Metadata beyond the budget: POLICY_VIOLATION"
    assert "refused: topic 'typo-topic' needs" in broker.log_text(), \
        "the auto-creation refusal is logged with its reason: %r" % (broker.log_text()[-2000:],)

    with kafka_wire.Connection(broker.port) as conn:
        batch = kafka_wire.record_batch([(b"k", b"still serving", [])])
        code, offset = kafka_wire.produce(conn, "t0", 1, batch)
        assert (code, offset) == (0, 0), "the broker keeps serving: produce"
        code, _hw, records = kafka_wire.fetch(conn, "t0", 1, 0)
        assert code == 0 and b"still serving" in records, "the broker keeps serving: fetch: %r" % (code,)

    text, before = describe(broker)
    assert text.count("\tDisk: %s" % human(reservation(16 * MIB, 2))) == 4 * fits, \
        "describe: each partition's share of the budget: %r" % (text,)
    assert before == ("420 MiB", human(used), human(BUDGET - used)), "describe: budget, used and free"
    admin.close()

    assert broker.restart() == 0, "SIGTERM: clean stop"
    _text, after = describe(broker)
    assert after == before, "a restart keeps the accounting"
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=10000)
    e = error_of(lambda: admin.create_topics([NewTopic("t%d" % fits, 4, 1)], validate_only=True))
    assert isinstance(e, Errors.PolicyViolationError), \
        "after the restart the topic is still refused: %r" % (repr(e),)

    admin.delete_topics(["t1"])
    _text, freed = describe(broker)
    assert freed == ("420 MiB", human(used - need), human(BUDGET - used + need)), \
        "deleting a topic frees its share"
    e = error_of(lambda: admin.create_topics([NewTopic("t%d" % fits, 4, 1)]))
    assert e is None, "then the refused topic fits: %r" % (repr(e),)
    assert not any(n.startswith("t1-") for n in os.listdir(broker.data_dir)), \
        "no partition directory of the deleted topic is left: %r" % (os.listdir(broker.data_dir),)
    admin.close()

    # A restart with a budget below what the topics were promised: the
    # broker starts, says so, and has nothing left to give.
    broker.overrides["eddy.disk.budget.bytes"] = str(200 * MIB)
    assert broker.restart() == 0, "restart with a smaller budget: clean stop"
    warning = "more than eddy.disk.budget.bytes=%d" % (200 * MIB)
    # The startup warning is the operator's notice (logged once the topics
    # are loaded, after the port opens).
    eddy_fixture.wait_until(lambda: warning in broker.log_text(), 10,
                            "a budget below what the topics take to be reported at startup")
    _text, over = describe(broker)
    assert over is not None and over[2] == "0 B", "an overcommitted budget has nothing free: %r" % (over,)
    assert metadata_error(broker.port, "late-topic") == POLICY_VIOLATION, \
        "auto-creation in an overcommitted budget: POLICY_VIOLATION"
    assert broker.stop() == 0, "stops cleanly"


def test_data_beyond_the_budget(eddy_factory):
    budget = 48 * MIB
    overrides = {"eddy.disk.budget.bytes": str(budget), "log.segment.bytes": str(MIB)}
    broker = eddy_factory(config=eddy_fixture.NO_CONFIG, overrides=overrides)
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=10000)
    admin.create_topics([NewTopic("flood", 2, 1),
                         NewTopic("ring", 1, 1, topic_configs={"retention.bytes": str(3 * MIB)})])
    admin.close()
    # One ~200 KiB batch, sent again and again (the broker assigns the
    # offsets; the bytes under the CRC stay the same).
    batch = kafka_wire.record_batch([(b"k%d" % i, bytes([65 + i % 26]) * 2000, []) for i in range(100)])
    sent = 0
    peak = 0
    with kafka_wire.Connection(broker.port) as conn:
        for i in range(360):
            topic, partition = ("ring", 0) if i % 6 == 0 else ("flood", i % 2)
            code, _offset = kafka_wire.produce(conn, topic, partition, batch, acks=1)
            if code != 0:
                raise AssertionError("produce beyond the budget: %s" % ("error %d at batch %d" % (code, i),))
                break
            sent += len(batch)
            if i % 30 == 0:
                peak = max(peak, allocated_bytes(broker.data_dir))
    peak = max(peak, allocated_bytes(broker.data_dir))
    assert sent > 1.4 * budget, "produced %.0f MiB into a %d MiB budget" % (sent / MIB, budget // MIB)
    assert peak <= budget, \
        "%s: %s" % ("the data directory's allocated size stays within the budget (%.1f MiB)" % (peak / MIB), peak)
    assert peak > budget // 2, \
        "unbounded partitions grew into the budget (more than half of it allocated): %r" % (peak,)
    segments = {d: len([f for f in os.listdir(os.path.join(broker.data_dir, d)) if f.endswith(".log")])
                for d in ("flood-0", "flood-1", "ring-0")}
    assert segments["ring-0"] == 3, "retention.bytes=3 MiB keeps its ring of 3 segments"
    with kafka_wire.Connection(broker.port) as conn:
        code, _hw, records = kafka_wire.fetch(conn, "flood", 0, 0)
        assert code == 1, "the oldest data of a full budget was recycled (offset 0 is gone)"
    text, figures = describe(broker)
    assert figures is not None and figures[0] == "48 MiB", "describe: the budget is used up: %r" % (figures,)
    assert broker.stop() == 0, "stops cleanly"


KAFKA_SERVER_PROPERTIES = """# the settings of Kafka's own config/server.properties that a single node keeps
broker.id=0
num.network.threads=3
num.io.threads=8
socket.send.buffer.bytes=102400
socket.receive.buffer.bytes=102400
socket.request.max.bytes=104857600
log.dirs=/tmp/kafka-logs
num.partitions=1
num.recovery.threads.per.data.dir=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
log.retention.hours=168
log.segment.bytes=1073741824
log.retention.check.interval.ms=300000
"""


def test_kafka_server_properties(eddy_factory):
    broker = eddy_factory(overrides={"eddy.disk.budget.bytes": str(1 << 30)}, start=False)
    broker.config = os.path.join(broker.tmp, "server.properties")
    with open(broker.config, "w") as f:
        f.write(KAFKA_SERVER_PROPERTIES)
    broker.start()
    assert broker.alive(), "a Kafka server.properties with 1 GiB segments starts"
    assert metadata_error(broker.port, "events") == POLICY_VIOLATION, \
        "auto-creating a topic of 1 GiB segments in a 1 GiB budget: POLICY_VIOLATION"
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=10000)
    e = error_of(lambda: admin.create_topics([NewTopic("events", 1, 1)]))
    assert isinstance(e, Errors.PolicyViolationError) and "2 segments of 1 GiB" in str(e), \
        "CreateTopics with the 1 GiB default: refused, naming 2 segments of 1 GiB: %r" % (repr(e),)
    e = error_of(lambda: admin.create_topics([NewTopic("small", 1, 1,
                                                       topic_configs={"segment.bytes": str(16 * MIB)})]))
    assert e is None, "a topic with 16 MiB segments fits: %r" % (repr(e),)
    admin.close()
    assert broker.stop() == 0, "stops cleanly"


def _mount_loop_filesystem(mountpoint, size):
    """An ext4 filesystem of size bytes (a sparse image beside mountpoint,
    no reserved blocks) mounted at mountpoint; its size as statvfs sees it."""
    image = mountpoint + ".img"
    subprocess.run(["truncate", "-s", str(size), image], check=True)
    subprocess.run(["mkfs.ext4", "-q", "-F", "-m", "0", image], check=True)
    os.makedirs(mountpoint, exist_ok=True)
    subprocess.run(["mount", "-o", "loop", image, mountpoint], check=True)
    st = os.statvfs(mountpoint)
    return st.f_blocks * st.f_frsize


def _unmount_loop_filesystem(mountpoint):
    subprocess.run(["umount", mountpoint], check=True)
    os.unlink(mountpoint + ".img")


def test_fifty_topics_of_four_partitions_with_no_config_file(tmp_path):
    """Issue 14's check as it is written: with no config file the budget is
    half of the filesystem; on a filesystem whose half holds 50 topics of 4
    partitions (after the metadata reserve) and not 51, 50 are created, the
    data directory stays inside the budget, and the 51st gets
    POLICY_VIOLATION naming the budget. The filesystem is a loop-mounted
    ext4 image sized for that (root is needed for the mount)."""
    assert os.geteuid() == 0, "this check loop-mounts a filesystem of a chosen size: run it as root"
    need = 4 * reservation(16 * MIB, 2)
    mountpoint = str(tmp_path / "fs")
    target = 2 * (16 * MIB + 50 * need + need // 2)  # a budget of 50.5 topics
    size = target
    for _attempt in range(3):
        total = _mount_loop_filesystem(mountpoint, size)
        if (total // 2 - 16 * MIB) // need == 50:
            break
        _unmount_loop_filesystem(mountpoint)
        size += target - total  # ext4's own metadata takes a share of the image
    else:
        raise AssertionError("no ext4 image found whose half holds exactly 50 topics of 4 partitions")
    broker = eddy_fixture.Broker(config=eddy_fixture.NO_CONFIG, tmp=mountpoint)
    try:
        broker.start()
        m = re.search(r"disk budget \S+ \S+ \((\d+) bytes: default, half of the", broker.log_text())
        assert m, "the default budget is logged: %r" % (broker.log_text()[-2000:],)
        budget = int(m.group(1))
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=20000)
        try:
            for i in range(50):
                e = error_of(lambda: admin.create_topics([NewTopic("fifty-%d" % i, 4, 1)]))
                assert e is None, "topic %d of 50 refused under a %d-byte budget: %r" % (i, budget, e)
            e = error_of(lambda: admin.create_topics([NewTopic("fifty-50", 4, 1)]))
            assert isinstance(e, Errors.PolicyViolationError) and "eddy.disk.budget.bytes" in str(e), \
                "the 51st topic gets POLICY_VIOLATION naming the budget: %r" % (repr(e),)
            assert "fifty-50" not in admin.list_topics()
        finally:
            admin.close()
        assert allocated_bytes(broker.data_dir) <= budget, \
            "the data directory (%d bytes) stays inside the budget (%d)" % (allocated_bytes(broker.data_dir), budget)
        assert broker.stop() == 0
    finally:
        broker.close()
        _unmount_loop_filesystem(mountpoint)
