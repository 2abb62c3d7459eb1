"""Kafka's ACLs on one eddy with a PLAINTEXT and a SASL_PLAINTEXT listener,
authorizer.class.name set to Kafka's StandardAuthorizer and
super.users=User:admin. In file order:
  1. without an authorizer the ACL APIs answer SECURITY_DISABLED (Kafka's
     kafka-acls says so); the users are made then, and eddy restarts with
     the authorizer;
  2. ACLs added, listed and removed with Kafka's own kafka-acls
     (org.apache.kafka.tools.AclCommand) as User:admin, literal and
     prefixed; a client that is not a super user may not change them;
     kafka-python's admin client: a per-binding INVALID_REQUEST, a MATCH
     filter, DeleteAcls' matching bindings;
  3. kafka-python (Debian) as User:alice: Metadata hides the topics alice
     may not DESCRIBE; produce refused with TOPIC_AUTHORIZATION_FAILED (from
     Metadata, then from Produce itself with DESCRIBE but no WRITE), allowed
     once WRITE is added; consume refused without READ; a consumer group
     refused with GROUP_AUTHORIZATION_FAILED until a prefixed group ACL;
     a DENY overriding an ALLOW;
  4. Kafka's kafka-topics and kafka-configs as User:bob: create, describe
     and alter configs, delete, each refused with TOPIC_AUTHORIZATION_FAILED
     until its operation is granted; confluent-kafka's idempotent producer
     (newest, PyPI): InitProducerId allowed to alice (WRITE on a topic),
     CLUSTER_AUTHORIZATION_FAILED for bob (no WRITE anywhere);
     confluent-kafka's admin client: the authorized operations of cluster,
     topic and group, OffsetDelete's READ per topic, the SCRAM admin APIs
     refused without cluster rights; Eddy's own tools with --command-config;
     the ACLs survive a restart;
  5. another eddy with allow.everyone.if.no.acl.found=true: resources no ACL
     names are open to everyone, one with an ACL is not;
  6. an authorizer class eddy does not have: exit code 2 and why.
Run alone: EDDY_BIN=build/src/app/eddy EDDY_SOURCE_DIR=. /usr/bin/python3 -m pytest
tests/integration/test_acls.py"""

import os
import re
import subprocess
import time

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import (GroupAuthorizationFailedError, InvalidRequestError, KafkaTimeoutError, NoError,
                          TopicAuthorizationFailedError)

import eddy_fixture
import kafka_fixture
import newest_clients as nc

ACLS = "org.apache.kafka.tools.AclCommand"
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
SASL_LISTENING = re.compile(r"listening on SASL_PLAINTEXT://127\.0\.0\.1:(\d+)")
USERS = {"admin": "admin-secret-0", "alice": "alice-secret-1", "bob": "bob-secret-2"}
LISTENERS = "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0"


def sasl_bootstrap(broker):
    m = SASL_LISTENING.findall(broker.log_text())
    assert m, "eddy logs its SASL_PLAINTEXT port:\n" + broker.log_text()[-2000:]
    return "127.0.0.1:%s" % m[-1]


def command_config(broker, user):
    path = os.path.join(broker.tmp, "%s.properties" % user)
    with open(path, "w") as f:
        f.write("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
                "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
                "username=\"%s\" password=\"%s\";\n" % (user, USERS[user]))
    return path


def kafka_acls(broker, *args, user="admin", check=True):
    """kafka-acls through the SASL listener as user (None: the PLAINTEXT
    listener, User:ANONYMOUS)."""
    if user is None:
        base = ["--bootstrap-server", broker.bootstrap]
    else:
        base = ["--bootstrap-server", sasl_bootstrap(broker), "--command-config", command_config(broker, user)]
    proc = kafka_fixture.java_tool(ACLS, base + list(args))
    out = proc.stdout.decode() + proc.stderr.decode()
    if check:
        assert proc.returncode == 0, "kafka-acls %s: %s" % (" ".join(args), out[-3000:])
    return out


def client_conf(broker, user, **kw):
    conf = dict(bootstrap_servers=sasl_bootstrap(broker), security_protocol="SASL_PLAINTEXT",
                sasl_mechanism="SCRAM-SHA-512", sasl_plain_username=user, sasl_plain_password=USERS[user],
                request_timeout_ms=10000, api_version_auto_timeout_ms=10000)
    conf.update(kw)
    return conf


def past_refusal_log_window():
    """Eddy logs at most one refusal a second: after this the next is logged."""
    time.sleep(1.1)


def refused_in_metadata(broker, user, topic, operation):
    """kafka-python 2.0.2 turns a Metadata answer whose only topic carries an
    error into a failed update and retries until max_block_ms (it raises
    TopicAuthorizationFailedError only when other topics come with it):
    the broker's side is its log line."""
    past_refusal_log_window()
    with pytest.raises((TopicAuthorizationFailedError, KafkaTimeoutError)):
        produce(broker, user, topic, b"nope", max_block_ms=3000)
    return ("Metadata from" in broker.log_text() and
            "principal User:%s may not %s TOPIC '%s'" % (user, operation, topic) in broker.log_text())


def produce(broker, user, topic, value, max_block_ms=10000):
    producer = KafkaProducer(max_block_ms=max_block_ms, retries=0, **client_conf(broker, user))
    try:
        return producer.send(topic, value).get(timeout=20)
    finally:
        producer.close(timeout=5)


def consume_partition(broker, user, topic, timeout_s=10):
    """The values of topic-0 from the beginning; raises what poll raises."""
    consumer = KafkaConsumer(**client_conf(broker, user))
    try:
        consumer.assign([TopicPartition(topic, 0)])
        consumer.seek_to_beginning()
        values, deadline = [], time.time() + timeout_s
        while time.time() < deadline:
            for records in consumer.poll(timeout_ms=500).values():
                values += [r.value for r in records]
            if values:
                return values
        return values
    finally:
        consumer.close()


def topics_seen(broker, user):
    consumer = KafkaConsumer(**client_conf(broker, user))
    try:
        return consumer.topics()
    finally:
        consumer.close()


@pytest.fixture(scope="module")
def broker(eddy_factory):
    b = eddy_factory({"listeners": LISTENERS})
    # No authorizer yet: Kafka's answer, and the users made through PLAINTEXT.
    out = kafka_acls(b, "--list", user=None, check=False)
    assert "Security features are disabled" in out or "SecurityDisabledException" in out, out[-2000:]
    for user, password in USERS.items():
        r = subprocess.run([b.bin, "users", "--bootstrap-server", b.bootstrap, "--add", user],
                           input=(password + "\n").encode(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=60)
        assert r.returncode == 0, r.stderr.decode()
    b.overrides.update({"authorizer.class.name": STANDARD_AUTHORIZER, "super.users": "User:admin"})
    assert b.restart() == 0
    return b


def test_kafka_acls_add_list_remove(broker):
    kafka_acls(broker, "--add", "--allow-principal", "User:bob", "--operation", "Read", "--operation", "Describe",
               "--topic", "bob-", "--resource-pattern-type", "prefixed")
    kafka_acls(broker, "--add", "--allow-principal", "User:bob", "--operation", "Write", "--topic", "bob-log")
    listed = kafka_acls(broker, "--list", "--principal", "User:bob")
    assert "name=bob-, patternType=PREFIXED" in listed, listed
    assert "name=bob-log, patternType=LITERAL" in listed, listed
    assert "principal=User:bob, host=*, operation=READ, permissionType=ALLOW" in listed, listed
    assert "operation=WRITE, permissionType=ALLOW" in listed, listed
    # The ACLs that apply to one name: the literal and the prefixed one.
    matching = kafka_acls(broker, "--list", "--topic", "bob-log", "--resource-pattern-type", "match")
    assert "patternType=PREFIXED" in matching and "patternType=LITERAL" in matching, matching
    kafka_acls(broker, "--remove", "--force", "--allow-principal", "User:bob", "--operation", "Write",
               "--topic", "bob-log")
    listed = kafka_acls(broker, "--list", "--principal", "User:bob")
    assert "name=bob-log" not in listed and "name=bob-, patternType=PREFIXED" in listed, listed
    # Only a principal with ALTER on the cluster changes ACLs.
    refused = kafka_acls(broker, "--add", "--allow-principal", "User:alice", "--operation", "All", "--topic", "*",
                         user="bob", check=False)
    assert "ClusterAuthorizationException" in refused or "Cluster authorization failed" in refused, refused[-2000:]
    assert "name=*" not in kafka_acls(broker, "--list", "--topic", "*")
    # (kafka-acls --add lists the ACLs first: DescribeAcls is refused already.)
    assert re.search(r"principal User:bob may not (ALTER|DESCRIBE) CLUSTER 'kafka-cluster'", broker.log_text())


def test_create_and_delete_acls_results(broker):
    """CreateAcls answers per binding (INVALID_REQUEST for a cluster not named
    kafka-cluster), DeleteAcls lists what each filter matched."""
    from kafka.admin import (ACL, ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType,
                             KafkaAdminClient, ResourcePattern, ResourcePatternFilter, ResourceType)
    admin = KafkaAdminClient(**client_conf(broker, "admin"))
    try:
        good = ACL("User:carol", "*", ACLOperation.READ, ACLPermissionType.ALLOW,
                   ResourcePattern(ResourceType.TOPIC, "carol-", ACLResourcePatternType.PREFIXED))
        bad = ACL("User:carol", "*", ACLOperation.ALTER, ACLPermissionType.ALLOW,
                  ResourcePattern(ResourceType.CLUSTER, "my-cluster", ACLResourcePatternType.LITERAL))
        result = admin.create_acls([good, bad])
        assert result["succeeded"] == [good], result
        assert len(result["failed"]) == 1 and result["failed"][0][0] == bad, result
        assert result["failed"][0][1] is InvalidRequestError, result
        # MATCH: the prefixed ACL applies to carol-logs.
        acls, error = admin.describe_acls(ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY,
                                                    ResourcePatternFilter(ResourceType.TOPIC, "carol-logs",
                                                                          ACLResourcePatternType.MATCH)))
        assert error.errno == 0 and [a.principal for a in acls] == ["User:carol"], (acls, error)
        deleted = admin.delete_acls([ACLFilter("User:carol", None, ACLOperation.ANY, ACLPermissionType.ANY,
                                               ResourcePatternFilter(ResourceType.ANY, None,
                                                                     ACLResourcePatternType.ANY))])
        (filter_, matches, error), = deleted
        assert error is NoError and [acl for acl, _ in matches] == [good], deleted
        assert [e for _, e in matches] == [NoError], deleted
    finally:
        admin.close()


def test_metadata_hides_topics_alice_may_not_describe(broker):
    produce(broker, "admin", "orders", b"first")
    produce(broker, "admin", "secret-plans", b"hidden")
    kafka_acls(broker, "--add", "--allow-principal", "User:alice", "--operation", "Describe", "--topic", "orders")
    assert {"orders", "secret-plans"} <= topics_seen(broker, "admin")
    seen = topics_seen(broker, "alice")
    assert "orders" in seen and "secret-plans" not in seen, seen


def test_produce_refused_until_write_is_granted(broker):
    # No ACL for alice on the topic at all: Metadata refuses it already.
    assert refused_in_metadata(broker, "alice", "secret-plans", "DESCRIBE")
    # DESCRIBE but not WRITE: the Produce itself answers TOPIC_AUTHORIZATION_FAILED.
    past_refusal_log_window()
    with pytest.raises(TopicAuthorizationFailedError):
        produce(broker, "alice", "orders", b"nope")
    assert "Produce from" in broker.log_text() and "User:alice may not WRITE TOPIC 'orders'" in broker.log_text()
    kafka_acls(broker, "--add", "--allow-principal", "User:alice", "--operation", "Write", "--topic", "orders")
    produce(broker, "alice", "orders", b"from alice")
    assert consume_partition(broker, "admin", "orders")[:2] == [b"first", b"from alice"]
    # Auto-creation needs CREATE: alice, who may DESCRIBE alice-*, may not
    # make a topic by naming it.
    kafka_acls(broker, "--add", "--allow-principal", "User:alice", "--operation", "Describe", "--topic", "alice-",
               "--resource-pattern-type", "prefixed")
    assert refused_in_metadata(broker, "alice", "alice-new-topic", "CREATE")
    assert "alice-new-topic" not in topics_seen(broker, "admin")


def test_consume_refused_without_read(broker):
    with pytest.raises(TopicAuthorizationFailedError):
        consume_partition(broker, "alice", "orders")
    kafka_acls(broker, "--add", "--allow-principal", "User:alice", "--operation", "Read", "--topic", "orders")
    assert consume_partition(broker, "alice", "orders")[:2] == [b"first", b"from alice"]


def test_group_refused_until_a_prefixed_group_acl(broker):
    def consume_in_group(group):
        consumer = KafkaConsumer(group_id=group, auto_offset_reset="earliest", session_timeout_ms=6000,
                                 heartbeat_interval_ms=2000, **client_conf(broker, "alice"))
        try:
            consumer.subscribe(["orders"])
            values, deadline = [], time.time() + 20
            while time.time() < deadline and not values:
                for records in consumer.poll(timeout_ms=500).values():
                    values += [r.value for r in records]
            consumer.commit()
            return values
        finally:
            consumer.close()

    # No ACL on the group: FindCoordinator (DESCRIBE) is refused.
    past_refusal_log_window()
    with pytest.raises(GroupAuthorizationFailedError):
        consume_in_group("team-a-readers")
    assert "FindCoordinator from" in broker.log_text()
    # DESCRIBE but not READ: JoinGroup is refused.
    kafka_acls(broker, "--add", "--allow-principal", "User:alice", "--operation", "Describe", "--group",
               "team-a-readers")
    past_refusal_log_window()
    with pytest.raises(GroupAuthorizationFailedError):
        consume_in_group("team-a-readers")
    assert "JoinGroup from" in broker.log_text() and "may not READ GROUP 'team-a-readers'" in broker.log_text()
    kafka_acls(broker, "--add", "--allow-principal", "User:alice", "--operation", "Read", "--group", "team-a-",
               "--resource-pattern-type", "prefixed")
    assert consume_in_group("team-a-readers")[:1] == [b"first"]
    # Another group, outside the prefix, stays refused.
    with pytest.raises(GroupAuthorizationFailedError):
        consume_in_group("team-b")
    # OffsetCommit needs READ on the topic too (alice may not read secret-plans).
    from kafka.structs import OffsetAndMetadata
    manual = KafkaConsumer(group_id="team-a-manual", session_timeout_ms=6000, heartbeat_interval_ms=2000,
                           **client_conf(broker, "alice"))
    try:
        manual.assign([TopicPartition("orders", 0)])
        manual.commit({TopicPartition("orders", 0): OffsetAndMetadata(1, "")})
        past_refusal_log_window()
        with pytest.raises(TopicAuthorizationFailedError):
            manual.commit({TopicPartition("secret-plans", 0): OffsetAndMetadata(1, "")})
        assert "OffsetCommit from" in broker.log_text()
        assert manual.committed(TopicPartition("orders", 0)) == 1
    finally:
        manual.close()
    # ListGroups: alice sees the groups she may DESCRIBE, admin all of them.
    from kafka.admin import KafkaAdminClient

    def groups_seen(user):
        admin = KafkaAdminClient(**client_conf(broker, user))
        try:
            return {g for g, _ in admin.list_consumer_groups()}
        finally:
            admin.close()

    consumer = KafkaConsumer(group_id="admin-group", session_timeout_ms=6000, heartbeat_interval_ms=2000,
                             **client_conf(broker, "admin"))
    try:
        consumer.assign([TopicPartition("orders", 0)])
        consumer.seek(TopicPartition("orders", 0), 1)
        consumer.commit()
    finally:
        consumer.close()
    assert {"team-a-readers", "admin-group"} <= groups_seen("admin")
    seen = groups_seen("alice")
    assert "team-a-readers" in seen and "admin-group" not in seen, seen


def test_deny_overrides_allow(broker):
    kafka_acls(broker, "--add", "--deny-principal", "User:alice", "--operation", "Read", "--topic", "ord",
               "--resource-pattern-type", "prefixed")
    with pytest.raises(TopicAuthorizationFailedError):
        consume_partition(broker, "alice", "orders")
    # Admin is a super user: no ACL applies to it.
    assert consume_partition(broker, "admin", "orders")[:1] == [b"first"]
    kafka_acls(broker, "--remove", "--force", "--deny-principal", "User:alice", "--operation", "Read",
               "--topic", "ord", "--resource-pattern-type", "prefixed")
    assert consume_partition(broker, "alice", "orders")[:1] == [b"first"]


def test_describe_log_dirs_needs_describe_on_the_cluster(broker):
    def log_dirs(user):
        proc = kafka_fixture.java_tool("org.apache.kafka.tools.LogDirsCommand",
                                       ["--bootstrap-server", sasl_bootstrap(broker), "--command-config",
                                        command_config(broker, user), "--describe"])
        return proc.returncode, proc.stdout.decode() + proc.stderr.decode()

    rc, out = log_dirs("admin")
    assert rc == 0 and '"logDir"' in out, out[-2000:]
    rc, out = log_dirs("bob")
    assert rc != 0 and "ClusterAuthorization" in out, out[-2000:]


def test_topic_admin_and_configs_need_their_operations(broker):
    """Kafka's own kafka-topics and kafka-configs as bob: creating a topic
    needs CREATE (here on a prefixed topic pattern), describing its configs
    DESCRIBE_CONFIGS, altering them ALTER_CONFIGS, deleting it DELETE."""
    def tool(main_class, user, *args):
        proc = kafka_fixture.java_tool(main_class, ["--bootstrap-server", sasl_bootstrap(broker), "--command-config",
                                                    command_config(broker, user)] + list(args))
        return proc.returncode, proc.stdout.decode() + proc.stderr.decode()

    topics, configs = "org.apache.kafka.tools.TopicCommand", "org.apache.kafka.tools.ConfigCommand"
    rc, out = tool(topics, "bob", "--create", "--topic", "bob-metrics", "--partitions", "1")
    assert rc != 0 and "TopicAuthorization" in out, out[-2000:]
    assert "bob-metrics" not in topics_seen(broker, "admin")
    for operation in ("Create", "Describe"):
        kafka_acls(broker, "--add", "--allow-principal", "User:bob", "--operation", operation, "--topic", "bob-",
                   "--resource-pattern-type", "prefixed")
    rc, out = tool(topics, "bob", "--create", "--topic", "bob-metrics", "--partitions", "1")
    assert rc == 0, out[-2000:]
    describe = ["--describe", "--entity-type", "topics", "--entity-name", "bob-metrics"]
    alter = ["--alter", "--entity-type", "topics", "--entity-name", "bob-metrics", "--add-config", "retention.ms=60000"]
    rc, out = tool(configs, "bob", *describe)
    assert rc != 0 and "TopicAuthorization" in out, out[-2000:]
    rc, out = tool(configs, "bob", *alter)
    assert rc != 0 and "TopicAuthorization" in out, out[-2000:]
    kafka_acls(broker, "--add", "--allow-principal", "User:bob", "--operation", "DescribeConfigs",
               "--operation", "AlterConfigs", "--topic", "bob-", "--resource-pattern-type", "prefixed")
    rc, out = tool(configs, "bob", *alter)
    assert rc == 0, out[-2000:]
    rc, out = tool(configs, "bob", *describe)
    assert rc == 0 and "retention.ms=60000" in out, out[-2000:]
    rc, out = tool(topics, "bob", "--delete", "--topic", "bob-metrics")
    assert rc != 0 and "TopicAuthorization" in out, out[-2000:]
    kafka_acls(broker, "--add", "--allow-principal", "User:bob", "--operation", "Delete", "--topic", "bob-metrics")
    rc, out = tool(topics, "bob", "--delete", "--topic", "bob-metrics")
    assert rc == 0, out[-2000:]
    eddy_fixture.wait_until(lambda: "bob-metrics" not in topics_seen(broker, "admin"), 20, "bob-metrics deleted")


IDEMPOTENT_SCRIPT = r"""
import json, sys
from confluent_kafka import KafkaException, Producer
bootstrap, user, password, topic = sys.argv[1:5]
errors = []
p = Producer({"bootstrap.servers": bootstrap, "security.protocol": "SASL_PLAINTEXT",
              "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": user, "sasl.password": password,
              "enable.idempotence": True, "message.timeout.ms": 10000,
              "error_cb": lambda e: errors.append(e.str())})
delivered = []
try:
    for i in range(20):
        p.produce(topic, value=b"idempotent-%d" % i,
                  on_delivery=lambda e, m: delivered.append(e.str() if e else "ok"))
        p.poll(0)
    p.flush(20)
except (KafkaException, SystemError) as e:
    # After a fatal error (a refused producer id) produce() raises; an
    # error callback running then surfaces it as a SystemError whose cause
    # is the KafkaException.
    errors.append("%s %s" % (e, e.__cause__))
print(json.dumps({"result": {"delivered": delivered, "errors": errors}}))
"""


def test_idempotent_producer_needs_write_somewhere(broker):
    """confluent-kafka (newest) with enable.idempotence: InitProducerId needs
    IDEMPOTENT_WRITE on the cluster or, as Kafka 4 allows, WRITE on some
    topic. alice (WRITE on orders) gets a producer id; bob, who may write
    nowhere (he may create and describe bob-* topics: the topic exists and
    is described to him), gets CLUSTER_AUTHORIZATION_FAILED."""
    python = nc.provision("confluent-kafka %s (venv)" % nc.CONFLUENT_KAFKA, nc.venv_python)

    def run(user, topic):
        result, _ = nc.run_for_result([python, "-c", IDEMPOTENT_SCRIPT, sasl_bootstrap(broker), user, USERS[user],
                                       topic], broker.tmp, "idempotent-" + user, 120)
        return result

    alice = run("alice", "orders")
    assert alice["delivered"] == ["ok"] * 20, alice
    past_refusal_log_window()
    bob = run("bob", "bob-idempotent")
    assert "ok" not in bob["delivered"], bob
    assert any("Cluster authorization failed" in e or "CLUSTER_AUTHORIZATION_FAILED" in e for e in bob["errors"]), bob
    assert "InitProducerId from" in broker.log_text() and "User:bob may not IDEMPOTENT_WRITE CLUSTER" in \
        broker.log_text(), broker.log_text()[-3000:]


AUTHORIZED_OPERATIONS_SCRIPT = r"""
import json, sys
from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException, TopicCollection, TopicPartition
from confluent_kafka.admin import (AdminClient, ScramCredentialInfo, ScramMechanism,
                                   UserScramCredentialUpsertion)
bootstrap, user, password = sys.argv[1:4]
admin = AdminClient({"bootstrap.servers": bootstrap, "security.protocol": "SASL_PLAINTEXT",
                     "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": user, "sasl.password": password})
out = {}
def ops(described):
    return None if described.authorized_operations is None else sorted(o.name for o in described.authorized_operations)
def attempt(name, call):
    try:
        out[name] = call()
    except KafkaException as e:
        out[name] = "error: " + e.args[0].name()
attempt("cluster", lambda: ops(admin.describe_cluster(include_authorized_operations=True).result(20)))
attempt("orders", lambda: ops(admin.describe_topics(TopicCollection(["orders"]),
                                                    include_authorized_operations=True)["orders"].result(20)))
attempt("group", lambda: ops(admin.describe_consumer_groups(["team-a-manual"],
                                                            include_authorized_operations=True)["team-a-manual"]
                             .result(20)))
if user == "admin":
    attempt("commit", lambda: str(admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(
        "team-a-manual", [TopicPartition("alice-audit", 0, 1)])])["team-a-manual"].result(20)))
if user == "admin":
    # librdkafka (2.16) frees a stack string when this answer carries a
    # request-level error (any broker's refusal): only the allowed call here.
    attempt("scram_describe", lambda: sorted(admin.describe_user_scram_credentials(request_timeout=20).result(20)))
else:
    attempt("scram_alter", lambda: str(admin.alter_user_scram_credentials([UserScramCredentialUpsertion(
        "bob", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), b"stolen-password")])["bob"].result(20)))
print(json.dumps({"result": out}))
"""


def test_authorized_operations_offset_delete_and_scram_admin(broker):
    """confluent-kafka's admin client (newest): the authorized operations of
    the cluster (DescribeCluster), a topic (Metadata v8+) and a group
    (DescribeGroups v3+) as Kafka computes them; OffsetDelete needs DELETE
    on the group and READ on each topic; the SCRAM admin APIs need DESCRIBE
    / ALTER on the cluster."""
    python = nc.provision("confluent-kafka %s (venv)" % nc.CONFLUENT_KAFKA, nc.venv_python)
    kafka_acls(broker, "--add", "--allow-principal", "User:alice", "--operation", "Delete", "--group", "team-a-",
               "--resource-pattern-type", "prefixed")

    produce(broker, "admin", "alice-audit", b"audit")

    def run(user):
        result, _ = nc.run_for_result([python, "-c", AUTHORIZED_OPERATIONS_SCRIPT, sasl_bootstrap(broker), user,
                                       USERS[user]], broker.tmp, "operations-" + user, 120)
        return result

    admin = run("admin")
    assert admin["cluster"] == sorted(["ALTER", "ALTER_CONFIGS", "CLUSTER_ACTION", "CREATE", "DESCRIBE",
                                       "DESCRIBE_CONFIGS", "IDEMPOTENT_WRITE"]), admin
    assert admin["orders"] == sorted(["ALTER", "ALTER_CONFIGS", "CREATE", "DELETE", "DESCRIBE", "DESCRIBE_CONFIGS",
                                      "READ", "WRITE"]), admin
    assert admin["group"] == sorted(["DELETE", "DESCRIBE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "READ"]), admin
    assert admin["scram_describe"] == ["admin", "alice", "bob"], admin
    past_refusal_log_window()
    alice = run("alice")
    # No cluster ACL: DESCRIBE on the cluster refused, so 0 operations (Kafka's
    # answer; librdkafka shows an empty set as None) and the refusal logged.
    assert alice["cluster"] in (None, []), alice
    assert "User:alice may not DESCRIBE CLUSTER" in broker.log_text(), broker.log_text()[-3000:]
    # DescribeCluster itself (librdkafka asks Metadata): on the PLAINTEXT
    # listener User:ANONYMOUS has no ACL, so 0 when asked, the schema's
    # default (INT32_MIN) when not. The field ends the v0 body, before its tags.
    import struct
    import kafka_wire
    with kafka_wire.Connection(broker.port) as conn:
        for include, expected in ((b"\x01", 0), (b"\x00", -2 ** 31)):
            body = conn.request(60, 0, include + b"\x00", flexible=True)
            assert body[-1] == 0 and struct.unpack(">i", body[-5:-1])[0] == expected, body
    assert alice["orders"] == ["DESCRIBE", "READ", "WRITE"], alice
    assert alice["group"] == ["DELETE", "DESCRIBE", "READ"], alice
    # Kafka's kafka-consumer-groups --delete-offsets as alice: orders' offset
    # goes; alice-audit's (DESCRIBE through alice-*, no READ) stays, refused
    # by OffsetDelete with TOPIC_AUTHORIZATION_FAILED.
    past_refusal_log_window()
    proc = kafka_fixture.java_tool("org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", [
        "--bootstrap-server", sasl_bootstrap(broker), "--command-config", command_config(broker, "alice"),
        "--delete-offsets", "--group", "team-a-manual", "--topic", "orders", "--topic", "alice-audit"])
    out = proc.stdout.decode() + proc.stderr.decode()
    assert re.search(r"orders\s+0\s+Successful", out), out[-3000:]
    assert re.search(r"alice-audit\s+0\s+Error: .*TopicAuthorization", out), out[-3000:]
    assert "OffsetDelete from" in broker.log_text() and "User:alice may not READ TOPIC 'alice-audit'" in \
        broker.log_text(), broker.log_text()[-3000:]
    # Describing credentials needs DESCRIBE on the cluster: Kafka's kafka-configs as alice.
    proc = kafka_fixture.java_tool("org.apache.kafka.tools.ConfigCommand", [
        "--bootstrap-server", sasl_bootstrap(broker), "--command-config", command_config(broker, "alice"),
        "--describe", "--entity-type", "users"])
    out = proc.stdout.decode() + proc.stderr.decode()
    assert proc.returncode != 0 and "ClusterAuthorization" in out, out[-3000:]
    assert alice["scram_alter"] == "error: CLUSTER_AUTHORIZATION_FAILED", alice
    # bob's password is unchanged: he still logs in with it.
    assert isinstance(topics_seen(broker, "bob"), set)
    log = broker.log_text()
    assert "User:alice may not DESCRIBE CLUSTER" in log, log[-3000:]


def test_eddy_tools_authenticate_with_command_config(broker):
    """Eddy's own tools with Kafka's --command-config (the same file Kafka's
    tools take here): each user sees and may do what the ACLs give it."""
    def eddy(user, *args, stdin=b""):
        r = subprocess.run([broker.bin, args[0], "--bootstrap-server", sasl_bootstrap(broker), "--command-config",
                            command_config(broker, user)] + list(args[1:]), input=stdin,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        return r.returncode, r.stdout.decode(), r.stderr.decode()

    rc, out, err = eddy("admin", "topics", "--list")
    assert rc == 0 and {"orders", "secret-plans"} <= set(out.split()), out + err
    rc, out, err = eddy("alice", "topics", "--list")
    assert rc == 0 and "orders" in out.split() and "secret-plans" not in out.split(), out + err
    rc, out, err = eddy("alice", "consume", "--topic", "orders", "--from-beginning", "--max-messages", "1")
    assert rc == 0 and out.splitlines()[:1] == ["first"], out + err
    # Credentials: alice may not add a user (ALTER on the cluster), admin may.
    past_refusal_log_window()
    rc, out, err = eddy("alice", "users", "--add", "carol", stdin=b"carol-secret\n")
    assert rc == 1 and "CLUSTER_AUTHORIZATION_FAILED" in err, out + err
    rc, out, err = eddy("admin", "users", "--add", "carol", "--mechanism", "SCRAM-SHA-512", stdin=b"carol-secret\n")
    assert rc == 0, out + err
    carol = KafkaConsumer(**dict(client_conf(broker, "alice"), sasl_plain_username="carol",
                                 sasl_plain_password="carol-secret"))
    try:
        assert carol.topics() == set()  # logged in; no ACL lets carol describe anything
    finally:
        carol.close()
    # A wrong password: the tool says so and exits 1.
    wrong = command_config(broker, "alice").replace("alice.properties", "wrong.properties")
    with open(command_config(broker, "alice")) as f:
        text = f.read().replace(USERS["alice"], "not-the-password")
    with open(wrong, "w") as f:
        f.write(text)
    r = subprocess.run([broker.bin, "topics", "--bootstrap-server", sasl_bootstrap(broker), "--command-config",
                        wrong, "--list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert r.returncode == 1 and "SASL_AUTHENTICATION_FAILED" in r.stderr.decode(), r.stderr.decode()
    # A keystore type Eddy cannot read is a usage error.
    jks = os.path.join(broker.tmp, "jks.properties")
    with open(jks, "w") as f:
        f.write("security.protocol=SSL\nssl.truststore.type=JKS\nssl.truststore.location=/x.jks\n")
    r = subprocess.run([broker.bin, "topics", "--bootstrap-server", sasl_bootstrap(broker), "--command-config",
                        jks, "--list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert r.returncode == 2 and "only PEM files are read (not 'JKS')" in r.stderr.decode(), r.stderr.decode()


def test_acls_survive_a_restart(broker):
    assert broker.restart() == 0
    listed = kafka_acls(broker, "--list", "--principal", "User:alice")
    for needle in ["name=orders, patternType=LITERAL", "name=team-a-, patternType=PREFIXED", "operation=WRITE"]:
        assert needle in listed, listed
    produce(broker, "alice", "orders", b"after restart")
    assert refused_in_metadata(broker, "bob", "orders", "DESCRIBE")


def test_allow_everyone_if_no_acl_found(eddy_factory):
    # PLAINTEXT only: every client is User:ANONYMOUS; nothing has ACLs, so
    # everything is open, including kafka-acls itself (no ACL on the cluster).
    open_broker = eddy_factory({"authorizer.class.name": STANDARD_AUTHORIZER,
                                "allow.everyone.if.no.acl.found": "true",
                                "eddy.metrics.listener": "http://127.0.0.1:0"})
    plain = dict(bootstrap_servers=open_broker.bootstrap, request_timeout_ms=10000, max_block_ms=10000, retries=0)
    producer = KafkaProducer(**plain)
    try:
        producer.send("open-topic", b"anyone").get(timeout=20)
        producer.send("guarded", b"before").get(timeout=20)
        kafka_acls(open_broker, "--add", "--allow-principal", "User:alice", "--operation", "Write",
                   "--topic", "guarded", user=None)
        # guarded has an ACL now, which is not for ANONYMOUS.
        with pytest.raises((TopicAuthorizationFailedError, KafkaTimeoutError)):
            producer.send("guarded", b"after").get(timeout=20)
        assert "principal User:ANONYMOUS may not" in open_broker.log_text()
        producer.send("open-topic", b"still").get(timeout=20)
    finally:
        producer.close(timeout=5)
    # The refusals are counted.
    m = re.search(r"metrics listening on http://127\.0\.0\.1:(\d+)", open_broker.log_text())
    assert m, open_broker.log_text()[-2000:]
    import urllib.request
    text = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % m.group(1), timeout=10).read().decode()
    refusals = re.search(r"^eddy_authorization_refusals_total (\d+)$", text, re.M)
    assert refusals and int(refusals.group(1)) >= 1, text[-3000:]


def test_unknown_authorizer_class_exits_2(tmp_path):
    r = subprocess.run([os.environ["EDDY_BIN"], "serve", "--override", "log.dirs=%s" % tmp_path,
                        "--override", "authorizer.class.name=com.example.MyAuthorizer"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    assert r.returncode == 2, r.stderr.decode()
    assert "authorizer.class.name: 'com.example.MyAuthorizer' is not an authorizer" in r.stderr.decode()
    r = subprocess.run([os.environ["EDDY_BIN"], "serve", "--override", "log.dirs=%s" % tmp_path,
                        "--override", "authorizer.class.name=" + STANDARD_AUTHORIZER,
                        "--override", "super.users=admin"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    assert r.returncode == 2 and "super.users: 'admin' is not a principal" in r.stderr.decode(), r.stderr.decode()
