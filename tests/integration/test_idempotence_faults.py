"""librdkafka's idempotent producer (enable.idempotence=true, max.in.flight 5)
sends numbered messages to 4 partitions through fault_proxy, which cuts,
truncates, stalls or refuses connections every 200-600 ms, while the broker
is SIGKILLed and restarted twice (at a third and two thirds of the
deliveries). Afterwards every number must be in the log exactly once, in
order per partition.

The count is EDDY_IDEMPOTENCE_COUNT (default 200000, the issue's figure),
sent at a pace that spreads it over EDDY_IDEMPOTENCE_SECONDS (default 20)
so that faults hit the whole run (unpaced, librdkafka sends 200k small
messages to Eddy in ~2 s, too short for faults every few hundred ms).

usage: python3 -m pytest test_idempotence_faults.py --program RDKAFKA_IDEMPOTENCE_PROGRAM"""

import os
import random
import signal
import subprocess
import threading
import time

import pytest

import eddy_fixture
import kafka_wire as w

TOPIC = "numbers"
PARTITIONS = 4
COUNT = int(os.environ.get("EDDY_IDEMPOTENCE_COUNT", "200000"))
SECONDS = float(os.environ.get("EDDY_IDEMPOTENCE_SECONDS", "20"))

class Chaos(threading.Thread):
    """Injects a random fault into proxy every 200-600 ms until stopped."""

    def __init__(self, proxy, seed):
        super().__init__(daemon=True)
        self.proxy = proxy
        self.rng = random.Random(seed)
        self.stopped = threading.Event()
        self.counts = {"cut": 0, "cut_after": 0, "stall": 0, "refuse": 0}

    def run(self):
        proxy = self.proxy
        while not self.stopped.wait(self.rng.uniform(0.2, 0.6)):
            r = self.rng.random()
            if r < 0.6:
                proxy.cut_all()
                self.counts["cut"] += 1
            elif r < 0.8:
                proxy.cut_after(self.rng.randint(100, 64 * 1024))
                self.counts["cut_after"] += 1
            elif r < 0.92:
                proxy.cut_after(None)
                proxy.stall(self.rng.uniform(0.1, 0.5))
                self.counts["stall"] += 1
            else:
                proxy.cut_after(None)
                proxy.refuse(self.rng.uniform(0.1, 0.5))
                self.counts["refuse"] += 1


@pytest.fixture(scope="module")
def proxy(fault_proxy):
    return fault_proxy(upstream_port=1)  # the upstream is set once eddy runs


@pytest.fixture(scope="module")
def eddy_overrides(proxy):
    return {"advertised.listeners": "PLAINTEXT://127.0.0.1:%d" % proxy.port,
            "eddy.log.level": "debug"}  # counts the duplicates it recognised


def test_librdkafka_through_faults_and_kills(eddy, proxy, program):
    broker = eddy
    proxy.set_upstream(broker.port)
    with w.Connection(broker.port) as conn:
        from kafka.protocol.admin import CreateTopicsResponse
        conn.request(19, 1, w.create_topics_v1(TOPIC, PARTITIONS), response_class=CreateTopicsResponse[1])

    seed = int(os.environ.get("EDDY_CHAOS_SEED", str(int(time.time()))))
    print("count %d, chaos seed %d" % (COUNT, seed), flush=True)
    started = time.monotonic()
    producer = subprocess.Popen([program, "127.0.0.1:%d" % proxy.port, TOPIC, str(COUNT), str(PARTITIONS),
                                 str(COUNT / SECONDS)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    progress = {"delivered": 0, "last": ""}
    stderr_lines = []

    def read_stdout():
        for line in producer.stdout:
            line = line.strip()
            progress["last"] = line
            if line.startswith("delivered "):
                progress["delivered"] = int(line.split()[1])

    def read_stderr():
        for line in producer.stderr:
            stderr_lines.append(line.rstrip())

    readers = [threading.Thread(target=read_stdout, daemon=True), threading.Thread(target=read_stderr, daemon=True)]
    for t in readers:
        t.start()
    chaos = Chaos(proxy, seed)
    chaos.start()
    kills = 0
    try:
        for fraction in (1 / 3, 2 / 3):
            target = int(COUNT * fraction)
            eddy_fixture.wait_until(lambda: progress["delivered"] >= target or producer.poll() is not None, 150,
                                    "%d deliveries" % target, interval=0.05)
            if producer.poll() is not None:
                break
            broker.restart(signal.SIGKILL)
            proxy.set_upstream(broker.port)
            kills += 1
            print("SIGKILL + restart at %d deliveries (%.1f s)" % (progress["delivered"], time.monotonic() - started),
                  flush=True)
        rc = producer.wait(240)
    finally:
        chaos.stopped.set()
        chaos.join()
        proxy.cut_after(None)
        if producer.poll() is None:
            producer.kill()
            producer.wait()
    for t in readers:
        t.join(5)
    print("producer: %s (%.1f s); faults %s; proxy connections %d, cuts %d, refused %d" %
          (progress["last"], time.monotonic() - started, chaos.counts, proxy.connections, proxy.cuts, proxy.refused))
    if stderr_lines:
        print("producer stderr (last lines):\n  " + "\n  ".join(stderr_lines[-15:]))
    assert rc == 0, "librdkafka delivered every message (exit 0)"
    assert kills == 2, "the broker was SIGKILLed and restarted twice"
    assert proxy.cuts >= SECONDS / 2, \
        "the proxy cut connections throughout the run (>= 1 per 2 s): %r" % (proxy.cuts,)

    eddy_fixture.assert_numbered_log(broker.port, TOPIC, COUNT, PARTITIONS, "log")
    closed = []
    duplicates_refused = 0
    # The (debug) log is the only place that counts recognised duplicates
    # and closed connections, over every run of the broker.
    for i in range(1, broker.starts + 1):
        with open(os.path.join(broker.tmp, "eddy-%d.stderr" % i), "rb") as f:
            lines = f.read().decode("utf-8", "replace").splitlines()
        closed += [line for line in lines if "closing connection" in line]
        duplicates_refused += sum(1 for line in lines if "duplicate batch" in line)
    print("retried batches Eddy recognised as duplicates: %d" % duplicates_refused)
    assert duplicates_refused > 0, \
        "retries of written batches happened and were not written again: %r" % (duplicates_refused,)
    assert closed == [], "Eddy closed no librdkafka connection for a bad request (all %d runs)" % broker.starts

