"""Transactions on a three-node cluster (issue 17, cluster half): the
transaction coordinator runs on the controller quorum's leader (which
FindCoordinator TRANSACTION names), its state goes through the controller
log, and its COMMIT / ABORT markers go to the partitions' leaders wherever
they are. Topics have replication factor 3, so that a node's death loses
no record.

  1. confluent-kafka (newest, PyPI): a committed and an aborted
     transaction over three partitions, at least one led by a node other
     than the coordinator (create_spread_topic), with
     send_offsets_to_transaction; read_committed sees exactly the committed
     records, read_uncommitted both, in order; the group's offsets are the
     committed transaction's on every node.
  2. The coordinator (controller leader) SIGKILLed:
     a. with a transaction open: a new producer with the same
        transactional.id initializes through the survivors, the new
        coordinator fences the old epoch (same producer id, higher epoch)
        and aborts the transaction: ABORT markers, the LSO of every
        partition past it, nothing of it read_committed; the new producer
        then commits;
     b. right after commit_transaction returned: the records and the
        group's offsets are committed on the survivors, and the new
        coordinator's DescribeTransactions says CompleteCommit (or Empty);
     c. with a transaction left open by a killed producer: the new
        coordinator aborts it at its transaction.timeout.ms (3 s), the LSO
        moves on.
  3. Kafka's Java clients in a consume-transform-produce loop
     (java/TransformLoop.java) over COUNT numbered records, the loop
     SIGKILLed twice with a transaction open and restarted, and the
     coordinator node SIGKILLed (and restarted) mid-run: read_committed,
     the output holds every input exactly once, in order per partition.

One cluster is shared by the file's tests; a test that kills a node
restarts it, and the next test starts by restarting whatever is still down
(the `whole` fixture), then waits until every node is registered again.
A failing test's report carries every node's log tail (conftest.py) and,
in its message, the nodes' transaction log lines.

usage: python3 -m pytest test_cluster_transactions.py --program RDKAFKA_IDEMPOTENCE_PROGRAM
"""

import os
import signal
import struct
import time
import types

import pytest

import forward_fixture as ff
import kafka_fixture
import kafka_wire as kw
import newest_clients as nc
from cluster_fixture import EddyCluster
from eddy_fixture import FixtureError, wait_until
from test_cluster_metadata import create_topic_at, metadata
from test_transactions import describe_transaction
from test_transactions_eos import TransformRun

PARTITIONS = 3
COUNT = int(os.environ.get("EDDY_CLUSTER_EOS_COUNT", "20000"))
TXN_TIMEOUT_MS = 3000
REPLICATION = 3
NOT_CONTROLLER = 41


@pytest.fixture(scope="module")
def cluster():
    # A dead node is fenced (its partitions' leadership and its place in
    # Metadata given up) 3 s after its last fetch of the controller log;
    # timed-out transactions are looked for every 500 ms.
    with EddyCluster(3, overrides={"broker.session.timeout.ms": "3000",
                                   "transaction.abort.timed.out.transaction.cleanup.interval.ms": "500",
                                   "transaction.max.timeout.ms": "120000"}) as c:
        c.start_all()
        c.wait_for_leader(timeout=30)
        wait_until(lambda: registered(c), 30, "three registered nodes")
        yield c


def registered(cluster):
    """Whether every node's Metadata lists every node."""
    for i in cluster.ids:
        try:
            if sorted(metadata(cluster, i)[2]) != cluster.ids:
                return False
        except (OSError, kw.Closed):
            return False
    return True


@pytest.fixture
def whole(cluster):
    """The cluster with its three nodes running (a node an earlier test left
    down is started again) and registered; at the end no node may have
    exited by itself."""
    crashed = cluster.crashed()
    assert not crashed, "nodes exited by themselves before this test: %s\n%s" % (crashed, log_tails(cluster))
    for i in cluster.ids:
        if cluster.nodes[i].proc is None:
            cluster.start(i)
    cluster.wait_for_leader(timeout=30)
    wait_until(lambda: registered(cluster), 30, "every node registered (unfenced) on every node")
    yield cluster
    crashed = cluster.crashed()
    assert not crashed, "nodes exited by themselves during the test: %s\n%s" % (crashed, log_tails(cluster))


@pytest.fixture(scope="module")
def python():
    return nc.provision("confluent-kafka %s (venv)" % nc.CONFLUENT_KAFKA, nc.venv_python)


# ------------------------------------------------------------ diagnostics

def log_tails(cluster, chars=3000):
    return "\n".join("---- node %d log tail ----\n%s" % (i, n.log_text()[-chars:]) for i, n in cluster.nodes.items())


def node_log(node):
    """Everything node logged, over all its starts (eddy-N.stderr)."""
    text = []
    for n in range(1, node.starts + 1):
        try:
            with open(os.path.join(node.tmp, "eddy-%d.stderr" % n), "rb") as f:
                text.append(f.read().decode("utf-8", "replace"))
        except OSError:
            pass
    return "".join(text)


def txn_lines(cluster, last=25):
    """Each node's last log lines (over its restarts) about transactions,
    markers and coordinators."""
    out = []
    for i, node in cluster.nodes.items():
        lines = [line for line in node_log(node).splitlines()
                 if "transaction" in line.lower() or "marker" in line.lower() or "coordinator" in line.lower()]
        out.append("---- node %d: %d transaction lines, the last %d ----\n%s"
                   % (i, len(lines), last, "\n".join(lines[-last:])))
    return "\n".join(out)


def eventually(condition, timeout, what, diagnostics):
    """wait_until() whose timeout is an assertion failure carrying
    diagnostics() (a string)."""
    try:
        return wait_until(condition, timeout, what, interval=0.1)
    except FixtureError as e:
        pytest.fail("%s\n%s" % (e, diagnostics()), pytrace=False)


# ------------------------------------------------------------ the cluster

def create_topic(cluster, name, partitions=PARTITIONS):
    """A topic with replication factor 3, created through a follower of the
    controller quorum; returns {partition: leader} once every node agrees."""
    controller = cluster.wait_for_leader(timeout=30)
    through = next((i for i in cluster.ids if i != controller), controller)

    def created():
        # Just after a controller leader change a node may still answer
        # NOT_CONTROLLER (nothing created): asked again.
        outcome = create_topic_at(cluster, through, name, partitions, replication=REPLICATION)
        return None if outcome[0] == NOT_CONTROLLER else outcome
    outcome = wait_until(created, 20, "CreateTopics %s through node %d answered by a controller" % (name, through),
                         interval=0.2)
    assert outcome == (0, None), "CreateTopics %s through node %d: %s" % (name, through, outcome)
    return wait_until(lambda: leaders(cluster, name, partitions), 30,
                      "every running node to name a running leader of each partition of %s" % name)


def create_spread_topic(cluster, base, attempts=6):
    """create_topic() of base-1, base-2, ... until one has a partition led
    by a node other than the controller leader (the coordinator), which is
    what the transaction tests are about. Replicas are placed round robin,
    but each partition's leader is whoever wins its Raft group's first
    election, which may be the controller leader for all three. Returns
    (topic, {partition: leader}, controller leader)."""
    tried = []
    for n in range(1, attempts + 1):
        topic = "%s-%d" % (base, n)
        lead = create_topic(cluster, topic)
        controller = cluster.wait_for_leader(timeout=30)
        tried.append((topic, lead, controller))
        if any(leader != controller for leader in lead.values()):
            print("%s: partition leaders %s, controller leader (the coordinator) %d%s"
                  % (topic, lead, controller, "" if len(set(lead.values())) == PARTITIONS
                     else " (the partitions are led by %d nodes only)" % len(set(lead.values()))))
            return topic, lead, controller
        print("%s: every partition led by the controller leader %d: another topic" % (topic, controller))
    pytest.fail("every partition of %d topics was led by the controller leader: %s" % (attempts, tried),
                pytrace=False)


def leaders(cluster, topic, partitions=PARTITIONS):
    """{partition: leader} as every running node names it, each leader a
    running node; None while they do not agree or a partition has none."""
    running = cluster.running()
    views = []
    for i in running:
        try:
            topics = metadata(cluster, i, [topic])[3]
        except (OSError, kw.Closed):
            return None
        if topic not in topics or topics[topic][0] != 0:
            return None
        parts = topics[topic][1]
        if sorted(parts) != list(range(partitions)) or any(e != 0 or l not in running for l, _r, e in parts.values()):
            return None
        views.append({p: v[0] for p, v in parts.items()})
    if not views or any(v != views[0] for v in views):
        return None
    return views[0]


def list_offset(port, topic, partition, isolation):
    """ListOffsets v2, latest, at a node: (error, offset); isolation 0 gives
    the high watermark, 1 (READ_COMMITTED) the last stable offset."""
    body = struct.pack(">iB", -1, isolation) + kw.array([kw.string(topic) + kw.array(
        [struct.pack(">iq", partition, -1)])])
    with kw.Connection(port, timeout=5) as conn:
        answer = conn.request(2, 2, body)
    pos = 8
    (name_len,) = struct.unpack_from(">h", answer, pos)
    pos += 2 + name_len + 4
    _partition, error, _timestamp, offset = struct.unpack_from(">ihqq", answer, pos)
    return error, offset


def end_offsets(cluster, topic, partitions=PARTITIONS):
    """{partition: (high watermark, last stable offset)} from each
    partition's leader; None while a leader is unknown or refuses."""
    lead = leaders(cluster, topic, partitions)
    if lead is None:
        return None
    out = {}
    for p, leader in lead.items():
        try:
            e1, hw = list_offset(cluster.client_ports[leader], topic, p, 0)
            e2, lso = list_offset(cluster.client_ports[leader], topic, p, 1)
        except (OSError, kw.Closed, struct.error):
            return None
        if e1 or e2:
            return None
        out[p] = (hw, lso)
    return out


def settled_past(cluster, topic, past):
    """end_offsets() once every partition p has nothing open (LSO == high
    watermark) and its LSO is above past[p]; else None."""
    ends = end_offsets(cluster, topic)
    if ends is None or any(lso != hw or lso <= past.get(p, -1) for p, (hw, lso) in ends.items()):
        return None
    return ends


def batches(cluster, topic, partition):
    """The partition's batches as its leader holds them (read_uncommitted),
    but for the LeaderChange control batches of the partition's Raft group:
    [(base offset, "COMMIT" | "ABORT" | "data", producer id, epoch, records)]."""
    leader = wait_until(lambda: leaders(cluster, topic), 30, "the leaders of %s" % topic)[partition]
    rows = []
    with kw.Connection(cluster.client_ports[leader]) as conn:
        for base, _last, data in kw.fetch_all(conn, topic, partition):
            attributes = struct.unpack_from(">h", data, 21)[0]
            producer_id, epoch, _seq, count = struct.unpack_from(">qhii", data, 43)
            if attributes & 0x20:
                (_off, key, _value, _h), = kw.parse_records(data)
                _version, kind = struct.unpack(">hh", key)
                if kind in (0, 1):
                    rows.append((base, {0: "ABORT", 1: "COMMIT"}[kind], producer_id, epoch, 1))
            else:
                rows.append((base, "data", producer_id, epoch, count))
    return rows


def kinds(rows):
    """The kinds of batches() rows, a run of data batches as one "data"."""
    out = []
    for _b, kind, _pid, _e, _n in rows:
        if kind != "data" or not out or out[-1] != "data":
            out.append(kind)
    return out


def describe_at(cluster, i, transactional_id):
    """DescribeTransactions at node i: (error, state, producer id, epoch,
    {topic: [partitions]}); None when the node does not answer."""
    try:
        with kw.Connection(cluster.client_ports[i], timeout=5) as conn:
            return describe_transaction(conn, transactional_id)
    except (OSError, kw.Closed, struct.error, IndexError, UnicodeDecodeError):
        return None


def group_offsets_everywhere(cluster, group, topic):
    """{node: {partition: offset}} of the group on every running node (its
    metrics listener: the node's own copy of the committed offsets)."""
    return {i: {p: o for g, t, p, o in cluster.committed_offsets(i) if g == group and t == topic}
            for i in cluster.running()}


# ------------------------------------------------------------ the client

# Runs under the venv of newest_clients.venv_python() (confluent-kafka from
# PyPI). Prints {"event": ...} lines and a last {"result": {...}}; a failed
# step ends the run with result["error"] = {"step", "seconds", "name", ...}.
CLIENT = r"""
import json, os, signal, sys, time
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

OP_S = 30


def emit(obj):
    print(json.dumps(obj), flush=True)


def describe(e):
    err = e.args[0] if e.args else None
    if hasattr(err, "code"):
        return {"name": err.name(), "fatal": err.fatal(), "abortable": err.txn_requires_abort(), "text": str(err)}
    return {"name": type(e).__name__, "text": str(e)}


class Failed(Exception):
    pass


class Run:
    def __init__(self):
        self.result = {"error": None, "steps": [], "delivered": [], "delivery_errors": []}
        self.failed = 0

    def step(self, name, fn):
        started = time.monotonic()
        try:
            value = fn()
        except Exception as e:
            self.result["error"] = dict(describe(e), step=name, seconds=round(time.monotonic() - started, 2))
            raise Failed()
        self.result["steps"].append([name, round(time.monotonic() - started, 2)])
        return value

    def write(self, p, topic, partitions, prefix, count):
        def on_delivery(err, msg):
            if err is not None:
                self.failed += 1
                if str(err) not in self.result["delivery_errors"]:  # each distinct error once
                    self.result["delivery_errors"].append(str(err))
            else:
                self.result["delivered"].append([msg.partition(), msg.offset(), msg.value().decode()])
        def produce_all():
            for i in range(count):
                p.produce(topic, value=("%s-%03d" % (prefix, i)).encode(), partition=i % partitions,
                          on_delivery=on_delivery)
            left = p.flush(OP_S)
            if left or self.failed:
                raise RuntimeError("flush: %d not delivered, %d delivery errors: %s"
                                   % (left, self.failed, self.result["delivery_errors"]))
        self.step("produce " + prefix, produce_all)


def producer(bootstrap, txn_id, timeout_ms):
    return Producer({"bootstrap.servers": bootstrap, "broker.address.family": "v4", "client.id": "eddy-it-ctxn",
                     "transactional.id": txn_id, "transaction.timeout.ms": int(timeout_ms), "linger.ms": 5})


def group_metadata(bootstrap, group):
    return Consumer({"bootstrap.servers": bootstrap, "broker.address.family": "v4", "group.id": group,
                     "enable.auto.commit": False}).consumer_group_metadata()


def commit_abort(run, bootstrap, txn_id, topic, partitions, group):
    # Two transactions: "commit-NNN" committed with the group at offset 7 of
    # every partition, then "abort-NNN" aborted with offset 99.
    p = producer(bootstrap, txn_id, 60000)
    run.step("init", lambda: p.init_transactions(OP_S))
    meta = group_metadata(bootstrap, group)
    for outcome, offset in (("commit", 7), ("abort", 99)):
        run.step("begin " + outcome, p.begin_transaction)
        run.write(p, topic, partitions, outcome, 30)
        offsets = [TopicPartition(topic, i, offset) for i in range(partitions)]
        run.step("send offsets " + outcome, lambda: p.send_offsets_to_transaction(offsets, meta, OP_S))
        end = p.commit_transaction if outcome == "commit" else p.abort_transaction
        run.step(outcome, lambda: end(OP_S))


def open_transaction(run, bootstrap, txn_id, topic, partitions, prefix, count, timeout_ms):
    p = producer(bootstrap, txn_id, timeout_ms)
    run.step("init", lambda: p.init_transactions(OP_S))
    run.step("begin", p.begin_transaction)
    run.write(p, topic, partitions, prefix, count)
    emit({"event": "open", "delivered": run.result["delivered"]})
    while True:
        time.sleep(1)  # killed here


def commit_then_kill(run, bootstrap, txn_id, topic, partitions, group, prefix, count, pid):
    # The group's offsets 5, 6, 7 for partitions 0, 1, 2 go with the
    # transaction; the moment commit_transaction returns, pid (the
    # coordinator's eddy) is SIGKILLed.
    p = producer(bootstrap, txn_id, 60000)
    run.step("init", lambda: p.init_transactions(OP_S))
    meta = group_metadata(bootstrap, group)
    run.step("begin", p.begin_transaction)
    run.write(p, topic, partitions, prefix, count)
    offsets = [TopicPartition(topic, i, 5 + i) for i in range(partitions)]
    run.step("send offsets", lambda: p.send_offsets_to_transaction(offsets, meta, OP_S))
    run.step("commit", lambda: p.commit_transaction(OP_S))
    os.kill(pid, signal.SIGKILL)
    run.result["killed"] = pid


def init_then_commit(run, bootstrap, txn_id, topic, partitions, prefix, count, go_file):
    # init_transactions, an "initialized" event, then (once go_file exists)
    # one committed transaction.
    p = producer(bootstrap, txn_id, 60000)
    run.step("init", lambda: p.init_transactions(OP_S))
    emit({"event": "initialized"})
    deadline = time.monotonic() + 120
    while not os.path.exists(go_file):
        if time.monotonic() > deadline:
            raise SystemExit("no go file")
        time.sleep(0.05)
    run.step("begin", p.begin_transaction)
    run.write(p, topic, partitions, prefix, count)
    run.step("commit", lambda: p.commit_transaction(OP_S))


def read(run, bootstrap, topic, partitions, isolation, timeout_s):
    # Every partition from its start to its end (the LSO for read_committed).
    c = Consumer({"bootstrap.servers": bootstrap, "broker.address.family": "v4", "group.id": "eddy-it-ctxn-reader",
                  "enable.auto.commit": False, "isolation.level": isolation, "enable.partition.eof": True,
                  "fetch.wait.max.ms": 200})
    c.assign([TopicPartition(topic, i, 0) for i in range(partitions)])
    got = {str(i): [] for i in range(partitions)}
    eof, errors = set(), []
    deadline = time.monotonic() + timeout_s
    while len(eof) < partitions and time.monotonic() < deadline:
        m = c.poll(0.2)
        if m is None:
            continue
        if m.error():
            if m.error().code() == -191:  # _PARTITION_EOF
                eof.add(m.partition())
            elif len(errors) < 10:
                errors.append(str(m.error()))
            continue
        got[str(m.partition())].append([m.offset(), m.value().decode()])
    c.close()
    run.result.update(records=got, eof=sorted(eof), errors=errors)


def committed(run, bootstrap, group, topic, partitions):
    c = Consumer({"bootstrap.servers": bootstrap, "broker.address.family": "v4", "group.id": group,
                  "enable.auto.commit": False})
    tps = run.step("committed", lambda: c.committed([TopicPartition(topic, i) for i in range(partitions)], OP_S))
    run.result["offsets"] = [tp.offset for tp in tps]
    c.close()


COMMANDS = {"commit-abort": (commit_abort, "sssi s"), "open": (open_transaction, "sssi sii"),
            "commit-kill": (commit_then_kill, "sssi ssii"), "init-commit": (init_then_commit, "sssi sis"),
            "read": (read, "ssi sf"), "committed": (committed, "sssi")}

if __name__ == "__main__":
    fn, types = COMMANDS[sys.argv[1]]
    types = types.replace(" ", "")
    args = [{"s": str, "i": int, "f": float}[t](a) for t, a in zip(types, sys.argv[2:])]
    run = Run()
    try:
        fn(run, *args)
    except Failed:
        pass
    emit({"result": run.result})
"""


def client(python, tmp_path, label, args, timeout=150):
    """Runs CLIENT with args to its end; its result."""
    result, _run = nc.run_for_result([python, "-c", CLIENT] + [str(a) for a in args], str(tmp_path), label, timeout)
    return result


def start_client(python, tmp_path, label, args):
    return nc.ClientRun([python, "-c", CLIENT] + [str(a) for a in args], str(tmp_path), label)


def read(python, tmp_path, bootstrap, topic, isolation, timeout=30):
    """{partition: [(offset, value)]} of topic read from its start to its end
    with isolation; and the reader's whole result."""
    result = client(python, tmp_path, "read-" + isolation, ["read", bootstrap, topic, PARTITIONS, isolation, timeout],
                    timeout + 60)
    assert result["eof"] == list(range(PARTITIONS)), "%s: the reader reached the end of every partition: %s" \
        % (isolation, result)
    return {int(p): [tuple(r) for r in rows] for p, rows in result["records"].items()}, result


def values(records):
    return {p: [v for _o, v in rows] for p, rows in records.items()}


def by_partition(prefix, count):
    """The values CLIENT writes for prefix, per partition (value i to i % 3)."""
    return {p: ["%s-%03d" % (prefix, i) for i in range(count) if i % PARTITIONS == p] for p in range(PARTITIONS)}


def last_offsets(delivered):
    """{partition: the highest offset delivered there}."""
    out = {}
    for p, offset, _v in delivered:
        out[p] = max(out.get(p, -1), offset)
    return out


def kill_coordinator(cluster):
    """SIGKILLs the controller quorum's leader; (it, the new leader)."""
    old = cluster.wait_for_leader(timeout=30)
    cluster.nodes[old].kill()
    return old, new_coordinator(cluster, old)


def new_coordinator(cluster, old):
    """The controller leader elected after old's death."""
    return cluster.wait_for_leader(timeout=30, other_than=old)


def bring_back(cluster, i):
    """Starts node i again (when it is not running), on its data."""
    if cluster.nodes[i].proc is None:
        cluster.start(i)


def wait_for_event(run, name, timeout, diagnostics=lambda: ""):
    """The client's first event named name; a failure (with the client's
    result and stderr) when it ends or the timeout passes first."""
    def seen():
        event = run.event(lambda e: e["event"] == name)
        if event is None and run.proc.poll() is not None:
            run.thread.join(5)
            event = run.event(lambda e: e["event"] == name)
            if event is None:
                pytest.fail("%s ended (exit code %s) before %r: result %r\n%s\n%s"
                            % (run.label, run.proc.returncode, name, run.result, run.tail(1500), diagnostics()),
                            pytrace=False)
        return event
    return eventually(seen, timeout, "%s: %s" % (run.label, name), diagnostics)


# ---------------------------------------------------------------- 1

def test_commit_and_abort_across_partition_leaders(whole, python, tmp_path):
    cluster = whole
    group, txn_id = "ctx-ca-group", "ctx-ca-id"
    topic, lead, controller = create_spread_topic(cluster, "ctx-ca")

    bootstrap = cluster.bootstrap_of(cluster.ids)
    result = client(python, tmp_path, "commit-abort", ["commit-abort", bootstrap, txn_id, topic, PARTITIONS, group])
    print("client:", {k: v for k, v in result.items() if k != "delivered"})

    def diagnostics():
        return "client %r\nend offsets (hw, lso) %s\n%s" % (
            {k: v for k, v in result.items() if k != "delivered"}, end_offsets(cluster, topic), txn_lines(cluster))

    assert result["error"] is None, "both transactions go through: %s" % diagnostics()
    # Both transactions ended: every partition's LSO is its high watermark,
    # past the aborted records.
    eventually(lambda: settled_past(cluster, topic, last_offsets(result["delivered"])), 20,
               "every partition's LSO at its end, past both transactions", diagnostics)

    committed_values, aborted_values = by_partition("commit", 30), by_partition("abort", 30)
    rc, rc_result = read(python, tmp_path, bootstrap, topic, "read_committed")
    ru, ru_result = read(python, tmp_path, bootstrap, topic, "read_uncommitted")
    assert values(rc) == committed_values, "read_committed: the committed records only (%s)" % rc_result
    assert values(ru) == {p: committed_values[p] + aborted_values[p] for p in range(PARTITIONS)}, \
        "read_uncommitted: both transactions, in produce order (%s)" % ru_result
    for p in range(PARTITIONS):
        rows = batches(cluster, topic, p)
        assert kinds(rows) == ["data", "COMMIT", "data", "ABORT"], "partition %d (leader %d): %s" % (p, lead[p], rows)

    # The group's offsets are the committed transaction's, on every node.
    want = {p: 7 for p in range(PARTITIONS)}
    eventually(lambda: all(v == want for v in group_offsets_everywhere(cluster, group, topic).values()), 20,
               "every node to hold the group's offsets %s" % want,
               lambda: "nodes' offsets %s\n%s" % (group_offsets_everywhere(cluster, group, topic), diagnostics()))
    offsets = client(python, tmp_path, "committed", ["committed", bootstrap, group, topic, PARTITIONS])
    assert offsets["error"] is None and offsets["offsets"] == [7, 7, 7], "OffsetFetch: %s" % offsets
    # EndTxn is answered once PrepareAbort is stored; CompleteAbort follows
    # the markers.
    state = eventually(lambda: (lambda s: s if s is not None and s[1] != "PrepareAbort" else None)(
        describe_at(cluster, controller, txn_id)), 10, "the coordinator past PrepareAbort", diagnostics)
    assert state[:2] == (0, "CompleteAbort") and state[4] == {}, \
        "DescribeTransactions at the coordinator: %s" % (state,)


# ---------------------------------------------------------------- 2a

def test_a_new_coordinator_fences_and_aborts_an_open_transaction(whole, python, tmp_path):
    cluster = whole
    txn_id = "ctx-open-id"
    topic, _lead, coordinator = create_spread_topic(cluster, "ctx-open")
    # Transaction timeout 60 s: only the new producer can end it in time.
    run = start_client(python, tmp_path, "open", ["open", cluster.bootstrap_of(cluster.ids), txn_id, topic, PARTITIONS,
                                                  "open", 9, 60000])
    try:
        event = wait_for_event(run, "open", 60, lambda: txn_lines(cluster))
        opened = last_offsets(event["delivered"])
        assert sorted(opened) == list(range(PARTITIONS)), "records in every partition: %s" % event
        before = describe_at(cluster, coordinator, txn_id)
        assert before is not None and before[:2] == (0, "Ongoing") and before[4] == {topic: [0, 1, 2]}, \
            "the coordinator has the transaction open: %s\n%s" % (before, txn_lines(cluster))
        _e, _s, pid, epoch, _t = before
        killed = coordinator
        cluster.nodes[killed].kill()
    finally:
        run.kill()  # the old producer is gone too
    new = new_coordinator(cluster, killed)
    print("coordinator %d killed with producer %d epoch %d open; new coordinator %d" % (killed, pid, epoch, new))
    survivors = cluster.bootstrap_of()

    go = os.path.join(str(tmp_path), "go")
    second = start_client(python, tmp_path, "init-commit",
                          ["init-commit", survivors, txn_id, topic, PARTITIONS, "after", 9, go])
    try:
        def diagnostics():
            return "new producer %r %s\nend offsets (hw, lso) %s\nDescribeTransactions at %d: %s\n%s" % (
                second.result, second.events, end_offsets(cluster, topic), new, describe_at(cluster, new, txn_id),
                txn_lines(cluster))

        wait_for_event(second, "initialized", 60, diagnostics)

        # The new coordinator aborted the open transaction: an ABORT marker
        # behind its records in every partition, the LSO past it.
        eventually(lambda: settled_past(cluster, topic, opened), 20,
                   "every partition's LSO past the aborted transaction", diagnostics)
        state = describe_at(cluster, new, txn_id)
        assert state is not None and state[0] == 0 and state[1] in ("Empty", "CompleteAbort"), \
            "DescribeTransactions at the new coordinator: %s" % diagnostics()
        assert state[2] == pid and state[3] > epoch, \
            "the new coordinator kept producer id %d and fenced epoch %d: %s" % (pid, epoch, diagnostics())
        # (A marker may be written twice, by the old and the new coordinator:
        # the second ends nothing.)
        for p in range(PARTITIONS):
            rows = batches(cluster, topic, p)
            markers = [(kind, rpid, e > epoch) for _b, kind, rpid, e, _n in rows if kind != "data"]
            assert markers and set(markers) == {("ABORT", pid, True)}, \
                "partition %d: ABORT markers of producer %d with an epoch above %d: %s" % (p, pid, epoch, rows)
        rc, rc_result = read(python, tmp_path, survivors, topic, "read_committed")
        assert values(rc) == {p: [] for p in range(PARTITIONS)}, "read_committed: nothing aborted (%s)" % rc_result
        ru, ru_result = read(python, tmp_path, survivors, topic, "read_uncommitted")
        assert values(ru) == by_partition("open", 9), \
            "read_uncommitted: the aborted records survived the kill (%s)" % ru_result

        # The new producer commits a transaction of its own.
        open(go, "w").close()
        result = second.wait(90)
        assert result is not None and result["error"] is None, "the new producer commits: %s" % diagnostics()
    finally:
        second.kill()
    eventually(lambda: settled_past(cluster, topic, last_offsets(result["delivered"])), 20,
               "every partition's LSO past the new transaction", diagnostics)
    rc, rc_result = read(python, tmp_path, survivors, topic, "read_committed")
    assert values(rc) == by_partition("after", 9), "read_committed: the new transaction only (%s)" % rc_result
    bring_back(cluster, killed)


# ---------------------------------------------------------------- 2b

def test_a_transaction_committed_as_the_coordinator_dies_stays_committed(whole, python, tmp_path):
    cluster = whole
    group, txn_id = "ctx-commit-group", "ctx-commit-id"
    topic, _lead, coordinator = create_spread_topic(cluster, "ctx-commit")
    # The client SIGKILLs the coordinator itself, the moment
    # commit_transaction returns.
    result = client(python, tmp_path, "commit-kill", ["commit-kill", cluster.bootstrap_of(cluster.ids), txn_id, topic,
                                                      PARTITIONS, group, "commit", 30,
                                                      cluster.nodes[coordinator].eddy_pid()])
    cluster.nodes[coordinator].kill()  # reaps it (or kills it, when the client did not get that far)
    print("client:", {k: v for k, v in result.items() if k != "delivered"})
    assert result["error"] is None and result.get("killed"), \
        "the transaction commits before the kill: %r\n%s" % (result, txn_lines(cluster))
    new = new_coordinator(cluster, coordinator)
    survivors = cluster.bootstrap_of()
    committed_at = last_offsets(result["delivered"])
    print("coordinator %d killed after the commit; new coordinator %d" % (coordinator, new))

    def diagnostics():
        return "end offsets (hw, lso) %s\nDescribeTransactions at %d: %s\nnodes' offsets %s\n%s" % (
            end_offsets(cluster, topic), new, describe_at(cluster, new, txn_id),
            group_offsets_everywhere(cluster, group, topic), txn_lines(cluster))

    eventually(lambda: settled_past(cluster, topic, committed_at), 30,
               "every partition's LSO past the committed transaction", diagnostics)
    rc, rc_result = read(python, tmp_path, survivors, topic, "read_committed")
    assert values(rc) == by_partition("commit", 30), \
        "read_committed on the survivors: the committed records (%s)\n%s" % (rc_result, diagnostics())
    for p in range(PARTITIONS):
        # The new coordinator may write a marker the old one wrote already.
        markers = [kind for _b, kind, _pid, _e, _n in batches(cluster, topic, p) if kind != "data"]
        assert markers and set(markers) == {"COMMIT"}, "partition %d: COMMIT markers only: %s" % (p, markers)
    want = {p: 5 + p for p in range(PARTITIONS)}
    eventually(lambda: all(v == want for v in group_offsets_everywhere(cluster, group, topic).values()), 20,
               "the survivors to hold the group's offsets %s" % want, diagnostics)
    offsets = client(python, tmp_path, "committed", ["committed", survivors, group, topic, PARTITIONS])
    assert offsets["error"] is None and offsets["offsets"] == [5, 6, 7], "OffsetFetch: %s" % offsets
    state = eventually(lambda: (lambda s: s if s is not None and s[1] in ("CompleteCommit", "Empty") else None)(
        describe_at(cluster, new, txn_id)), 20, "DescribeTransactions at the new coordinator: CompleteCommit or Empty",
        diagnostics)
    assert state[0] == 0 and state[4] == {}, "DescribeTransactions at the new coordinator: %s" % (state,)
    bring_back(cluster, coordinator)


# ---------------------------------------------------------------- 2c

def test_an_abandoned_transaction_times_out_on_the_new_coordinator(whole, python, tmp_path):
    cluster = whole
    txn_id = "ctx-timeout-id"
    topic, _lead, coordinator = create_spread_topic(cluster, "ctx-timeout")
    run = start_client(python, tmp_path, "open", ["open", cluster.bootstrap_of(cluster.ids), txn_id, topic, PARTITIONS,
                                                  "open", 9, TXN_TIMEOUT_MS])
    try:
        event = wait_for_event(run, "open", 60, lambda: txn_lines(cluster))
    finally:
        run.kill()  # the producer dies first, with its transaction open
    opened = last_offsets(event["delivered"])
    before = describe_at(cluster, coordinator, txn_id)
    cluster.nodes[coordinator].kill()  # then its coordinator, well within the 3 s timeout
    assert before is not None and before[:2] == (0, "Ongoing"), \
        "open at the coordinator when it died: %s\n%s" % (before, txn_lines(cluster))
    _e, _s, pid, epoch, _t = before
    killed_at = time.monotonic()
    new = new_coordinator(cluster, coordinator)
    print("producer and coordinator %d killed with producer %d epoch %d open; new coordinator %d"
          % (coordinator, pid, epoch, new))

    def diagnostics():
        return "end offsets (hw, lso) %s\nDescribeTransactions at %d: %s\n%s" % (
            end_offsets(cluster, topic), new, describe_at(cluster, new, txn_id), txn_lines(cluster))

    eventually(lambda: settled_past(cluster, topic, opened), 30,
               "every partition's LSO past the transaction, aborted at its timeout", diagnostics)
    print("LSO moved on %.1f s after the coordinator's death" % (time.monotonic() - killed_at))
    # CompleteAbort is stored once the leaders answered that every marker
    # is durable: a moment after the LSOs moved.
    state = eventually(lambda: (lambda s: s if s is not None and s[1] != "PrepareAbort" else None)(
        describe_at(cluster, new, txn_id)), 10, "the new coordinator past PrepareAbort", diagnostics)
    assert state[:2] == (0, "CompleteAbort") and state[2] == pid and state[3] == epoch + 1, \
        "the new coordinator aborted it with the epoch bumped: %s" % diagnostics()
    for p in range(PARTITIONS):
        markers = [(kind, e) for _b, kind, _pid, e, _n in batches(cluster, topic, p) if kind != "data"]
        assert markers and set(markers) == {("ABORT", epoch + 1)}, "partition %d: %s" % (p, markers)
    rc, rc_result = read(python, tmp_path, cluster.bootstrap_of(), topic, "read_committed")
    assert values(rc) == {p: [] for p in range(PARTITIONS)}, "read_committed: nothing (%s)" % rc_result
    bring_back(cluster, coordinator)


# ---------------------------------------------------------------- 3

def test_consume_transform_produce_exactly_once_through_coordinator_and_loop_kills(whole, program):
    cluster = whole
    create_topic(cluster, "ctx-in")
    create_topic(cluster, "ctx-out")
    bootstrap = cluster.bootstrap_of(cluster.ids)
    rc, last, err = ff.finish_producer(ff.produce_numbers(program, bootstrap, "ctx-in", COUNT, PARTITIONS))
    assert rc == 0, "the input was produced: %s %s" % (last, err)
    target = types.SimpleNamespace(bootstrap=bootstrap)

    def loop_diagnostics(run):
        err = run.proc.stderr.read()[-3000:] if run.proc.poll() is not None else "(running)"
        return "loop: last %s, committed %d, exit %s\n%s\n%s" % (run.last, run.committed, run.proc.poll(), err,
                                                                  txn_lines(cluster))

    # The loop SIGKILLed with a transaction written but not committed.
    run = TransformRun(target, "ctx-in", "ctx-out", idle_ms=30000, pause_ms=300, kill_open_after=COUNT // 5)
    try:
        eventually(lambda: run.killed_open.is_set() or run.proc.poll() is not None, 90,
                   "the loop to open a transaction after a fifth of the input", lambda: loop_diagnostics(run))
    finally:
        if not run.killed_open.is_set() and run.proc.poll() is None:
            run.kill()
    run.proc.wait(timeout=30)
    assert run.killed_open.is_set(), "the loop killed with a transaction open after a fifth of the input: %s" \
        % loop_diagnostics(run)
    print("loop killed with a transaction open after %d committed records" % run.committed)

    # Restarted; the coordinator's node SIGKILLed once a quarter of the
    # input more went through it, and started again once a new controller
    # leader is there. The loop must ride it out; it is SIGKILLed once more
    # with a transaction open after half the input went through this run.
    run = TransformRun(target, "ctx-in", "ctx-out", idle_ms=12000, pause_ms=100, kill_open_after=COUNT // 2)
    try:
        eventually(lambda: run.committed >= COUNT // 4 or run.proc.poll() is not None, 90,
                   "the restarted loop to commit a quarter of the input", lambda: loop_diagnostics(run))
        assert run.proc.poll() is None, "the restarted loop ended early: %s" % loop_diagnostics(run)
        killed, new = kill_coordinator(cluster)
        print("coordinator %d killed after %d records of the second run; new coordinator %d"
              % (killed, run.committed, new))
        bring_back(cluster, killed)
        eventually(lambda: run.killed_open.is_set() or run.proc.poll() is not None, 120,
                   "the second run to open a transaction after half the input", lambda: loop_diagnostics(run))
    finally:
        if not run.killed_open.is_set() and run.proc.poll() is None:
            run.kill()
    run.proc.wait(timeout=30)
    assert run.killed_open.is_set(), "the second run killed with a transaction open after half the input: %s" \
        % loop_diagnostics(run)
    print("second run killed with a transaction open after %d committed records" % run.committed)

    # Restarted once more: it finishes the input.
    run = TransformRun(target, "ctx-in", "ctx-out", idle_ms=12000, pause_ms=100)
    try:
        code = run.finish(240)
    finally:
        if run.proc.poll() is None:
            run.kill()
    assert code == 0, "the third run ends (idle): %s" % loop_diagnostics(run)
    print("third run:", run.last)

    result = kafka_fixture.numbered_check(bootstrap, "ctx-out", COUNT, PARTITIONS, isolation="read_committed")
    print(result["text"])
    parts = result["partitions"]
    assert sum(p["duplicates"] for p in parts) == 0, "read_committed: no input number twice\n%s" % result["text"]
    assert sum(p["out_of_order"] for p in parts) == 0, "read_committed: in order in each partition\n%s" % result["text"]
    assert result["distinct"] == COUNT and result["missing"] == 0, \
        "read_committed: every input number (missing e.g. %s)\n%s" % (result["missing_examples"][:5],
                                                                     txn_lines(cluster))
    uncommitted = kafka_fixture.numbered_check(bootstrap, "ctx-out", COUNT, PARTITIONS)
    print("read_uncommitted sees %d records for %d numbers" % (uncommitted["records"], uncommitted["distinct"]))
    assert uncommitted["distinct"] == COUNT
    assert uncommitted["records"] > COUNT, "the killed loop's open transaction was written (and aborted)"
