"""Store-and-forward (issue 8) semantics, edge eddy -> fault proxies ->
Apache Kafka 4.4 as the central cluster (forward_fixture.py). What arrived
centrally is read back with Kafka's Java consumer (NumberedCheck.java):

  fidelity  a kafka-python producer at the edge (keys, values, headers,
            CreateTime timestamps, gzip); Kafka's consumer at the central
            side sees the same records; the batches Kafka stored are the
            edge's batches, compressed as stored
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

usage: test_forward_semantics.py SCENARIO"""

import os
import subprocess
import sys
import time

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
    return kafka_fixture.dump_records(rig.kafka.bootstrap, topics)


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


def fidelity(rig, checks):
    """Kafka: the central topic gets retention.ms=-1, because the records
    carry CreateTime timestamps of 2023, which Kafka's time retention (7 days
    by default) would delete at its next check."""
    rig.create_central_topic("sensors.temp", 2, configs={"retention.ms": "-1"})
    rig.create_edge_topic("sensors.temp", 2)
    rig.wait_connected()
    rig.link_down()
    producer = kafka_producer(rig.edge.bootstrap, compression_type="gzip", acks="all", linger_ms=20)
    sent = []
    base_ts = 1_700_000_000_000
    for i in range(500):
        key = ("sensor-%d" % (i % 7)).encode()
        value = ("reading %d: %s" % (i, "x" * (i % 50))).encode()
        headers = [("unit", b"celsius"), ("seq", str(i).encode())]
        ts = base_ts + i * 1000
        producer.send("sensors.temp", key=key, value=value, headers=headers, timestamp_ms=ts, partition=i % 2)
        sent.append((i % 2, key, value, headers, ts))
    producer.flush()
    producer.close()
    rig.link_up()
    rig.wait_drained("sensors.temp", 2)
    got = central_records(rig, {"sensors.temp": 2})
    checks.equal("central consumer got every record", len(got), len(sent))
    by_partition = {0: [], 1: []}
    for m in got:
        by_partition[m["partition"]].append((m["partition"], m["key"], m["value"], m["headers"], m["timestamp"]))
    expected = {0: [s for s in sent if s[0] == 0], 1: [s for s in sent if s[0] == 1]}
    checks.check("keys, values, headers and timestamps are preserved, in order, per partition",
                 by_partition == expected,
                 "first difference: %s" % next(((a, b) for p in (0, 1) for a, b in zip(by_partition[p], expected[p])
                                                if a != b), None))
    checks.check("timestamps are CreateTime", all(m["timestamp_type"] == "CreateTime" for m in got),
                 {m["timestamp_type"] for m in got})
    # The stored batches went as they were: gzip on both sides, same record counts.
    edge_shapes = batch_shapes(rig.edge.port, "sensors.temp", 2)
    central_shapes = batch_shapes(rig.kafka.ports[1], "sensors.temp", 2)
    checks.check("central batches are the edge's batches (same count, sizes, gzip kept)",
                 edge_shapes == central_shapes and all(c == 1 for _p, _n, c in central_shapes),
                 (edge_shapes[:5], central_shapes[:5]))


SEGMENT = 64 * 1024
BUDGET = 4 * SEGMENT


def policies(rig, checks):
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
    checks.check("drop-oldest: the edge dropped unforwarded data (log start > 0)", d["log_start_offset"] > 0, d)
    checks.equal("drop-oldest: status counts exactly the dropped messages", d["dropped_messages"],
                 d["log_start_offset"])
    checks.equal("drop-oldest: backlog is what is left", d["backlog_messages"], count - d["log_start_offset"])
    checks.check("drop-oldest: the edge logged the drop", "although offsets from" in rig.edge.log_text())

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
    checks.check("reject: writes beyond the budget were refused", refused > 0 and len(accepted) < count,
                 (len(accepted), refused))
    # kafka-python 2.0.2 does not know code 56 (it reports UnknownError): ask raw.
    with w.Connection(rig.edge.port) as conn:
        code, _offset = w.produce(conn, "rejecter", 0, w.record_batch([(None, b"raw" + value, ())]))
    checks.equal("reject: the error is KAFKA_STORAGE_ERROR (56, retriable)", code, 56)
    refused += 1
    eddy_fixture.wait_until(lambda: rig.partition_status("rejecter", 0)["rejected_appends"] > 0, 5,
                            "status to show rejections", interval=0.1)
    r = rig.partition_status("rejecter", 0)
    checks.equal("reject: nothing dropped", (r["dropped_messages"], r["log_start_offset"]), (0, 0))
    checks.equal("reject: backlog is every accepted message", r["backlog_messages"], len(accepted))
    text = rig.status(json_output=False)
    checks.check("the text status shows drops and rejections", "appends rejected" in text, text)

    rig.link_up()
    rig.wait_drained("dropper", 1)
    rig.wait_drained("rejecter", 1)
    dropped_start = d["log_start_offset"]
    records = central_records(rig, {"dropper": 1, "rejecter": 1})
    values = [int(r["value"][:6]) for r in records if r["topic"] == "dropper"]
    checks.equal("drop-oldest: central has exactly what was left", values, list(range(dropped_start, count)))
    values = [int(r["value"][:6]) for r in records if r["topic"] == "rejecter"]
    checks.equal("reject: central has every accepted message", values, accepted)
    d = dropper()
    checks.equal("drop-oldest: the count stays after forwarding", d["dropped_messages"], dropped_start)
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
    checks.equal("reject: once forwarded, the budget takes new writes", ok, 300)
    # A restart keeps the drop count.
    rig.edge.restart()
    eddy_fixture.wait_until(lambda: rig.partition_status("dropper", 0) is not None, 10, "the link after restart",
                            interval=0.1)
    checks.equal("drop-oldest: the count survives a restart", rig.partition_status("dropper", 0)["dropped_messages"],
                 dropped_start)


def paused(rig, checks):
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
    checks.check("paused with the reason (missing on the central cluster)", "does not exist" in reason, reason)
    checks.equal("the link did not create the central topic", rig.central_metadata("orphans"), None)
    link = rig.link_status()
    checks.equal("the link itself stays connected", link["state"], "connected")
    connects = link["connects"]
    time.sleep(3)  # a measuring window: several paused.retry.ms (1 s) go by
    link = rig.link_status()
    checks.equal("no reconnect loop while paused (connects unchanged)", link["connects"], connects)
    warnings = rig.edge.log_text().count("orphans-0 paused")
    checks.check("the pause is logged once, not per retry (%d)" % warnings, warnings == 1, warnings)
    rig.create_central_topic("orphans", 2)
    rig.wait_drained("orphans", 2, timeout=30)
    values = sorted(int(v) for v in central_values(rig, "orphans", 2))
    checks.equal("after the topic was created centrally, everything arrived once", values, list(range(100)))
    checks.equal("no longer paused", paused_reason(), "")


def priorities(rig, checks):
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
    checks.equal("priorities shown", (rig.partition_status("alarms", 0)["priority"],
                                      rig.partition_status("bulk", 0)["priority"]), (10, 0))
    rig.link_up()
    samples = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        # Both from one status snapshot: two calls would let bulk start
        # between them and look as if it went before the last alarm.
        forwarded = {p["topic"]: p["forwarded_offset"] for p in rig.link_status()["partitions"]}
        a, b = {"forwarded_offset": forwarded["alarms"]}, {"forwarded_offset": forwarded["bulk"]}
        samples.append((a["forwarded_offset"], b["forwarded_offset"]))
        if b["forwarded_offset"] == 600:
            break
        time.sleep(0.05)
    early = [s for s in samples if s[0] < 300]
    print("samples (alarms, bulk forwarded): %s ... %s" % (samples[:3], samples[-3:]))
    checks.check("the drain took a while (several samples while alarms drained)", len(early) >= 3, len(early))
    checks.check("no bulk message was forwarded before every alarm was", all(b == 0 for _a, b in early), early[-5:])
    checks.equal("then bulk drained too", samples[-1], (300, 600))
    records = central_records(rig, {"alarms": 1, "bulk": 1})
    for name, n in (("alarms", 300), ("bulk", 600)):
        values = [int(r["value"][:6]) for r in records if r["topic"] == name]
        checks.equal("central %s: every message once, in order" % name, values, list(range(n)))


def recreate(rig, checks):
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
    checks.equal("central got the old and the new incarnation's messages, each once",
                 values, [b"old-%d" % i for i in range(3)] + [b"new-%d" % i for i in range(5)])
    checks.equal("status: the new topic is forwarded up to its own end", rig.partition_status("cycle", 0)[
        "forwarded_offset"], 5)


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


def malformed(rig, checks):
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
    checks.equal("the malformed batch went in at offset 3", offset, 3)
    rig.edge.start()
    # The listener accepts before the topics are opened: wait for recovery.
    needle = "batches with malformed records (the first at offset 3)"
    try:
        eddy_fixture.wait_until(lambda: needle in rig.edge.log_text(), 20, "recovery's report")
    except eddy_fixture.FixtureError:
        pass
    log = rig.edge.log_text()
    checks.check("recovery reports the malformed batch", needle in log, log[-2000:])
    producer = kafka_producer(rig.edge.bootstrap, acks="all", linger_ms=0)
    for i in range(3):
        producer.send("legacy", value=b"after-%d" % i, partition=0).get(timeout=10)
    producer.close()
    rig.link_up()
    rig.wait_drained("legacy", 1)
    values = central_values(rig, "legacy")
    checks.equal("central got every good message, in order, and not the malformed batch", values,
                 [b"before-%d" % i for i in range(3)] + [b"after-%d" % i for i in range(3)])
    status = rig.partition_status("legacy", 0)
    checks.equal("status: one malformed batch skipped", status["skipped_invalid_batches"], 1)
    checks.equal("status: forwarded up to the end", status["forwarded_offset"], 7)
    checks.check("the link logs the skip", "skipping the batch at offsets 3..3" in rig.edge.log_text())


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


def lost_tail(rig, checks):
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
    checks.equal("the restarted edge's log ends at 3", rig.local_ends("tail", 1), [3])
    producer = kafka_producer(rig.edge.bootstrap, acks=1, linger_ms=0)
    for i in range(4):
        producer.send("tail", value=b"after-%d" % i, partition=0).get(timeout=10)
    producer.close()
    rig.link_up()
    rig.wait_drained("tail", 1)
    values = central_values(rig, "tail")
    checks.equal("central got every message: the lost tail (delivered before the cut) and all the new ones",
                 values, [b"before-%d" % i for i in range(6)] + [b"after-%d" % i for i in range(4)])
    checks.equal("status: forwarded up to the new end", rig.partition_status("tail", 0)["forwarded_offset"], 7)
    status = rig.partition_status("tail", 0)
    checks.equal("status: the offsets lost locally after delivery are counted", status["lost_after_forwarding"], 3)


def config(rig, checks):
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
         "not available in this version"),
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
        checks.check("serve %s -> exit 2 naming the problem" % " ".join(overrides),
                     r.returncode == 2 and expected in r.stderr, (r.returncode, r.stderr))


SCENARIOS = {"fidelity": fidelity, "policies": policies, "paused": paused, "priorities": priorities,
             "recreate": recreate, "malformed": malformed, "lost_tail": lost_tail, "config": config}

if __name__ == "__main__":
    scenario = sys.argv[1]
    topics = {"fidelity": "sensors\\..*", "policies": "dropper,rejecter", "paused": "orphans",
              "priorities": "alarms,bulk", "recreate": "cycle", "malformed": "legacy", "lost_tail": "tail", "config": "none"}[scenario]
    overrides = {}
    if scenario == "priorities":
        overrides = {"eddy.forward.central.topic.priorities": "alarms:10",
                     "eddy.forward.central.bandwidth.bytes.per.sec": str(256 * 1024)}
    if scenario == "paused":
        overrides = {"eddy.forward.central.create.topics": "false"}
    ff.run(SCENARIOS[scenario], topics=topics, edge_overrides=overrides,
           central_nodes=0 if scenario == "config" else 1)
