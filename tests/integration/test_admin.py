"""kafka-python's KafkaAdminClient against Eddy: create_topics (with configs,
validate_only, and the errors Kafka gives for bad requests), list_topics,
describe_configs for a topic and the broker, IncrementalAlterConfigs (sent
with a request class defined here: kafka-python 2.0.2 only has the old
AlterConfigs), AlterConfigs,
create_partitions and delete_topics. The tests share one eddy; each that
works on adm-a gets it freshly created (fixture `adm_a`: 2 partitions,
retention.ms=3600000, max.message.bytes=200000, as test_create_topics
creates it), so that each passes alone as well as in file order."""

import time

import kafka.errors as Errors
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewPartitions, NewTopic
from kafka.protocol.api import Request, Response
from kafka.protocol.metadata import MetadataResponse
from kafka.protocol.types import Array, Boolean, Int8, Int16, Int32, Schema, String

import pytest

import kafka_wire

TOPIC_CONFIG_SOURCE = 1  # DescribeConfigs config_source: DYNAMIC_TOPIC_CONFIG


class IncrementalAlterConfigsResponse_v0(Response):
    API_KEY = 44
    API_VERSION = 0
    SCHEMA = Schema(
        ("throttle_time_ms", Int32),
        ("responses", Array(("error_code", Int16), ("error_message", String("utf-8")),
                            ("resource_type", Int8), ("resource_name", String("utf-8")))))


class IncrementalAlterConfigsRequest_v0(Request):
    API_KEY = 44
    API_VERSION = 0
    RESPONSE_TYPE = IncrementalAlterConfigsResponse_v0
    SCHEMA = Schema(
        ("resources", Array(("resource_type", Int8), ("resource_name", String("utf-8")),
                            ("configs", Array(("name", String("utf-8")), ("config_operation", Int8),
                                              ("value", String("utf-8")))))),
        ("validate_only", Boolean))


SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def incremental_alter(port, resources, validate_only=False):
    """resources: [(type, name, [(config, op, value)])]. Returns
    [(resource name, error code, message)]."""
    request = IncrementalAlterConfigsRequest_v0(resources=resources, validate_only=validate_only)
    with kafka_wire.Connection(port) as conn:
        response = conn.request(44, 0, request.encode(), response_class=IncrementalAlterConfigsResponse_v0)
    return [(r[3], r[0], r[1]) for r in response.responses]


def topic_configs(admin, topic):
    """{name: (value, config_source)} of a topic, or the error code."""
    response = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])[0]
    error_code, _msg, _type, _name, entries = response.resources[0]
    if error_code:
        return error_code
    return {e[0]: (e[1], e[3]) for e in entries}  # (name, value, read_only, source, ...)


def expect_error(name, error_class, call):
    try:
        call()
    except error_class:
        return
    except Exception as e:  # noqa: BLE001
        raise AssertionError("%s: raised %s: %s, want %s" % (name, type(e).__name__, e, error_class.__name__))
    raise AssertionError("%s: no error, want %s" % (name, error_class.__name__))


def partition_count(port, topic):
    with kafka_wire.Connection(port) as conn:
        response = conn.request(3, 1, kafka_wire.metadata_v1([topic]), response_class=MetadataResponse[1])
    (error_code, _name, _internal, partitions) = response.topics[0]
    return error_code, len(partitions)


@pytest.fixture(scope="module")
def broker(eddy):
    return eddy


@pytest.fixture(scope="module")
def admin(broker):
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=10000)
    yield admin
    admin.close()


CREATION_CONFIGS = {"retention.ms": "3600000", "max.message.bytes": "200000"}


def drop_topic(admin, topic):
    """Deletes topic if it exists (what an earlier test left)."""
    if topic in admin.list_topics():
        response = admin.delete_topics([topic], timeout_ms=5000)
        assert [tuple(t[:2]) for t in response.topic_error_codes] == [(topic, 0)], "delete %s left before" % topic


def fresh_adm_a(admin, partitions=2):
    """adm-a created anew with the creation configs of test_create_topics."""
    drop_topic(admin, "adm-a")
    response = admin.create_topics([NewTopic("adm-a", partitions, 1, topic_configs=CREATION_CONFIGS)],
                                   timeout_ms=5000)
    assert [tuple(t[:2]) for t in response.topic_errors] == [("adm-a", 0)], "create adm-a (%d partitions)" % partitions
    return "adm-a"


@pytest.fixture
def adm_a(admin):
    """adm-a as test_create_topics creates it: 2 partitions, retention.ms
    3600000, max.message.bytes 200000, empty."""
    return fresh_adm_a(admin)


@pytest.fixture
def adm_a_grown(admin):
    """adm-a with 4 partitions (as test_create_partitions leaves it)."""
    return fresh_adm_a(admin, partitions=4)


def test_create_topics(broker, admin):
    drop_topic(admin, "adm-a")

    # -- create_topics ------------------------------------------------------
    response = admin.create_topics([NewTopic("adm-a", 2, 1, topic_configs={
        "retention.ms": "3600000", "max.message.bytes": "200000"})], timeout_ms=5000)
    assert [tuple(t[:2]) for t in response.topic_errors] == [("adm-a", 0)], "create adm-a (2 partitions, configs)"
    admin.create_topics([NewTopic("adm-validate", 3, 1)], validate_only=True)
    assert "adm-validate" not in admin.list_topics(), "validate_only creates nothing: %r" % (admin.list_topics(),)
    assert "adm-a" in admin.list_topics(), "list_topics shows adm-a: %r" % (admin.list_topics(),)
    assert partition_count(broker.port, "adm-a") == (0, 2), "adm-a has 2 partitions (Metadata)"

    expect_error("create an existing topic: TopicAlreadyExistsError", Errors.TopicAlreadyExistsError,
                 lambda: admin.create_topics([NewTopic("adm-a", 1, 1)]))
    expect_error("replication factor 3 on one node: InvalidReplicationFactorError",
                 Errors.InvalidReplicationFactorError, lambda: admin.create_topics([NewTopic("adm-rf", 1, 3)]))
    expect_error("0 partitions: InvalidPartitionsError", Errors.InvalidPartitionsError,
                 lambda: admin.create_topics([NewTopic("adm-zero", 0, 1)]))
    expect_error("retention.ms=soon: InvalidConfigurationError", Errors.InvalidConfigurationError,
                 lambda: admin.create_topics([NewTopic("adm-badcfg", 1, 1, topic_configs={"retention.ms": "soon"})]))
    expect_error("unknown topic config: InvalidConfigurationError", Errors.InvalidConfigurationError,
                 lambda: admin.create_topics([NewTopic("adm-badkey", 1, 1, topic_configs={"no.such": "1"})]))
    expect_error("validate_only with a bad config fails too", Errors.InvalidConfigurationError,
                 lambda: admin.create_topics([NewTopic("adm-v2", 1, 1, topic_configs={"segment.bytes": "1"})],
                                             validate_only=True))
    expect_error("invalid topic name: InvalidTopicError", Errors.InvalidTopicError,
                 lambda: admin.create_topics([NewTopic("bad/name", 1, 1)]))
    listed = admin.list_topics()
    assert not any(t in listed for t in ("adm-rf", "adm-zero", "adm-badcfg", "adm-badkey", "adm-v2")), \
        "failed creations left no topic: %r" % (listed,)


def test_describe_configs(broker, admin, adm_a):
    # -- describe_configs -----------------------------------------------------
    configs = topic_configs(admin, "adm-a")
    assert isinstance(configs, dict) and configs.get("retention.ms") == ("3600000", TOPIC_CONFIG_SOURCE), \
        "describe adm-a: retention.ms=3600000 from the topic: %r" % (configs,)
    assert isinstance(configs, dict) and configs.get("max.message.bytes") == ("200000", TOPIC_CONFIG_SOURCE), \
        "describe adm-a: max.message.bytes=200000 from the topic: %r" % (configs,)
    assert (isinstance(configs, dict) and "segment.bytes" in configs
                 and configs["segment.bytes"][1] != TOPIC_CONFIG_SOURCE), \
        "describe adm-a: segment.bytes is a default (not the topic's): %r" % (configs,)
    response = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "1")])[0]
    error_code, _msg, _type, name, entries = response.resources[0]
    broker_configs = {e[0]: e[1] for e in entries}
    assert (error_code, name) == (0, "1"), "describe broker 1: no error"
    assert broker_configs.get("log.segment.bytes") == "8388608", \
        "describe broker 1: log.segment.bytes from gateway.properties"
    assert broker_configs.get("socket.request.max.bytes") == "16777216", "describe broker 1: socket.request.max.bytes"
    assert topic_configs(admin, "adm-none") == 3, "describe unknown topic: UNKNOWN_TOPIC_OR_PARTITION"


def test_topic_max_message_bytes_enforced(broker, admin, adm_a):
    # The topic's max.message.bytes (200000) is enforced.
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all")
    expect_error("a 300 KB record to adm-a: MessageSizeTooLargeError", Errors.MessageSizeTooLargeError,
                 lambda: producer.send("adm-a", value=b"x" * 300_000, partition=0).get(timeout=30))
    meta = producer.send("adm-a", value=b"y" * 150_000, partition=1).get(timeout=30)
    assert (meta.partition, meta.offset) == (1, 0), "a 150 KB record to adm-a is accepted"
    producer.close()


def test_alter_configs(broker, admin, adm_a):
    # -- AlterConfigs (the old, non-incremental API) -------------------------
    # The given configs replace all of the topic's overrides, as in Kafka:
    # max.message.bytes (set at creation) goes back to its default.
    response = admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "adm-a",
                                                   {"retention.ms": "1000", "segment.index.bytes": "65536"})])
    assert [r[:1] for r in response.resources] == [(0,)], "alter_configs (AlterConfigs) adm-a: no error"
    configs = topic_configs(admin, "adm-a")
    assert (configs.get("retention.ms"), configs.get("segment.index.bytes")) == \
        (("1000", TOPIC_CONFIG_SOURCE), ("65536", TOPIC_CONFIG_SOURCE)), \
        "AlterConfigs set retention.ms and segment.index.bytes"
    assert configs.get("max.message.bytes", ("", TOPIC_CONFIG_SOURCE))[1] != TOPIC_CONFIG_SOURCE, \
        "AlterConfigs reset max.message.bytes (not named) to its default: %r" % (configs,)
    response = admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "adm-a",
                                                   {"retention.ms": "soon"})])
    assert [r[0] for r in response.resources] == [40], "AlterConfigs with a bad value: INVALID_CONFIG"
    response = admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "adm-a",
                                                   {"retention.ms": "3600000", "max.message.bytes": "200000"})])
    assert [r[0] for r in response.resources] == [0], "AlterConfigs back to the creation configs"
    assert topic_configs(admin, "adm-a").get("retention.ms") == ("3600000", TOPIC_CONFIG_SOURCE), \
        "retention.ms after AlterConfigs"


def test_incremental_alter_configs(broker, admin, adm_a):
    # -- IncrementalAlterConfigs ---------------------------------------------
    result = incremental_alter(broker.port, [(2, "adm-a", [("retention.ms", SET, "7200000"),
                                                          ("max.message.bytes", DELETE, None)])],
                               validate_only=True)
    assert [r[:2] for r in result] == [("adm-a", 0)], "incremental alter, validate_only: no error"
    assert topic_configs(admin, "adm-a").get("retention.ms") == ("3600000", TOPIC_CONFIG_SOURCE), \
        "validate_only changed nothing"
    result = incremental_alter(broker.port, [(2, "adm-a", [("retention.ms", SET, "7200000"),
                                                          ("max.message.bytes", DELETE, None),
                                                          ("segment.bytes", SET, "1048576")])])
    assert [r[:2] for r in result] == [("adm-a", 0)], "incremental alter SET/DELETE: no error"
    configs = topic_configs(admin, "adm-a")
    assert configs.get("retention.ms") == ("7200000", TOPIC_CONFIG_SOURCE), "retention.ms is now 7200000"
    assert configs.get("max.message.bytes", ("", 1))[1] != 1, "max.message.bytes back to its default: %r" % (configs,)
    assert configs.get("segment.bytes") == ("1048576", TOPIC_CONFIG_SOURCE), "segment.bytes is now 1048576"
    result = incremental_alter(broker.port, [(2, "adm-a", [("retention.ms", SET, "later")])])
    assert [r[:2] for r in result] == [("adm-a", 40)], "incremental alter with a bad value: INVALID_CONFIG"
    result = incremental_alter(broker.port, [(2, "adm-a", [("cleanup.policy", APPEND, "compact")])])
    assert [r[:2] for r in result] == [("adm-a", 40)], \
        "incremental alter APPEND compact to cleanup.policy: INVALID_CONFIG (no compaction)"
    result = incremental_alter(broker.port, [(2, "adm-a", [("retention.ms", APPEND, "1")])])
    assert [r[:2] for r in result] == [("adm-a", 40)], "incremental alter APPEND to a LONG config: INVALID_CONFIG"
    result = incremental_alter(broker.port, [(2, "adm-a", [("leader.replication.throttled.replicas", APPEND, "0:1"),
                                                          ("leader.replication.throttled.replicas", APPEND, "1:1")])])
    assert [r[:2] for r in result] == [("adm-a", 42)], "incremental alter naming a config twice: INVALID_REQUEST"
    result = incremental_alter(broker.port, [(2, "adm-a", [("leader.replication.throttled.replicas", APPEND, "0:1")])])
    result += incremental_alter(broker.port, [(2, "adm-a", [("leader.replication.throttled.replicas", APPEND, "1:1")])])
    assert [r[:2] for r in result] == [("adm-a", 0)] * 2, "incremental alter APPEND to a LIST config: no error"
    assert topic_configs(admin, "adm-a").get("leader.replication.throttled.replicas") == ("0:1,1:1", TOPIC_CONFIG_SOURCE), \
        "... the list has both items"
    result = incremental_alter(broker.port, [(2, "adm-a", [("leader.replication.throttled.replicas", SUBTRACT, "0:1")])])
    assert ([r[:2] for r in result], topic_configs(admin, "adm-a").get("leader.replication.throttled.replicas")) == \
        ([("adm-a", 0)], ("1:1", TOPIC_CONFIG_SOURCE)), \
        "incremental alter SUBTRACT from a LIST config"
    result = incremental_alter(broker.port, [(2, "adm-none", [("retention.ms", SET, "1")])])
    assert [r[:2] for r in result] == [("adm-none", 3)], \
        "incremental alter of an unknown topic: UNKNOWN_TOPIC_OR_PARTITION"
    result = incremental_alter(broker.port, [(4, "1", [("log.retention.ms", SET, "1")])])
    assert len(result) == 1 and result[0][1] != 0 and result[0][2], \
        "incremental alter of the broker: refused with a message: %r" % (result,)
    assert topic_configs(admin, "adm-a").get("retention.ms") == ("7200000", TOPIC_CONFIG_SOURCE), \
        "retention.ms still 7200000 after the failed alters"


def test_create_partitions(broker, admin, adm_a):
    # -- create_partitions ---------------------------------------------------
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all")
    producer.send("adm-a", value=b"before growth", partition=0).get(timeout=30)
    producer.send("adm-a", value=b"before growth too", partition=1).get(timeout=30)
    response = admin.create_partitions({"adm-a": NewPartitions(4)})
    assert [tuple(t[:2]) for t in response.topic_errors] == [("adm-a", 0)], "create_partitions adm-a to 4"
    assert partition_count(broker.port, "adm-a") == (0, 4), "adm-a has 4 partitions (Metadata)"
    admin.create_partitions({"adm-a": NewPartitions(6)}, validate_only=True)
    assert partition_count(broker.port, "adm-a") == (0, 4), "create_partitions validate_only: still 4"
    expect_error("shrinking to 3 partitions: InvalidPartitionsError", Errors.InvalidPartitionsError,
                 lambda: admin.create_partitions({"adm-a": NewPartitions(3)}))
    expect_error("create_partitions on an unknown topic: UnknownTopicOrPartitionError",
                 Errors.UnknownTopicOrPartitionError, lambda: admin.create_partitions({"adm-none": NewPartitions(3)}))
    # The producer learns of the new partitions when its metadata is refreshed.
    producer.close()
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all")
    meta = producer.send("adm-a", value=b"in partition 3", partition=3).get(timeout=30)
    assert (meta.partition, meta.offset) == (3, 0), "produce to new partition 3"
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=None, enable_auto_commit=False)
    tps = [TopicPartition("adm-a", p) for p in range(4)]
    assert consumer.end_offsets(tps) == {tps[0]: 1, tps[1]: 1, tps[2]: 0, tps[3]: 1}, \
        "end offsets after growth (old data kept)"
    consumer.close()


def test_delete_topics(broker, admin, adm_a_grown):
    # -- delete_topics -------------------------------------------------------
    # A long-poll fetch parked on the topic is answered when it is deleted.
    parked = kafka_wire.Connection(broker.port)
    from kafka.protocol.fetch import FetchResponse
    fetch = kafka_wire.fetch_v4("adm-a", 2, 0, max_wait_ms=60000, min_bytes=1)
    parked.send_raw(kafka_wire.frame(kafka_wire.request_header(18, 0, 1)) +
                    kafka_wire.frame(kafka_wire.request_header(1, 4, 2) + fetch))
    parked.receive()  # ApiVersions answered: the fetch behind it is parked
    started = time.monotonic()
    response = admin.delete_topics(["adm-a"], timeout_ms=5000)
    assert [tuple(t[:2]) for t in response.topic_error_codes] == [("adm-a", 0)], "delete adm-a"
    cid, payload = parked.receive()
    parked.close()
    (_t, ((_p, error_code, *_rest),)), = FetchResponse[4].decode(payload).topics
    assert (cid, error_code) == (2, 3), "the parked fetch is answered with UNKNOWN_TOPIC_OR_PARTITION"
    assert time.monotonic() - started < 30, "... at once, not after max_wait_ms: %r" % (time.monotonic() - started,)
    assert "adm-a" not in admin.list_topics(), "list_topics no longer shows adm-a: %r" % (admin.list_topics(),)
    assert topic_configs(admin, "adm-a") == 3, "describe deleted topic: UNKNOWN_TOPIC_OR_PARTITION"
    expect_error("delete an unknown topic: UnknownTopicOrPartitionError", Errors.UnknownTopicOrPartitionError,
                 lambda: admin.delete_topics(["adm-a"]))


def test_recreated_topic_starts_empty(broker, admin, adm_a):
    # Re-created under the same name, the topic starts empty with its own
    # (default) configs: adm-a, with a record and its creation configs, is
    # deleted first.
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all")
    meta = producer.send("adm-a", value=b"before deletion", partition=0).get(timeout=30)
    producer.close()
    assert (meta.partition, meta.offset) == (0, 0), "a record in adm-a before it is deleted"
    response = admin.delete_topics(["adm-a"], timeout_ms=5000)
    assert [tuple(t[:2]) for t in response.topic_error_codes] == [("adm-a", 0)], "delete adm-a"
    admin.create_topics([NewTopic("adm-a", 1, 1)])
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=None, enable_auto_commit=False)
    tp = TopicPartition("adm-a", 0)
    assert consumer.end_offsets([tp]) == {tp: 0}, "re-created adm-a is empty"
    consumer.close()
    configs = topic_configs(admin, "adm-a")
    assert isinstance(configs, dict) and configs.get("retention.ms", ("", 1))[1] != TOPIC_CONFIG_SOURCE, \
        "re-created adm-a has default retention.ms: %r" % (configs,)


def test_topics_survive_a_restart(broker, adm_a):
    # Topics and configs survive a restart (they live in the meta store).
    admin2_topic = "adm-persist"
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    drop_topic(admin, admin2_topic)
    admin.create_topics([NewTopic(admin2_topic, 3, 1, topic_configs={"retention.ms": "123456"})])
    admin.close()
    assert broker.restart() == 0, "SIGTERM exit code"
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    assert {"adm-a", admin2_topic} <= set(admin.list_topics()), \
        "after restart: topics listed: %r" % (admin.list_topics(),)
    assert partition_count(broker.port, admin2_topic) == (0, 3), "after restart: adm-persist has 3 partitions"
    assert topic_configs(admin, admin2_topic).get("retention.ms") == ("123456", TOPIC_CONFIG_SOURCE), \
        "after restart: adm-persist retention.ms"
    admin.close()
