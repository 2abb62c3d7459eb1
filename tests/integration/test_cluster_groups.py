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
__consumer_offsets). The same holds when the next leader is a node that
lost its disk and caught up from the leader's snapshot.

Clients: Debian's kafka-python, and the newest confluent-kafka as the
static member.
"""

import os
import shutil
import threading
import time

import pytest

from cluster_fixture import EddyCluster
from eddy_fixture import wait_until


RETENTION_S = 60  # offsets.retention.minutes=1, the smallest Kafka allows


@pytest.fixture(scope="module")
def cluster():
    # Snapshots after each KiB of records, so that a wiped node below can
    # load the static members from the leader's snapshot.
    with EddyCluster(3, overrides={"offsets.retention.minutes": "1",
                                   "offsets.retention.check.interval.ms": "1000",
                                   "metadata.log.max.record.bytes.between.snapshots": "1024"}) as c:
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


class StaticMember:
    """The newest confluent-kafka as a static member (group.instance.id) of
    group, subscribed to a new topic of `partitions` partitions, bootstrapped
    from every node; started once it holds every partition."""

    def __init__(self, cluster, tmp_path, group, instance, topic, partitions):
        from kafka import KafkaAdminClient
        from kafka.admin import NewTopic
        import newest_clients as nc
        client = [nc.provision("confluent-kafka %s (venv)" % nc.CONFLUENT_KAFKA, nc.venv_python),
                  os.path.join(nc.CLIENTS, "confluent_client.py")]
        admin = KafkaAdminClient(bootstrap_servers="127.0.0.1:%d" % cluster.client_ports[cluster.wait_for_leader()])
        admin.create_topics([NewTopic(topic, partitions, 1)])
        admin.close()
        self.group = group
        self.stop_file = str(tmp_path / ("stop-" + instance))
        bootstrap = ",".join("127.0.0.1:%d" % cluster.client_ports[i] for i in cluster.ids)
        self.run = nc.ClientRun(client + ["static", bootstrap, group, instance, topic, self.stop_file],
                                str(tmp_path), "static member " + instance)
        self.run.wait_event(lambda e: e["event"] == "assigned" and len(e["partitions"]) == partitions, 60,
                            "the static member to be given every partition")
        self.member_id = self.run.wait_event(lambda e: e["event"] == "member", 30, "its member id")["member_id"]

    def mark(self):
        self.marked = len(self.run.events)

    def assert_no_rebalance_since_mark(self, why):
        # Heartbeats (every 500 ms) reach the new coordinator for a while.
        time.sleep(8)
        with self.run.lock:
            since = [e for e in self.run.events[self.marked:] if e["event"] in ("assigned", "revoked", "lost")]
        assert since == [], "%s: %r" % (why, since)
        assert self.run.proc.poll() is None, "the static member stopped"

    def assert_known_to(self, cluster, node):
        from kafka import KafkaAdminClient
        admin = KafkaAdminClient(bootstrap_servers="127.0.0.1:%d" % cluster.client_ports[node])
        (described,) = admin.describe_consumer_groups([self.group])
        admin.close()
        assert described.state == "Stable", described
        assert [m.member_id for m in described.members] == [self.member_id], described

    def close(self):
        open(self.stop_file, "w").close()
        self.run.wait(30)


def test_a_static_member_goes_on_without_a_rebalance_when_the_coordinator_dies(cluster, tmp_path):
    leader = cluster.wait_for_leader(timeout=30)
    member = StaticMember(cluster, tmp_path, "steady-group", "gateway-17", "steady", 3)
    try:
        # Every node has applied what the leader committed (the member too).
        wait_until(lambda: cluster.leader() == leader, 30, "every node to reach the leader's log")
        time.sleep(1)
        member.mark()
        cluster.nodes[leader].kill()
        new_leader = cluster.wait_for_leader(timeout=30, other_than=leader)
        member.assert_no_rebalance_since_mark("the failover rebalanced the static member")
        member.assert_known_to(cluster, new_leader)
    finally:
        member.close()
        cluster.start(leader)
        wait_until(lambda: cluster.leader() is not None and len(cluster.running()) == 3, 30, "all three running")


def settled(cluster, leader, quiet_s=2.0, timeout=30):
    """Until the leader's high watermark has not moved for quiet_s and every
    voter's log has reached it."""
    deadline = time.monotonic() + timeout
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        q = cluster.quorum(leader) if cluster.leader() == leader else None
        hw = q["high_watermark"] if q else None
        if hw != last:
            last, since = hw, time.monotonic()
        elif hw is not None and time.monotonic() - since >= quiet_s:
            return
        time.sleep(0.1)
    raise AssertionError("the controller log did not settle within %d s" % timeout)


def snapshot_ends(cluster, i):
    d = os.path.join(cluster.nodes[i].data_dir, "controller", "snapshots")
    return sorted(int(name.split("-")[0]) for name in os.listdir(d)) if os.path.isdir(d) else []


def test_a_node_that_caught_up_from_a_snapshot_takes_over_the_static_members(cluster, tmp_path):
    """A static member joins; a follower (C) loses its disk and catches up
    from a snapshot the leader took after the join; then the leader dies and
    C is elected (the other follower, B, restarted with a 60 s
    controller.quorum.fetch.timeout.ms, waits for the dead leader and votes
    for C): C knows the member from the snapshot alone, and the member goes
    on without a rebalance."""
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata
    leader = cluster.wait_for_leader(timeout=30)
    b, c = [i for i in cluster.ids if i != leader]
    member = StaticMember(cluster, tmp_path, "snapped-group", "gateway-18", "snapped", 2)
    try:
        wait_until(lambda: cluster.leader() == leader, 30, "every node to reach the leader's log")
        joined_end = cluster.quorum(leader)["high_watermark"]

        cluster.nodes[c].kill()
        shutil.rmtree(cluster.nodes[c].data_dir)
        # More than a snapshot interval of records after the join.
        filler = KafkaConsumer(bootstrap_servers="127.0.0.1:%d" % cluster.client_ports[leader], group_id="filler",
                               enable_auto_commit=False)
        for n in range(60):
            filler.commit({TopicPartition("snapped", 0): OffsetAndMetadata(n + 1, "")})
        filler.close()
        wait_until(lambda: any(end > joined_end for end in snapshot_ends(cluster, leader)), 30,
                   "the leader to snapshot past the member's join")
        cluster.start(c, wiped=True)
        wait_until(lambda: snapshot_ends(cluster, c), 30, "the wiped node to fetch the leader's snapshot")
        wait_until(lambda: cluster.leader() == leader and len(cluster.running()) == 3, 30,
                   "the wiped node to catch up")

        cluster.nodes[b].overrides["controller.quorum.fetch.timeout.ms"] = "60000"
        cluster.nodes[b].kill()
        cluster.start(b)
        wait_until(lambda: cluster.leader() == leader and len(cluster.running()) == 3, 30, "B to be back")
        # B's restart appends records (its next block of producer ids): C
        # must hold all of them, or B (whose log would be longer) refuses it
        # its vote and waits 60 s before it stands itself.
        settled(cluster, leader)
        member.mark()
        cluster.nodes[leader].kill()
        new_leader = cluster.wait_for_leader(timeout=30, other_than=leader)
        assert new_leader == c, "the wiped node was to be elected (B waits 60 s for the dead leader), not %d" % new_leader
        member.assert_no_rebalance_since_mark("the wiped node did not know the static member")
        member.assert_known_to(cluster, c)
    finally:
        member.close()
        cluster.nodes[b].overrides.pop("controller.quorum.fetch.timeout.ms", None)
        if cluster.nodes[b].alive():
            cluster.nodes[b].kill()
        for i in cluster.ids:
            if not cluster.nodes[i].alive():
                cluster.start(i)
        wait_until(lambda: cluster.leader() is not None and len(cluster.running()) == 3, 30, "all three running")
