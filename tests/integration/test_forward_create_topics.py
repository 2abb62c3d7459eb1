"""Central topics and store-and-forward, against a real Apache Kafka broker
(kafka_fixture.py), as MirrorMaker 2 users expect:

- create.topics (the default): a missing central topic is created with the
  local partition count and the cluster's default replication factor, and
  every message arrives, in order per partition;
- a creation Kafka refuses (replication.factor=3 on a one-broker cluster)
  pauses the topic with Kafka's reason in `eddy forward status`;
- a central topic with fewer partitions than the local one pauses the
  partitions without a counterpart and forwards the others;
- a central topic with more partitions is used as it is;
- create.topics=false: a missing central topic pauses with the reason, and
  resumes once someone creates it.

One Kafka broker for the whole file; one edge eddy per case."""

import json
import re
import subprocess
import tempfile

import eddy_fixture
import kafka_fixture

LINK = "dc"
COUNT = 300  # messages per local topic


def edge_config(kafka, topics, **extra):
    conf = {
        "eddy.gateway.id": "gw-7",
        "eddy.forward.links": LINK,
        "eddy.forward.%s.bootstrap.servers" % LINK: kafka.bootstrap,
        "eddy.forward.%s.topics" % LINK: topics,
        "eddy.forward.%s.remote.topic" % LINK: "plant.${gateway.id}.${topic}",
        "eddy.forward.%s.paused.retry.ms" % LINK: "500",
        "eddy.forward.%s.linger.ms" % LINK: "10",
        "eddy.forward.%s.retry.backoff.max.ms" % LINK: "1000",
    }
    conf.update({"eddy.forward.%s.%s" % (LINK, k.replace("_", ".")): v for k, v in extra.items()})
    return conf


def status(edge):
    r = subprocess.run([edge.bin, "forward", "status", "--data-dir", edge.data_dir, "--json"],
                       capture_output=True, text=True, timeout=20)
    if r.returncode != 0:
        raise eddy_fixture.FixtureError("eddy forward status: %s" % r.stderr)
    return json.loads(r.stdout)["links"][0]


def partitions_of(edge, topic):
    return {p["partition"]: p for p in status(edge)["partitions"] if p["topic"] == topic}


def produce(edge, topic, partitions):
    """COUNT messages 'topic:i', message i to partition i % partitions, with
    kcat (one run per partition, acks=all)."""
    for p in range(partitions):
        mine = b"".join(b"%s:%d\n" % (topic.encode(), i) for i in range(COUNT) if i % partitions == p)
        r = subprocess.run(["kcat", "-P", "-b", edge.bootstrap, "-t", topic, "-p", str(p), "-X", "acks=all"],
                           input=mine, capture_output=True, timeout=60)
        if r.returncode != 0:
            raise eddy_fixture.FixtureError("kcat -P: %s" % r.stderr.decode(errors="replace"))


def create_local(edge, topic, partitions):
    r = subprocess.run([edge.bin, "topics", "--bootstrap-server", edge.bootstrap, "--create", "--topic", topic,
                        "--partitions", str(partitions)], capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        raise eddy_fixture.FixtureError("eddy topics --create: %s %s" % (r.stdout, r.stderr))


def central_partitions(kafka, topic):
    """{partition: [values in order]} read from Kafka with Kafka's Java
    consumer (kafka_fixture.dump_records), or None when the topic does not
    exist (its partition count from kcat's metadata)."""
    r = subprocess.run(["kcat", "-L", "-b", kafka.bootstrap, "-t", topic, "-J"], capture_output=True, timeout=30)
    md = json.loads(r.stdout or b"{}")
    topics = [t for t in md.get("topics", []) if t["topic"] == topic and not t.get("error")]
    if not topics:
        return None
    out = {p["partition"]: [] for p in topics[0]["partitions"]}
    for record in kafka_fixture.dump_records(kafka.bootstrap, {topic: len(out)}, tempfile.gettempdir()):
        out[record["partition"]].append(record["value"].decode())
    return out


def replication_factor(kafka, topic):
    out = kafka.run_tool("org.apache.kafka.tools.TopicCommand",
                         ["--bootstrap-server", kafka.bootstrap, "--describe", "--topic", topic])
    m = re.search(r"ReplicationFactor:\s*(\d+)", out)
    return int(m.group(1)) if m else None


def expected(topic, partitions, only=None):
    out = {}
    for p in range(partitions):
        if only is not None and p not in only:
            continue
        out[p] = ["%s:%d" % (topic, i) for i in range(COUNT) if i % partitions == p]
    return out


def wait_forwarded(edge, topic, partitions, what, timeout=60):
    def done():
        ps = partitions_of(edge, topic)
        return all(ps.get(p, {}).get("forwarded_offset", -1) >= ps.get(p, {}).get("local_end_offset", 0) > 0
                   for p in partitions)
    eddy_fixture.wait_until(done, timeout, what, interval=0.2)


def test_created_with_the_local_partition_count(kafka, test_eddy_factory):
    edge = test_eddy_factory(edge_config(kafka, "sensors\\..*"))
    create_local(edge, "sensors.temp", 3)
    produce(edge, "sensors.temp", 3)
    wait_forwarded(edge, "sensors.temp", range(3), "sensors.temp forwarded")
    central = central_partitions(kafka, "plant.gw-7.sensors.temp")
    assert central is not None and sorted(central) == [0, 1, 2], \
        "the link created plant.gw-7.sensors.temp with 3 partitions: %r" % (central and sorted(central),)
    assert central == expected("sensors.temp", 3), "every message there once, in order per partition"
    assert replication_factor(kafka, "plant.gw-7.sensors.temp") == 1, \
        "... with the cluster's default replication factor (1)"


def test_refused_creation_pauses_with_kafkas_reason(kafka, test_eddy_factory):
    edge = test_eddy_factory(edge_config(kafka, "sensors\\.refused", replication_factor="3"))
    create_local(edge, "sensors.refused", 2)
    produce(edge, "sensors.refused", 2)

    def paused():
        ps = partitions_of(edge, "sensors.refused")
        return len(ps) == 2 and all(p["paused"] for p in ps.values()) and ps
    ps = eddy_fixture.wait_until(paused, 30, "sensors.refused to pause")
    reason = ps[0]["paused"]
    assert ("could not create central topic plant.gw-7.sensors.refused" in reason
                 and "replication factor" in reason.lower()), \
        "replication.factor=3 on one broker: paused, naming the creation and Kafka's reason: %r" % (reason,)
    assert central_partitions(kafka, "plant.gw-7.sensors.refused") is None, "nothing was created centrally"


def test_fewer_central_partitions_pause_the_extra_local_ones(kafka, test_eddy_factory):
    kafka.create_topic("plant.gw-7.sensors.fewer", 2)
    kafka.create_topic("plant.gw-7.sensors.more", 5)
    edge = test_eddy_factory(edge_config(kafka, "sensors\\.(fewer|more)"))
    create_local(edge, "sensors.fewer", 3)
    create_local(edge, "sensors.more", 3)
    produce(edge, "sensors.fewer", 3)
    produce(edge, "sensors.more", 3)
    wait_forwarded(edge, "sensors.fewer", [0, 1], "sensors.fewer partitions 0 and 1 forwarded")
    wait_forwarded(edge, "sensors.more", range(3), "sensors.more forwarded")
    ps = partitions_of(edge, "sensors.fewer")
    assert "has 2 partitions" in ps[2]["paused"] and not ps[0]["paused"], \
        "central topic with 2 partitions: local partition 2 paused with the reason: %r" % (ps[2]["paused"],)
    assert central_partitions(kafka, "plant.gw-7.sensors.fewer") == expected("sensors.fewer", 3, only={0, 1}), \
        "... partitions 0 and 1 forwarded exactly"
    more = central_partitions(kafka, "plant.gw-7.sensors.more")
    assert more == {**expected("sensors.more", 3), 3: [], 4: []}, \
        "central topic with 5 partitions: used as it is (3 filled, 2 empty)"


def test_create_topics_false_pauses_until_created(kafka, test_eddy_factory):
    edge = test_eddy_factory(edge_config(kafka, "sensors\\.manual", create_topics="false"))
    create_local(edge, "sensors.manual", 2)
    produce(edge, "sensors.manual", 2)

    def paused():
        ps = partitions_of(edge, "sensors.manual")
        return len(ps) == 2 and all("does not exist" in p["paused"] for p in ps.values()) and ps
    eddy_fixture.wait_until(paused, 30, "sensors.manual to pause")
    assert central_partitions(kafka, "plant.gw-7.sensors.manual") is None, \
        "create.topics=false: nothing created centrally"
    kafka.create_topic("plant.gw-7.sensors.manual", 2)
    wait_forwarded(edge, "sensors.manual", range(2), "sensors.manual forwarded once created")
    assert central_partitions(kafka, "plant.gw-7.sensors.manual") == expected("sensors.manual", 2), \
        "created by hand: forwarding resumes, every message once"
