"""Topic configs against Apache Kafka, the reference: the same requests to a
real Kafka 4.x broker and to Eddy, and their answers compared.

- DescribeConfigs of a new topic: Eddy lists every name Kafka lists, with
  Kafka's default value except where Eddy differs on purpose (DIFFERENT).
- CreateTopics with each config Kafka lists, set to Kafka's own default:
  accepted by both, except the values Eddy cannot honour (REFUSED), which
  get INVALID_CONFIG with a reason.
- Values Eddy refuses while Kafka accepts them (compression.type=gzip,
  cleanup.policy=compact, ...): INVALID_CONFIG naming why.
- Unknown names and bad values: INVALID_CONFIG from both.
- message.timestamp.after.max.ms is enforced as Kafka does (INVALID_TIMESTAMP
  for a batch stamped too far in the future)."""

import time

from kafka import KafkaAdminClient
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse

import pytest

import eddy_fixture
import kafka_fixture
import kafka_wire as w

# Names whose default differs on purpose, with Eddy's value.
DIFFERENT = {
    # gateway.properties gives a small segment and a bounded partition budget.
    "segment.bytes": "8388608",
    "retention.bytes": None,  # whatever gateway.properties says (checked below against the broker config)
    # Segments are always preallocated: a fixed disk budget.
    "preallocate": "true",
}
# Kafka's default values that Eddy refuses (with the reason's key words).
REFUSED_DEFAULTS = {"preallocate": "always preallocated"}
# Values Kafka accepts that Eddy refuses, with the reason's key words.
REFUSED = [
    ("compression.type", "gzip", "never re-compresses"),
    ("compression.type", "uncompressed", "never re-compresses"),
    ("cleanup.policy", "compact", "does not compact"),
    ("cleanup.policy", "compact,delete", "does not compact"),
    ("segment.ms", "3600000", "not by time"),
]
# Values both accept although they change nothing on Eddy.
ACCEPTED = [
    ("compression.type", "producer"),
    ("compression.gzip.level", "5"),
    ("min.cleanable.dirty.ratio", "0.25"),
    ("leader.replication.throttled.replicas", "*"),
    ("follower.replication.throttled.replicas", "0:1,1:1"),
    ("unclean.leader.election.enable", "true"),
    ("segment.index.bytes", "65536"),
    ("index.interval.bytes", "8192"),
    ("message.timestamp.after.max.ms", "60000"),
    ("message.timestamp.before.max.ms", "86400000"),
    ("max.decompressed.message.bytes", "1048576"),
    ("flush.messages", "1000"),
]
# Both refuse these.
BAD = [
    ("no.such.config", "1"),
    ("retention.ms", "soon"),
    ("compression.type", "brotli"),
    ("flush.messages", "0"),
    ("min.cleanable.dirty.ratio", "2"),
    ("leader.replication.throttled.replicas", "zero:one"),
    ("unclean.leader.election.enable", "maybe"),
    ("remote.storage.enable", "true"),  # Kafka: tiered storage is disabled in the broker; Eddy has none
]
INVALID_CONFIG = 40


def describe(admin, topic):
    response = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])[0]
    error_code, _msg, _type, _name, entries = response.resources[0]
    if error_code:
        raise eddy_fixture.FixtureError("describe %s: error %d" % (topic, error_code))
    return {e[0]: e[1] for e in entries}


def create(port, name, configs, validate_only=True):
    """CreateTopics v2 (Kafka 4 dropped v0-v1) -> (error code, message)."""
    request = CreateTopicsRequest[2](create_topic_requests=[(name, 1, 1, [], list(configs.items()))],
                                     timeout=10000, validate_only=validate_only)
    with w.Connection(port) as conn:
        response = conn.request(19, 2, request.encode(), response_class=CreateTopicsResponse[2])
    (_name, code, message), = response.topic_errors
    return code, message or ""


@pytest.fixture(scope="module")
def configs(kafka, eddy):
    """DescribeConfigs of a fresh topic "cfg" on Kafka and on Eddy, and
    Eddy's broker configs: (kafka_configs, eddy_configs, broker_configs)."""
    broker = eddy
    kafka.create_topic("cfg", 1)
    k_admin = KafkaAdminClient(bootstrap_servers=kafka.bootstrap)
    kafka_configs = describe(k_admin, "cfg")
    k_admin.close()

    e_admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    e_admin.create_topics([NewTopic("cfg", 1, 1)])
    eddy_configs = describe(e_admin, "cfg")
    broker_configs = {}
    response = e_admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "1")])[0]
    for entry in response.resources[0][4]:
        broker_configs[entry[0]] = entry[1]
    e_admin.close()
    return kafka_configs, eddy_configs, broker_configs


@pytest.fixture(scope="module")
def broker(eddy):
    return eddy


def test_describe_configs_defaults_are_kafkas(broker, kafka, configs):
    kafka_configs, eddy_configs, broker_configs = configs

    missing = sorted(set(kafka_configs) - set(eddy_configs))
    assert missing == [], \
        "DescribeConfigs: Eddy lists every topic config Kafka %s lists" % kafka_fixture.KAFKA_VERSION
    expected = dict(kafka_configs)
    expected.update({k: v for k, v in DIFFERENT.items() if v is not None})
    expected["retention.bytes"] = broker_configs.get("log.retention.bytes", kafka_configs.get("retention.bytes"))
    # Kafka 4's broker default for flush.messages is Long.MAX; the test
    # Kafka keeps it, so does Eddy's gateway config.
    differences = {k: (kafka_configs.get(k), eddy_configs.get(k)) for k in expected
                   if k in eddy_configs and eddy_configs[k] != expected[k]}
    assert differences == {}, "DescribeConfigs: Eddy's defaults are Kafka's (but for the deliberate differences)"


def test_create_topics_at_kafkas_defaults(broker, kafka, configs):
    kafka_configs = configs[0]
    kafka_port = kafka.ports[1]
    # Each config Kafka lists, at Kafka's own default, in CreateTopics.
    for name, value in sorted(kafka_configs.items()):
        if value is None:
            continue
        k = create(kafka_port, "cfg-%s" % name.replace(".", "-"), {name: value})
        e = create(broker.port, "cfg-%s" % name.replace(".", "-"), {name: value})
        if name in REFUSED_DEFAULTS:
            assert k[0] == 0 and e[0] == INVALID_CONFIG and REFUSED_DEFAULTS[name] in e[1], \
                "%s: %s" % ("CreateTopics %s=%s: Kafka accepts, Eddy refuses with a reason" % (name, value), (k, e))
        else:
            assert (k, e) == ((0, ""), (0, "")), \
                "CreateTopics %s=%s (Kafka's default): accepted by both" % (name, value)


def test_refused_accepted_and_bad_configs(broker, kafka, configs):
    kafka_port = kafka.ports[1]
    for name, value, why in REFUSED:
        k = create(kafka_port, "cfg-refused", {name: value})
        e = create(broker.port, "cfg-refused", {name: value})
        assert k[0] == 0 and e[0] == INVALID_CONFIG and why in e[1], \
            "%s: %s" % ("CreateTopics %s=%s: Kafka accepts, Eddy answers INVALID_CONFIG '...%s...'" % (name, value, why), (k, e))
    for name, value in ACCEPTED:
        k = create(kafka_port, "cfg-accepted", {name: value})
        e = create(broker.port, "cfg-accepted", {name: value})
        assert (k[0], e[0]) == (0, 0), "CreateTopics %s=%s: accepted by both" % (name, value)
    for name, value in BAD:
        k = create(kafka_port, "cfg-bad", {name: value})
        e = create(broker.port, "cfg-bad", {name: value})
        assert (k[0], e[0]) == (INVALID_CONFIG, INVALID_CONFIG), \
            "CreateTopics %s=%s: INVALID_CONFIG from both" % (name, value)


def test_created_topic_keeps_no_effect_configs(broker, kafka, configs):
    # A created topic keeps the accepted no-effect configs and lists them
    # as its own.
    code, message = create(broker.port, "cfg-kept", dict(ACCEPTED[:3]), validate_only=False)
    assert (code, message) == (0, ""), "create cfg-kept with no-effect configs"
    e_admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    kept = describe(e_admin, "cfg-kept")
    e_admin.close()
    assert {k: kept.get(k) for k, _v in ACCEPTED[:3]} == dict(ACCEPTED[:3]), "cfg-kept lists them"


def test_timestamp_after_max_ms(broker, kafka, configs):
    kafka_port = kafka.ports[1]
    # message.timestamp.after.max.ms, on both.
    now = int(time.time() * 1000)
    for name, port, creator in (("kafka", kafka_port, lambda: kafka.create_topic(
            "ts", 1, configs={"message.timestamp.after.max.ms": "60000"})),
            ("eddy", broker.port, lambda: create(broker.port, "ts", {"message.timestamp.after.max.ms": "60000"},
                                                 validate_only=False))):
        creator()
        with w.Connection(port) as conn:
            late = w.produce(conn, "ts", 0, w.record_batch([(b"k", b"future", [])], base_timestamp=now + 600000))
            ok = w.produce(conn, "ts", 0, w.record_batch([(b"k", b"now", [])], base_timestamp=now + 1000))
        assert (late[0], ok[0]) == (32, 0), \
            ("%s: a batch 10 minutes ahead with after.max.ms=60000: INVALID_TIMESTAMP; 1 s ahead: ok"
                     % name)
