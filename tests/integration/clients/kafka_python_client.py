"""kafka-python from PyPI (the newest release, not Debian's python3-kafka)
against a broker, for tests/integration/test_newest_kafka_python.py. Runs
under the venv of newest_clients.venv_python(), never under /usr/bin/python3.

    kafka_python_client.py produce BOOTSTRAP TOPIC FIRST COUNT
    kafka_python_client.py consume BOOTSTRAP GROUP TOPIC EXPECTED TIMEOUT_S
    kafka_python_client.py metadata BOOTSTRAP CREATE_TOPIC

Prints JSON lines: events {"event": ...} and a last {"result": {...}}.
Logs go to stderr (EDDY_CLIENT_DEBUG=1: DEBUG, which logs every request).
"""

import json
import logging
import os
import sys
import time

import kafka
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka import ConsumerRebalanceListener


def emit(obj):
    print(json.dumps(obj), flush=True)


def err(e):
    return "%s: %s" % (type(e).__name__, e)


def produce(bootstrap, topic, first, count):
    p = KafkaProducer(bootstrap_servers=bootstrap, client_id="eddy-it-kafka-python", enable_idempotence=True,
                      acks="all", linger_ms=5)
    futures = [p.send(topic, key=b"k-%d" % (i % 11), value=b"v-%06d" % i) for i in range(first, first + count)]
    p.flush(60)
    delivered = 0
    errors = []
    partitions = {}
    for f in futures:
        try:
            md = f.get(timeout=30)
        except Exception as e:  # noqa: BLE001 - counted and reported
            if len(errors) < 10:
                errors.append(err(e))
            continue
        delivered += 1
        partitions[str(md.partition)] = partitions.get(str(md.partition), 0) + 1
    p.close(10)
    emit({"result": {"delivered": delivered, "errors": errors, "partitions": partitions}})


class Listener(ConsumerRebalanceListener):
    def on_partitions_assigned(self, assigned):
        emit({"event": "assigned", "partitions": sorted([tp.topic, tp.partition] for tp in assigned)})

    def on_partitions_revoked(self, revoked):
        emit({"event": "revoked", "partitions": sorted([tp.topic, tp.partition] for tp in revoked)})


def consume(bootstrap, group, topic, expected, timeout):
    c = KafkaConsumer(bootstrap_servers=bootstrap, client_id="eddy-it-kafka-python", group_id=group,
                      auto_offset_reset="earliest", enable_auto_commit=False, session_timeout_ms=10000,
                      heartbeat_interval_ms=1000, fetch_max_wait_ms=500)
    c.subscribe([topic], listener=Listener())
    records = []
    errors = []
    deadline = time.monotonic() + timeout
    while len(records) < expected and time.monotonic() < deadline:
        try:
            batches = c.poll(timeout_ms=500, max_records=expected - len(records))
        except Exception as e:  # noqa: BLE001 - reported; the loop goes on to its deadline
            if len(errors) < 10:
                errors.append(err(e))
            time.sleep(0.2)
            continue
        for _tp, rs in batches.items():
            for r in rs:
                records.append([r.topic, r.partition, r.offset, r.value.decode()])
    commit_error = None
    committed = {}
    try:
        c.commit()
        for tp in c.assignment():
            committed["%s-%d" % (tp.topic, tp.partition)] = c.committed(tp)
    except Exception as e:  # noqa: BLE001 - reported
        commit_error = err(e)
    try:
        c.close()
    except Exception as e:  # noqa: BLE001 - reported
        errors.append("close: " + err(e))
    emit({"result": {"records": records, "errors": errors, "commit_error": commit_error, "committed": committed}})


def metadata(bootstrap, create):
    out = {}
    a = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="eddy-it-kafka-python")
    try:
        a.create_topics({create: {"num_partitions": 2, "replication_factor": 1}})
        out["create_error"] = None
    except Exception as e:  # noqa: BLE001 - reported
        out["create_error"] = err(e)
    try:
        out["list_topics"] = sorted(a.list_topics())
    except Exception as e:  # noqa: BLE001 - reported
        out["list_topics_error"] = err(e)
    try:
        out["describe_topics"] = {t["name"]: {"partitions": len(t["partitions"]), "error": t["error_code"]}
                                  for t in a.describe_topics()}
    except Exception as e:  # noqa: BLE001 - reported
        out["describe_topics_error"] = err(e)
    try:
        cluster = a.describe_cluster()
        out["brokers"] = sorted("%s:%d" % (b["host"], b["port"]) for b in cluster["brokers"])
    except Exception as e:  # noqa: BLE001 - reported
        out["describe_cluster_error"] = err(e)
    a.close()
    c = KafkaConsumer(bootstrap_servers=bootstrap, client_id="eddy-it-kafka-python")
    try:
        topics = c.topics()
        out["consumer_topics"] = {t: len(c.partitions_for_topic(t) or ()) for t in topics}
    except Exception as e:  # noqa: BLE001 - reported
        out["consumer_topics_error"] = err(e)
    c.close()
    emit({"result": out})


def main():
    logging.basicConfig(stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s %(message)s",
                        level=logging.DEBUG if os.environ.get("EDDY_CLIENT_DEBUG") else logging.WARNING)
    emit({"event": "versions", "kafka_python": kafka.__version__, "module": kafka.__file__})
    a = sys.argv[1:]
    if len(a) == 5 and a[0] == "produce":
        produce(a[1], a[2], int(a[3]), int(a[4]))
    elif len(a) == 6 and a[0] == "consume":
        consume(a[1], a[2], a[3], int(a[4]), float(a[5]))
    elif len(a) == 3 and a[0] == "metadata":
        metadata(a[1], a[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
