"""Committed offsets expire in a three-node cluster as they do on Kafka
(issue 16): the offsets of a group left empty for offsets.retention.minutes
go, on every node, and those of a group whose members are still consuming
stay, on every node.

Only the coordinator (the controller leader) knows which groups have
members, and a consumer committing the same position again is not logged
(the followers' copy keeps the first commit's time), so a follower left to
expire on its own would drop the offsets of a group that is busy on the
leader. The leader expires, and the removal reaches every node through the
controller log. Clients: Debian's kafka-python.
"""

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
