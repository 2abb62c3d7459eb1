"""confluent-kafka (PyPI, with its bundled librdkafka) against a broker, for
tests/integration/test_newest_confluent_kafka.py. Runs under the venv of
newest_clients.venv_python(), never under /usr/bin/python3.

    confluent_client.py produce BOOTSTRAP TOPIC FIRST COUNT
    confluent_client.py consume BOOTSTRAP GROUP TOPIC EXPECTED TIMEOUT_S   (TOPIC ^...: a regex)
    confluent_client.py static BOOTSTRAP GROUP INSTANCE TOPIC STOP_FILE    (a static member until STOP_FILE exists)
    confluent_client.py metadata BOOTSTRAP
    confluent_client.py admin BOOTSTRAP PREFIX

Prints JSON lines: events {"event": ...} and a last {"result": {...}}.
librdkafka's logs go to stderr; EDDY_CLIENT_DEBUG=1 turns on
debug=protocol,broker (or EDDY_CLIENT_DEBUG=<contexts>).
"""

import json
import os
import sys
import time

import confluent_kafka
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic, ResourceType


def emit(obj):
    print(json.dumps(obj), flush=True)


def base_conf(bootstrap):
    conf = {"bootstrap.servers": bootstrap, "client.id": "eddy-it-confluent",
            "broker.address.family": "v4"}
    debug = os.environ.get("EDDY_CLIENT_DEBUG")
    if debug:
        conf["debug"] = "protocol,broker" if debug == "1" else debug
    return conf


def produce(bootstrap, topic, first, count):
    errors = []
    partitions = {}
    delivered = [0]

    def on_delivery(err, msg):
        if err is not None:
            if len(errors) < 10:
                errors.append(str(err))
            return
        delivered[0] += 1
        key = str(msg.partition())
        partitions[key] = partitions.get(key, 0) + 1

    fatal = []
    conf = dict(base_conf(bootstrap), **{"enable.idempotence": True, "acks": "all", "linger.ms": 5,
                                          "message.timeout.ms": 60000,
                                          "error_cb": lambda e: fatal.append(str(e)) if len(fatal) < 10 else None})
    p = Producer(conf)
    for i in range(first, first + count):
        while True:
            try:
                p.produce(topic, key=b"k-%d" % (i % 11), value=b"v-%06d" % i, on_delivery=on_delivery)
                break
            except BufferError:
                p.poll(0.1)
        p.poll(0)
    left = p.flush(60)
    emit({"result": {"delivered": delivered[0], "errors": errors, "partitions": partitions,
                     "undelivered": left, "client_errors": fatal}})


def consume(bootstrap, group, topic, expected, timeout):
    fatal = []
    conf = dict(base_conf(bootstrap), **{"group.id": group, "auto.offset.reset": "earliest",
                                          "enable.auto.commit": False, "session.timeout.ms": 10000,
                                          "heartbeat.interval.ms": 1000, "fetch.wait.max.ms": 500,
                                          "topic.metadata.refresh.interval.ms": 1000,
                                          "error_cb": lambda e: fatal.append(str(e)) if len(fatal) < 10 else None})
    c = Consumer(conf)

    def on_assign(consumer, parts):
        emit({"event": "assigned", "partitions": sorted([p.topic, p.partition] for p in parts)})

    revoke_errors = []

    def on_revoke(consumer, parts):
        # An eager rebalance (e.g. a new topic matching a regex) takes all
        # partitions away: commit what was read so that nothing is read twice.
        emit({"event": "revoked", "partitions": sorted([p.topic, p.partition] for p in parts)})
        try:
            consumer.commit(asynchronous=False)
        except KafkaException as e:
            if e.args[0].code() != KafkaError._NO_OFFSET:
                revoke_errors.append(str(e))

    c.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
    records = []
    errors = []
    deadline = time.monotonic() + timeout
    while len(records) < expected and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            if len(errors) < 10:
                errors.append(str(m.error()))
            continue
        records.append([m.topic(), m.partition(), m.offset(), m.value().decode()])
    commit_error = None
    committed = {}
    try:
        for tp in c.commit(asynchronous=False) or []:
            committed["%s-%d" % (tp.topic, tp.partition)] = tp.offset
            if tp.error is not None:
                commit_error = str(tp.error)
    except KafkaException as e:
        commit_error = str(e)
    c.close()
    errors += ["commit on revoke: " + e for e in revoke_errors]
    emit({"result": {"records": records, "errors": errors, "commit_error": commit_error,
                     "committed": committed, "client_errors": fatal}})


def static_member(bootstrap, group, instance, topic, stop_file):
    """A static member (group.instance.id) polling until stop_file exists:
    events for each assignment and revocation, each record read, and its
    member id once it has one; closes without leaving (librdkafka's static
    members do not send LeaveGroup)."""
    conf = dict(base_conf(bootstrap), **{"group.id": group, "group.instance.id": instance,
                                          "auto.offset.reset": "earliest", "enable.auto.commit": False,
                                          "session.timeout.ms": 30000, "heartbeat.interval.ms": 500,
                                          "fetch.wait.max.ms": 500})
    c = Consumer(conf)
    c.subscribe([topic],
                on_assign=lambda _c, parts: emit({"event": "assigned",
                                                  "partitions": sorted([p.topic, p.partition] for p in parts)}),
                on_revoke=lambda _c, parts: emit({"event": "revoked",
                                                  "partitions": sorted([p.topic, p.partition] for p in parts)}),
                on_lost=lambda _c, parts: emit({"event": "lost",
                                                "partitions": sorted([p.topic, p.partition] for p in parts)}))
    member_id = None
    while not os.path.exists(stop_file):
        m = c.poll(0.2)
        if member_id is None and c.memberid():
            member_id = c.memberid()
            emit({"event": "member", "member_id": member_id})
        if m is not None and not m.error():
            emit({"event": "record", "partition": m.partition(), "offset": m.offset()})
        elif m is not None:
            emit({"event": "error", "error": str(m.error())})
    c.close()
    emit({"result": {"member_id": member_id}})


def metadata(bootstrap):
    """Metadata of all topics through a producer's handle (list_topics())."""
    p = Producer(base_conf(bootstrap))
    out = {}
    try:
        md = p.list_topics(timeout=15)
        out["topics"] = {name: {"partitions": len(t.partitions), "error": str(t.error) if t.error else None}
                         for name, t in md.topics.items()}
        out["brokers"] = sorted("%s:%d" % (b.host, b.port) for b in md.brokers.values())
        out["controller_id"] = md.controller_id
    except KafkaException as e:
        out["error"] = str(e)
    emit({"result": out})


def _future_result(f, timeout=30):
    try:
        return f.result(timeout), None
    except KafkaException as e:
        return None, str(e.args[0]) if e.args else str(e)
    except Exception as e:  # noqa: BLE001 - reported as the operation's error
        return None, "%s: %s" % (type(e).__name__, e)


def admin(bootstrap, prefix):
    """AdminClient: create_topics (plain, with standard configs, invalid),
    list_topics, describe_configs of a topic and of the broker."""
    a = AdminClient(base_conf(bootstrap))
    out = {}
    plain, configured, bad = prefix + "-plain", prefix + "-configured", prefix + "-bad"
    configs = {"compression.type": "producer", "retention.ms": "3600000", "cleanup.policy": "delete"}
    futures = a.create_topics([NewTopic(plain, num_partitions=3, replication_factor=1),
                               NewTopic(configured, num_partitions=2, replication_factor=1, config=configs),
                               NewTopic(bad, num_partitions=1, replication_factor=1,
                                        config={"no.such.config": "1"})],
                              operation_timeout=10, request_timeout=20)
    out["create"] = {}
    for name, f in futures.items():
        _value, err = _future_result(f)
        out["create"][name] = err
    try:
        md = a.list_topics(timeout=15)
        out["list_topics"] = {name: {"partitions": len(t.partitions), "error": str(t.error) if t.error else None}
                              for name, t in md.topics.items()}
        out["brokers"] = sorted("%s:%d" % (b.host, b.port) for b in md.brokers.values())
    except KafkaException as e:
        out["list_topics_error"] = str(e)
    out["describe_configs"] = {}
    for name, rtype in ((plain, ResourceType.TOPIC), (configured, ResourceType.TOPIC), ("1", ResourceType.BROKER)):
        futures = a.describe_configs([ConfigResource(rtype, name)], request_timeout=20)
        for _res, f in futures.items():
            value, err = _future_result(f)
            if err is not None:
                out["describe_configs"][name] = {"error": err}
            else:
                out["describe_configs"][name] = {k: v.value for k, v in value.items()}
    emit({"result": out})


def main():
    a = sys.argv[1:]
    emit({"event": "versions", "confluent_kafka": confluent_kafka.__version__,
          "librdkafka": confluent_kafka.libversion()[0]})
    if len(a) == 5 and a[0] == "produce":
        produce(a[1], a[2], int(a[3]), int(a[4]))
    elif len(a) == 6 and a[0] == "consume":
        consume(a[1], a[2], a[3], int(a[4]), float(a[5]))
    elif len(a) == 6 and a[0] == "static":
        static_member(*a[1:])
    elif len(a) == 2 and a[0] == "metadata":
        metadata(a[1])
    elif len(a) == 3 and a[0] == "admin":
        admin(a[1], a[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
