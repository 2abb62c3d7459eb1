"""franz-go from the Go module proxy (newest_clients.FRANZ_GO, kadm
newest_clients.FRANZ_GO_KADM; clients/franzgo, built into the test cache)
against one eddy:
  1. the default idempotent producer, consumer group (cooperative-sticky,
     CommitUncommittedOffsets, a second run resumes from the committed
     offsets);
  2. kadm CreateTopics, ListTopics (metadata of all topics), ListBrokers,
     ListEndOffsets.
Its stderr is in the broker's tmp dir (EDDY_KEEP_TMP=1 keeps it,
EDDY_CLIENT_DEBUG=1 switches kgo's logger to debug)."""

import eddy_fixture
import newest_clients as nc

CLIENT = [nc.provision("franz-go %s" % nc.FRANZ_GO, nc.franz_go)]


def metadata_scenario(broker, checks):
    result, run = nc.run_client(CLIENT + ["metadata", broker.bootstrap, "fg-created"], broker.tmp, "metadata", 90)
    if not checks.check("metadata: printed a result", result is not None, run.tail()):
        return
    checks.equal("kadm CreateTopics: request error", result.get("create_error"), None)
    checks.equal("kadm CreateTopics: topic error", result.get("create_topic_error"), None)
    checks.equal("kadm ListTopics: error", result.get("list_error"), None)
    nc.check_topics(checks, "kadm ListTopics", result.get("topics"), {"fg-events": 3, "fg-created": 2})
    errors = {n: t.get("error") for n, t in (result.get("topics") or {}).items() if t.get("error")}
    checks.equal("kadm ListTopics: topic errors", errors, {})
    checks.equal("kadm ListBrokers: error", result.get("brokers_error"), None)
    checks.equal("kadm ListBrokers: brokers", result.get("brokers"), [broker.bootstrap])
    checks.equal("kadm ListEndOffsets: error", result.get("end_offsets_error"), None)
    checks.equal("kadm ListEndOffsets: the new topic's end offsets", result.get("end_offsets"),
                 {"0": {"offset": 0, "error": None}, "1": {"offset": 0, "error": None}})


def body(broker, checks):
    nc.group_scenario(checks, CLIENT, None, broker, broker.tmp, "fg")
    metadata_scenario(broker, checks)
    checks.check("broker closed no connection as a bad request",
                 b"closing connection" not in broker.log_bytes(),
                 "\n".join(l for l in broker.log_text().splitlines() if "closing connection" in l)[-3000:])


if __name__ == "__main__":
    eddy_fixture.run_test(body)
