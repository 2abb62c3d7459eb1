"""Transactions end to end (issue 17): what an application built on Kafka's
exactly-once gets from one eddy.

  1. confluent-kafka (newest, PyPI): a committed and an aborted transaction
     over three partitions (with send_offsets_to_transaction); a
     read_committed consumer sees exactly the committed records, a
     read_uncommitted one both, in produce order; the group's offsets are
     those of the committed transaction;
  2. Kafka's Java clients in a consume-transform-produce loop
     (java/TransformLoop.java: read_committed consumer, transactional
     producer, offsets sent to the transaction) over 100 000 numbered input
     records, the process SIGKILLed twice and restarted with the same
     transactional.id: read_committed, the output has every input number
     exactly once, in order per partition (NumberedCheck);
  3. a transaction left open by a killed producer holds the last stable
     offset until its timeout, then it is aborted and the LSO moves on.

usage: python3 -m pytest test_transactions_eos.py --program RDKAFKA_IDEMPOTENCE_PROGRAM"""

import json
import os
import signal
import subprocess
import threading
import time

import pytest

import eddy_fixture
import forward_fixture as ff
import kafka_fixture
import kafka_wire
import newest_clients as nc

COUNT = int(os.environ.get("EDDY_EOS_COUNT", "100000"))
PARTITIONS = 3


@pytest.fixture(scope="module")
def eddy_overrides():
    # Small segments are not needed; the default gateway config otherwise.
    return {"transaction.abort.timed.out.transaction.cleanup.interval.ms": "500"}


COMMIT_ABORT_SCRIPT = r"""
import json, sys, time
from confluent_kafka import Consumer, Producer, TopicPartition
bootstrap, topic, group = sys.argv[1:4]
p = Producer({"bootstrap.servers": bootstrap, "transactional.id": "commit-abort", "broker.address.family": "v4"})
p.init_transactions(30)
# The group's position to commit with the first transaction.
source = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                   "broker.address.family": "v4"})
for outcome in ("commit", "abort"):
    p.begin_transaction()
    for i in range(30):
        p.produce(topic, value=("%s-%02d" % (outcome, i)).encode(), partition=i % 3)
    p.flush(30)
    offsets = [TopicPartition(topic, part, 7 if outcome == "commit" else 99) for part in range(3)]
    p.send_offsets_to_transaction(offsets, source.consumer_group_metadata(), 30)
    (p.commit_transaction if outcome == "commit" else p.abort_transaction)(30)

def read(isolation):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "reader-" + isolation, "isolation.level": isolation,
                  "auto.offset.reset": "earliest", "enable.partition.eof": True, "broker.address.family": "v4"})
    c.assign([TopicPartition(topic, part, 0) for part in range(3)])
    got, eof, deadline = {0: [], 1: [], 2: []}, set(), time.time() + 30
    while len(eof) < 3 and time.time() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            eof.add(m.partition())
            continue
        got[m.partition()].append(m.value().decode())
    c.close()
    return got

committed = source.committed([TopicPartition(topic, part) for part in range(3)], 20)
print(json.dumps({"result": {"read_committed": read("read_committed"), "read_uncommitted": read("read_uncommitted"),
                             "group_offsets": [tp.offset for tp in committed]}}))
"""


def test_commit_and_abort_seen_by_isolation_level(eddy):
    python = nc.provision("confluent-kafka %s (venv)" % nc.CONFLUENT_KAFKA, nc.venv_python)
    ff.create_eddy_topic(eddy, "eos-ck", 3)
    result, _ = nc.run_for_result([python, "-c", COMMIT_ABORT_SCRIPT, eddy.bootstrap, "eos-ck", "eos-ck-group"],
                                  eddy.tmp, "commit-abort", 180)
    for part in range(3):
        committed = ["commit-%02d" % i for i in range(30) if i % 3 == part]
        aborted = ["abort-%02d" % i for i in range(30) if i % 3 == part]
        assert result["read_committed"][str(part)] == committed, result
        assert result["read_uncommitted"][str(part)] == committed + aborted, result
    assert result["group_offsets"] == [7, 7, 7], result


class TransformRun:
    """One TransformLoop process; counts its committed records as it prints them."""

    def __init__(self, eddy, input_topic, output_topic, idle_ms, pause_ms=0, kill_open_after=None):
        # kill_open_after: SIGKILL the loop from its reader thread as soon as it
        # reports a transaction written but not committed after that many
        # committed records (the loop then sleeps pause_ms before committing).
        self.kill_open_after = kill_open_after
        self.killed_open = threading.Event()
        cp = kafka_fixture.java_program("TransformLoop") + ":" + kafka_fixture.classpath()
        self.proc = subprocess.Popen(
            ["java", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", cp, "TransformLoop",
             eddy.bootstrap, input_topic, output_topic, "transform-group", "transform-1", str(idle_ms),
             str(pause_ms)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.committed = 0
        self.last = None
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            if line.startswith("{"):
                self.last = json.loads(line)
                self.committed = self.last.get("committed", self.committed)
                if ("open" in self.last and self.kill_open_after is not None and
                        self.committed >= self.kill_open_after and not self.killed_open.is_set()):
                    self.proc.send_signal(signal.SIGKILL)
                    self.killed_open.set()

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def finish(self, timeout):
        self.proc.wait(timeout=timeout)
        self.thread.join(timeout=10)
        return self.proc.returncode


def test_consume_transform_produce_exactly_once_across_kills(eddy, program):
    ff.create_eddy_topic(eddy, "eos-in", PARTITIONS)
    ff.create_eddy_topic(eddy, "eos-out", PARTITIONS)
    rc, last, err = ff.finish_producer(ff.produce_numbers(program, eddy.bootstrap, "eos-in", COUNT, PARTITIONS))
    assert rc == 0, "the input was produced: %s %s" % (last, err)
    for kill in range(2):
        # Killed while a transaction is written but not committed (the loop
        # reports it, then waits 300 ms before committing): the restart's
        # InitProducerId aborts it.
        run = TransformRun(eddy, "eos-in", "eos-out", idle_ms=30000, pause_ms=300, kill_open_after=COUNT // 5)
        assert run.killed_open.wait(180), "the loop to open a transaction after a fifth of the input: %s %s" % (
            run.last, run.proc.stderr.read()[-3000:] if run.proc.poll() is not None else "")
        run.proc.wait(timeout=30)
        print("kill %d with a transaction open after %d committed records" % (kill + 1, run.committed))
    run = TransformRun(eddy, "eos-in", "eos-out", idle_ms=8000)
    assert run.finish(600) == 0, "the last run ends: %s %s" % (run.last, run.proc.stderr.read()[-3000:])
    print("last run:", run.last)
    result = kafka_fixture.numbered_check(eddy.bootstrap, "eos-out", COUNT, PARTITIONS, isolation="read_committed")
    print(result["text"])
    parts = result["partitions"]
    assert sum(p["duplicates"] for p in parts) == 0, "read_committed: no input number twice"
    assert sum(p["out_of_order"] for p in parts) == 0, "read_committed: in order in each partition"
    assert result["distinct"] == COUNT and result["missing"] == 0, "read_committed: every input number"
    uncommitted = kafka_fixture.numbered_check(eddy.bootstrap, "eos-out", COUNT, PARTITIONS)
    print("read_uncommitted sees %d records for %d numbers (the killed runs' open transactions)" %
          (uncommitted["records"], uncommitted["distinct"]))
    assert uncommitted["distinct"] == COUNT
    assert uncommitted["records"] > COUNT, "the kills left written transactions, aborted on restart"


ABANDON_SCRIPT = r"""
import sys
from confluent_kafka import Producer
bootstrap, topic = sys.argv[1:3]
p = Producer({"bootstrap.servers": bootstrap, "transactional.id": "abandoned", "transaction.timeout.ms": 3000,
              "broker.address.family": "v4"})
p.init_transactions(30)
p.begin_transaction()
p.produce(topic, b"never committed", partition=0)
p.flush(30)
print("OPEN", flush=True)
sys.stdin.read()  # killed here
"""


def last_stable_offset(eddy, topic):
    """ListOffsets v2 with isolation READ_COMMITTED: the partition's LSO."""
    import struct
    body = struct.pack(">iB", -1, 1) + kafka_wire.array([kafka_wire.string(topic) + kafka_wire.array(
        [struct.pack(">iq", 0, -1)])])
    with kafka_wire.Connection(eddy.port) as conn:
        answer = conn.request(2, 2, body)
    # throttle, [topic: name, [partition, error, timestamp, offset]]
    pos = 4 + 4
    (name_len,) = struct.unpack_from(">h", answer, pos)
    pos += 2 + name_len + 4
    partition, error, _timestamp, offset = struct.unpack_from(">ihqq", answer, pos)
    assert error == 0, error
    return offset


def test_abandoned_transaction_is_aborted_after_its_timeout(eddy):
    python = nc.provision("confluent-kafka %s (venv)" % nc.CONFLUENT_KAFKA, nc.venv_python)
    ff.create_eddy_topic(eddy, "eos-abandoned", 1)
    before = last_stable_offset(eddy, "eos-abandoned")
    proc = subprocess.Popen([python, "-c", ABANDON_SCRIPT, eddy.bootstrap, "eos-abandoned"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "OPEN", proc.stderr.read()[-3000:]
        proc.kill()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    # The open transaction's first record holds the LSO where it was.
    assert last_stable_offset(eddy, "eos-abandoned") == before
    eddy_fixture.stays_true_for(lambda: last_stable_offset(eddy, "eos-abandoned") == before, 1500,
                                "the LSO held by the open transaction")
    # After transaction.timeout.ms (3 s) the coordinator aborts it: the ABORT
    # marker ends it and the LSO passes both.
    eddy_fixture.wait_until(lambda: last_stable_offset(eddy, "eos-abandoned") == before + 2, 30,
                            "the LSO to move past the aborted transaction", interval=0.2)
