"""Idempotent producer, protocol level: InitProducerId and Produce requests
built by hand (kafka-python 2.0 has no idempotent producer), each answer
checked, and after every refused or duplicate batch the log end offset
checked unchanged: nothing written. Then the state across a clean restart
(snapshot) and a SIGKILL (log replay); then, on a second broker with short
intervals, a restart served from a periodic snapshot without replay, and
producer.id.expiration.ms."""

import signal
import struct

import pytest

import eddy_fixture
import kafka_wire as w

TOPIC = "idem"

# Kafka error codes.
NONE = 0
INVALID_REQUEST = 42
OUT_OF_ORDER_SEQUENCE_NUMBER = 45
DUPLICATE_SEQUENCE_NUMBER = 46
INVALID_PRODUCER_EPOCH = 47
UNKNOWN_PRODUCER_ID = 59
PRODUCER_FENCED = 90


def idempotent_batch(producer_id, epoch, sequence, count, tag="m"):
    """A v2 batch of count records carrying the producer fields."""
    records = b"".join(w.record(i, b"k", ("%s-%d" % (tag, sequence + i)).encode()) for i in range(count))
    ts = 1700000000000
    after_crc = struct.pack(">hiqqqhii", 0, count - 1, ts, ts, producer_id, epoch, sequence, count) + records
    crc = w.crc32c(after_crc)
    return struct.pack(">qiibI", 0, 4 + 1 + 4 + len(after_crc), 0, 2, crc) + after_crc


def init_producer_id(conn, version, transactional_id=None, producer_id=-1, epoch=-1):
    """Returns (error code, producer id, epoch)."""
    if version >= 2:
        body = w.compact_string(transactional_id) + struct.pack(">i", 60000)
        if version >= 3:
            body += struct.pack(">qh", producer_id, epoch)
        body += b"\x00"
    else:
        body = w.string(transactional_id) + struct.pack(">i", 60000)
    data = conn.request(22, version, body, flexible=version >= 2)
    _throttle, error, pid, ep = struct.unpack_from(">ihqh", data)
    return error, pid, ep


def log_end(conn, partition=0):
    from kafka.protocol.offset import OffsetResponse
    response = conn.request(2, 1, w.list_offsets_v1(TOPIC, partition, -1), response_class=OffsetResponse[1])
    (_t, partitions), = response.topics
    (_p, error, _ts, offset), = partitions
    assert error == 0, error
    return offset


@pytest.fixture(scope="module")
def broker(eddy):
    return eddy


def sequences_and_epochs(broker, state):
    """InitProducerId, in-sequence and duplicate batches, gaps, an unknown
    producer and epoch bumps on TOPIC, each answer checked; fills state with
    the producer ids, epochs and offsets."""
    with w.Connection(broker.port) as conn:
        from kafka.protocol.admin import CreateTopicsResponse
        conn.request(19, 1, w.create_topics_v1(TOPIC, 1), response_class=CreateTopicsResponse[1])

        # InitProducerId: fresh ids, increasing.
        e1, pid, ep = init_producer_id(conn, 0)
        e2, pid2, ep2 = init_producer_id(conn, 2)
        assert (e1, pid >= 0, ep) == (NONE, True, 0), "InitProducerId v0 answers a producer id with epoch 0"
        assert e2 == NONE and pid2 > pid, "a second InitProducerId gets a greater id: %r" % ((e2, pid, pid2),)
        e3, tpid, tep = init_producer_id(conn, 3, transactional_id="tx-1")
        assert (e3, tpid > pid2, tep) == (NONE, True, 0), \
            "a transactional id gets a producer id of its own (test_transactions.py covers transactions)"
        assert init_producer_id(conn, 1, transactional_id="") == (INVALID_REQUEST, -1, -1), \
            "an empty transactional id is an invalid request"

        # In sequence, then a duplicate.
        assert w.produce(conn, TOPIC, 0, idempotent_batch(pid, 0, 0, 3)) == (NONE, 0), "seq 0-2 appended at 0"
        assert w.produce(conn, TOPIC, 0, idempotent_batch(pid, 0, 3, 2)) == (NONE, 3), "seq 3-4 appended at 3"
        end = log_end(conn)
        assert w.produce(conn, TOPIC, 0, idempotent_batch(pid, 0, 0, 3)) == (NONE, 0), \
            "duplicate of seq 0-2: success with its original offset"
        assert w.produce(conn, TOPIC, 0, idempotent_batch(pid, 0, 3, 2), acks=1) == (NONE, 3), \
            "duplicate of seq 3-4 (acks=1): success with its original offset"
        assert log_end(conn) == end, "duplicates wrote nothing"

        # Gap.
        err, _ = w.produce(conn, TOPIC, 0, idempotent_batch(pid, 0, 7, 1))
        assert err == OUT_OF_ORDER_SEQUENCE_NUMBER, "gap (seq 7 after 4): OUT_OF_ORDER_SEQUENCE_NUMBER"
        err, _ = w.produce(conn, TOPIC, 0, idempotent_batch(pid, 0, 2, 3))
        assert err == OUT_OF_ORDER_SEQUENCE_NUMBER, "overlapping range: OUT_OF_ORDER_SEQUENCE_NUMBER"
        assert log_end(conn) == end, "out-of-order batches wrote nothing"

        # Unknown producer: a producer id with no state here, sequence != 0.
        err, _ = w.produce(conn, TOPIC, 0, idempotent_batch(pid2, 0, 5, 1))
        assert err == UNKNOWN_PRODUCER_ID, "unknown producer at seq 5: UNKNOWN_PRODUCER_ID"
        assert log_end(conn) == end, "the unknown producer's batch wrote nothing"
        assert w.produce(conn, TOPIC, 0, idempotent_batch(pid2, 0, 0, 1)) == (NONE, end), \
            "the same producer at seq 0 is accepted"
        end += 1

        # KIP-360 epoch bump, then the old epoch is fenced.
        assert init_producer_id(conn, 3, producer_id=pid, epoch=0) == (NONE, pid, 1), \
            "InitProducerId v3 bumps the epoch of a known producer"
        assert init_producer_id(conn, 3, producer_id=pid, epoch=0) == (NONE, pid, 1), \
            "a retried bump gets the same answer"
        err, _ = w.produce(conn, TOPIC, 0, idempotent_batch(pid, 1, 3, 1))
        assert err == OUT_OF_ORDER_SEQUENCE_NUMBER, "new epoch not starting at 0: OUT_OF_ORDER_SEQUENCE_NUMBER"
        assert w.produce(conn, TOPIC, 0, idempotent_batch(pid, 1, 0, 2, tag="e1")) == (NONE, end), \
            "new epoch at seq 0 appended"
        end += 2
        err, _ = w.produce(conn, TOPIC, 0, idempotent_batch(pid, 0, 5, 1))
        assert err == INVALID_PRODUCER_EPOCH, "old epoch: INVALID_PRODUCER_EPOCH"
        assert log_end(conn) == end, "the old epoch's batch wrote nothing"
        assert init_producer_id(conn, 4, producer_id=pid, epoch=1) == (NONE, pid, 2), "bump from epoch 1 to 2"
        assert init_producer_id(conn, 4, producer_id=pid, epoch=0) == (PRODUCER_FENCED, -1, -1), \
            "InitProducerId v4 with a stale epoch: PRODUCER_FENCED"
        assert init_producer_id(conn, 3, producer_id=pid, epoch=0) == (INVALID_PRODUCER_EPOCH, -1, -1), \
            "InitProducerId v3 with a stale epoch: INVALID_PRODUCER_EPOCH"
        e, other, ep = init_producer_id(conn, 3, producer_id=10 ** 12, epoch=3)
        assert e == NONE and other > pid2 and ep == 0, \
            "an id the broker never handed out gets a fresh id, epoch 0: %r" % ((e, other, ep),)

        assert w.produce(conn, TOPIC, 0, w.record_batch([(b"k", b"plain", [])])) == (NONE, end), \
            "a non-idempotent batch is not checked"
        end += 1
        # pid (epoch 1) has sequences 0-1 at end-3.. ; pid2 has seq 0.
        e1_base = end - 3
    state.update(pid=pid, pid2=pid2, other=other, end=end, e1_base=e1_base)


def clean_restart(broker, state):
    """After sequences_and_epochs: a clean restart, then the state checked
    (duplicates, sequences, epochs, producer ids); updates state."""
    pid, other, end, e1_base = state["pid"], state["other"], state["end"], state["e1_base"]
    # Clean restart: the state comes back from the snapshot.
    rc = broker.restart()
    assert rc == 0, "clean stop exits 0"
    with w.Connection(broker.port) as conn:
        assert w.produce(conn, TOPIC, 0, idempotent_batch(pid, 1, 0, 2, tag="e1")) == (NONE, e1_base), \
            "after a clean restart the last batch's duplicate gets its original offset"
        assert w.produce(conn, TOPIC, 0, idempotent_batch(pid, 1, 2, 1)) == (NONE, end), \
            "after a clean restart the sequence continues"
        end += 1
        err, _ = w.produce(conn, TOPIC, 0, idempotent_batch(pid, 1, 4, 1))
        assert err == OUT_OF_ORDER_SEQUENCE_NUMBER, "after a clean restart a gap is still a gap"
        err, _ = w.produce(conn, TOPIC, 0, idempotent_batch(pid, 0, 9, 1))
        assert err == INVALID_PRODUCER_EPOCH, "after a clean restart the old epoch is still fenced"
        assert log_end(conn) == end, "nothing written by the refused batches"
        assert init_producer_id(conn, 4, producer_id=pid, epoch=2) == (NONE, pid, 3), \
            "after a restart the next epoch bump continues from 2"
        e, pid3, _ = init_producer_id(conn, 0)
        assert e == NONE and pid3 > other, "producer ids are not reused after a restart: %r" % ((pid3, other),)
        assert w.produce(conn, TOPIC, 0, idempotent_batch(pid, 3, 0, 4)) == (NONE, end), "epoch 3 at seq 0"
        last_base = end
        end += 4
    state.update(pid3=pid3, end=end, last_base=last_base)


@pytest.fixture(scope="module")
def after_sequences(broker):
    """TOPIC after sequences_and_epochs (its checks run here): producer ids,
    epochs and offsets."""
    state = {}
    sequences_and_epochs(broker, state)
    return state


@pytest.fixture(scope="module")
def after_clean_restart(broker, after_sequences):
    """TOPIC after sequences_and_epochs and clean_restart (checks run here)."""
    state = dict(after_sequences)
    clean_restart(broker, state)
    return state


def test_init_producer_id_sequences_and_epochs(after_sequences):
    """InitProducerId, sequences, duplicates, gaps and epochs: checked by
    sequences_and_epochs (fixture after_sequences)."""
    assert after_sequences["pid2"] > after_sequences["pid"], "two producer ids handed out"


def test_state_survives_a_clean_restart(after_clean_restart):
    """The producer state across a clean restart (snapshot): checked by
    clean_restart (fixture after_clean_restart)."""
    assert after_clean_restart["pid3"] > after_clean_restart["other"], "a new producer id after the restart"


def test_state_survives_sigkill(broker, after_clean_restart):
    state = dict(after_clean_restart)
    pid, pid2, end, last_base = state["pid"], state["pid2"], state["end"], state["last_base"]
    # SIGKILL: no snapshot since the last batch; the log is replayed.
    broker.restart(signal.SIGKILL)
    with w.Connection(broker.port) as conn:
        assert w.produce(conn, TOPIC, 0, idempotent_batch(pid, 3, 0, 4)) == (NONE, last_base), \
            "after SIGKILL the last batch's duplicate gets its original offset"
        assert w.produce(conn, TOPIC, 0, idempotent_batch(pid, 3, 4, 1)) == (NONE, end), \
            "after SIGKILL the sequence continues"
        end += 1
        err, _ = w.produce(conn, TOPIC, 0, idempotent_batch(pid2, 0, 0, 1))
        assert err == NONE, "after SIGKILL pid2's seq 0 is a duplicate (success)"
        assert log_end(conn) == end, "nothing written by the duplicate"
        batches = w.fetch_all(conn, TOPIC, 0)
        values = []
        for _base, _last, data in batches:
            for _off, _k, v, _h in w.parse_records(data):
                values.append(v.decode())
        assert values == ["m-0", "m-1", "m-2", "m-3", "m-4", "m-0", "e1-0", "e1-1", "plain", "m-2",
                      "m-0", "m-1", "m-2", "m-3", "m-4"], \
            "the log holds each batch once, in order"

def test_no_connection_closed(broker):
    eddy_fixture.assert_no_closed_connection(broker)


def test_periodic_snapshots_and_expiry(eddy_factory):
    """Only the (debug) log tells when a snapshot was saved, how the state
    was rebuilt and when a producer expired: no API or metric reports
    producer state."""
    broker = eddy_factory({"producer.id.expiration.ms": 3000, "eddy.producer.snapshot.interval.ms": 200,
                           "eddy.log.level": "debug"})
    with w.Connection(broker.port) as conn:
        from kafka.protocol.admin import CreateTopicsResponse
        conn.request(19, 1, w.create_topics_v1(TOPIC, 1), response_class=CreateTopicsResponse[1])
        _e, pid, _ep = init_producer_id(conn, 0)
        for i in range(3):
            w.produce(conn, TOPIC, 0, idempotent_batch(pid, 0, i * 2, 2))
        written = log_end(conn)
        mark = len(broker.log_text())
    # acks=-1 answered after the batches were durable: the next periodic
    # snapshot covers them all.
    eddy_fixture.wait_until(lambda: "producer state of 1 partitions saved" in broker.log_text()[mark:], 10,
                            "a periodic snapshot")
    broker.restart(signal.SIGKILL)
    try:
        eddy_fixture.wait_until(lambda: "producer state from" in broker.log_text(), 10, "the state rebuilt")
    except eddy_fixture.FixtureError:
        pass
    assert "idem-0: producer state from 1 snapshot rows and 0 batches" in broker.log_text(), \
        "after SIGKILL the state comes from the periodic snapshot, nothing replayed: %r" \
        % ([line for line in broker.log_text().splitlines() if "producer state from" in line],)
    with w.Connection(broker.port) as conn:
        assert w.produce(conn, TOPIC, 0, idempotent_batch(pid, 0, 4, 2)) == (NONE, 4), \
            "the snapshotted last batch's duplicate gets its original offset"
        assert log_end(conn) == written, "nothing written"
        eddy_fixture.wait_until(lambda: "forgot 1 idle producer ids" in broker.log_text(), 15,
                                "the producer to expire (producer.id.expiration.ms=3000)")
        err, _ = w.produce(conn, TOPIC, 0, idempotent_batch(pid, 0, 6, 1))
        assert err == UNKNOWN_PRODUCER_ID, "an expired producer continuing its sequence: UNKNOWN_PRODUCER_ID"
        assert w.produce(conn, TOPIC, 0, idempotent_batch(pid, 0, 0, 1)) == (NONE, written), \
            "an expired producer starting again at 0 is accepted"
    broker.restart()
    with w.Connection(broker.port) as conn:
        assert w.produce(conn, TOPIC, 0, idempotent_batch(pid, 0, 1, 1)) == (NONE, written + 1), \
            "after a restart the expired producer's new state holds"
