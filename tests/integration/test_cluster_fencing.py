"""Fenced nodes (issue 16), as Kafka's controller fences a broker whose
heartbeats stopped: the controller leader fences a node that has not
fetched the controller log from it for broker.session.timeout.ms (3 s
here; Kafka's default is 9 s) and unfences it once it fetches again. Every
node's Metadata then does what Kafka's KRaftMetadataCache does with a fenced
broker: its replicas are in offline_replicas, the ISR and the brokers leave
it out, and a partition whose leader it was, with no other leader, has
leader -1 with LEADER_NOT_AVAILABLE.

One cluster is shared by the file's tests, in order. Metadata v5 requests
are raw (v5 carries offline_replicas), aimed at one node.
"""

import time

import pytest

import kafka_wire as kw
from cluster_fixture import EddyCluster
from eddy_fixture import wait_until
from test_cluster_metadata import _metadata_v5_body, create_topic_at, parse_metadata_v5


SESSION_TIMEOUT_S = 3
LEADER_NOT_AVAILABLE = 5


@pytest.fixture(scope="module")
def cluster():
    with EddyCluster(3, overrides={"broker.session.timeout.ms": str(SESSION_TIMEOUT_S * 1000)}) as c:
        c.start_all()
        c.wait_for_leader(timeout=30)
        wait_until(lambda: all(len(metadata(c, i)["brokers"]) == 3 for i in c.ids), 20, "three registered nodes")
        yield c


def metadata(cluster, i, topics=None):
    """Node i's Metadata v5: {"brokers": {id: port}, "controller": id,
    "topics": {name: {partition: {"error", "leader", "replicas", "isr",
    "offline"}}}}; None when the node does not answer."""
    try:
        with kw.Connection(cluster.client_ports[i], timeout=5) as conn:
            data = conn.request(3, 5, _metadata_v5_body(topics))
    except (OSError, kw.Closed):
        return None
    m = parse_metadata_v5(data)
    return {"brokers": m["brokers"], "controller": m["controller"],
            "topics": {name: t["partitions"] for name, t in m["topics"].items()}}


def partition(cluster, i, topic):
    view = metadata(cluster, i, [topic])
    if view is None or 0 not in view["topics"].get(topic, {}):
        return None, view
    return view["topics"][topic][0], view


def test_a_dead_leaders_replicas_go_offline_and_come_back_when_it_returns(cluster):
    """Replication factor 2 on three nodes: killing the partition's leader
    leaves its group without a majority (no leader can be elected). Within
    the session timeout (twice that if it led the controller quorum too: a
    new controller leader's sessions start with its leadership) every node
    names it offline, and the node without a replica no longer names it the
    leader. Restarted, it is unfenced and leads (or follows) again."""
    topic = "fenced"
    assert create_topic_at(cluster, 1, topic, 1, replication=2) == (0, None)

    def agreed():
        views = {i: partition(cluster, i, topic)[0] for i in cluster.ids}
        if any(v is None or v["error"] != 0 or v["offline"] for v in views.values()):
            return None
        if len({v["leader"] for v in views.values()}) != 1:
            return None
        return views
    views = wait_until(agreed, 30, "every node to name one leader of %s" % topic)
    leader = views[1]["leader"]
    follower = next(i for i in views[1]["replicas"] if i != leader)
    outsider = next(i for i in cluster.ids if i not in views[1]["replicas"])
    controller_leader = cluster.wait_for_leader(timeout=30)

    cluster.nodes[leader].kill()
    killed = time.monotonic()

    def fenced_on(i):
        p, view = partition(cluster, i, topic)
        if p is None or p["offline"] != [leader] or leader in p["isr"] or leader in view["brokers"]:
            return None
        return p, view
    p, view = wait_until(lambda: fenced_on(outsider), 5 + SESSION_TIMEOUT_S * 3,
                         "node %d to name node %d offline" % (outsider, leader))
    took = time.monotonic() - killed
    bound = SESSION_TIMEOUT_S * (2 if controller_leader == leader else 1) + 4
    assert took < bound, "fenced %.1f s after the kill (bound %d s)" % (took, bound)
    assert p["leader"] == -1 and p["error"] == LEADER_NOT_AVAILABLE, p
    assert p["replicas"] == views[outsider]["replicas"], "the replicas stay named"
    assert p["isr"] == [follower] or p["isr"] == [], p
    assert sorted(view["brokers"]) == sorted(i for i in cluster.ids if i != leader)
    # The follower's own group has no leader either (it cannot be elected).
    p, _view = wait_until(lambda: fenced_on(follower), 10, "node %d to name node %d offline" % (follower, leader))
    assert p["leader"] == -1 and p["error"] == LEADER_NOT_AVAILABLE, p
    print("fenced on node %d %.1f s after the kill (it led the controller quorum: %s)"
          % (outsider, took, controller_leader == leader))

    cluster.start(leader)
    wait_until(agreed, 30, "every node to name one leader of %s and nothing offline" % topic)
    for i in cluster.ids:
        view = metadata(cluster, i)
        assert sorted(view["brokers"]) == cluster.ids, "node %d lists every node again: %s" % (i, view)


def test_a_new_controller_leader_fences_the_old_one_and_never_itself(cluster):
    """The controller leader dies: the new one fences it after its own
    sessions' first timeout, lists the live nodes only, and names itself
    the controller; the old leader is unfenced when it returns."""
    old = cluster.wait_for_leader(timeout=30)
    cluster.nodes[old].kill()
    new = cluster.wait_for_leader(timeout=30)
    assert new != old
    others = [i for i in cluster.ids if i != old]

    def fenced_everywhere():
        views = {i: metadata(cluster, i) for i in others}
        if any(v is None or sorted(v["brokers"]) != others or v["controller"] != new for v in views.values()):
            return None
        return views
    views = wait_until(fenced_everywhere, 5 + SESSION_TIMEOUT_S * 3, "node %d fenced on every live node" % old)
    # Every partition with a replica on the old leader names it offline.
    for view in views.values():
        for name, parts in view["topics"].items():
            for index, p in parts.items():
                assert (old in p["replicas"]) == (old in p["offline"]), (name, index, p)
                assert old not in p["isr"], (name, index, p)
    cluster.start(old)
    wait_until(lambda: all((m := metadata(cluster, i)) is not None and sorted(m["brokers"]) == cluster.ids and
                           not any(p["offline"] for parts in m["topics"].values() for p in parts.values())
                           for i in cluster.ids),
               30, "node %d unfenced on every node" % old)
