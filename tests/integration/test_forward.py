"""Store-and-forward (issue 8), with an edge eddy forwarding to Apache Kafka
4.4 (the central cluster, KRaft) through one fault proxy per Kafka node
(forward_fixture.py). The central topic is checked with Kafka's Java
consumer (NumberedCheck.java): every numbered message exactly once, in
order per partition. One scenario per run:

  outage          the link is down for most of a librdkafka run at the edge
                  (an idle link notices the cut at once); restored, the central topic gets every message exactly
                  once, in order per partition
  edge_kills      the edge is SIGKILLed twice while it forwards
  central_restart the Kafka node is SIGKILLed (its log.dirs left as the crash
                  left them) and started again while the edge forwards, then
                  restarted once more with SIGTERM (controlled shutdown)
  flapping        the link is cut every second for the whole run
  bandwidth       eddy.forward.<link>.bandwidth.bytes.per.sec: the drain rate
                  after an outage stays under the cap (at most 10% over)

usage: python3 -m pytest test_forward.py -k SCENARIO --program RDKAFKA_IDEMPOTENCE_PROGRAM
The message count is EDDY_FORWARD_COUNT (default 50000)."""

import os
import signal
import threading
import time

import pytest

import eddy_fixture
import forward_fixture as ff

TOPIC = "numbers"
PARTITIONS = 4
COUNT = int(os.environ.get("EDDY_FORWARD_COUNT", "50000"))


def wait_progress(rig, fraction, timeout=120):
    """Until the central topic has fraction * COUNT forwarded messages."""
    def forwarded():
        link = rig.link_status()
        return link is not None and sum(p["forwarded_messages"] for p in link["partitions"]) >= fraction * COUNT
    eddy_fixture.wait_until(forwarded, timeout, "%.0f%% forwarded" % (fraction * 100), interval=0.05)


def produce_all(program, bootstrap, rate=0):
    proc = ff.produce_numbers(program, bootstrap, TOPIC, COUNT, PARTITIONS, rate)
    return proc


def finish(proc, label="librdkafka delivered every message to the edge"):
    rc, last, err = ff.finish_producer(proc)
    print("producer:", last, err)
    assert rc == 0, label


def outage(rig, program):
    rig.create_central_topic(TOPIC, PARTITIONS)
    rig.create_edge_topic(TOPIC, PARTITIONS)
    # Up for a moment, so that the link has connected once before the outage.
    rig.wait_connected()
    rig.link_down()
    # Idle (nothing to send), the link still notices that Kafka's end of its
    # connections is gone: the status must not say "connected" while cut.
    cut = time.monotonic()
    eddy_fixture.wait_until(lambda: rig.link_status()["state"] != "connected", 5,
                            "the idle link to notice the cut", interval=0.05)
    print("the idle link noticed the cut after %.2f s" % (time.monotonic() - cut))
    started = time.monotonic()
    proc = produce_all(program, rig.edge.bootstrap)
    finish(proc)
    produced_s = time.monotonic() - started

    def backlog():
        return sum(p["backlog_messages"] for p in rig.link_status()["partitions"])
    # The link refreshes its view of the local logs every second.
    eddy_fixture.wait_until(lambda: backlog() == COUNT, 5, "the status to show the backlog", interval=0.1)
    link = rig.link_status()
    assert backlog() == COUNT, "while down, the whole run is backlog"
    assert link["state"] in ("backing-off", "connecting") and link["last_error"] != "", \
        "while down, the link shows it is backing off with the reason: %r" % (link,)
    text = rig.status(json_output=False)
    assert "link central" in text and "numbers-0" in text and str(COUNT // PARTITIONS) in text, \
        "the text status names the link, the partitions and the backlog: %r" % (text,)
    # A while longer down: several failed reconnects (the backoff is at most 1 s).
    connects = link["connects"]
    eddy_fixture.wait_until(lambda: rig.link_status()["connects"] >= connects + 2, 15,
                            "two more failed reconnects", interval=0.1)
    rig.link_up()
    drain_started = time.monotonic()
    rig.wait_drained(TOPIC, PARTITIONS)
    drain_s = time.monotonic() - drain_started
    print("produce at the edge %.2f s; drain after the outage %.2f s (includes up to 1 s backoff)" %
          (produced_s, drain_s))
    ff.assert_numbers(rig.kafka, TOPIC, COUNT, PARTITIONS)
    link = rig.link_status()
    assert link["state"] == "connected", "status: state after draining"
    assert sum(p["dropped_messages"] for p in link["partitions"]) == 0, "status: nothing dropped"
    assert [p["forwarded_offset"] for p in link["partitions"]] == [p["local_end_offset"] for p in link["partitions"]], \
        "status: forwarded offsets are the local ends"


def edge_kills(rig, program):
    rig.create_central_topic(TOPIC, PARTITIONS)
    rig.create_edge_topic(TOPIC, PARTITIONS)
    proc = produce_all(program, rig.edge.bootstrap, rate=COUNT / 15)
    for fraction in (0.3, 0.6):  # wait_progress fails the test if forwarding stops
        wait_progress(rig, fraction)
        rig.edge.restart(signal.SIGKILL)
        print("edge SIGKILLed at %.0f%% forwarded" % (fraction * 100), flush=True)
    finish(proc)
    rig.wait_drained(TOPIC, PARTITIONS)
    ff.assert_numbers(rig.edge, TOPIC, COUNT, PARTITIONS, label="edge")
    ff.assert_numbers(rig.kafka, TOPIC, COUNT, PARTITIONS)
    link = rig.link_status()
    assert link["producer_resets"] == 0, "the link kept its producer id across the kills (no reset)"


def central_restart(rig, program):
    """The single Kafka node is SIGKILLed mid-run and restarted on the
    log.dirs the crash left behind (Kafka recovers the unflushed segments
    and rebuilds its producer state from its snapshots and the log), then
    restarted again with SIGTERM (clean shutdown, producer snapshot). Kafka
    keeps the link's producer state across both, so what was in flight and
    is sent again is recognised as a duplicate (answered with its original
    offset), never written twice."""
    rig.create_central_topic(TOPIC, PARTITIONS)
    rig.create_edge_topic(TOPIC, PARTITIONS)
    proc = produce_all(program, rig.edge.bootstrap, rate=COUNT / 15)
    wait_progress(rig, 0.3)
    rig.restart_central(signal.SIGKILL)
    print("central SIGKILLed and restarted", flush=True)
    wait_progress(rig, 0.6)
    rig.restart_central(signal.SIGTERM)
    print("central restarted (SIGTERM)", flush=True)
    finish(proc)
    rig.wait_drained(TOPIC, PARTITIONS)
    ff.assert_numbers(rig.kafka, TOPIC, COUNT, PARTITIONS)
    assert rig.link_status()["producer_resets"] == 0, "the link kept its producer id (no reset)"


def flapping(rig, program):
    rig.create_central_topic(TOPIC, PARTITIONS)
    rig.create_edge_topic(TOPIC, PARTITIONS)
    stop = threading.Event()
    flaps = [0]

    def flap():
        while not stop.wait(1.0):
            rig.cut_all()
            rig.refuse(0.3)
            flaps[0] += 1

    t = threading.Thread(target=flap, daemon=True)
    t.start()
    proc = produce_all(program, rig.edge.bootstrap, rate=COUNT / 15)
    try:
        finish(proc)
        rig.wait_drained(TOPIC, PARTITIONS, timeout=180)
    finally:
        stop.set()
        t.join()
    print("link cut %d times (every second), proxy cuts %d" % (flaps[0], rig.proxy_cuts()))
    assert flaps[0] >= 10, "the link was cut at least 10 times: %r" % (flaps[0],)
    assert rig.proxy_cuts() >= 10, "at least 10 open link connections were reset: %r" % (rig.proxy_cuts(),)
    ff.assert_numbers(rig.kafka, TOPIC, COUNT, PARTITIONS)


# Bytes per second: a backlog of COUNT messages (~17 bytes each as stored)
# then drains in ~6.5 s (50k messages: ~128 kB/s).
CAP = int(COUNT * 2.56)


def bandwidth(rig, program):
    rig.create_central_topic(TOPIC, PARTITIONS)
    rig.create_edge_topic(TOPIC, PARTITIONS)
    rig.wait_connected()
    rig.link_down()
    proc = produce_all(program, rig.edge.bootstrap)
    finish(proc)
    eddy_fixture.wait_until(lambda: sum(p["backlog_messages"] for p in rig.link_status()["partitions"]) == COUNT,
                            5, "the status to show the backlog", interval=0.1)
    backlog_bytes = sum(p["backlog_bytes"] for p in rig.link_status()["partitions"])
    print("backlog %d bytes" % backlog_bytes)
    assert backlog_bytes > 5.5 * CAP, \
        "the backlog takes more than the measuring window at the cap: %r" % (backlog_bytes,)
    rig.link_up()

    def sent():
        return sum(p["forwarded_bytes"] for p in rig.link_status()["partitions"])

    # Measure from half a second after the start (the burst) for 4 s.
    eddy_fixture.wait_until(lambda: sent() > CAP // 4, 30, "forwarding to start", interval=0.05)
    t0, b0 = time.monotonic(), sent()
    time.sleep(4.0)
    t1, b1 = time.monotonic(), sent()
    rate = (b1 - b0) / (t1 - t0)
    print("drain rate %.0f bytes/s with a cap of %d (ratio %.3f)" % (rate, CAP, rate / CAP))
    # The cap is a ceiling: never more than 10% over it. Below it the check
    # only asks that the link is not starved (a loaded 2-core CI machine may
    # not schedule the link thread on time); rates are the bench's business.
    assert 0.5 <= rate / CAP <= 1.10, \
        "%s: %s" % ("measured drain rate at most 10%% over the cap, and at least half of it (%.3f)" % (rate / CAP), rate)
    status_rate = rig.link_status()["rate_bytes_per_sec"]
    assert 0.5 <= status_rate / CAP <= 1.25, \
        "%s: %s" % ("status shows a rate under the cap, at least half of it (%.0f)" % status_rate, status_rate)
    rig.wait_drained(TOPIC, PARTITIONS, timeout=120)
    ff.assert_numbers(rig.kafka, TOPIC, COUNT, PARTITIONS)


SCENARIOS = {
    "outage": (outage, {}),
    "edge_kills": (edge_kills, {}),
    "central_restart": (central_restart, {}),
    "flapping": (flapping, {}),
    "bandwidth": (bandwidth, {"eddy.forward.central.bandwidth.bytes.per.sec": str(CAP)}),
}

@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_scenario(scenario, forward_rig, program):
    """ctest runs each scenario as its own entry (-k scenario)."""
    fn, overrides = SCENARIOS[scenario]
    fn(forward_rig(edge_overrides=dict(overrides, **{"num.partitions": str(PARTITIONS)})), program)
