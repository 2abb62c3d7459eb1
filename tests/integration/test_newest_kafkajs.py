"""kafkajs from npm (newest_clients.KAFKAJS, clients/kafkajs/package-lock.json)
against one eddy:
  1. idempotent producer (idempotent: true, maxInFlightRequests: 1),
     consumer group (subscribe, commitOffsets, a second run resumes from
     the committed offsets);
  2. admin createTopics, listTopics, fetchTopicMetadata (all topics),
     describeCluster, fetchTopicOffsets.
The client is clients/kafkajs/kafkajs_client.js under node; its stderr is
in the broker's tmp dir (EDDY_KEEP_TMP=1 keeps it, EDDY_CLIENT_DEBUG=1
sets logLevel DEBUG).
The tests share one eddy; the topic test_metadata lists (kj-events, made
by test_idempotent_produce_and_group) comes from fixture `events_topic`,
so that each test passes alone as well as in file order."""

import os

import pytest

import eddy_fixture
import newest_clients as nc


@pytest.fixture(scope="module")
def client_env():
    node, env = nc.provision("kafkajs %s" % nc.KAFKAJS, nc.kafkajs)
    return [node, os.path.join(nc.CLIENTS, "kafkajs", "kafkajs_client.js")], env


@pytest.fixture(scope="module")
def events_topic(eddy):
    """kj-events with 3 partitions, as test_idempotent_produce_and_group
    (newest_clients.group_scenario) creates it."""
    nc.ensure_topic(eddy, "kj-events", 3)
    return "kj-events"


def test_idempotent_produce_and_group(eddy, client_env):
    client, env = client_env
    nc.group_scenario(client, env, eddy, eddy.tmp, "kj")


def test_metadata(eddy, client_env, events_topic):
    client, env = client_env
    result, _run = nc.run_for_result(client + ["metadata", eddy.bootstrap, "kj-created"], eddy.tmp, "metadata", 90,
                                     env=env)
    assert result.get("connect_error") is None, "admin connect: error"
    assert result.get("create_error") is None, "admin createTopics: error"
    assert result.get("create_result") is True, "admin createTopics: created"
    assert result.get("list_topics_error") is None, "admin listTopics: error"
    assert {"kj-events", "kj-created"} <= set(result.get("list_topics") or []), "admin listTopics: both topics listed"
    assert result.get("fetch_topic_metadata_error") is None, "admin fetchTopicMetadata: error"
    nc.assert_topics("admin fetchTopicMetadata (all topics)", result.get("topics"),
                     {"kj-events": 3, "kj-created": 2})
    assert result.get("describe_cluster_error") is None, "admin describeCluster: error"
    assert result.get("brokers") == [eddy.bootstrap], "admin describeCluster: brokers"
    assert result.get("fetch_topic_offsets_error") is None, "admin fetchTopicOffsets: error"
    assert result.get("end_offsets") == {"0": 0, "1": 0}, \
        "admin fetchTopicOffsets: high watermarks of the new topic"


def test_no_connection_closed_as_bad_request(eddy):
    eddy_fixture.assert_no_closed_connection(eddy)
