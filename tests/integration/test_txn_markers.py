"""WriteTxnMarkers (API 27) and DescribeProducers (API 61): Kafka 4.4's
kafka-transactions (TransactionsCommand) describe-producers, find-hanging
and abort against one eddy, and raw frames.
  1. A transaction left open in a partition (raw InitProducerId,
     AddPartitionsToTxn, a transactional Produce after one plain record):
     describe-producers shows its producer and start offset; find-hanging
     finds none while the coordinator knows the transaction. Its id is then
     taken out of eddy.db (a coordinator that lost its state: the transaction
     hangs) and eddy restarted: find-hanging lists it; `abort --start-offset`
     writes the ABORT marker; the LSO moves past it, a read_committed
     consumer (confluent-kafka, newest) gets the records after it and never
     the aborted ones, describe-producers and find-hanging show nothing open.
  2. Bad input, raw WriteTxnMarkers v0 and v1: unknown topics and
     partitions, a stale producer epoch, per-partition errors; the
     connection stays open and nothing stored changes.
  3. ACLs (StandardAuthorizer): without ALTER or CLUSTER_ACTION on the
     cluster every partition is refused with CLUSTER_AUTHORIZATION_FAILED,
     nothing written; DescribeProducers needs READ on the topic.
Run alone: EDDY_BIN=build/eddy EDDY_SOURCE_DIR=. /usr/bin/python3 -m pytest -q
tests/integration/test_txn_markers.py"""

import os
import sqlite3
import struct

import eddy_fixture
import kafka_fixture
import kafka_wire as w
import newest_clients as nc

NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
TOPIC_AUTHORIZATION_FAILED = 29
CLUSTER_AUTHORIZATION_FAILED = 31
INVALID_PRODUCER_EPOCH = 47
TRANSACTIONS = "org.apache.kafka.tools.TransactionsCommand"


# ---------------------------------------------------------------- raw frames

def init_producer_id(conn, transactional_id, timeout_ms=600000):
    body = w.string(transactional_id) + struct.pack(">i", timeout_ms)
    _throttle, error, pid, epoch = struct.unpack_from(">ihqh", conn.request(22, 1, body))
    assert error == NONE, "InitProducerId: error %d" % error
    return pid, epoch


def add_partition(conn, transactional_id, pid, epoch, topic, partition):
    body = w.string(transactional_id) + struct.pack(">qh", pid, epoch) + w.array(
        [w.string(topic) + w.array([struct.pack(">i", partition)])])
    data = conn.request(24, 1, body)
    (tlen,) = struct.unpack_from(">h", data, 8)
    _p, error = struct.unpack_from(">ih", data, 8 + 2 + tlen + 4)
    assert error == NONE, "AddPartitionsToTxn: error %d" % error


def batch(values, pid=-1, epoch=-1, sequence=-1, transactional=False):
    records = b"".join(w.record(i, b"k", v) for i, v in enumerate(values))
    ts = 1700000000000
    after_crc = struct.pack(">hiqqqhii", 0x10 if transactional else 0, len(values) - 1, ts, ts, pid, epoch, sequence,
                            len(values)) + records
    return struct.pack(">qiibI", 0, 4 + 1 + 4 + len(after_crc), 0, 2, w.crc32c(after_crc)) + after_crc


def produce(conn, topic, partition, records):
    error, offset = w.produce(conn, topic, partition, records)
    assert error == NONE, "Produce to %s-%d: error %d" % (topic, partition, error)
    return offset


def list_offset(conn, topic, partition, read_committed):
    """ListOffsets v2, latest: the LSO (read_committed) or high watermark."""
    body = struct.pack(">ib", -1, 1 if read_committed else 0) + w.array(
        [w.string(topic) + w.array([struct.pack(">iq", partition, -1)])])
    data = conn.request(2, 2, body)
    (tlen,) = struct.unpack_from(">h", data, 8)
    _p, error, _ts, offset = struct.unpack_from(">ihqq", data, 8 + 2 + tlen + 4)
    assert error == NONE
    return offset


def write_txn_markers(conn, version, markers):
    """WriteTxnMarkers v0 or v1 (flexible) of markers [(pid, epoch, commit,
    coordinator epoch, [(topic, [partitions])])]: [(pid, {(topic, partition):
    error})], one per marker."""
    flexible = version >= 1

    def arr(items):
        return (w.uvarint(len(items) + 1) if flexible else struct.pack(">i", len(items))) + b"".join(items)

    def text(s):
        return w.compact_string(s) if flexible else w.string(s)

    tags = b"\x00" if flexible else b""
    body = arr([struct.pack(">qhb", pid, epoch, 1 if commit else 0) +
                arr([text(t) + arr([struct.pack(">i", p) for p in ps]) + tags for t, ps in topics]) +
                struct.pack(">i", coordinator_epoch) + tags
                for pid, epoch, commit, coordinator_epoch, topics in markers]) + tags
    data = conn.request(27, version, body, flexible=flexible)
    pos = 0

    def count():
        nonlocal pos
        if flexible:
            n, shift = 0, 0
            while True:
                b = data[pos]
                pos += 1
                n |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    return n - 1
        (n,) = struct.unpack_from(">i", data, pos)
        pos += 4
        return n

    def name():
        nonlocal pos
        if flexible:
            n = count()
        else:
            (n,) = struct.unpack_from(">h", data, pos)
            pos += 2
        s = data[pos:pos + n].decode()
        pos += n
        return s

    out = []
    for _ in range(count()):
        (pid,) = struct.unpack_from(">q", data, pos)
        pos += 8
        errors = {}
        for _ in range(count()):
            topic = name()
            for _ in range(count()):
                p, e = struct.unpack_from(">ih", data, pos)
                pos += 6 + (1 if flexible else 0)
                errors[(topic, p)] = e
            pos += 1 if flexible else 0
        pos += 1 if flexible else 0
        out.append((pid, errors))
    return out


def describe_producers(conn, topic, partition):
    """DescribeProducers v0 (flexible) of one partition: (error, [(pid,
    epoch, last sequence, last timestamp, coordinator epoch, txn start
    offset)])."""
    body = w.uvarint(2) + w.compact_string(topic) + w.uvarint(2) + struct.pack(">i", partition) + b"\x00\x00"
    data = conn.request(61, 0, body, flexible=True)
    pos = 4 + 1  # throttle, one topic
    pos += data[pos]  # its name (compact: length + 1)
    pos += 1  # one partition
    _p, error = struct.unpack_from(">ih", data, pos)
    pos += 6
    pos += max(data[pos], 1)  # error message (compact nullable)
    count = data[pos] - 1
    pos += 1
    producers = []
    for _ in range(count):
        producers.append(struct.unpack_from(">qiiqiq", data, pos))
        pos += 36 + 1  # and its tagged fields
    return error, producers


def tool(broker, *args, check=True):
    r = kafka_fixture.java_tool(TRANSACTIONS, ["--bootstrap-server", broker.bootstrap] + list(args))
    out = r.stdout.decode()
    if check:
        assert r.returncode == 0, "kafka-transactions %s: %s" % (" ".join(args), out + r.stderr.decode()[-3000:])
    return r.returncode, [line.split() for line in out.splitlines() if line.strip()], r.stderr.decode()


def table(rows):
    """A kafka-transactions table as dicts (header row first)."""
    return [dict(zip(rows[0], row)) for row in rows[1:]] if rows else []


def log_end(conn, topic, partition):
    return list_offset(conn, topic, partition, read_committed=False)


# ---------------------------------------------------------------- scenarios

def test_kafka_transactions_aborts_a_hanging_transaction(eddy_factory):
    broker = eddy_factory()
    nc.create_topic(broker, "hang", 1)
    with w.Connection(broker.port) as conn:
        assert produce(conn, "hang", 0, batch([b"before"])) == 0
        pid, epoch = init_producer_id(conn, "hang-id")
        add_partition(conn, "hang-id", pid, epoch, "hang", 0)
        assert produce(conn, "hang", 0, batch([b"aborted-1", b"aborted-2", b"aborted-3"], pid, epoch, 0,
                                              transactional=True)) == 1
        assert produce(conn, "hang", 0, batch([b"after"])) == 4
        assert list_offset(conn, "hang", 0, read_committed=True) == 1, "the open transaction holds the LSO"
        error, producers = describe_producers(conn, "hang", 0)
        assert error == NONE and [(p[0], p[1], p[2], p[4], p[5]) for p in producers] == [(pid, epoch, 2, -1, 1)], \
            "DescribeProducers: the producer, last sequence 2, no marker yet, its transaction from offset 1: %r" \
            % producers

    _rc, rows, _err = tool(broker, "describe-producers", "--topic", "hang", "--partition", "0")
    described = table(rows)
    assert [(d["ProducerId"], d["ProducerEpoch"], d["LatestCoordinatorEpoch"], d["LastSequence"],
             d["CurrentTransactionStartOffset"]) for d in described] == [(str(pid), str(epoch), "-1", "2", "1")], \
        "kafka-transactions describe-producers: %r" % rows
    # The coordinator knows the transaction: not hanging (find-hanging asks
    # DescribeProducers, ListTransactions by producer id, DescribeTransactions).
    _rc, rows, _err = tool(broker, "find-hanging", "--broker-id", "1", "--max-transaction-timeout", "0")
    assert rows[0][:3] == ["Topic", "Partition", "ProducerId"] and len(rows) == 1, \
        "find-hanging while the coordinator knows the transaction: %r" % rows

    # The coordinator loses the transaction: it hangs in the partition.
    assert broker.stop() == 0
    db = sqlite3.connect(os.path.join(broker.data_dir, "eddy.db"))
    with db:
        for table_name in ("transaction_partitions", "transaction_groups", "transactions"):
            db.execute("DELETE FROM %s WHERE transactional_id = 'hang-id'" % table_name)
    db.close()
    broker.start()
    with w.Connection(broker.port) as conn:
        assert list_offset(conn, "hang", 0, read_committed=True) == 1, "still open after the restart"
    _rc, rows, _err = tool(broker, "find-hanging", "--broker-id", "1", "--max-transaction-timeout", "0")
    hanging = table(rows)
    assert [(h["Topic"], h["Partition"], h["ProducerId"], h["StartOffset"]) for h in hanging] == \
        [("hang", "0", str(pid), "1")], "find-hanging lists the lost transaction: %r" % rows

    # A read_committed consumer is held at the LSO: only the record before it.
    client = [nc.provision("confluent-kafka %s (venv)" % nc.CONFLUENT_KAFKA, nc.venv_python),
              os.path.join(nc.CLIENTS, "confluent_txn_client.py")]
    result, _run = nc.run_for_result(client + ["consume", broker.bootstrap, "hang", "1", "2", "3", "read_committed"],
                                     broker.tmp, "read-committed-held", 60)
    assert [(o, v) for _p, o, v in result["records"]] == [(0, "before")], \
        "read_committed stops at the open transaction: %r" % result

    tool(broker, "abort", "--topic", "hang", "--partition", "0", "--start-offset", "1")
    with w.Connection(broker.port) as conn:
        assert log_end(conn, "hang", 0) == 6, "the ABORT marker took offset 5"
        eddy_fixture.wait_until(lambda: list_offset(conn, "hang", 0, read_committed=True) == 6, 10,
                                "the LSO moves past the aborted transaction")
        error, producers = describe_producers(conn, "hang", 0)
        assert error == NONE and [(p[0], p[4], p[5]) for p in producers] == [(pid, 0, -1)], \
            "nothing open; the abort tool's coordinator epoch (0) recorded: %r" % producers
    markers = []
    with w.Connection(broker.port) as conn:
        for base, _last, data in w.fetch_all(conn, "hang", 0):
            attributes = struct.unpack_from(">h", data, 21)[0]
            if attributes & 0x20:
                (_off, key, value, _h), = w.parse_records(data)
                markers.append((base, struct.unpack(">hh", key)[1], struct.unpack_from(">hi", value)[1],
                                struct.unpack_from(">qh", data, 43)))
    assert markers == [(5, 0, 0, (pid, epoch))], "one ABORT marker of the producer's epoch: %r" % markers

    result, _run = nc.run_for_result(client + ["consume", broker.bootstrap, "hang", "1", "2", "10", "read_committed"],
                                     broker.tmp, "read-committed-after", 60)
    assert [(o, v) for _p, o, v in result["records"]] == [(0, "before"), (4, "after")], \
        "read_committed: the records around the aborted transaction, never its own: %r" % result
    _rc, rows, _err = tool(broker, "find-hanging", "--broker-id", "1", "--max-transaction-timeout", "0")
    assert len(rows) == 1, "nothing hangs after the abort: %r" % rows
    _rc, rows, _err = tool(broker, "describe-producers", "--topic", "hang", "--partition", "0")
    assert [d["CurrentTransactionStartOffset"] for d in table(rows)] == ["None"], rows
    # No open transaction starts at offset 1 any more: the tool says so.
    rc, _rows, err = tool(broker, "abort", "--topic", "hang", "--partition", "0", "--start-offset", "1",
                          check=False)
    assert rc != 0 and "Could not find any open transactions starting at offset 1" in err, err[-2000:]


def test_bad_input(eddy):
    nc.ensure_topic(eddy, "markers-bad", 2)
    with w.Connection(eddy.port) as conn:
        assert produce(conn, "markers-bad", 0, batch([b"kept"])) == 0
        for version in (0, 1):
            answer = write_txn_markers(conn, version, [
                (4242, 0, True, 0, [("markers-bad", [7, -1]), ("markers-nope", [0]), ("", [0])]),
                (4243, 0, False, 0, [])])
            assert answer == [(4242, {("markers-bad", 7): UNKNOWN_TOPIC_OR_PARTITION,
                                      ("markers-bad", -1): UNKNOWN_TOPIC_OR_PARTITION,
                                      ("markers-nope", 0): UNKNOWN_TOPIC_OR_PARTITION,
                                      ("", 0): UNKNOWN_TOPIC_OR_PARTITION}),
                              (4243, {})], "v%d: %r" % (version, answer)
        assert write_txn_markers(conn, 1, []) == [], "no markers: an empty answer"
        # A producer whose epoch 1 wrote here (InitProducerId twice): a
        # marker of epoch 0 is stale.
        init_producer_id(conn, "markers-bad-id")
        pid, epoch = init_producer_id(conn, "markers-bad-id")
        assert epoch == 1
        add_partition(conn, "markers-bad-id", pid, epoch, "markers-bad", 1)
        assert produce(conn, "markers-bad", 1, batch([b"t"], pid, epoch, 0, transactional=True)) == 0
        assert write_txn_markers(conn, 1, [(pid, epoch - 1, False, 0, [("markers-bad", [1])])]) == \
            [(pid, {("markers-bad", 1): INVALID_PRODUCER_EPOCH})]
        assert log_end(conn, "markers-bad", 0) == 1 and log_end(conn, "markers-bad", 1) == 1, \
            "nothing written by the refused markers"
        # The connection is still usable.
        assert list_offset(conn, "markers-bad", 0, read_committed=True) == 1
    with w.Connection(eddy.port) as conn:
        # Ends the transaction as the coordinator would (and frees the LSO).
        assert write_txn_markers(conn, 0, [(pid, epoch, False, 0, [("markers-bad", [1])])]) == \
            [(pid, {("markers-bad", 1): NONE})]
        assert list_offset(conn, "markers-bad", 1, read_committed=True) == 2
        records = [v for _b, _l, data in w.fetch_all(conn, "markers-bad", 0) for _o, _k, v, _h in w.parse_records(data)]
        assert records == [b"kept"], "the stored record is intact: %r" % records


def test_acls(eddy_factory):
    broker = eddy_factory({"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                           "allow.everyone.if.no.acl.found": "true"})
    nc.create_topic(broker, "markers-acl", 1)
    nc.create_topic(broker, "markers-secret", 1)

    def deny(*resource):
        r = kafka_fixture.java_tool("org.apache.kafka.tools.AclCommand",
                                    ["--bootstrap-server", broker.bootstrap, "--add", "--deny-principal",
                                     "User:ANONYMOUS"] + list(resource))
        assert r.returncode == 0, r.stdout.decode() + r.stderr.decode()[-3000:]

    deny("--operation", "Read", "--topic", "markers-secret")
    deny("--operation", "ClusterAction", "--operation", "Alter", "--cluster")  # last: CreateAcls needs ALTER
    with w.Connection(broker.port) as conn:
        for version in (0, 1):
            answer = write_txn_markers(conn, version, [(4242, 0, False, 0, [("markers-acl", [0]),
                                                                            ("markers-none", [3])])])
            assert answer == [(4242, {("markers-acl", 0): CLUSTER_AUTHORIZATION_FAILED,
                                      ("markers-none", 3): CLUSTER_AUTHORIZATION_FAILED})], \
                "v%d without ALTER or CLUSTER_ACTION on the cluster: %r" % (version, answer)
        assert log_end(conn, "markers-acl", 0) == 0, "nothing written"
        assert describe_producers(conn, "markers-secret", 0) == (TOPIC_AUTHORIZATION_FAILED, [])
        assert describe_producers(conn, "markers-acl", 0) == (NONE, []), "READ allowed: no producers yet"
    assert "may not CLUSTER_ACTION CLUSTER" in broker.log_text(), broker.log_text()[-3000:]
