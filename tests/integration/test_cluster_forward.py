"""Store-and-forward in a cluster (issue 16): three Eddy nodes, each with the
same link "central" to one real Apache Kafka 4.4 (behind a fault proxy, as
in forward_fixture.py), and topics with replication factor 3. A replicated
partition is forwarded by its replica group's leader only; the link's
cursor goes through the controller log, so that a new leader continues
exactly once where the old one stopped (src/forward/README.md, "In a
cluster"). The central topics are checked with Kafka's Java consumer
(NumberedCheck.java): every number once, in order per partition.

usage: python3 -m pytest test_cluster_forward.py --program RDKAFKA_IDEMPOTENCE_PROGRAM
"""

import os
import time

import pytest

import forward_fixture as ff
from cluster_fixture import EddyCluster
from eddy_fixture import stays_true_for, wait_until
from test_cluster_metadata import bootstrap, create_topic_at, metadata

COUNT = int(os.environ.get("EDDY_CLUSTER_FORWARD_COUNT", "40000"))
PARTITIONS = 2


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    # The rig's Kafka and proxy only: its single edge is never started; the
    # three cluster nodes are the edge.
    rig = ff.ForwardRig(central_nodes=1, tmp_path_factory=tmp_path_factory)
    rig.kafka.start()
    link_bootstrap = ",".join("127.0.0.1:%d" % p.port for p in rig.proxies.values())
    overrides = ff.edge_link_overrides(link_bootstrap, "numbers.*")
    # A drain of a few seconds, so that a leader is killed in the middle of it.
    overrides["eddy.forward.central.bandwidth.bytes.per.sec"] = "200000"
    with EddyCluster(3, overrides=overrides) as cluster:
        cluster.start_all()
        cluster.wait_for_leader(timeout=30)
        wait_until(lambda: all(len(metadata(cluster, i)[2]) == 3 for i in cluster.ids), 20, "three registered nodes")
        yield rig, cluster
    rig.kafka.close()
    for proxy in rig.proxies.values():
        proxy.close()


def partition_leaders(cluster, topic):
    """{partition: leader} as every running node names it, when they agree."""
    views = []
    for i in cluster.running():
        topics = metadata(cluster, i, [topic])[3]
        if topic not in topics:
            return None
        views.append({p: v[0] for p, v in topics[topic][1].items() if v[2] == 0})
    if not views or any(v != views[0] for v in views) or len(views[0]) != PARTITIONS:
        return None
    return views[0] if all(leader >= 0 for leader in views[0].values()) else None


def wait_leaders(cluster, topic, other_than=None):
    def agreed():
        leaders = partition_leaders(cluster, topic)
        if leaders is None or (other_than is not None and other_than in leaders.values()):
            return None
        return leaders
    return wait_until(agreed, 60, "every node to name the leaders of %s" % topic, interval=0.2)


def produce(program, cluster, topic, count):
    servers = ",".join(bootstrap(cluster, i) for i in cluster.running())
    proc = ff.produce_numbers(program, servers, topic, count, PARTITIONS)
    rc, last, err = ff.finish_producer(proc)
    print("producer:", last, err)
    assert rc == 0, "librdkafka delivered every message to the cluster"


def central_total(rig, topic):
    return sum(rig.central_end_offsets(topic, PARTITIONS))


def forwarding_nodes(cluster, topic):
    """{node: partitions of topic its link forwards now} (`eddy forward status`)."""
    out = {}
    for i in cluster.running():
        links = ff.forward_status(cluster.nodes[i])["links"]
        parts = [p for p in (links[0]["partitions"] if links else []) if p["topic"] == topic]
        out[i] = sorted(p["partition"] for p in parts)
    return out


def test_each_replicated_partition_is_forwarded_once_by_its_leader(world, program):
    rig, cluster = world
    topic = "numbers-steady"
    rig.create_central_topic(topic, PARTITIONS, replication=1)
    assert create_topic_at(cluster, 1, topic, PARTITIONS, replication=3) == (0, None)
    leaders = wait_leaders(cluster, topic)
    produce(program, cluster, topic, COUNT // 4)
    wait_until(lambda: central_total(rig, topic) >= COUNT // 4, 60, "the central topic to hold every message")
    # Three replicas hold every batch; only the leaders send them on.
    stays_true_for(lambda: central_total(rig, topic) == COUNT // 4, 3000, "nothing forwarded twice")
    forwarding = forwarding_nodes(cluster, topic)
    for p, leader in leaders.items():
        holders = [i for i, parts in forwarding.items() if p in parts]
        assert holders == [leader], "partition %d forwarded by its leader %d only: %s" % (p, leader, forwarding)
    ff.assert_numbers(rig.kafka, topic, COUNT // 4, PARTITIONS)


def test_a_new_leader_continues_exactly_once_where_the_killed_one_stopped(world, program):
    rig, cluster = world
    topic = "numbers-failover"
    rig.create_central_topic(topic, PARTITIONS, replication=1)
    assert create_topic_at(cluster, 2, topic, PARTITIONS, replication=3) == (0, None)
    leaders = wait_leaders(cluster, topic)
    # A backlog while the uplink is down, then the leader of partition 0
    # killed while the links drain it.
    rig.link_down()
    produce(program, cluster, topic, COUNT)
    rig.link_up()
    per_partition = COUNT // PARTITIONS
    wait_until(lambda: rig.central_end_offsets(topic, PARTITIONS)[0] >= per_partition // 5, 60,
               "a fifth of partition 0's backlog forwarded", interval=0.02)
    victim = leaders[0]
    cluster.nodes[victim].kill()
    killed_at = time.monotonic()
    before = rig.central_end_offsets(topic, PARTITIONS)
    print("killed node %d (leaders %s) with %s of %d per partition forwarded" % (victim, leaders, before,
                                                                                per_partition))
    assert before[0] < per_partition, "the kill came while partition 0 drained"
    wait_leaders(cluster, topic, other_than=victim)
    wait_until(lambda: central_total(rig, topic) >= COUNT, 120, "the new leaders to forward the rest")
    print("drained %.1f s after the kill" % (time.monotonic() - killed_at))
    # The killed node comes back as a follower (its own forward.db cursor
    # stops at the kill): it sends nothing again, and neither does it once
    # the partition's next leader is killed too and it may lead again.
    cluster.start(victim)
    wait_until(lambda: partition_leaders(cluster, topic) is not None, 30, "the cluster whole again")
    stays_true_for(lambda: central_total(rig, topic) == COUNT, 3000, "nothing forwarded twice")
    second = partition_leaders(cluster, topic)[0]
    cluster.nodes[second].kill()
    wait_leaders(cluster, topic, other_than=second)
    cluster.start(second)
    wait_until(lambda: partition_leaders(cluster, topic) is not None, 30, "the cluster whole again")
    stays_true_for(lambda: central_total(rig, topic) == COUNT, 5000, "nothing forwarded twice")
    ff.assert_numbers(rig.kafka, topic, COUNT, PARTITIONS)
