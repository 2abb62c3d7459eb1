"""A three-node cluster's consumer groups where Kafka's would differ from a
single node's (issue 16): committed offsets expire, and static members
outlive the coordinator.

Committed offsets expire as they do on Kafka: the offsets of a group left
empty for offsets.retention.minutes go, on every node, and those of a group
whose members are still consuming stay, on every node.

Only the coordinator (the controller leader) knows which groups have
members, and a consumer committing the same position again is logged only
a tenth of the retention after the last time (the followers' copy keeps an
older commit time), so a follower left to expire on its own would drop the
offsets of a group that is busy on the leader. The leader expires, and the
removal reaches every node through the controller log; and since the
followers' times lag by less than a tenth of the retention, a new leader
does not expire at once the offsets of a group that left just before the
failover.

A static member (group.instance.id) is stored on every node through the
controller log, so when the coordinator dies the next leader knows it and
its assignment: the member goes on heartbeating with the same member id and
no rebalance, as with Kafka (whose coordinators load the group from
__consumer_offsets).

Clients: Debian's kafka-python, and the newest confluent-kafka as the
static member.
"""

import os
import threading
import time

import pytest

from cluster_fixture import EddyCluster
from eddy_fixture import wait_until


RETENTION_S = 60  # offsets.retention.minutes=1, the smallest Kafka allows


@pytest.fixture(scope="module")
def cluster():
    with EddyCluster(3, overrides={"offsets.retention.minutes": "1",
                                   "offsets.retention.check.interval.ms": "1000"}) as c:
        c.start_all()
        c.wait_for_leader(timeout=30)
        yield c


def groups_on(cluster, i):
    return {g for g, _t, _p, _o in cluster.committed_offsets(i)}


def test_an_empty_groups_offsets_expire_everywhere_and_a_busy_groups_stay(cluster):
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import NewTopic
    from kafka.structs import OffsetAndMetadata
    leader = cluster.wait_for_leader(timeout=30)
    bootstrap = "127.0.0.1:%d" % cluster.client_ports[leader]
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic("expiring", 2, 1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for n in range(20):
        producer.send("expiring", b"m%d" % n, partition=n % 2)
    producer.flush()
    producer.close()

    # busy: a member that stays, polling and committing the same positions
    # every second, none of which changes what the controller log holds.
    stop = threading.Event()
    consumed = []
    def consume():
        consumer = KafkaConsumer("expiring", bootstrap_servers=bootstrap, group_id="busy",
                                 auto_offset_reset="earliest", enable_auto_commit=True,
                                 auto_commit_interval_ms=1000)
        try:
            while not stop.is_set():
                for records in consumer.poll(timeout_ms=500).values():
                    consumed.extend(records)
        finally:
            consumer.close()
    member = threading.Thread(target=consume, daemon=True)
    member.start()

    # idle: commits once and leaves.
    idle = KafkaConsumer(bootstrap_servers=bootstrap, group_id="idle", enable_auto_commit=False)
    idle.commit({TopicPartition("expiring", 0): OffsetAndMetadata(4, ""),
                 TopicPartition("expiring", 1): OffsetAndMetadata(6, "")})
    idle.close()
    try:
        wait_until(lambda: len(consumed) == 20, 30, "the busy member to read every record")
        wait_until(lambda: all(groups_on(cluster, i) == {"busy", "idle"} for i in cluster.ids), 30,
                   "both groups' offsets on every node")
        committed_at = time.monotonic()

        wait_until(lambda: all("idle" not in groups_on(cluster, i) for i in cluster.ids), RETENTION_S + 40,
                   "the idle group's offsets to expire on every node")
        assert time.monotonic() - committed_at >= RETENTION_S - 5, "expired before offsets.retention.minutes"
        # Past the busy group's first commit's retention on every node too.
        time.sleep(max(0.0, committed_at + RETENTION_S + 5 - time.monotonic()))
        for i in cluster.ids:
            assert ("busy", "expiring", 0, 10) in cluster.committed_offsets(i), ("node", i)
            assert ("busy", "expiring", 1, 10) in cluster.committed_offsets(i), ("node", i)
        assert member.is_alive(), "the busy member stopped"
    finally:
        stop.set()
        member.join(timeout=30)
    # busy left (LeaveGroup), after a last commit; then its coordinator dies.
    # The new one holds commit times less than a tenth of the retention old.
    left_at = time.monotonic()
    cluster.nodes[leader].kill()
    new_leader = cluster.wait_for_leader(timeout=30, other_than=leader)
    time.sleep(max(0.0, left_at + 15 - time.monotonic()))
    try:
        for i in (i for i in cluster.ids if i != leader):
            assert "busy" in groups_on(cluster, i), "node %d (leader %d) expired busy at once" % (i, new_leader)
    finally:
        cluster.start(leader)
        wait_until(lambda: cluster.leader() is not None and len(cluster.running()) == 3, 30, "all three running")


def test_a_static_member_goes_on_without_a_rebalance_when_the_coordinator_dies(cluster, tmp_path):
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic
    import newest_clients as nc
    client = [nc.provision("confluent-kafka %s (venv)" % nc.CONFLUENT_KAFKA, nc.venv_python),
              os.path.join(nc.CLIENTS, "confluent_client.py")]
    leader = cluster.wait_for_leader(timeout=30)
    bootstrap = ",".join("127.0.0.1:%d" % cluster.client_ports[i] for i in cluster.ids)
    admin = KafkaAdminClient(bootstrap_servers="127.0.0.1:%d" % cluster.client_ports[leader])
    admin.create_topics([NewTopic("steady", 3, 1)])
    admin.close()
    stop = str(tmp_path / "stop")
    member = nc.ClientRun(client + ["static", bootstrap, "steady-group", "gateway-17", "steady", stop],
                          str(tmp_path), "static member")
    try:
        member.wait_event(lambda e: e["event"] == "assigned" and len(e["partitions"]) == 3, 60,
                          "the static member to be given every partition")
        member_id = member.wait_event(lambda e: e["event"] == "member", 30, "its member id")["member_id"]
        # Every node has applied what the leader committed (the member too).
        wait_until(lambda: cluster.leader() == leader, 30, "every node to reach the leader's log")
        time.sleep(1)
        events_before = len(member.events)

        cluster.nodes[leader].kill()
        new_leader = cluster.wait_for_leader(timeout=30, other_than=leader)
        # Heartbeats (every 500 ms) reach the new coordinator for a while.
        time.sleep(8)
        with member.lock:
            since = [e for e in member.events[events_before:] if e["event"] in ("assigned", "revoked", "lost")]
        assert since == [], "the failover rebalanced the static member: %r" % since
        assert member.proc.poll() is None, "the static member stopped"

        admin = KafkaAdminClient(bootstrap_servers="127.0.0.1:%d" % cluster.client_ports[new_leader])
        (described,) = admin.describe_consumer_groups(["steady-group"])
        admin.close()
        assert described.state == "Stable", described
        assert [m.member_id for m in described.members] == [member_id], described
    finally:
        open(stop, "w").close()
        member.wait(30)
        cluster.start(leader)
        wait_until(lambda: cluster.leader() is not None and len(cluster.running()) == 3, 30, "all three running")
