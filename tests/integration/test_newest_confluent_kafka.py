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
EDDY_CLIENT_DEBUG=1 adds librdkafka's debug=protocol,broker).
The tests share one eddy; the topic a later test lists (ck-events, made
by test_idempotent_produce_and_group) comes from fixture `events_topic`,
so that each test passes alone as well as in file order."""

import os

import pytest

import eddy_fixture
import kafka_wire
import newest_clients as nc


@pytest.fixture(scope="module")
def client():
    python = nc.provision("confluent-kafka %s (venv)" % nc.CONFLUENT_KAFKA, nc.venv_python)
    return [python, os.path.join(nc.CLIENTS, "confluent_client.py")]


@pytest.fixture(scope="module")
def events_topic(eddy):
    """ck-events with 3 partitions, as test_idempotent_produce_and_group
    (newest_clients.group_scenario) creates it."""
    nc.ensure_topic(eddy, "ck-events", 3)
    return "ck-events"


def test_idempotent_produce_and_group(eddy, client):
    nc.group_scenario(client, None, eddy, eddy.tmp, "ck")


def test_metadata(eddy, client, events_topic):
    result, _run = nc.run_for_result(client + ["metadata", eddy.bootstrap], eddy.tmp, "metadata", 60)
    assert result.get("error") is None, "metadata: error"
    nc.assert_topics("metadata", result.get("topics"), {"ck-events": 3})
    assert result.get("brokers") == [eddy.bootstrap], "metadata: brokers"


def test_admin(eddy, client, events_topic):
    result, _run = nc.run_for_result(client + ["admin", eddy.bootstrap, "adm"], eddy.tmp, "admin", 90)
    create = result.get("create", {})
    assert create.get("adm-plain", "missing") is None, "admin create_topics: plain topic"
    assert create.get("adm-configured", "missing") is None, \
        "admin create_topics: topic with compression.type, retention.ms, cleanup.policy"
    bad = create.get("adm-bad")
    assert bad not in (None, "missing"), "admin create_topics: an unknown config is refused"
    assert result.get("list_topics_error") is None, "admin list_topics: error"
    nc.assert_topics("admin list_topics", result.get("list_topics"),
                     {"adm-plain": 3, "adm-configured": 2, "ck-events": 3})
    assert "adm-bad" not in (result.get("list_topics") or {}), "admin list_topics: the refused topic does not exist"
    assert result.get("brokers") == [eddy.bootstrap], "admin list_topics: brokers"
    described = result.get("describe_configs", {})
    plain = described.get("adm-plain", {})
    assert "error" not in plain and {"retention.ms", "cleanup.policy", "compression.type"} <= set(plain), \
        "admin describe_configs adm-plain: no error and the usual topic configs: %s" % plain
    configured = described.get("adm-configured", {})
    assert "error" not in configured, "admin describe_configs adm-configured: %s" % configured
    assert {k: configured.get(k) for k in ("compression.type", "retention.ms", "cleanup.policy")} == \
        {"compression.type": "producer", "retention.ms": "3600000", "cleanup.policy": "delete"}, \
        "admin describe_configs adm-configured: the configs it was created with"
    broker_configs = described.get("1", {})
    assert "error" not in broker_configs and len(broker_configs) > 0, \
        "admin describe_configs broker 1: no error, some configs: %s" % broker_configs


def produce_raw(broker, topic, values):
    records = [(None, v.encode(), ()) for v in values]
    with kafka_wire.Connection(broker.port) as conn:
        error, _offset = kafka_wire.produce(conn, topic, 0, kafka_wire.record_batch(records))
    assert not error, "raw produce to %s: error %d" % (topic, error)


def test_regex_subscription(eddy, client):
    """^sensors-.*: sensors-a and sensors-b at the start, other-x never,
    sensors-c created while the consumer runs."""
    for name in ("sensors-a", "sensors-b", "other-x"):
        nc.create_topic(eddy, name, 1)
    a = ["a-%d" % i for i in range(20)]
    b = ["b-%d" % i for i in range(20)]
    c = ["c-%d" % i for i in range(20)]
    produce_raw(eddy, "sensors-a", a)
    produce_raw(eddy, "sensors-b", b)
    produce_raw(eddy, "other-x", ["x-%d" % i for i in range(20)])
    run = nc.ClientRun(client + ["consume", eddy.bootstrap, "regex-group", "^sensors-.*", str(60), "60"],
                       eddy.tmp, "regex consumer")
    try:
        first = run.wait_event(lambda e: e.get("event") == "assigned" and
                               {"sensors-a", "sensors-b"} <= {t for t, _p in e["partitions"]}, 30,
                               "assignment of sensors-a and sensors-b")
    except eddy_fixture.FixtureError:
        run.kill()
        raise
    assert sorted(map(tuple, first["partitions"])) == [("sensors-a", 0), ("sensors-b", 0)], "regex: first assignment"
    nc.create_topic(eddy, "sensors-c", 1)
    produce_raw(eddy, "sensors-c", c)
    result = run.wait(90)
    assert result is not None, "regex: printed no result:\n" + run.tail()
    values = [r[3] for r in result["records"]]
    assert sorted(values) == sorted(a + b + c), "regex: values read (sensors-a, -b, and -c created later; never other-x)"
    assert run.event(lambda e: e.get("event") == "assigned" and ["sensors-c", 0] in e["partitions"]), \
        "regex: sensors-c joined the assignment: %s" % run.events
    assert result.get("commit_error") is None, "regex: commit error"
    assert result.get("errors") == [], "regex: consumer errors"


def test_no_connection_closed_as_bad_request(eddy):
    eddy_fixture.assert_no_closed_connection(eddy)
