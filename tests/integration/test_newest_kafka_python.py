"""kafka-python from PyPI, the newest release (newest_clients.KAFKA_PYTHON,
not Debian's python3-kafka 2.0.2 that the other tests use), against one
eddy:
  1. idempotent producer (enable_idempotence), consumer group (subscribe,
     commit, a second run resumes from the committed offsets);
  2. KafkaAdminClient create_topics, list_topics, describe_topics (all
     topics), describe_cluster; KafkaConsumer.topics().
The client runs under the venv's python (clients/kafka_python_client.py);
its stderr is in the broker's tmp dir (EDDY_KEEP_TMP=1 keeps it,
EDDY_CLIENT_DEBUG=1 logs every request)."""

import os

import eddy_fixture
import newest_clients as nc

PYTHON = nc.provision("kafka-python %s (venv)" % nc.KAFKA_PYTHON, nc.venv_python)
CLIENT = [PYTHON, os.path.join(nc.CLIENTS, "kafka_python_client.py")]


def metadata_scenario(broker, checks):
    result, run = nc.run_client(CLIENT + ["metadata", broker.bootstrap, "kp-created"], broker.tmp, "metadata", 90)
    if not checks.check("metadata: printed a result", result is not None, run.tail()):
        return
    checks.equal("admin create_topics: error", result.get("create_error"), None)
    checks.equal("admin list_topics: error", result.get("list_topics_error"), None)
    checks.check("admin list_topics: both topics listed",
                 {"kp-events", "kp-created"} <= set(result.get("list_topics") or []), result.get("list_topics"))
    checks.equal("admin describe_topics: error", result.get("describe_topics_error"), None)
    nc.check_topics(checks, "admin describe_topics", result.get("describe_topics"), {"kp-events": 3, "kp-created": 2})
    checks.equal("admin describe_cluster: error", result.get("describe_cluster_error"), None)
    checks.equal("admin describe_cluster: brokers", result.get("brokers"), [broker.bootstrap])
    checks.equal("consumer topics(): error", result.get("consumer_topics_error"), None)
    nc.check_topics(checks, "consumer topics()", result.get("consumer_topics"), {"kp-events": 3, "kp-created": 2})


def body(broker, checks):
    nc.group_scenario(checks, CLIENT, None, broker, broker.tmp, "kp")
    metadata_scenario(broker, checks)
    checks.check("broker closed no connection as a bad request",
                 b"closing connection" not in broker.log_bytes(),
                 "\n".join(l for l in broker.log_text().splitlines() if "closing connection" in l)[-3000:])


if __name__ == "__main__":
    eddy_fixture.run_test(body)
