"""kafkajs from npm (newest_clients.KAFKAJS, clients/kafkajs/package-lock.json)
against one eddy:
  1. idempotent producer (idempotent: true, maxInFlightRequests: 1),
     consumer group (subscribe, commitOffsets, a second run resumes from
     the committed offsets);
  2. admin createTopics, listTopics, fetchTopicMetadata (all topics),
     describeCluster, fetchTopicOffsets.
The client is clients/kafkajs/kafkajs_client.js under node; its stderr is
in the broker's tmp dir (EDDY_KEEP_TMP=1 keeps it, EDDY_CLIENT_DEBUG=1
sets logLevel DEBUG)."""

import os

import eddy_fixture
import newest_clients as nc

NODE, ENV = nc.provision("kafkajs %s" % nc.KAFKAJS, nc.kafkajs)
CLIENT = [NODE, os.path.join(nc.CLIENTS, "kafkajs", "kafkajs_client.js")]


def metadata_scenario(broker, checks):
    result, run = nc.run_client(CLIENT + ["metadata", broker.bootstrap, "kj-created"], broker.tmp, "metadata", 90,
                                env=ENV)
    if not checks.check("metadata: printed a result", result is not None, run.tail()):
        return
    checks.equal("admin connect: error", result.get("connect_error"), None)
    checks.equal("admin createTopics: error", result.get("create_error"), None)
    checks.equal("admin createTopics: created", result.get("create_result"), True)
    checks.equal("admin listTopics: error", result.get("list_topics_error"), None)
    checks.check("admin listTopics: both topics listed",
                 {"kj-events", "kj-created"} <= set(result.get("list_topics") or []), result.get("list_topics"))
    checks.equal("admin fetchTopicMetadata: error", result.get("fetch_topic_metadata_error"), None)
    nc.check_topics(checks, "admin fetchTopicMetadata (all topics)", result.get("topics"),
                    {"kj-events": 3, "kj-created": 2})
    checks.equal("admin describeCluster: error", result.get("describe_cluster_error"), None)
    checks.equal("admin describeCluster: brokers", result.get("brokers"), [broker.bootstrap])
    checks.equal("admin fetchTopicOffsets: error", result.get("fetch_topic_offsets_error"), None)
    checks.equal("admin fetchTopicOffsets: high watermarks of the new topic", result.get("end_offsets"),
                 {"0": 0, "1": 0})


def body(broker, checks):
    nc.group_scenario(checks, CLIENT, ENV, broker, broker.tmp, "kj")
    metadata_scenario(broker, checks)
    checks.check("broker closed no connection as a bad request",
                 b"closing connection" not in broker.log_bytes(),
                 "\n".join(l for l in broker.log_text().splitlines() if "closing connection" in l)[-3000:])


if __name__ == "__main__":
    eddy_fixture.run_test(body)
