"""franz-go from the Go module proxy (newest_clients.FRANZ_GO, kadm
newest_clients.FRANZ_GO_KADM; clients/franzgo, built into the test cache)
against one eddy:
  1. the default idempotent producer, consumer group (cooperative-sticky,
     CommitUncommittedOffsets, a second run resumes from the committed
     offsets);
  2. kadm CreateTopics, ListTopics (metadata of all topics), ListBrokers,
     ListEndOffsets.
Its stderr is in the broker's tmp dir (EDDY_KEEP_TMP=1 keeps it,
EDDY_CLIENT_DEBUG=1 switches kgo's logger to debug).
The tests share one eddy; the topic test_metadata lists (fg-events, made
by test_idempotent_produce_and_group) comes from fixture `events_topic`,
so that each test passes alone as well as in file order."""

import pytest

import eddy_fixture
import newest_clients as nc


@pytest.fixture(scope="module")
def client():
    exe = nc.provision("franz-go %s" % nc.FRANZ_GO, nc.franz_go)
    return [exe]


@pytest.fixture(scope="module")
def events_topic(eddy):
    """fg-events with 3 partitions, as test_idempotent_produce_and_group
    (newest_clients.group_scenario) creates it."""
    nc.ensure_topic(eddy, "fg-events", 3)
    return "fg-events"


def test_idempotent_produce_and_group(eddy, client):
    nc.group_scenario(client, None, eddy, eddy.tmp, "fg")


def test_metadata(eddy, client, events_topic):
    result, _run = nc.run_for_result(client + ["metadata", eddy.bootstrap, "fg-created"], eddy.tmp, "metadata", 90)
    assert result.get("create_error") is None, "kadm CreateTopics: request error"
    assert result.get("create_topic_error") is None, "kadm CreateTopics: topic error"
    assert result.get("list_error") is None, "kadm ListTopics: error"
    nc.assert_topics("kadm ListTopics", result.get("topics"), {"fg-events": 3, "fg-created": 2})
    errors = {n: t.get("error") for n, t in (result.get("topics") or {}).items() if t.get("error")}
    assert errors == {}, "kadm ListTopics: topic errors"
    assert result.get("brokers_error") is None, "kadm ListBrokers: error"
    assert result.get("brokers") == [eddy.bootstrap], "kadm ListBrokers: brokers"
    assert result.get("end_offsets_error") is None, "kadm ListEndOffsets: error"
    assert result.get("end_offsets") == {"0": {"offset": 0, "error": None}, "1": {"offset": 0, "error": None}}, \
        "kadm ListEndOffsets: the new topic's end offsets"


def test_no_connection_closed_as_bad_request(eddy):
    eddy_fixture.assert_no_closed_connection(eddy)
