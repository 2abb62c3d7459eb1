"""Transactions (KIP-98, the pre-KIP-890 protocol), coordinator side:
  1. confluent-kafka's transactional producer (newest, PyPI): init, begin,
     records to 3 partitions, send_offsets_to_transaction, commit; the
     same with abort. A read_uncommitted consumer sees the records of both
     (the COMMIT and ABORT markers take an offset each, one per partition);
     the group's committed offsets moved with the committed transaction
     only.
  2. A second producer with the same transactional.id fences the first.
  3. A transaction left open by a killed producer is aborted after its
     timeout with the epoch bumped (DescribeTransactions shows it, the
     ABORT markers are in the partitions).
  4. Bad input, raw frames, answered with Kafka's errors: EndTxn without a
     transaction, AddPartitionsToTxn with a wrong epoch (per version), an
     empty transactional id, TxnOffsetCommit for a group never added, a
     control batch from a client, a transactional batch for a partition the
     transaction did not add.
  5. A restart with a transaction in flight: the coordinator's state is in
     eddy.db.
  6. OffsetFetch with require_stable: UNSTABLE_OFFSET_COMMIT while a
     transaction has offsets staged.
  7. Kafka 4.4's kafka-transactions (TransactionsCommand) list and describe.
  8. ACLs (StandardAuthorizer, allow.everyone.if.no.acl.found): the
     transactional id, topic and group rules of Kafka, refusals only where
     ACLs say so.
  9. A transaction found in PrepareCommit at startup is completed: its
     markers written, its staged offsets applied.
 10. Kafka 4.4's Java producer in transactional mode (kafka-producer-perf-test
     --transactional-id): every transaction committed.
read_committed visibility (last stable offset, aborted transactions in
Fetch) is the partition side's, tested where it is built."""

import os
import signal
import struct

import pytest

import eddy_fixture
import kafka_wire as w
import newest_clients as nc

NONE = 0
INVALID_REQUEST = 42
INVALID_PRODUCER_EPOCH = 47
INVALID_TXN_STATE = 48
INVALID_PRODUCER_ID_MAPPING = 49
INVALID_TRANSACTION_TIMEOUT = 50
INVALID_RECORD = 87
PRODUCER_FENCED = 90
OPERATION_NOT_ATTEMPTED = 55
UNKNOWN_TOPIC_OR_PARTITION = 3


@pytest.fixture(scope="module")
def eddy_overrides():
    return {"transaction.abort.timed.out.transaction.cleanup.interval.ms": "500",
            "transaction.max.timeout.ms": "120000"}


@pytest.fixture(scope="module")
def client():
    python = nc.provision("confluent-kafka %s (venv)" % nc.CONFLUENT_KAFKA, nc.venv_python)
    return [python, os.path.join(nc.CLIENTS, "confluent_txn_client.py")]


def control_batches(broker, topic, partitions):
    """{partition: [(offset, 'COMMIT'|'ABORT', producer id, epoch)]} and the
    number of data records, read with raw Fetch v4 (read_uncommitted)."""
    markers = {}
    records = 0
    with w.Connection(broker.port) as conn:
        for p in range(partitions):
            rows = []
            for base, _last, data in w.fetch_all(conn, topic, p):
                attributes = struct.unpack_from(">h", data, 21)[0]
                producer_id, epoch, _seq, count = struct.unpack_from(">qhii", data, 43)
                if attributes & 0x20:
                    (_off, key, _value, _h), = w.parse_records(data)
                    _version, kind = struct.unpack(">hh", key)
                    rows.append((base, {0: "ABORT", 1: "COMMIT"}[kind], producer_id, epoch))
                else:
                    assert attributes & 0x10, "%s-%d offset %d: a data batch of a transactional producer is " \
                                              "transactional" % (topic, p, base)
                    records += count
            markers[p] = rows
    return markers, records


# ---------------------------------------------------------------- raw frames

def init_producer_id(conn, transactional_id, timeout_ms=60000, version=1):
    body = w.string(transactional_id) + struct.pack(">i", timeout_ms)
    _throttle, error, pid, epoch = struct.unpack_from(">ihqh", conn.request(22, version, body))
    return error, pid, epoch


def add_partitions(conn, version, transactional_id, pid, epoch, topics):
    body = w.string(transactional_id) + struct.pack(">qh", pid, epoch) + w.array(
        [w.string(t) + w.array([struct.pack(">i", p) for p in ps]) for t, ps in topics])
    data = conn.request(24, version, body)
    pos = 4
    out = {}
    (n,) = struct.unpack_from(">i", data, pos)
    pos += 4
    for _ in range(n):
        (tlen,) = struct.unpack_from(">h", data, pos)
        name = data[pos + 2:pos + 2 + tlen].decode()
        pos += 2 + tlen
        (m,) = struct.unpack_from(">i", data, pos)
        pos += 4
        for _ in range(m):
            p, e = struct.unpack_from(">ih", data, pos)
            pos += 6
            out[(name, p)] = e
    return out


def end_txn(conn, transactional_id, pid, epoch, commit, version=1):
    body = w.string(transactional_id) + struct.pack(">qhb", pid, epoch, 1 if commit else 0)
    return struct.unpack_from(">ih", conn.request(26, version, body))[1]


def add_offsets(conn, transactional_id, pid, epoch, group, version=1):
    body = w.string(transactional_id) + struct.pack(">qh", pid, epoch) + w.string(group)
    return struct.unpack_from(">ih", conn.request(25, version, body))[1]


def txn_offset_commit(conn, transactional_id, group, pid, epoch, topic, partition, offset):
    """TxnOffsetCommit v1; the partition's error code."""
    body = (w.string(transactional_id) + w.string(group) + struct.pack(">qh", pid, epoch) +
            w.array([w.string(topic) + w.array([struct.pack(">iq", partition, offset) + w.string(None)])]))
    data = conn.request(28, 1, body)
    (tlen,) = struct.unpack_from(">h", data, 8)
    return struct.unpack_from(">ih", data, 10 + tlen + 4)[1]


def produce_batch(conn, topic, partition, batch):
    return w.produce(conn, topic, partition, batch)[0]


def transactional_batch(pid, epoch, sequence, count=1, control=False, transactional=True):
    attributes = (0x10 if transactional else 0) | (0x20 if control else 0)
    if control:
        records = w.record(0, struct.pack(">hh", 0, 1), struct.pack(">hi", 0, 0))
        count = 1
    else:
        records = b"".join(w.record(i, b"k", b"raw-%d" % i) for i in range(count))
    ts = 1700000000000
    after_crc = struct.pack(">hiqqqhii", attributes, count - 1, ts, ts, pid, epoch, -1 if control else sequence,
                            count) + records
    return struct.pack(">qiibI", 0, 4 + 1 + 4 + len(after_crc), 0, 2, w.crc32c(after_crc)) + after_crc


def describe_transaction(conn, transactional_id):
    """DescribeTransactions v0 (flexible) of one id: (error, state, producer
    id, epoch, {topic: [partitions]})."""
    body = w.uvarint(2) + w.compact_string(transactional_id) + b"\x00"
    data = conn.request(65, 0, body, flexible=True)
    pos = 4

    def uvarint():
        nonlocal pos
        shift = result = 0
        while True:
            b = data[pos]
            pos += 1
            result |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return result

    def cstring():
        nonlocal pos
        n = uvarint() - 1
        s = data[pos:pos + n].decode()
        pos += n
        return s

    assert uvarint() - 1 == 1
    (error,) = struct.unpack_from(">h", data, pos)
    pos += 2
    cstring()
    state = cstring()
    _timeout, _start, pid, epoch = struct.unpack_from(">iqqh", data, pos)
    pos += 22
    topics = {}
    for _ in range(uvarint() - 1):
        name = cstring()
        parts = []
        for _ in range(uvarint() - 1):
            parts.append(struct.unpack_from(">i", data, pos)[0])
            pos += 4
        uvarint()  # tagged fields
        topics[name] = parts
    return error, state, pid, epoch, topics


def find_coordinators_v4(conn, key_type, keys):
    """FindCoordinator v4 (batched): [(key, node, port, error)]."""
    body = conn.request(10, 4, bytes([key_type]) + w.uvarint(len(keys) + 1) +
                        b"".join(w.compact_string(k) for k in keys) + b"\x00", flexible=True)
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
    return answers


# ---------------------------------------------------------------- scenarios

def test_commit_and_abort(eddy, client):
    nc.create_topic(eddy, "tx-out", 3)
    nc.create_topic(eddy, "tx-out-in", 3)
    result, _run = nc.run_for_result(client + ["txn", eddy.bootstrap, "tx-ca", "tx-out", "3", "tx-group", "commit",
                                               "0", "30"], eddy.tmp, "txn-commit", 120)
    assert result["error"] is None and result["delivered"] == 30, "committed transaction: %r" % result
    committed = nc.committed_offsets(eddy, "tx-group")
    assert committed == {("tx-out-in", p): 30 for p in range(3)}, \
        "the committed transaction's offsets are the group's: %r" % committed

    result, _run = nc.run_for_result(client + ["txn", eddy.bootstrap, "tx-ca", "tx-out", "3", "tx-group", "abort",
                                               "30", "30"], eddy.tmp, "txn-abort", 120)
    assert result["error"] is None and result["delivered"] == 30, "aborted transaction: %r" % result
    assert nc.committed_offsets(eddy, "tx-group") == committed, "the aborted transaction's offsets are dropped"

    # Both transactions' records, in order, and one marker each per partition.
    result, _run = nc.run_for_result(client + ["consume", eddy.bootstrap, "tx-out", "3", "60", "30",
                                               "read_uncommitted"], eddy.tmp, "read-uncommitted", 60)
    values = sorted(v for _p, _o, v in result["records"])
    assert values == [nc.value_of(i) for i in range(60)], "read_uncommitted sees both transactions"
    for p in range(3):
        offsets = [o for q, o, _v in result["records"] if q == p]
        assert offsets == list(range(10)) + list(range(11, 21)), \
            "partition %d: the COMMIT marker took offset 10: %r" % (p, offsets)
    markers, records = control_batches(eddy, "tx-out", 3)
    assert records == 60
    for p in range(3):
        assert [(o, kind) for o, kind, _pid, _e in markers[p]] == [(10, "COMMIT"), (21, "ABORT")], \
            "partition %d: markers %r" % (p, markers[p])
    with w.Connection(eddy.port) as conn:
        error, state, _pid, _epoch, topics = describe_transaction(conn, "tx-ca")
    assert (error, state, topics) == (NONE, "CompleteAbort", {}), "DescribeTransactions after the abort"


def test_second_producer_fences_the_first(eddy, client):
    nc.ensure_topic(eddy, "tx-fence", 3)
    result, _run = nc.run_for_result(client + ["fence", eddy.bootstrap, "tx-fence-id", "tx-fence", "3"],
                                     eddy.tmp, "fence", 120)
    assert result["b_init"] is None, "the second producer initializes: %r" % result
    assert result["a_commit"] is not None and result["a_commit"]["fatal"], \
        "the first producer is fenced (a fatal error): %r" % result
    assert "FENCED" in result["a_commit"]["name"] or "FENCED" in result["a_commit"]["text"].upper() or \
        any("fenced" in e.lower() for e in result["a_errors"]), "the error says fenced: %r" % result
    assert result["b_commit"] is None, "the second producer commits: %r" % result
    markers, records = control_batches(eddy, "tx-fence", 3)
    for p in range(3):
        kinds = [(kind, epoch) for _o, kind, _pid, epoch in markers[p]]
        assert kinds == [("ABORT", 1), ("COMMIT", 2)], \
            "partition %d: A's transaction aborted with the fencing epoch, then B's committed: %r" % (p, kinds)
    assert records == 3 + 3, "A's first records (aborted) and B's; A's late ones refused"


def test_abandoned_transaction_is_aborted_after_its_timeout(eddy, client):
    nc.ensure_topic(eddy, "tx-open", 3)
    run = nc.ClientRun(client + ["open", eddy.bootstrap, "tx-open-id", "tx-open", "3", "6", "3000"],
                       eddy.tmp, "open")
    try:
        event = run.wait_event(lambda e: e["event"] == "open", 60, "the transaction is open")
        assert event["delivered"] == 6, "records written in the open transaction: %r" % event
        with w.Connection(eddy.port) as conn:
            error, state, pid, epoch, topics = describe_transaction(conn, "tx-open-id")
        assert (error, state, topics) == (NONE, "Ongoing", {"tx-open": [0, 1, 2]}), "the transaction is open"
        os.kill(run.proc.pid, signal.SIGKILL)
    finally:
        run.kill()

    def aborted():
        with w.Connection(eddy.port) as conn:
            return describe_transaction(conn, "tx-open-id")[1] == "CompleteAbort"

    eddy_fixture.wait_until(aborted, 20, "the coordinator aborts the transaction after its 3 s timeout")
    with w.Connection(eddy.port) as conn:
        _e, _s, pid2, epoch2, _t = describe_transaction(conn, "tx-open-id")
    assert (pid2, epoch2) == (pid, epoch + 1), "aborted with the epoch bumped: the killed producer is fenced"
    assert "tx-open-id" in eddy.log_text() and "longer than its timeout" in eddy.log_text()
    markers, _records = control_batches(eddy, "tx-open", 3)
    for p in range(3):
        assert [(kind, e) for _o, kind, _pid, e in markers[p]] == [("ABORT", epoch + 1)], \
            "partition %d: %r" % (p, markers[p])
    # The zombie's epoch is refused by the partitions now.
    with w.Connection(eddy.port) as conn:
        assert produce_batch(conn, "tx-open", 0, transactional_batch(pid, epoch, 2)) == INVALID_PRODUCER_EPOCH


def test_bad_input(eddy):
    nc.ensure_topic(eddy, "tx-bad", 2)
    with w.Connection(eddy.port) as conn:
        assert find_coordinators_v4(conn, 1, ["tx-a", "tx-b"]) == [("tx-a", 1, eddy.port, NONE),
                                                                  ("tx-b", 1, eddy.port, NONE)], \
            "FindCoordinator v4 for two transactional ids: this node for both"
        assert init_producer_id(conn, "")[0] == INVALID_REQUEST, "an empty transactional id"
        assert init_producer_id(conn, "tx-bad-id", timeout_ms=120001)[0] == INVALID_TRANSACTION_TIMEOUT
        error, pid, epoch = init_producer_id(conn, "tx-bad-id")
        assert (error, epoch) == (NONE, 0)
        assert end_txn(conn, "tx-bad-id", pid, epoch, True) == INVALID_TXN_STATE, "EndTxn without a transaction"
        assert end_txn(conn, "tx-bad-id", pid + 1000, epoch, False) == INVALID_PRODUCER_ID_MAPPING
        assert end_txn(conn, "", pid, epoch, False) == INVALID_REQUEST
        # A wrong epoch: INVALID_PRODUCER_EPOCH before v2, PRODUCER_FENCED from v2.
        assert add_partitions(conn, 1, "tx-bad-id", pid, epoch + 1, [("tx-bad", [0])]) == \
            {("tx-bad", 0): INVALID_PRODUCER_EPOCH}
        assert add_partitions(conn, 2, "tx-bad-id", pid, epoch + 1, [("tx-bad", [0])]) == \
            {("tx-bad", 0): PRODUCER_FENCED}
        # An unknown partition fails the request; the others are not attempted.
        assert add_partitions(conn, 1, "tx-bad-id", pid, epoch, [("tx-bad", [0, 7]), ("tx-nope", [0])]) == \
            {("tx-bad", 0): OPERATION_NOT_ATTEMPTED, ("tx-bad", 7): UNKNOWN_TOPIC_OR_PARTITION,
             ("tx-nope", 0): UNKNOWN_TOPIC_OR_PARTITION}
        assert add_partitions(conn, 1, "tx-bad-id", pid, epoch, [("tx-bad", [0])]) == {("tx-bad", 0): NONE}
        # TxnOffsetCommit for a group the transaction never added.
        assert txn_offset_commit(conn, "tx-bad-id", "tx-bad-group", pid, epoch, "tx-bad", 0, 5) == INVALID_TXN_STATE
        assert add_offsets(conn, "tx-bad-id", pid, epoch, "tx-bad-group") == NONE
        assert txn_offset_commit(conn, "tx-bad-id", "tx-bad-group", pid, epoch, "tx-bad", 0, 5) == NONE
        # Produce: a control batch from a client; a partition not added; a stale epoch.
        assert produce_batch(conn, "tx-bad", 0, transactional_batch(pid, epoch, 0, control=True)) == INVALID_RECORD
        assert produce_batch(conn, "tx-bad", 1, transactional_batch(pid, epoch, 0)) == INVALID_TXN_STATE
        assert produce_batch(conn, "tx-bad", 0, transactional_batch(pid, epoch + 1, 0)) == INVALID_PRODUCER_EPOCH
        assert produce_batch(conn, "tx-bad", 0, transactional_batch(pid, epoch, 0, count=2)) == NONE
        # The same producer outside its open transaction (Kafka's ProducerAppendInfo).
        assert produce_batch(conn, "tx-bad", 0, transactional_batch(pid, epoch, 2, transactional=False)) == \
            INVALID_TXN_STATE
        assert end_txn(conn, "tx-bad-id", pid, epoch, True) == NONE
        eddy_fixture.wait_until(lambda: describe_transaction(conn, "tx-bad-id")[1] == "CompleteCommit", 10,
                                "the commit completes")
    markers, records = control_batches(eddy, "tx-bad", 2)
    assert records == 2 and [k for _o, k, _p, _e in markers[0]] == ["COMMIT"] and markers[1] == [], \
        "only the accepted batch and its marker are stored: %r" % markers
    assert nc.committed_offsets(eddy, "tx-bad-group") == {("tx-bad", 0): 5}


def test_restart_keeps_an_open_transaction(eddy_factory):
    broker = eddy_factory()
    nc.create_topic(broker, "tx-restart", 1)
    with w.Connection(broker.port) as conn:
        error, pid, epoch = init_producer_id(conn, "tx-restart-id")
        assert add_partitions(conn, 1, "tx-restart-id", pid, epoch, [("tx-restart", [0])]) == \
            {("tx-restart", 0): NONE}
        assert produce_batch(conn, "tx-restart", 0, transactional_batch(pid, epoch, 0)) == NONE
    broker.restart(signal.SIGKILL)
    with w.Connection(broker.port) as conn:
        assert describe_transaction(conn, "tx-restart-id")[:4] == (NONE, "Ongoing", pid, epoch), \
            "the open transaction survives SIGKILL"
        assert produce_batch(conn, "tx-restart", 0, transactional_batch(pid, epoch, 1)) == NONE
        assert end_txn(conn, "tx-restart-id", pid, epoch, False) == NONE
        eddy_fixture.wait_until(lambda: describe_transaction(conn, "tx-restart-id")[1] == "CompleteAbort", 10,
                                "the abort completes")
    markers, records = control_batches(broker, "tx-restart", 1)
    assert records == 2 and [(o, k) for o, k, _p, _e in markers[0]] == [(2, "ABORT")]


def offset_fetch_stable(conn, group, topic, partition):
    """OffsetFetch v7 with require_stable: (error code, committed offset) of
    one partition."""
    body = (w.compact_string(group) + w.uvarint(2) + w.compact_string(topic) + w.uvarint(2) +
            struct.pack(">i", partition) + b"\x00" + b"\x01" + b"\x00")
    data = conn.request(9, 7, body, flexible=True)
    pos = 4 + 1  # throttle, one topic
    pos += 1 + data[pos] - 1  # its name
    pos += 1  # one partition
    _p, offset, _epoch = struct.unpack_from(">iqi", data, pos)
    pos += 16
    metadata_len = data[pos] - 1
    pos += 1 + max(metadata_len, 0)
    (error,) = struct.unpack_from(">h", data, pos)
    return error, offset


def test_require_stable_sees_staged_offsets(eddy):
    UNSTABLE_OFFSET_COMMIT = 88
    nc.ensure_topic(eddy, "tx-stable", 1)
    with w.Connection(eddy.port) as conn:
        error, pid, epoch = init_producer_id(conn, "tx-stable-id")
        assert add_offsets(conn, "tx-stable-id", pid, epoch, "tx-stable-group") == NONE
        assert txn_offset_commit(conn, "tx-stable-id", "tx-stable-group", pid, epoch, "tx-stable", 0, 7) == NONE
        assert offset_fetch_stable(conn, "tx-stable-group", "tx-stable", 0) == (UNSTABLE_OFFSET_COMMIT, -1), \
            "an open transaction's offsets are unstable"
        assert nc.committed_offsets(eddy, "tx-stable-group") == {}, "and not committed (OffsetFetch v<7)"
        assert end_txn(conn, "tx-stable-id", pid, epoch, True) == NONE
        eddy_fixture.wait_until(lambda: offset_fetch_stable(conn, "tx-stable-group", "tx-stable", 0) == (NONE, 7),
                                10, "the committed offset, stable")


def test_kafka_transactions_lists_and_describes(eddy):
    import kafka_fixture
    nc.ensure_topic(eddy, "tx-tool", 2)
    with w.Connection(eddy.port) as conn:
        error, pid, epoch = init_producer_id(conn, "tx-tool-id")
        assert add_partitions(conn, 1, "tx-tool-id", pid, epoch, [("tx-tool", [0, 1])]) == \
            {("tx-tool", 0): NONE, ("tx-tool", 1): NONE}

    def tool(*args):
        r = kafka_fixture.java_tool("org.apache.kafka.tools.TransactionsCommand",
                                    ["--bootstrap-server", eddy.bootstrap] + list(args))
        out = r.stdout.decode()
        assert r.returncode == 0, "kafka-transactions %s: %s" % (" ".join(args), out + r.stderr.decode()[-3000:])
        return [line.split() for line in out.splitlines() if line.strip()]

    rows = tool("list")
    assert rows[0][:4] == ["TransactionalId", "Coordinator", "ProducerId", "TransactionState"], rows
    assert ["tx-tool-id", "1", str(pid), "Ongoing"] in rows, "kafka-transactions list: %r" % rows
    rows = tool("describe", "--transactional-id", "tx-tool-id")
    header, row = rows[0], rows[1]
    described = dict(zip(header, row))
    assert (described["ProducerId"], described["ProducerEpoch"], described["TransactionState"]) == \
        (str(pid), str(epoch), "Ongoing"), "kafka-transactions describe: %r" % rows
    assert sorted(described["TopicPartitions"].split(",")) == ["tx-tool-0", "tx-tool-1"]
    with w.Connection(eddy.port) as conn:
        assert end_txn(conn, "tx-tool-id", pid, epoch, False) == NONE


def test_transactional_id_acls(eddy_factory):
    """Kafka's StandardAuthorizer rules with allow.everyone.if.no.acl.found:
    a transactional id no ACL names is open (TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    only when ACLs say so); DENY ACLs added with kafka-acls refuse the id,
    a topic (AddPartitionsToTxn) and a group (AddOffsetsToTxn)."""
    import kafka_fixture
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
    TOPIC_AUTHORIZATION_FAILED = 29
    GROUP_AUTHORIZATION_FAILED = 30
    broker = eddy_factory({"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                           "allow.everyone.if.no.acl.found": "true"})
    nc.create_topic(broker, "acl-open", 1)
    nc.create_topic(broker, "acl-closed", 1)

    def deny(*resource):
        r = kafka_fixture.java_tool("org.apache.kafka.tools.AclCommand",
                                    ["--bootstrap-server", broker.bootstrap, "--add", "--deny-principal",
                                     "User:ANONYMOUS"] + list(resource))
        assert r.returncode == 0, r.stdout.decode() + r.stderr.decode()[-3000:]

    with w.Connection(broker.port) as conn:
        error, pid, epoch = init_producer_id(conn, "acl-tx")
        assert error == NONE, "no ACL names the transactional id: allowed"
    deny("--operation", "Write", "--transactional-id", "acl-denied")
    deny("--operation", "Write", "--topic", "acl-closed")
    deny("--operation", "Read", "--group", "acl-group")
    with w.Connection(broker.port) as conn:
        assert init_producer_id(conn, "acl-denied")[0] == TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        body = conn.request(10, 1, w.string("acl-denied") + b"\x01")
        assert struct.unpack_from(">h", body, 4)[0] == TRANSACTIONAL_ID_AUTHORIZATION_FAILED, \
            "FindCoordinator needs DESCRIBE on the transactional id"
        assert end_txn(conn, "acl-denied", pid, epoch, True) == TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        assert add_partitions(conn, 1, "acl-denied", pid, epoch, [("acl-open", [0])]) == \
            {("acl-open", 0): TRANSACTIONAL_ID_AUTHORIZATION_FAILED}
        assert txn_offset_commit(conn, "acl-denied", "g", pid, epoch, "acl-open", 0, 1) == \
            TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        assert add_partitions(conn, 1, "acl-tx", pid, epoch, [("acl-open", [0]), ("acl-closed", [0])]) == \
            {("acl-open", 0): OPERATION_NOT_ATTEMPTED, ("acl-closed", 0): TOPIC_AUTHORIZATION_FAILED}
        assert add_offsets(conn, "acl-tx", pid, epoch, "acl-group") == GROUP_AUTHORIZATION_FAILED
        assert add_partitions(conn, 1, "acl-tx", pid, epoch, [("acl-open", [0])]) == {("acl-open", 0): NONE}
        assert end_txn(conn, "acl-tx", pid, epoch, True) == NONE
    assert "may not WRITE TRANSACTIONAL_ID 'acl-denied'" in broker.log_text(), broker.log_text()[-3000:]


def test_restart_completes_a_transaction_found_prepared(eddy_factory):
    """A stop between PrepareCommit and CompleteCommit (made by hand in
    eddy.db: the window is too short to hit with a kill): at startup the
    coordinator writes the COMMIT markers and applies the staged offsets."""
    import sqlite3
    broker = eddy_factory()
    nc.create_topic(broker, "tx-prepared", 2)
    with w.Connection(broker.port) as conn:
        error, pid, epoch = init_producer_id(conn, "tx-prepared-id")
        assert add_partitions(conn, 1, "tx-prepared-id", pid, epoch, [("tx-prepared", [0, 1])]) == \
            {("tx-prepared", 0): NONE, ("tx-prepared", 1): NONE}
        assert produce_batch(conn, "tx-prepared", 1, transactional_batch(pid, epoch, 0, count=3)) == NONE
        assert add_offsets(conn, "tx-prepared-id", pid, epoch, "tx-prepared-group") == NONE
        assert txn_offset_commit(conn, "tx-prepared-id", "tx-prepared-group", pid, epoch, "tx-prepared", 0, 9) \
            == NONE
    assert broker.stop() == 0
    db = sqlite3.connect(os.path.join(broker.data_dir, "eddy.db"))
    with db:
        db.execute("UPDATE transactions SET state = 2 WHERE transactional_id = 'tx-prepared-id'")  # PrepareCommit
    db.close()
    broker.start()
    with w.Connection(broker.port) as conn:
        eddy_fixture.wait_until(lambda: describe_transaction(conn, "tx-prepared-id")[1] == "CompleteCommit", 10,
                                "the prepared commit completes at startup")
    assert "was in PrepareCommit: writing its markers again" in broker.log_text()
    markers, records = control_batches(broker, "tx-prepared", 2)
    assert records == 3
    assert [(o, k) for o, k, _p, _e in markers[0]] == [(0, "COMMIT")] and \
        [(o, k) for o, k, _p, _e in markers[1]] == [(3, "COMMIT")], markers
    assert nc.committed_offsets(broker, "tx-prepared-group") == {("tx-prepared", 0): 9}


def test_java_transactional_producer(eddy):
    """Kafka 4.4's Java producer in transactional mode (kafka-producer-perf-test
    with --transactional-id, a commit every 100 ms): every record is stored
    in a transactional batch and every transaction ends with COMMIT markers."""
    import kafka_fixture
    nc.ensure_topic(eddy, "tx-java", 3)
    r = kafka_fixture.java_tool("org.apache.kafka.tools.ProducerPerformance",
                                ["--topic", "tx-java", "--num-records", "20000", "--record-size", "100",
                                 "--throughput", "-1", "--transactional-id", "tx-java-id",
                                 "--transaction-duration-ms", "100", "--command-property",
                                 "bootstrap.servers=" + eddy.bootstrap, "acks=all"],
                                timeout=180)
    out = r.stdout.decode()
    assert r.returncode == 0 and "20000 records sent" in out, out + r.stderr.decode()[-3000:]
    markers, records = control_batches(eddy, "tx-java", 3)
    assert records == 20000, "every record stored (in transactional batches)"
    kinds = {kind for rows in markers.values() for _o, kind, _p, _e in rows}
    assert kinds == {"COMMIT"} and all(markers[p] for p in range(3)), \
        "each partition's transactions end with COMMIT markers: %r" % {p: len(m) for p, m in markers.items()}
    with w.Connection(eddy.port) as conn:
        assert describe_transaction(conn, "tx-java-id")[1] == "CompleteCommit"
