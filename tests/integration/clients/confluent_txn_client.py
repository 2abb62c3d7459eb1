"""confluent-kafka's transactional producer (PyPI, with its bundled
librdkafka) against a broker, for tests/integration/test_transactions.py.
Runs under the venv of newest_clients.venv_python(), never under
/usr/bin/python3.

    confluent_txn_client.py txn BOOTSTRAP TXN_ID TOPIC PARTITIONS GROUP commit|abort FIRST COUNT
        init_transactions, begin, COUNT records round-robin over the
        partitions, send_offsets_to_transaction (offset FIRST + COUNT of
        every partition of TOPIC-in for GROUP), then commit or abort
    confluent_txn_client.py open BOOTSTRAP TXN_ID TOPIC PARTITIONS COUNT TIMEOUT_MS
        init, begin, COUNT records, flush; then waits to be killed with the
        transaction open
    confluent_txn_client.py fence BOOTSTRAP TXN_ID TOPIC PARTITIONS
        producer A begins and writes; producer B with the same
        transactional.id initializes (fencing A); A then tries to write and
        commit
    confluent_txn_client.py consume BOOTSTRAP TOPIC PARTITIONS EXPECTED TIMEOUT_S ISOLATION
        reads every partition from the start (assign, no group), with
        isolation.level ISOLATION, until EXPECTED records or the timeout

Prints JSON lines: events {"event": ...} and a last {"result": {...}}.
EDDY_CLIENT_DEBUG=1 adds librdkafka's debug=protocol,broker,eos.
"""

import json
import os
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition


def emit(obj):
    print(json.dumps(obj), flush=True)


def base_conf(bootstrap):
    conf = {"bootstrap.servers": bootstrap, "client.id": "eddy-it-txn", "broker.address.family": "v4"}
    debug = os.environ.get("EDDY_CLIENT_DEBUG")
    if debug:
        conf["debug"] = "protocol,broker,eos" if debug == "1" else debug
    return conf


def producer(bootstrap, txn_id, timeout_ms=60000, errors=None):
    conf = dict(base_conf(bootstrap), **{"transactional.id": txn_id, "transaction.timeout.ms": timeout_ms,
                                          "linger.ms": 5, "message.timeout.ms": min(timeout_ms, 60000)})
    if errors is not None:
        conf["error_cb"] = lambda e: errors.append(str(e)) if len(errors) < 10 else None
    return Producer(conf)


def describe(e):
    err = e.args[0] if e.args else None
    if hasattr(err, "code"):
        return {"name": err.name(), "fatal": err.fatal(), "abortable": err.txn_requires_abort(),
                "retriable": err.retriable(), "text": str(err)}
    return {"name": type(e).__name__, "text": str(e)}


def write(p, topic, partitions, first, count, delivered, errors):
    def on_delivery(err, msg):
        if err is not None:
            errors.append(str(err))
        else:
            delivered.append([msg.partition(), msg.offset()])

    for i in range(first, first + count):
        p.produce(topic, value=b"v-%06d" % i, key=b"k-%d" % i, partition=i % partitions, on_delivery=on_delivery)
    p.flush(30)


def txn(bootstrap, txn_id, topic, partitions, group, outcome, first, count):
    p = producer(bootstrap, txn_id)
    delivered, errors = [], []
    try:
        p.init_transactions(30)
        p.begin_transaction()
        write(p, topic, partitions, first, count, delivered, errors)
        c = Consumer(dict(base_conf(bootstrap), **{"group.id": group, "enable.auto.commit": False}))
        offsets = [TopicPartition(topic + "-in", i, first + count) for i in range(partitions)]
        p.send_offsets_to_transaction(offsets, c.consumer_group_metadata(), 30)
        c.close()
        if outcome == "commit":
            p.commit_transaction(30)
        else:
            p.abort_transaction(30)
    except KafkaException as e:
        emit({"result": {"error": describe(e), "delivered": len(delivered), "delivery_errors": errors[:5]}})
        return
    emit({"result": {"error": None, "delivered": len(delivered), "delivery_errors": errors[:5]}})


def open_transaction(bootstrap, txn_id, topic, partitions, count, timeout_ms):
    p = producer(bootstrap, txn_id, timeout_ms)
    delivered, errors = [], []
    p.init_transactions(30)
    p.begin_transaction()
    write(p, topic, partitions, 0, count, delivered, errors)
    emit({"event": "open", "delivered": len(delivered), "delivery_errors": errors[:5]})
    while True:
        time.sleep(1)


def fence(bootstrap, txn_id, topic, partitions):
    a_errors = []
    a = producer(bootstrap, txn_id, errors=a_errors)
    delivered, errors = [], []
    a.init_transactions(30)
    a.begin_transaction()
    write(a, topic, partitions, 0, partitions, delivered, errors)
    emit({"event": "a-open", "delivered": len(delivered)})
    b = producer(bootstrap, txn_id)
    b_init = None
    try:
        b.init_transactions(60)
    except KafkaException as e:
        b_init = describe(e)
    emit({"event": "b-initialized", "error": b_init})
    a_write_errors = []
    a_commit = None
    try:
        write(a, topic, partitions, 100, partitions, [], a_write_errors)
        a.commit_transaction(30)
    except (KafkaException, SystemError) as e:
        # A fenced producer fails fatally: in the delivery report, in
        # produce() or in commit_transaction(), whichever comes first.
        a_commit = describe(e.__cause__ or e) if isinstance(e, SystemError) else describe(e)
    b_commit = None
    try:
        b.begin_transaction()
        write(b, topic, partitions, 200, partitions, [], [])
        b.commit_transaction(30)
    except KafkaException as e:
        b_commit = describe(e)
    emit({"result": {"b_init": b_init, "a_commit": a_commit, "a_write_errors": a_write_errors[:5],
                     "a_errors": a_errors[:5], "b_commit": b_commit}})


def consume(bootstrap, topic, partitions, expected, timeout, isolation):
    c = Consumer(dict(base_conf(bootstrap), **{"group.id": "eddy-it-txn-reader", "enable.auto.commit": False,
                                                "isolation.level": isolation, "fetch.wait.max.ms": 200}))
    c.assign([TopicPartition(topic, i, 0) for i in range(partitions)])
    records, errors = [], []
    deadline = time.monotonic() + timeout
    while len(records) < expected and time.monotonic() < deadline:
        m = c.poll(0.2)
        if m is None:
            continue
        if m.error():
            errors.append(str(m.error()))
            continue
        records.append([m.partition(), m.offset(), m.value().decode()])
    # Nothing more arrives (for a short while) beyond what was expected.
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        m = c.poll(0.2)
        if m is not None and not m.error():
            records.append([m.partition(), m.offset(), m.value().decode()])
    c.close()
    emit({"result": {"records": records, "errors": errors[:5]}})


def main(argv):
    cmd, args = argv[1], argv[2:]
    if cmd == "txn":
        txn(args[0], args[1], args[2], int(args[3]), args[4], args[5], int(args[6]), int(args[7]))
    elif cmd == "open":
        open_transaction(args[0], args[1], args[2], int(args[3]), int(args[4]), int(args[5]))
    elif cmd == "fence":
        fence(args[0], args[1], args[2], int(args[3]))
    elif cmd == "consume":
        consume(args[0], args[1], int(args[2]), int(args[3]), float(args[4]), args[5])
    else:
        raise SystemExit("unknown command " + cmd)


if __name__ == "__main__":
    main(sys.argv)
