"""confluent-kafka from PyPI (newest_clients.CONFLUENT_KAFKA, with the
librdkafka it bundles, which asks for much newer API versions than
Debian's librdkafka 2.0.2) against one eddy:
  1. idempotent producer (enable.idempotence), consumer group (subscribe,
     commit, a second run resumes from the committed offsets);
  2. metadata of all topics (Producer.list_topics);
  3. AdminClient: create_topics (plain, with standard topic configs, with
     an unknown config), list_topics, describe_configs (topics, broker);
  4. a regex subscription (^sensors-.*): matching topics only, and a
     matching topic created later joins the subscription.
The client runs under the venv's python (clients/confluent_client.py);
its stderr is in the broker's tmp dir (EDDY_KEEP_TMP=1 keeps it,
EDDY_CLIENT_DEBUG=1 adds librdkafka's debug=protocol,broker)."""

import os
import time

import eddy_fixture
import kafka_wire
import newest_clients as nc

PYTHON = nc.provision("confluent-kafka %s (venv)" % nc.CONFLUENT_KAFKA, nc.venv_python)
CLIENT = [PYTHON, os.path.join(nc.CLIENTS, "confluent_client.py")]


def metadata_scenario(broker, checks):
    result, run = nc.run_client(CLIENT + ["metadata", broker.bootstrap], broker.tmp, "metadata", 60)
    if not checks.check("metadata: printed a result", result is not None, run.tail()):
        return
    checks.equal("metadata: error", result.get("error"), None)
    nc.check_topics(checks, "metadata", result.get("topics"), {"ck-events": 3})
    checks.equal("metadata: brokers", result.get("brokers"), [broker.bootstrap])


def admin_scenario(broker, checks):
    result, run = nc.run_client(CLIENT + ["admin", broker.bootstrap, "adm"], broker.tmp, "admin", 90)
    if not checks.check("admin: printed a result", result is not None, run.tail()):
        return
    create = result.get("create", {})
    checks.equal("admin create_topics: plain topic", create.get("adm-plain", "missing"), None)
    checks.equal("admin create_topics: topic with compression.type, retention.ms, cleanup.policy",
                 create.get("adm-configured", "missing"), None)
    bad = create.get("adm-bad")
    checks.check("admin create_topics: an unknown config is refused", bad not in (None, "missing"), bad)
    checks.equal("admin list_topics: error", result.get("list_topics_error"), None)
    nc.check_topics(checks, "admin list_topics", result.get("list_topics"),
                    {"adm-plain": 3, "adm-configured": 2, "ck-events": 3})
    checks.check("admin list_topics: the refused topic does not exist",
                 "adm-bad" not in (result.get("list_topics") or {}), result.get("list_topics"))
    checks.equal("admin list_topics: brokers", result.get("brokers"), [broker.bootstrap])
    described = result.get("describe_configs", {})
    plain = described.get("adm-plain", {})
    checks.check("admin describe_configs adm-plain: no error and the usual topic configs",
                 "error" not in plain and {"retention.ms", "cleanup.policy", "compression.type"} <= set(plain),
                 plain)
    configured = described.get("adm-configured", {})
    if "error" in configured or create.get("adm-configured") is not None:
        checks.fail("admin describe_configs adm-configured: the configs it was created with", configured)
    else:
        checks.equal("admin describe_configs adm-configured: the configs it was created with",
                     {k: configured.get(k) for k in ("compression.type", "retention.ms", "cleanup.policy")},
                     {"compression.type": "producer", "retention.ms": "3600000", "cleanup.policy": "delete"})
    broker_configs = described.get("1", {})
    checks.check("admin describe_configs broker 1: no error, some configs",
                 "error" not in broker_configs and len(broker_configs) > 0, broker_configs)


def produce_raw(broker, topic, values):
    records = [(None, v.encode(), ()) for v in values]
    with kafka_wire.Connection(broker.port) as conn:
        error, _offset = kafka_wire.produce(conn, topic, 0, kafka_wire.record_batch(records))
    if error:
        raise eddy_fixture.FixtureError("raw produce to %s: error %d" % (topic, error))


def regex_scenario(broker, checks):
    """^sensors-.*: sensors-a and sensors-b at the start, other-x never,
    sensors-c created while the consumer runs."""
    for name in ("sensors-a", "sensors-b", "other-x"):
        nc.create_topic(broker, name, 1)
    a = ["a-%d" % i for i in range(20)]
    b = ["b-%d" % i for i in range(20)]
    c = ["c-%d" % i for i in range(20)]
    produce_raw(broker, "sensors-a", a)
    produce_raw(broker, "sensors-b", b)
    produce_raw(broker, "other-x", ["x-%d" % i for i in range(20)])
    run = nc.ClientRun(CLIENT + ["consume", broker.bootstrap, "regex-group", "^sensors-.*", str(60), "60"],
                       broker.tmp, "regex consumer")
    try:
        first = run.wait_event(lambda e: e.get("event") == "assigned" and
                               {"sensors-a", "sensors-b"} <= {t for t, _p in e["partitions"]}, 30,
                               "assignment of sensors-a and sensors-b")
        checks.equal("regex: first assignment", sorted(map(tuple, first["partitions"])),
                     [("sensors-a", 0), ("sensors-b", 0)])
    except eddy_fixture.FixtureError as e:
        checks.fail("regex: first assignment", e)
        run.kill()
        print(run.tail())
        return
    nc.create_topic(broker, "sensors-c", 1)
    produce_raw(broker, "sensors-c", c)
    result = run.wait(90)
    if not checks.check("regex: printed a result", result is not None, run.tail()):
        return
    values = [r[3] for r in result["records"]]
    checks.equal("regex: values read (sensors-a, -b, and -c created later; never other-x)",
                 sorted(values), sorted(a + b + c))
    checks.check("regex: sensors-c joined the assignment",
                 run.event(lambda e: e.get("event") == "assigned" and
                           ["sensors-c", 0] in e["partitions"]), run.events)
    checks.equal("regex: commit error", result.get("commit_error"), None)
    checks.equal("regex: consumer errors", result.get("errors"), [])


def body(broker, checks):
    nc.group_scenario(checks, CLIENT, None, broker, broker.tmp, "ck")
    metadata_scenario(broker, checks)
    admin_scenario(broker, checks)
    regex_scenario(broker, checks)
    checks.check("broker closed no connection as a bad request",
                 b"closing connection" not in broker.log_bytes(),
                 "\n".join(l for l in broker.log_text().splitlines() if "closing connection" in l)[-3000:])


if __name__ == "__main__":
    eddy_fixture.run_test(body)
