"""Store-and-forward (issue 8) semantics, edge eddy -> fault proxies ->
Apache Kafka 4.4 as the central cluster (forward_fixture.py). What arrived
centrally is read back with Kafka's Java consumer (NumberedCheck.java):

  fidelity  a kafka-python producer at the edge (keys, values, headers,
            CreateTime timestamps), one topic per codec: gzip, snappy, lz4,
            zstd; Kafka's consumer at the central side sees the same
            records; the batches Kafka stored are the edge's batches,
            compressed as stored
  policies  a backlog larger than the budget under eddy.full.policy=drop-oldest
            (loss counted exactly, forwarded what is left) and =reject (local
            writes refused with a retriable error, nothing lost)
  paused    with eddy.forward.<link>.create.topics=false, a central topic
            that does not exist pauses that topic with the reason, without
            spinning; creating it resumes forwarding
  priorities after an outage the higher-priority topic drains first
  recreate  a forwarded topic deleted and created again at the edge starts
            over; the central topic gets both incarnations exactly once
  malformed a batch with malformed records already in an edge segment (as a
            version without record validation stored it; written into the
            file here while the edge is down after a SIGKILL): recovery
            reports it, the link skips it (counted in the status) and
            forwards everything around it; Kafka never sees it
  lost_tail with eddy.acks.all.waits.for=page-cache, a power cut takes the
            edge log's tail after the link forwarded it: the offsets
            appended after the restart are forwarded all the same
  config    link configuration errors stop startup with file/key and why
            (no central cluster)

usage: python3 -m pytest test_forward_semantics.py -k SCENARIO"""

import os
import subprocess
import time

import pytest

import eddy_fixture
import forward_fixture as ff
import kafka_fixture
import kafka_wire as w


def kafka_producer(bootstrap, **kw):
    from kafka import KafkaProducer
    return KafkaProducer(bootstrap_servers=bootstrap, api_version=(2, 5, 0), **kw)


def central_records(rig, topics):
    """Every record of the central topics ({name: partitions}), read with
    Kafka's Java consumer, in offset order per partition."""
    return kafka_fixture.dump_records(rig.kafka.bootstrap, topics, rig.edge.tmp)


def central_values(rig, topic, partitions=1):
    return [r["value"] for r in central_records(rig, {topic: partitions})]


def batch_shapes(port, topic, partitions):
    """(partition, records - 1, compression codec) of every stored batch,
    fetched raw (Fetch v4 returns batches as the broker stored them)."""
    shapes = []
    with w.Connection(port) as conn:
        for p in range(partitions):
            for base, last, data in w.fetch_all(conn, topic, p):
                attributes = int.from_bytes(data[21:23], "big")
                shapes.append((p, last - base, attributes & 7))
    return shapes


# Record batch attributes bits 0-2 (Kafka's CompressionType ids).
FIDELITY_CODECS = {"gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def produce_fidelity_records(bootstrap, topic, codec):
    """500 records over 2 partitions with keys, headers and CreateTime
    timestamps, compressed with codec; returns them as
    (partition, key, value, headers, timestamp) in send order."""
    producer = kafka_producer(bootstrap, compression_type=codec, acks="all", linger_ms=20)
    sent = []
    base_ts = 1_700_000_000_000
    for i in range(500):
        key = ("sensor-%d" % (i % 7)).encode()
        value = ("%s reading %d: %s" % (codec, i, "x" * (i % 50))).encode()
        headers = [("unit", b"celsius"), ("seq", str(i).encode())]
        ts = base_ts + i * 1000
        producer.send(topic, key=key, value=value, headers=headers, timestamp_ms=ts, partition=i % 2)
        sent.append((i % 2, key, value, headers, ts))
    producer.flush()
    producer.close()
    return sent


def check_fidelity(rig, topic, codec, sent, got):
    """got (the central consumer's records of topic) are sent, in order per
    partition, and Kafka stored the edge's batches as they were."""
    assert len(got) == len(sent), "%s: central consumer got every record" % codec
    by_partition = {0: [], 1: []}
    for m in got:
        by_partition[m["partition"]].append((m["partition"], m["key"], m["value"], m["headers"], m["timestamp"]))
    expected = {0: [s for s in sent if s[0] == 0], 1: [s for s in sent if s[0] == 1]}
    assert by_partition == expected, \
        "%s: keys, values, headers and timestamps are preserved, in order, per partition: first difference: %s" \
        % (codec, next(((a, b) for p in (0, 1) for a, b in zip(by_partition[p], expected[p]) if a != b), None))
    assert all(m["timestamp_type"] == "CreateTime" for m in got), \
        "%s: timestamps are CreateTime: %r" % (codec, {m["timestamp_type"] for m in got})
    edge_shapes = batch_shapes(rig.edge.port, topic, 2)
    central_shapes = batch_shapes(rig.kafka.ports[1], topic, 2)
    assert edge_shapes == central_shapes and all(c == FIDELITY_CODECS[codec] for _p, _n, c in central_shapes), \
        "%s: central batches are the edge's batches (same count, sizes, codec kept): %r" \
        % (codec, (edge_shapes[:5], central_shapes[:5]))


def fidelity(rig):
    """One topic per codec (gzip, snappy, lz4, zstd) through one edge and
    one Kafka. Kafka: the central topics get retention.ms=-1, because the
    records carry CreateTime timestamps of 2023, which Kafka's time
    retention (7 days by default) would delete at its next check."""
    topics = {codec: "sensors." + codec for codec in FIDELITY_CODECS}
    for topic in topics.values():
        rig.create_central_topic(topic, 2, configs={"retention.ms": "-1"})
        rig.create_edge_topic(topic, 2)
    rig.wait_connected()
    rig.link_down()
    sent = {codec: produce_fidelity_records(rig.edge.bootstrap, topic, codec) for codec, topic in topics.items()}
    rig.link_up()
    for topic in topics.values():
        rig.wait_drained(topic, 2)
    got = central_records(rig, {topic: 2 for topic in topics.values()})
    for codec, topic in topics.items():
        check_fidelity(rig, topic, codec, sent[codec], [m for m in got if m["topic"] == topic])


SEGMENT = 64 * 1024
BUDGET = 4 * SEGMENT


def policies(rig):
    configs = [("segment.bytes", str(SEGMENT)), ("retention.bytes", str(BUDGET))]
    for name, policy in (("dropper", "drop-oldest"), ("rejecter", "reject")):
        rig.create_central_topic(name, 1)
        rig.create_edge_topic(name, 1, configs=configs + [("eddy.full.policy", policy)])
    rig.wait_connected()
    rig.link_down()
    value = b"v" * 1000
    count = 1000  # ~1 MiB: four times the budget

    # drop-oldest: every write accepted, the oldest unforwarded data dropped.
    producer = kafka_producer(rig.edge.bootstrap, acks="all", linger_ms=5, batch_size=16384)
    for i in range(count):
        producer.send("dropper", value=b"%06d" % i + value, partition=0)
    producer.flush()
    producer.close()

    def dropper():
        return rig.partition_status("dropper", 0)
    eddy_fixture.wait_until(lambda: dropper() and dropper()["local_end_offset"] == count, 5, "status to catch up",
                            interval=0.1)
    d = dropper()
    print("drop-oldest while down: %s" % d)
    assert d["log_start_offset"] > 0, "drop-oldest: the edge dropped unforwarded data (log start > 0): %r" % (d,)
    assert d["dropped_messages"] == d["log_start_offset"], "drop-oldest: status counts exactly the dropped messages"
    assert d["backlog_messages"] == count - d["log_start_offset"], "drop-oldest: backlog is what is left"

    # reject: writes refused once the budget is full; nothing dropped.
    from kafka.errors import KafkaError
    producer = kafka_producer(rig.edge.bootstrap, acks="all", linger_ms=0, retries=0, batch_size=2000,
                              max_in_flight_requests_per_connection=1)
    accepted, refused, errors = [], 0, set()
    for i in range(count):
        try:
            producer.send("rejecter", value=b"%06d" % i + value, partition=0).get(timeout=10)
            accepted.append(i)
        except KafkaError as e:
            refused += 1
            errors.add(type(e).__name__)
    producer.close()
    print("reject while down: accepted %d, refused %d (%s)" % (len(accepted), refused, errors))
    assert refused > 0 and len(accepted) < count, \
        "reject: writes beyond the budget were refused: %r" % ((len(accepted), refused),)
    # kafka-python 2.0.2 does not know code 56 (it reports UnknownError): ask raw.
    with w.Connection(rig.edge.port) as conn:
        code, _offset = w.produce(conn, "rejecter", 0, w.record_batch([(None, b"raw" + value, ())]))
    assert code == 56, "reject: the error is KAFKA_STORAGE_ERROR (56, retriable)"
    refused += 1
    eddy_fixture.wait_until(lambda: rig.partition_status("rejecter", 0)["rejected_appends"] > 0, 5,
                            "status to show rejections", interval=0.1)
    r = rig.partition_status("rejecter", 0)
    assert (r["dropped_messages"], r["log_start_offset"]) == (0, 0), "reject: nothing dropped"
    assert r["backlog_messages"] == len(accepted), "reject: backlog is every accepted message"
    text = rig.status(json_output=False)
    assert "appends rejected" in text, "the text status shows drops and rejections: %r" % (text,)

    rig.link_up()
    rig.wait_drained("dropper", 1)
    rig.wait_drained("rejecter", 1)
    dropped_start = d["log_start_offset"]
    records = central_records(rig, {"dropper": 1, "rejecter": 1})
    values = [int(r["value"][:6]) for r in records if r["topic"] == "dropper"]
    assert values == list(range(dropped_start, count)), "drop-oldest: central has exactly what was left"
    values = [int(r["value"][:6]) for r in records if r["topic"] == "rejecter"]
    assert values == accepted, "reject: central has every accepted message"
    d = dropper()
    assert d["dropped_messages"] == dropped_start, "drop-oldest: the count stays after forwarding"
    # Forwarded data is no longer pinned: the rejecting topic takes writes again.
    producer = kafka_producer(rig.edge.bootstrap, acks="all", retries=0)
    ok = 0
    for i in range(300):
        try:
            producer.send("rejecter", value=b"%06d" % (count + i) + value, partition=0).get(timeout=10)
            ok += 1
        except KafkaError:
            pass
    producer.close()
    assert ok == 300, "reject: once forwarded, the budget takes new writes"
    # A restart keeps the drop count.
    rig.edge.restart()
    eddy_fixture.wait_until(lambda: rig.partition_status("dropper", 0) is not None, 10, "the link after restart",
                            interval=0.1)
    assert rig.partition_status("dropper", 0)["dropped_messages"] == dropped_start, \
        "drop-oldest: the count survives a restart"


def paused(rig):
    """eddy.forward.<link>.create.topics=false: the link does not create the
    missing central topic (Kafka's auto.create.topics.enable is false too)."""
    rig.create_edge_topic("orphans", 2)
    producer = kafka_producer(rig.edge.bootstrap, acks="all")
    for i in range(100):
        producer.send("orphans", value=b"%d" % i, partition=i % 2)
    producer.flush()
    producer.close()

    def paused_reason():
        p = rig.partition_status("orphans", 0)
        return p["paused"] if p else ""
    eddy_fixture.wait_until(lambda: paused_reason() != "", 15, "the topic to be paused", interval=0.1)
    reason = paused_reason()
    print("paused:", reason)
    assert "does not exist" in reason, "paused with the reason (missing on the central cluster): %r" % (reason,)
    assert rig.central_metadata("orphans") is None, "the link did not create the central topic"
    link = rig.link_status()
    assert link["state"] == "connected", "the link itself stays connected"
    connects = link["connects"]
    # Several paused.retry.ms (1 s) go by.
    eddy_fixture.nothing_happens_for(lambda: rig.link_status()["connects"] != connects, 3000,
                                     "a reconnect while paused (a reconnect loop)")
    # How often it is logged only the log can tell.
    warnings = rig.edge.log_text().count("orphans-0 paused")
    assert warnings == 1, "the pause is logged once, not per retry (%d)" % warnings
    rig.create_central_topic("orphans", 2)
    rig.wait_drained("orphans", 2, timeout=30)
    values = sorted(int(v) for v in central_values(rig, "orphans", 2))
    assert values == list(range(100)), "after the topic was created centrally, everything arrived once"
    assert paused_reason() == "", "no longer paused"


def priorities(rig):
    """alarms (priority 10) and bulk (0) both have a backlog after an outage;
    with a 256 KB/s cap the drain takes seconds: every alarm must be
    forwarded before the first bulk message."""
    for name in ("alarms", "bulk"):
        rig.create_central_topic(name, 1)
        rig.create_edge_topic(name, 1)
    rig.wait_connected()
    rig.link_down()
    producer = kafka_producer(rig.edge.bootstrap, acks="all", linger_ms=5)
    for i in range(600):  # bulk first: age alone would favour it
        producer.send("bulk", value=b"%06d" % i + b"b" * 1000, partition=0)
    for i in range(300):
        producer.send("alarms", value=b"%06d" % i + b"a" * 1000, partition=0)
    producer.flush()
    producer.close()
    eddy_fixture.wait_until(lambda: rig.partition_status("alarms", 0)["backlog_messages"] == 300 and
                            rig.partition_status("bulk", 0)["backlog_messages"] == 600, 5, "status to catch up",
                            interval=0.1)
    assert (rig.partition_status("alarms", 0)["priority"],
                                      rig.partition_status("bulk", 0)["priority"]) == (10, 0), \
        "priorities shown"
    rig.link_up()
    samples = []

    def bulk_drained():
        # Both from one status snapshot: two calls would let bulk start
        # between them and look as if it went before the last alarm.
        forwarded = {p["topic"]: p["forwarded_offset"] for p in rig.link_status()["partitions"]}
        samples.append((forwarded["alarms"], forwarded["bulk"]))
        return forwarded["bulk"] == 600
    eddy_fixture.wait_until(bulk_drained, 60, "bulk to drain", interval=0.05)
    early = [s for s in samples if s[0] < 300]
    print("samples (alarms, bulk forwarded): %s ... %s" % (samples[:3], samples[-3:]))
    assert len(early) >= 3, "the drain took a while (several samples while alarms drained): %r" % (len(early),)
    assert all(b == 0 for _a, b in early), "no bulk message was forwarded before every alarm was: %r" % (early[-5:],)
    assert samples[-1] == (300, 600), "then bulk drained too"
    records = central_records(rig, {"alarms": 1, "bulk": 1})
    for name, n in (("alarms", 300), ("bulk", 600)):
        values = [int(r["value"][:6]) for r in records if r["topic"] == name]
        assert values == list(range(n)), "central %s: every message once, in order" % name


def recreate(rig):
    """A forwarded topic deleted and created again at the edge starts over
    from its new offset 0 (its old cursor is not reused), and the central
    topic, which still holds the old incarnation, gets the new one exactly
    once after it. Every message goes in a batch of its own (one acks=all
    request each): Kafka remembers the last 5 batches of the link's producer
    on the central partition (sequences 0, 1, 2 here), so batches of the new
    incarnation sent again with those sequences under the same producer id
    and epoch would be taken for duplicates and silently dropped."""
    from kafka.admin import KafkaAdminClient
    rig.create_central_topic("cycle", 1)
    rig.create_edge_topic("cycle", 1)
    producer = kafka_producer(rig.edge.bootstrap, acks="all", linger_ms=0)
    for i in range(3):
        producer.send("cycle", value=b"old-%d" % i, partition=0).get(timeout=10)
    rig.wait_drained("cycle", 1)
    admin = KafkaAdminClient(bootstrap_servers=rig.edge.bootstrap, api_version=(2, 5, 0))
    admin.delete_topics(["cycle"], timeout_ms=5000)
    eddy_fixture.wait_until(lambda: rig.partition_status("cycle", 0) is None, 10,
                            "the link to notice the deletion", interval=0.1)
    rig.create_edge_topic("cycle", 1)
    for i in range(5):
        producer.send("cycle", value=b"new-%d" % i, partition=0).get(timeout=10)
    producer.close()
    admin.close()
    rig.wait_drained("cycle", 1)
    values = central_values(rig, "cycle")
    assert values == [b"old-%d" % i for i in range(3)] + [b"new-%d" % i for i in range(5)], \
        "central got the old and the new incarnation's messages, each once"
    assert (rig.partition_status("cycle", 0)[
        "forwarded_offset"]) == 5, \
        "status: the new topic is forwarded up to its own end"


def first_segment(rig, topic):
    """The path of partition 0's first segment file at the edge."""
    segment_dir = os.path.join(rig.edge.data_dir, "%s-0" % topic)
    return os.path.join(segment_dir, sorted(n for n in os.listdir(segment_dir) if n.endswith(".log"))[0])


def append_raw_batch(segment_path, records, count):
    """Writes a batch (valid header and CRC, `records` as its records) after
    the last batch of a preallocated segment file; returns its offset."""
    import struct
    with open(segment_path, "r+b") as f:
        data = f.read()
        pos, next_offset = 0, 0
        while pos + 12 <= len(data) and data[pos:pos + 12] != bytes(12):
            base, length = struct.unpack_from(">qi", data, pos)
            last_delta = struct.unpack_from(">i", data, pos + 23)[0]
            next_offset = base + last_delta + 1
            pos += 12 + length
        now = int(time.time() * 1000)
        after_crc = struct.pack(">hiqqqhii", 0, count - 1, now, now, -1, -1, -1, count) + records
        batch = struct.pack(">qiibI", next_offset, 4 + 1 + 4 + len(after_crc), 0, 2, w.crc32c(after_crc)) + after_crc
        f.seek(pos)
        f.write(batch)
    return next_offset


def malformed(rig):
    rig.create_central_topic("legacy", 1)
    rig.create_edge_topic("legacy", 1)
    producer = kafka_producer(rig.edge.bootstrap, acks="all", linger_ms=0)
    for i in range(3):
        producer.send("legacy", value=b"before-%d" % i, partition=0).get(timeout=10)
    producer.close()
    rig.wait_drained("legacy", 1)
    rig.link_down()
    rig.edge.kill()
    offset = append_raw_batch(first_segment(rig, "legacy"), b"\xff" * 24, 1)
    assert offset == 3, "the malformed batch went in at offset 3"
    rig.edge.start()
    # The listener accepts before the topics are opened: wait for recovery,
    # whose report only the log carries (the status counts the batch once
    # the link skips it, below).
    needle = "batches with malformed records (the first at offset 3)"
    eddy_fixture.wait_until(lambda: needle in rig.edge.log_text(), 20, "recovery to report the malformed batch")
    producer = kafka_producer(rig.edge.bootstrap, acks="all", linger_ms=0)
    for i in range(3):
        producer.send("legacy", value=b"after-%d" % i, partition=0).get(timeout=10)
    producer.close()
    rig.link_up()
    rig.wait_drained("legacy", 1)
    values = central_values(rig, "legacy")
    assert values == [b"before-%d" % i for i in range(3)] + [b"after-%d" % i for i in range(3)], \
        "central got every good message, in order, and not the malformed batch"
    status = rig.partition_status("legacy", 0)
    assert status["skipped_invalid_batches"] == 1, "status: one malformed batch skipped"
    assert status["forwarded_offset"] == 7, "status: forwarded up to the end"


def zero_from_offset(segment_path, offset):
    """Zeros a preallocated segment file from the batch holding offset on:
    what a power cut does to appended data no fdatasync covered."""
    import struct
    with open(segment_path, "r+b") as f:
        data = f.read()
        pos = 0
        while pos + 12 <= len(data) and data[pos:pos + 12] != bytes(12):
            base, length = struct.unpack_from(">qi", data, pos)
            if base >= offset:
                break
            pos += 12 + length
        f.seek(pos)
        f.write(bytes(len(data) - pos))


def lost_tail(rig):
    """eddy.acks.all.waits.for=page-cache: the link forwards what is not yet
    synced. A power cut then takes the local log's tail while forward.db
    (synced) says it was forwarded: the cursor is beyond the log's end. The
    offsets appended after the restart are new data and must be forwarded;
    before the fix the link waited for the log to pass its old cursor and
    never sent them."""
    rig.create_central_topic("tail", 1)
    rig.create_edge_topic("tail", 1, [("eddy.acks.all.waits.for", "page-cache")])
    producer = kafka_producer(rig.edge.bootstrap, acks=1, linger_ms=0)
    for i in range(6):
        producer.send("tail", value=b"before-%d" % i, partition=0).get(timeout=10)
    producer.close()
    rig.wait_drained("tail", 1)
    rig.link_down()
    rig.edge.kill()
    zero_from_offset(first_segment(rig, "tail"), 3)  # offsets 3..5 never reached the disk
    rig.edge.start()
    assert rig.local_ends("tail", 1) == [3], "the restarted edge's log ends at 3"
    producer = kafka_producer(rig.edge.bootstrap, acks=1, linger_ms=0)
    for i in range(4):
        producer.send("tail", value=b"after-%d" % i, partition=0).get(timeout=10)
    producer.close()
    rig.link_up()
    rig.wait_drained("tail", 1)
    values = central_values(rig, "tail")
    assert values == [b"before-%d" % i for i in range(6)] + [b"after-%d" % i for i in range(4)], \
        "central got every message: the lost tail (delivered before the cut) and all the new ones"
    assert rig.partition_status("tail", 0)["forwarded_offset"] == 7, "status: forwarded up to the new end"
    status = rig.partition_status("tail", 0)
    assert status["lost_after_forwarding"] == 3, "status: the offsets lost locally after delivery are counted"


def config(rig):
    def serve(*overrides):
        args = [rig.edge.bin, "serve", "--override", "log.dirs=" + os.path.join(rig.edge.tmp, "cfg")]
        for o in overrides:
            args += ["--override", o]
        return subprocess.run(args, capture_output=True, text=True, timeout=20)
    cases = [
        (["eddy.forward.links=a", "eddy.forward.b.bootstrap.servers=x:1"], "link 'b' is not listed"),
        (["eddy.forward.links=a"], "bootstrap.servers is required"),
        (["eddy.forward.links=a", "eddy.forward.a.bootstrap.servers=h:1", "eddy.forward.a.topics=("],
         "invalid regex"),
        (["eddy.forward.links=a", "eddy.forward.a.bootstrap.servers=h:1",
          "eddy.forward.a.remote.topic=${gateway.id}.${topic}"], "eddy.gateway.id is not set"),
        (["eddy.forward.links=a", "eddy.forward.a.bootstrap.servers=h:1", "eddy.forward.a.remote.topic=a b"],
         "valid topic name"),
        (["eddy.forward.links=a", "eddy.forward.a.bootstrap.servers=h:1", "eddy.forward.a.acks=0"], "acks"),
        (["eddy.forward.links=a", "eddy.forward.a.bootstrap.servers=h:1", "eddy.forward.a.security.protocol=SSL"],
         "ssl.truststore.location"),
        (["eddy.forward.links=a", "eddy.forward.a.bootstrap.servers=h:1", "eddy.forward.a.topic.priorities=x"],
         "regex:priority"),
        (["eddy.forward.links=a b"], "not a valid link name"),
        (["eddy.forward.links=a", "eddy.forward.a.bootstrap.servers=h:1", "eddy.forward.a.create.topics=perhaps"],
         "eddy.forward.a.create.topics"),
        (["eddy.forward.links=a", "eddy.forward.a.bootstrap.servers=h:1", "eddy.forward.a.replication.factor=three"],
         "eddy.forward.a.replication.factor"),
    ]
    for overrides, expected in cases:
        r = serve(*overrides)
        assert r.returncode == 2 and expected in r.stderr, \
            "%s: %s" % ("serve %s -> exit 2 naming the problem" % " ".join(overrides), (r.returncode, r.stderr))


SCENARIOS = {"fidelity": fidelity, "policies": policies, "paused": paused, "priorities": priorities,
             "recreate": recreate, "malformed": malformed, "lost_tail": lost_tail, "config": config}
TOPICS = {"fidelity": "sensors\\..*", "policies": "dropper,rejecter", "paused": "orphans", "priorities": "alarms,bulk",
          "recreate": "cycle", "malformed": "legacy", "lost_tail": "tail", "config": "none"}
EDGE_OVERRIDES = {
    "priorities": {"eddy.forward.central.topic.priorities": "alarms:10",
                   "eddy.forward.central.bandwidth.bytes.per.sec": str(256 * 1024)},
    "paused": {"eddy.forward.central.create.topics": "false"},
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_scenario(scenario, forward_rig):
    """One rig (a Kafka, or none for config) per scenario: ctest runs each
    as its own entry (-k scenario)."""
    rig = forward_rig(topics=TOPICS[scenario], edge_overrides=EDGE_OVERRIDES.get(scenario, {}),
                      central_nodes=0 if scenario == "config" else 1)
    SCENARIOS[scenario](rig)
