"""Store-and-forward (issue 8) against what only a real Apache Kafka 4.4
central cluster does (forward_fixture.py: KRaft nodes, one fault proxy in
front of each). The central topics are checked with Kafka's Java consumer
(NumberedCheck.java). One scenario per run:

  leader_kill     3 Kafka nodes, the forwarded topic with replication factor
                  3 and min.insync.replicas=2: the leader of a forwarded
                  partition is SIGKILLed mid-drain; leadership moves and
                  every message arrives exactly once, in order per partition.
                  First, a central topic the link creates itself with
                  eddy.forward.<link>.replication.factor=3 gets 3 replicas
                  per partition, all in sync, and every message once
  producer_expiry the central cluster forgets the link's producer
                  (producer.id.expiration.ms) during an outage that began with
                  Produce requests written centrally but never acknowledged;
                  the link finds them in the central log and does not send
                  them again: exactly once (README "Beyond the central
                  cluster's memory"; Kafka gives no sign that it forgot)
  throttled       a Kafka client quota on the link's client id
                  (producer_byte_rate) slows the drain to the quota, without
                  errors, reconnects or loss
  example_config  config/gateway.properties with its commented forward link
                  keys switched on (--override), Kafka down when the edge
                  starts: once Kafka is up, 20 000 numbered messages arrive
                  exactly once, in order, in a central topic the link created
                  itself (eddy.forward.<link>.create.topics, default true)

usage: python3 -m pytest test_forward_kafka.py -k SCENARIO --program RDKAFKA_IDEMPOTENCE_PROGRAM
The message count is EDDY_FORWARD_COUNT (default 50000; example_config:
EDDY_FORWARD_EXAMPLE_COUNT, default 20000)."""

import os
import re
import time

import pytest

import eddy_fixture
import forward_fixture as ff
import kafka_fixture

TOPIC = "numbers"
PARTITIONS = 4
COUNT = int(os.environ.get("EDDY_FORWARD_COUNT", "50000"))
EXAMPLE_COUNT = int(os.environ.get("EDDY_FORWARD_EXAMPLE_COUNT", "20000"))


def forwarded_messages(rig):
    link = rig.link_status()
    return sum(p["forwarded_messages"] for p in link["partitions"]) if link else 0


def wait_progress(rig, fraction, timeout=120):
    eddy_fixture.wait_until(lambda: forwarded_messages(rig) >= fraction * COUNT, timeout,
                            "%.0f%% forwarded" % (fraction * 100), interval=0.05)


def finish(proc, label="librdkafka delivered every message to the edge"):
    rc, last, err = ff.finish_producer(proc)
    print("producer:", last, err)
    assert rc == 0, label


def produce_backlog(rig, program):
    """With the link down, COUNT numbered messages at the edge; returns once
    the link's status shows all of them as backlog."""
    rig.link_down()
    finish(ff.produce_numbers(program, rig.edge.bootstrap, TOPIC, COUNT, PARTITIONS))
    eddy_fixture.wait_until(lambda: sum(p["backlog_messages"] for p in rig.link_status()["partitions"]) == COUNT,
                            10, "the status to show the backlog", interval=0.1)


# -- leader_kill ---------------------------------------------------------

def leader_kill(rig, program):
    """Kafka fences the dead node after broker.session.timeout.ms (4 s here)
    and elects a new leader from the ISR; what the link had in flight to the
    old leader was either replicated (the new leader recognises the resend
    as a duplicate: followers rebuild the producer state from the log) or
    truncated (written again now). acks=all with min.insync.replicas=2 on 3
    replicas: nothing acknowledged is lost with one node gone."""
    # The link creates "created" itself, with replication.factor=3.
    rig.create_edge_topic("created", 2)
    finish(ff.produce_numbers(program, rig.edge.bootstrap, "created", 1000, 2))
    rig.wait_drained("created", 2, timeout=60)
    md = rig.central_metadata("created")
    assert md is not None and sorted(md) == [0, 1] and all(len(r) == 3 and isr == 3 for _l, r, isr in md.values()), \
        "the link created the central topic with 2 partitions of 3 replicas, all in sync: %r" % (md,)
    ff.assert_numbers(rig.kafka, "created", 1000, 2)
    rig.create_central_topic(TOPIC, PARTITIONS, replication=3, configs={"min.insync.replicas": "2"})
    md = rig.central_metadata(TOPIC)
    assert all(len(r) == 3 and isr == 3 for _l, r, isr in md.values()), \
        "central topic: 3 replicas, all in sync: %r" % (md,)
    assert rig.central_topic_config(TOPIC, "min.insync.replicas") == "2", "central topic: min.insync.replicas"
    rig.create_edge_topic(TOPIC, PARTITIONS)
    rig.wait_connected()
    proc = ff.produce_numbers(program, rig.edge.bootstrap, TOPIC, COUNT, PARTITIONS, rate=COUNT / 12)
    wait_progress(rig, 0.3)
    leader = rig.central_leader(TOPIC, 0)
    connects = rig.link_status()["connects"]
    at_kill = forwarded_messages(rig)
    rig.kill_central(leader)
    print("SIGKILLed kafka node %d, the leader of %s-0, at %d forwarded" % (leader, TOPIC, at_kill), flush=True)
    assert 0 < at_kill < COUNT, "the leader was killed mid-drain: %r" % (at_kill,)
    new_leader = eddy_fixture.wait_until(
        lambda: (lambda lead: lead if lead not in (-1, leader) else None)(rig.central_leader(TOPIC, 0)),
        60, "a new leader for %s-0" % TOPIC, interval=0.2)
    print("new leader of %s-0: node %d" % (TOPIC, new_leader))
    finish(proc)
    rig.wait_drained(TOPIC, PARTITIONS, timeout=180)
    link = rig.link_status()
    assert link["connects"] > connects, \
        "the link lost the dead leader and reconnected: %r" % ((connects, link["connects"]),)
    ff.assert_numbers(rig.kafka, TOPIC, COUNT, PARTITIONS)
    assert link["producer_resets"] == 0, "the link kept its producer id (no reset)"
    md = rig.central_metadata(TOPIC)
    assert all(lead != leader for lead, _r, _i in md.values()), "no partition is led by the dead node: %r" % (md,)


# -- producer_expiry -----------------------------------------------------

EXPIRATION_MS = 4000


def cursors_of(link):
    by_partition = {p["partition"]: p["forwarded_offset"] for p in link["partitions"] if p["topic"] == TOPIC}
    return [by_partition[p] for p in range(PARTITIONS)]


def producer_expiry(rig, program):
    """The link drains a backlog; the proxies then swallow Kafka's answers
    (requests still reach Kafka and are written) and the link is cut: the
    central partitions hold batches beyond the link's saved cursors. While
    the link is down Kafka expires the link's producer
    (producer.id.expiration.ms=4 s here, checked every 500 ms; Kafka measures
    it from the batches' CreateTime, so backlog data is forgotten at once).

    What Kafka 4.4 does then: for an idempotent (non-transactional) producer
    it holds no state for, it accepts any sequence
    (ProducerAppendInfo.checkSequence: "accept writes with any sequence
    number"); it does not answer UNKNOWN_PRODUCER_ID or
    OUT_OF_ORDER_SEQUENCE_NUMBER as a central eddy does. A resend from the
    cursors would be appended a second time (local[0:end at the cut] +
    local[cursor:]). The link instead reads the central partitions from the
    offset after its last acknowledged batch, finds its own unacknowledged
    batches there (producer id, epoch, sequence and CRC), counts them as
    acknowledged and sends only what follows: every number exactly once, in
    order, and `found_unacknowledged` in the link's status says so."""
    rig.create_central_topic(TOPIC, PARTITIONS)
    rig.create_edge_topic(TOPIC, PARTITIONS)
    rig.wait_connected()
    produce_backlog(rig, program)
    rig.link_up()
    wait_progress(rig, 0.3)
    rig.drop_responses(True)
    # Written centrally, not acknowledged: some central end beyond the
    # cursor (well within the link's request.timeout.ms, 15 s here: the link
    # must not time out and resend before the cut).
    def unacked():
        ends = rig.central_end_offsets(TOPIC, PARTITIONS)
        return any(e > c for e, c in zip(ends, cursors_of(rig.link_status())))
    eddy_fixture.wait_until(unacked, 10, "batches written centrally but not acknowledged", interval=0.05)
    rig.link_down()
    rig.drop_responses(False)
    eddy_fixture.wait_until(lambda: rig.link_status()["state"] != "connected", 15, "the link to notice the cut",
                            interval=0.1)
    link = rig.link_status()
    cursors = cursors_of(link)
    before = kafka_fixture.describe_producers(rig.kafka.bootstrap, TOPIC, PARTITIONS)
    print("link producer id %d; central producer state at the cut: %s" % (link["producer_id"], before["partitions"]))
    gone = kafka_fixture.describe_producers(rig.kafka.bootstrap, TOPIC, PARTITIONS, until_gone=True,
                                            timeout_ms=30000)
    assert gone["remembered"] == 0, "the central cluster forgot the link's producer"
    ends = rig.central_end_offsets(TOPIC, PARTITIONS)
    in_flight = [e - c for e, c in zip(ends, cursors)]
    print("cursors %s, central ends %s: written but unacknowledged %s" % (cursors, ends, in_flight))
    assert sum(in_flight) > 0 and all(n >= 0 for n in in_flight), \
        "the cut left written, unacknowledged batches beyond the cursors: %r" % (in_flight,)
    rig.link_up()
    rig.wait_drained(TOPIC, PARTITIONS, timeout=120)

    dump = os.path.join(rig.edge.tmp, "central-numbers.txt")  # the test's tmp_path_factory directory
    result = kafka_fixture.numbered_check(rig.kafka.bootstrap, TOPIC, COUNT, PARTITIONS, dump=dump)
    print(result["text"])
    got = {p: [] for p in range(PARTITIONS)}
    with open(dump) as f:
        for line in f:
            p, _offset, n = line.split()
            got[int(p)].append(int(n))
    assert result["distinct"] == COUNT, "central: every number present (nothing lost)"
    assert sum(p["misplaced"] for p in result["partitions"]) == 0, "central: each number in its partition"
    for p in range(PARTITIONS):
        numbers = list(range(p, COUNT, PARTITIONS))
        first_diff = next((i for i, (a, b) in enumerate(zip(got[p], numbers)) if a != b), None)
        assert got[p] == numbers, \
            "central %s-%d: every number once, in order (%d were written but unacknowledged at the cut): " \
            "got %d records, want %d; first difference at offset %s" \
            % (TOPIC, p, in_flight[p], len(got[p]), len(numbers), first_diff)
    assert sum(p["duplicates"] for p in result["partitions"]) == 0, "central: no number twice"
    link = rig.link_status()
    print("found unacknowledged batches: %d (records unacknowledged at the cut: %d)"
          % (link["found_unacknowledged"], sum(in_flight)))
    assert link["found_unacknowledged"] >= 1, "the link found the unacknowledged batches in the central log"
    assert link["producer_resets"] == 0, "Kafka 4 gave no sign: no producer reset"


# -- throttled -----------------------------------------------------------

QUOTA = int(COUNT * 2.0)  # bytes/s: a 50k-message backlog (~0.85 MB) then takes ~8 s


def throttled(rig, program):
    """Kafka throttles a client over its quota by answering with
    throttle_time_ms and then not reading its connection for that long
    (KIP-219); with quota.window.num=2 windows of 1 s here, the burst it
    lets through first is short. The link must just go slower: no error, no
    reconnect, the drain rate over the whole drain near the quota, every
    message exactly once."""
    rig.create_central_topic(TOPIC, PARTITIONS)
    rig.create_edge_topic(TOPIC, PARTITIONS)
    rig.wait_connected()
    rig.kafka.run_tool("org.apache.kafka.tools.ConfigCommand",
                       ["--bootstrap-server", rig.kafka.bootstrap, "--alter", "--entity-type", "clients",
                        "--entity-name", ff.CLIENT_ID, "--add-config", "producer_byte_rate=%d" % QUOTA])
    described = rig.kafka.run_tool("org.apache.kafka.tools.ConfigCommand",
                                   ["--bootstrap-server", rig.kafka.bootstrap, "--describe", "--entity-type",
                                    "clients", "--entity-name", ff.CLIENT_ID])
    print(described.strip())
    assert "producer_byte_rate=%d" % QUOTA in described.replace(".0", ""), \
        "%s: %s" % ("the quota is set on the link's client id %s" % ff.CLIENT_ID, described)
    produce_backlog(rig, program)
    backlog_bytes = sum(p["backlog_bytes"] for p in rig.link_status()["partitions"])
    print("backlog %d bytes, quota %d bytes/s" % (backlog_bytes, QUOTA))
    assert backlog_bytes > 6 * QUOTA, "the backlog takes several seconds at the quota: %r" % (backlog_bytes,)
    log_mark = len(rig.edge.log_text())

    def sent():
        return sum(p["forwarded_bytes"] for p in rig.link_status()["partitions"])

    rig.link_up()
    rig.wait_connected()
    connects = rig.link_status()["connects"]
    # The whole drain, sampled: Kafka lets a burst through (up to about a
    # window of the quota) and then throttles until the windowed rate is
    # back at the quota, so short windows swing between a burst and its
    # payback; over the drain the rate is the quota.
    series = [(time.monotonic(), sent())]

    def drained_sampling():
        parts = [p for p in rig.link_status()["partitions"] if p["topic"] == TOPIC]
        series.append((time.monotonic(), sum(p["forwarded_bytes"] for p in parts)))
        return sum(p["forwarded_offset"] for p in parts) == COUNT
    eddy_fixture.wait_until(drained_sampling, 120, "the throttled drain", interval=0.25)
    (t0, b0), (t1, b1) = series[0], series[-1]
    rate = (b1 - b0) / (t1 - t0)
    per_second = ["%.0f" % ((b - a) / (tb - ta)) for (ta, a), (tb, b) in zip(series[::4], series[4::4])]
    print("bytes/s during the drain, per second: %s" % " ".join(per_second))
    print("drain rate %.0f bytes/s over %.1f s with a quota of %d (ratio %.3f)" % (rate, t1 - t0, QUOTA,
                                                                                 rate / QUOTA))
    assert 0.8 <= rate / QUOTA <= 1.25, \
        "%s: %s" % ("drain rate near the quota (0.8-1.25: %.3f)" % (rate / QUOTA), rate)
    rig.wait_drained(TOPIC, PARTITIONS, timeout=120)
    link = rig.link_status()
    assert link["connects"] == connects, "no reconnect while throttled"
    assert (link["last_error"], [p["last_error"] for p in link["partitions"]]) == ("", [""] * PARTITIONS), \
        "no error shown"
    warnings = [line for line in rig.edge.log_text()[log_mark:].splitlines() if " WARN " in line or " ERROR " in line]
    assert warnings == [], "the edge logged no warning while throttled"
    assert link["producer_resets"] == 0, "no producer reset"
    ff.assert_numbers(rig.kafka, TOPIC, COUNT, PARTITIONS)


# -- example_config ------------------------------------------------------

def example_overrides(gateway_config, bootstrap):
    """The forward keys config/gateway.properties shows commented out
    (#eddy.gateway.id=..., #eddy.forward....), switched on as --override
    values (properties escapes undone), with bootstrap.servers pointed at
    the test's Kafka."""
    overrides = {}
    with open(gateway_config) as f:
        for line in f:
            m = re.match(r"#(eddy\.gateway\.id|eddy\.forward\.[^=\s]+)\s*=\s*(.*)$", line.rstrip("\n"))
            if m:
                overrides[m.group(1)] = re.sub(r"\\(.)", r"\1", m.group(2))
    links = overrides.get("eddy.forward.links", "")
    if not links or "," in links:
        raise eddy_fixture.FixtureError("%s: expected one commented link in eddy.forward.links, found %r"
                                        % (gateway_config, overrides))
    overrides["eddy.forward.%s.bootstrap.servers" % links] = bootstrap
    return links, overrides


def test_example_config(eddy_factory, tmp_path_factory, program):
    """Not a rig: the gateway's own config file, no proxy, a Kafka that is
    not running yet. The link keeps its defaults (backoff up to 30 s), so
    the drain starts within ~30 s of Kafka coming up."""
    kafka = kafka_fixture.KafkaCluster(1, tmp=tmp_path_factory.mktemp("kafka"))
    try:
        gateway_config = os.path.join(os.environ["EDDY_SOURCE_DIR"], "config", "gateway.properties")
        link, overrides = example_overrides(gateway_config, kafka.bootstrap)
        gateway_id = overrides["eddy.gateway.id"]
        local_topic = "sensors.temp"
        remote_topic = overrides["eddy.forward.%s.remote.topic" % link].replace(
            "${gateway.id}", gateway_id).replace("${topic}", local_topic)
        print("overrides %s; %s -> %s" % (overrides, local_topic, remote_topic))
        partitions = 3
        edge = eddy_factory(overrides, config=gateway_config)

        def down():
            links = ff.forward_status(edge)["links"]
            return links and links[0]["state"] in ("backing-off", "connecting") and links[0]["last_error"] != ""
        eddy_fixture.wait_until(down, 30, "the link to report the central cluster unreachable", interval=0.2)
        status = ff.forward_status(edge)["links"][0]
        print("before Kafka: %s (%s)" % (status["state"], status["last_error"]))
        assert status["name"] == link and status["last_error"] != "", \
            "the link %s reports the unreachable cluster: %s" % (link, status)
        ff.create_eddy_topic(edge, local_topic, partitions)
        finish(ff.produce_numbers(program, edge.bootstrap, local_topic, EXAMPLE_COUNT, partitions))
        eddy_fixture.wait_until(lambda: sum(p["backlog_messages"] for p in ff.forward_status(edge)["links"][0][
            "partitions"]) == EXAMPLE_COUNT, 10, "the status to show the backlog", interval=0.1)
        started = time.monotonic()
        kafka.start()
        print("Kafka up after %.1f s" % (time.monotonic() - started))
        ff.wait_drained(edge, local_topic, partitions, timeout=150)
        print("drained %.1f s after Kafka was started" % (time.monotonic() - started))
        md = ff.central_metadata(kafka, remote_topic)
        assert md is not None and sorted(md) == list(range(partitions)), \
            "the link created %s with the local partition count (%d): %s" % (remote_topic, partitions, md)
        assert all(len(r) == 1 for _l, r, _i in md.values()), \
            "with the cluster's default replication factor (1): %r" % (md,)
        ff.assert_numbers(kafka, remote_topic, EXAMPLE_COUNT, partitions)
        status = ff.forward_status(edge)["links"][0]
        assert (status["state"], [p["paused"] for p in status["partitions"]], status["producer_resets"]) == \
            ("connected", [""] * partitions, 0), "status: connected, nothing paused, no reset"
        assert kafka.procs[1].poll() is None, "kafka still running at the end"
    finally:
        kafka.close()


SCENARIOS = {
    "leader_kill": (leader_kill, {"central_nodes": 3, "topics": "numbers|created",
                                  # The cluster's default replication factor is 1, so
                                  # that 3 replicas come from the link's own key.
                                  "central_configs": {"broker.session.timeout.ms": "4000",
                                                      "broker.heartbeat.interval.ms": "500",
                                                      "default.replication.factor": "1"}}),
    "producer_expiry": (producer_expiry, {"central_configs": {
        "producer.id.expiration.ms": str(EXPIRATION_MS),
        "producer.id.expiration.check.interval.ms": "500"}}),
    "throttled": (throttled, {"central_configs": {"quota.window.num": "2", "quota.window.size.seconds": "1"}}),
}

# producer_expiry: the drain is capped (~0.85 MB backlog at 200 kB/s: ~4 s)
# so that batches are still being sent when the responses are swallowed; an
# uncapped drain can finish before that on a fast machine.
EDGE_OVERRIDES = {
    "leader_kill": {"eddy.forward.%s.replication.factor" % ff.LINK: "3"},
    "producer_expiry": {"eddy.forward.%s.request.timeout.ms" % ff.LINK: "15000",
                        "eddy.forward.%s.bandwidth.bytes.per.sec" % ff.LINK: "200000"},
}

@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_scenario(scenario, forward_rig, program):
    """ctest runs each scenario as its own entry (-k scenario)."""
    fn, rig_args = SCENARIOS[scenario]
    rig = forward_rig(edge_overrides=dict(EDGE_OVERRIDES.get(scenario, {}), **{"num.partitions": str(PARTITIONS)}),
                      **rig_args)
    fn(rig, program)
