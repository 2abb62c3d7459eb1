"""kafka-python from PyPI, the newest release (newest_clients.KAFKA_PYTHON,
not Debian's python3-kafka 2.0.2 that the other tests use), against one
eddy:
  1. idempotent producer (enable_idempotence), consumer group (subscribe,
     commit, a second run resumes from the committed offsets);
  2. KafkaAdminClient create_topics, list_topics, describe_topics (all
     topics), describe_cluster; KafkaConsumer.topics().
The client runs under the venv's python (clients/kafka_python_client.py);
its stderr is in the broker's tmp dir (EDDY_KEEP_TMP=1 keeps it,
EDDY_CLIENT_DEBUG=1 logs every request).
The tests share one eddy; the topic test_metadata lists (kp-events, made
by test_idempotent_produce_and_group) comes from fixture `events_topic`,
so that each test passes alone as well as in file order."""

import os

import pytest

import eddy_fixture
import newest_clients as nc


@pytest.fixture(scope="module")
def client():
    python = nc.provision("kafka-python %s (venv)" % nc.KAFKA_PYTHON, nc.venv_python)
    return [python, os.path.join(nc.CLIENTS, "kafka_python_client.py")]


@pytest.fixture(scope="module")
def events_topic(eddy):
    """kp-events with 3 partitions, as test_idempotent_produce_and_group
    (newest_clients.group_scenario) creates it."""
    nc.ensure_topic(eddy, "kp-events", 3)
    return "kp-events"


def test_idempotent_produce_and_group(eddy, client):
    nc.group_scenario(client, None, eddy, eddy.tmp, "kp")


def test_metadata(eddy, client, events_topic):
    result, _run = nc.run_for_result(client + ["metadata", eddy.bootstrap, "kp-created"], eddy.tmp, "metadata", 90)
    assert result.get("create_error") is None, "admin create_topics: error"
    assert result.get("list_topics_error") is None, "admin list_topics: error"
    assert {"kp-events", "kp-created"} <= set(result.get("list_topics") or []), "admin list_topics: both topics listed"
    assert result.get("describe_topics_error") is None, "admin describe_topics: error"
    nc.assert_topics("admin describe_topics", result.get("describe_topics"), {"kp-events": 3, "kp-created": 2})
    assert result.get("describe_cluster_error") is None, "admin describe_cluster: error"
    assert result.get("brokers") == [eddy.bootstrap], "admin describe_cluster: brokers"
    assert result.get("consumer_topics_error") is None, "consumer topics(): error"
    nc.assert_topics("consumer topics()", result.get("consumer_topics"), {"kp-events": 3, "kp-created": 2})


def test_no_connection_closed_as_bad_request(eddy):
    eddy_fixture.assert_no_closed_connection(eddy)
