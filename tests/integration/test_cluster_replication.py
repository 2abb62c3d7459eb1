"""Replicated partitions (issue 16): a topic with replication factor 3 on a
three-node cluster is a Raft group per partition whose log is the
partition's own segment files. The leader takes produce and serves
consumers; acks=all is answered once a majority holds the batch durably;
followers fetch the leader's batches and hold them byte for byte; when the
leader dies another takes over and clients follow without losing anything
acknowledged.

One cluster is shared by the file's tests, in order. Clients: Debian's
kafka-python (admin-free: topics are created with a raw CreateTopics; its
producer and consumer route by Metadata), raw requests aimed at one node,
franz-go and kafkajs (current releases) and Apache Kafka's Java clients
(kafka-clients 4.4, java/ReplicatedNumbers.java) through a leader's death.
"""

import os
import select
import struct
import subprocess
import time

import pytest

import kafka_wire as kw
from cluster_fixture import EddyCluster
from eddy_fixture import wait_until
from test_cluster_metadata import bootstrap, create_topic_at, metadata


TOPIC = "replicated"


@pytest.fixture(scope="module")
def cluster():
    # A follower leaves the ISR 3 s after it stopped keeping up (Kafka's
    # default is 30 s), so that a test sees the ISR shrink.
    with EddyCluster(3, overrides={"replica.lag.time.max.ms": "3000"}) as c:
        c.start_all()
        c.wait_for_leader(timeout=30)
        # Topics are placed on registered nodes: all three first.
        wait_until(lambda: all(len(metadata(c, i)[2]) == 3 for i in c.ids), 20, "three registered nodes")
        yield c


@pytest.fixture(autouse=True)
def quorum_agreed(cluster):
    """Each test starts once every running node agrees on the controller
    quorum's leader. A test before it may have restarted a node, which
    learns the leader a moment after it listens; until then it answers
    CreateTopics NOT_CONTROLLER, a retriable error, as Kafka's brokers do
    (seen once: three tests right after a restart failed on it)."""
    cluster.wait_for_leader(timeout=30)


def partition_view(cluster, i, topic=TOPIC, partition=0):
    """Node i's Metadata for the partition: (leader, replicas, error)."""
    topics = metadata(cluster, i, [topic])[3]
    if topic not in topics or partition not in topics[topic][1]:
        return None
    return topics[topic][1][partition]


def agreed_leader(cluster, topic=TOPIC, partition=0, other_than=None):
    """The leader every running node names, when they agree; else None."""
    views = [partition_view(cluster, i, topic, partition) for i in cluster.running()]
    if any(v is None or v[2] != 0 for v in views):
        return None
    leaders = {v[0] for v in views}
    if len(leaders) != 1:
        return None
    leader = leaders.pop()
    return leader if leader >= 0 and leader != other_than else None


def wait_for_partition_leader(cluster, other_than=None, timeout=20):
    return wait_until(lambda: agreed_leader(cluster, other_than=other_than), timeout,
                      "one leader of %s-0 named by every running node" % TOPIC)


def stored_batches(cluster, i, topic=TOPIC, partition=0):
    """The batches in node i's segment files of the partition, in offset
    order: [(base offset, bytes)] (the files are preallocated: the data ends
    at the first zero length)."""
    directory = os.path.join(cluster.nodes[i].data_dir, "%s-%d" % (topic, partition))
    out = []
    for name in sorted(n for n in os.listdir(directory) if n.endswith(".log")):
        with open(os.path.join(directory, name), "rb") as f:
            data = f.read()
        pos = 0
        while pos + 12 <= len(data):
            base, length = struct.unpack_from(">qi", data, pos)
            if length <= 0:
                break
            out.append((base, data[pos:pos + 12 + length]))
            pos += 12 + length
    return sorted(out)


def replicas_identical(cluster, ids, upto, topic=TOPIC, partition=0):
    """Whether nodes ids hold the same batches below offset upto."""
    views = [[b for b in stored_batches(cluster, i, topic, partition) if b[0] < upto] for i in ids]
    return all(v == views[0] for v in views) and views[0]


def consume_all(cluster, i, count, timeout_ms=20000):
    from kafka import KafkaConsumer, TopicPartition
    consumer = KafkaConsumer(bootstrap_servers=bootstrap(cluster, i), consumer_timeout_ms=timeout_ms,
                             auto_offset_reset="earliest", enable_auto_commit=False)
    consumer.assign([TopicPartition(TOPIC, 0)])
    got = []
    for m in consumer:
        got.append((m.offset, m.value))
        if len(got) >= count:
            break
    consumer.close()
    return got


def test_a_replicated_topic_has_three_replicas_and_one_leader_every_node_names(cluster):
    _controller_leader = cluster.wait_for_leader(timeout=30)
    assert create_topic_at(cluster, 2, TOPIC, 1, replication=3) == (0, None)
    leader = wait_for_partition_leader(cluster)
    for i in cluster.ids:
        view = partition_view(cluster, i)
        assert sorted(view[1]) == [1, 2, 3], "every node a replica: %s" % (view,)
        assert view[0] == leader


def test_too_many_replicas_are_refused_as_kafka_does(cluster):
    error, message = create_topic_at(cluster, 1, "too-many", 1, replication=4)
    assert error == 38  # INVALID_REPLICATION_FACTOR
    assert message == "Replication factor: 4 larger than available brokers: 3."


def test_acks_all_is_answered_once_a_majority_holds_it_and_every_replica_holds_the_same_bytes(cluster):
    from kafka import KafkaProducer
    producer = KafkaProducer(bootstrap_servers=bootstrap(cluster, 1), acks="all", linger_ms=2, retries=20)
    futures = [producer.send(TOPIC, value=b"m%d" % n, partition=0) for n in range(500)]
    offsets = [f.get(timeout=30).offset for f in futures]
    producer.close()
    assert offsets == sorted(offsets) and len(set(offsets)) == 500
    end = offsets[-1] + 1
    wait_until(lambda: replicas_identical(cluster, cluster.ids, end), 20,
               "the three replicas holding the same batches below %d" % end)
    got = consume_all(cluster, 3, 500)
    assert [v for _o, v in got] == [b"m%d" % n for n in range(500)]


def test_a_follower_refuses_clients_and_the_leader_serves_them(cluster):
    leader = wait_for_partition_leader(cluster)
    follower = next(i for i in cluster.ids if i != leader)
    batch = kw.record_batch([(None, b"to a follower", ())])
    with kw.Connection(cluster.client_ports[follower]) as conn:
        error, _offset = kw.produce(conn, TOPIC, 0, batch, acks=-1)
        assert error == 6  # NOT_LEADER_OR_FOLLOWER: the client refreshes its metadata
        error, _hw, _records = kw.fetch(conn, TOPIC, 0, 0)
        assert error == 6
    with kw.Connection(cluster.client_ports[leader]) as conn:
        error, offset = kw.produce(conn, TOPIC, 0, batch, acks=-1)
        assert error == 0 and offset >= 500
        error, hw, _records = kw.fetch(conn, TOPIC, 0, offset)
        assert error == 0 and hw == offset + 1


def test_the_leaders_death_loses_nothing_acknowledged_and_clients_follow(cluster):
    from kafka import KafkaProducer
    leader = wait_for_partition_leader(cluster)
    before = consume_all(cluster, 1, 501)
    assert len(before) == 501
    producer = KafkaProducer(bootstrap_servers=",".join(bootstrap(cluster, i) for i in cluster.ids), acks="all",
                             linger_ms=2, retries=50, retry_backoff_ms=100, request_timeout_ms=5000,
                             metadata_max_age_ms=1000)
    for n in range(100):
        producer.send(TOPIC, value=b"before-%d" % n, partition=0).get(timeout=30)
    killed_at = time.monotonic()
    cluster.nodes[leader].kill()
    sent = [producer.send(TOPIC, value=b"after-%d" % n, partition=0) for n in range(100)]
    offsets = [f.get(timeout=60).offset for f in sent]
    failover_s = time.monotonic() - killed_at
    print("failover: 100 acks=all sends acknowledged %.2f s after the leader was killed" % failover_s)
    producer.close()
    new_leader = wait_for_partition_leader(cluster, other_than=leader)
    assert new_leader != leader
    assert failover_s < 10, "acknowledged again %.1f s after the leader died" % failover_s
    got = consume_all(cluster, new_leader, 701)
    values = [v for _o, v in got]
    expected = ([v for _o, v in before] + [b"before-%d" % n for n in range(100)] +
                [b"after-%d" % n for n in range(100)])
    assert values == expected, "every acknowledged message exactly once, in order"
    # The old leader comes back as a follower and catches up byte for byte.
    cluster.start(leader)
    end = offsets[-1] + 1
    wait_until(lambda: replicas_identical(cluster, cluster.ids, end), 30,
               "the restarted node holding the same batches below %d" % end)


@pytest.mark.parametrize("which", ["franz-go", "kafkajs"])
def test_the_newest_clients_produce_and_consume_a_replicated_topic(cluster, tmp_path, which):
    """franz-go and kafkajs, current releases (confluent-kafka runs in
    test_cluster_replication_faults.py): an idempotent producer through one
    node and a group member through another on a topic with replication
    factor 3. franz-go sends the partitions' leader epochs (KIP-320) in its
    Fetch and OffsetForLeaderEpoch requests, which the leader checks."""
    import types
    import newest_clients as nc
    if which == "franz-go":
        client, env = [nc.provision("franz-go %s" % nc.FRANZ_GO, nc.franz_go)], None
    else:
        node, env = nc.provision("kafkajs %s" % nc.KAFKAJS, nc.kafkajs)
        client = [node, os.path.join(nc.CLIENTS, "kafkajs", "kafkajs_client.js")]
    topic = "replicated-" + which
    assert create_topic_at(cluster, 1, topic, 3, replication=3) == (0, None)
    wait_until(lambda: all(agreed_leader(cluster, topic, p) for p in range(3)), 20, "leaders of " + topic)
    node_at = {i: types.SimpleNamespace(bootstrap=bootstrap(cluster, i)) for i in cluster.ids}
    a, b, _c = cluster.ids
    nc.produce_step(client, env, node_at[a], str(tmp_path), which + " produce", topic, 0, 200)
    nc.consume_step(client, env, node_at[b], str(tmp_path), which + " consume", "replicated-group-" + which, topic,
                    [nc.value_of(i) for i in range(200)])


class JavaNumbers:
    """java/ReplicatedNumbers.java's numbers run: an idempotent acks=all
    producer and a group member of Kafka's Java clients in one JVM, their
    stdout read line by line as they come (first-ack, assigned), their
    files (produced.txt, consumed.txt) and stderr (the clients' WARN logs)
    in tmp."""

    def __init__(self, tmp, bootstrap_servers, topic, partitions, count, rate, group, timeout_ms):
        import kafka_fixture
        self.tmp = str(tmp)
        log4j2 = os.path.join(self.tmp, "log4j2.properties")
        with open(log4j2, "w") as f:
            f.write(kafka_fixture.TOOLS_LOG4J2)
        cmd = kafka_fixture.java_program_command(
            "ReplicatedNumbers", ["numbers", bootstrap_servers, topic, str(partitions), str(count), str(rate), group,
                                  self.tmp], log4j2=log4j2)
        self.stderr_path = os.path.join(self.tmp, "ReplicatedNumbers.stderr")
        with open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err,
                                         env=dict(os.environ, EDDY_CHECK_TIMEOUT_MS=str(timeout_ms)))
        self.lines = []
        self._buffer = b""

    def _read(self, timeout):
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return False
        chunk = os.read(self.proc.stdout.fileno(), 65536)
        if not chunk:
            return None
        self._buffer += chunk
        *complete, self._buffer = self._buffer.split(b"\n")
        self.lines += [line.decode() for line in complete]
        return True

    def wait_for(self, prefixes, timeout):
        """Reads stdout until a line starting with each prefix came."""
        deadline = time.monotonic() + timeout
        while not all(any(line.startswith(p) for line in self.lines) for p in prefixes):
            left = deadline - time.monotonic()
            if left <= 0 or self._read(left) is None:
                raise AssertionError("ReplicatedNumbers: no %s line within %d s; stdout %r; stderr tail:\n%s"
                                     % (" and ".join(prefixes), timeout, self.lines, self.stderr_tail()))

    def finish(self, timeout):
        """Waits for the JVM; its JSON line, its exit code."""
        import json
        deadline = time.monotonic() + timeout
        while self._read(max(0.0, deadline - time.monotonic())) and time.monotonic() < deadline:
            pass
        try:
            rc = self.proc.wait(max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("ReplicatedNumbers did not end within %d s; stdout %r; stderr tail:\n%s"
                                 % (timeout, self.lines, self.stderr_tail()))
        results = [json.loads(line) for line in self.lines if line.startswith("{")]
        assert results, "ReplicatedNumbers: exit %d, no result; stdout %r; stderr tail:\n%s" % (
            rc, self.lines, self.stderr_tail())
        return results[-1], rc

    def stderr_tail(self, n=6000):
        with open(self.stderr_path, "rb") as f:
            return f.read().decode("utf-8", "replace")[-n:]

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()


def parse_produced(path):
    """produced.txt: ({number: (partition, offset, send ns, ack ns)}, [failed lines])."""
    acked, failed = {}, []
    with open(path) as f:
        for line in f:
            fields = line.split()
            if fields[0] == "d":
                acked[int(fields[1])] = (int(fields[2]), int(fields[3]), int(fields[4]), int(fields[5]))
            else:
                failed.append(line.strip())
    return acked, failed


def check_numbered_run(acked, partitions, log, consumed_path):
    """What the Java clients wrote and read, against the partitions' log as
    a fresh consumer reads it afterwards (log: {partition: [(offset,
    number)]} in offset order). Returns (violations, the records the group
    member read again, the records it read)."""
    violations = []
    at = {(p, o): n for p, records in log.items() for o, n in records}
    # The log: every acknowledged number exactly once, at the offset its
    # acknowledgement gave, in its partition, in send order.
    for n, (p, o, _s, _a) in sorted(acked.items()):
        if at.get((p, o)) != n:
            violations.append("acknowledged %d (partition %d offset %d) is not there: %r" % (n, p, o, at.get((p, o))))
    seen = {}
    for p, records in sorted(log.items()):
        previous = -1
        for o, n in records:
            if n in seen:
                violations.append("%d twice: partition %d offset %d and %s" % (n, p, o, seen[n]))
            seen[n] = (p, o)
            if n % partitions != p:
                violations.append("%d in partition %d" % (n, p))
            if n <= previous:
                violations.append("partition %d: %d after %d (offset %d)" % (p, n, previous, o))
            previous = n
    # The group member: read every acknowledged record, each where the log
    # has it; forward within an assignment, skipping no record; back only
    # after a new assignment, to its last successful commit or beyond
    # (re-reading what it could not commit, Kafka's at-least-once).
    offsets_of = {p: [o for o, _n in records] for p, records in log.items()}
    position, committed, reassigned = {}, {}, set()
    read, redelivered = set(), 0
    with open(consumed_path) as f:
        for line in f:
            fields = line.split()
            kind = fields[0]
            if kind == "a":
                reassigned.update(int(p) for p in fields[2].split(",") if p != "-")
            elif kind == "c":
                for item in fields[2].split(","):
                    p, o = item.split(":")
                    committed[int(p)] = int(o)
            elif kind == "m":
                p, o, n = int(fields[1]), int(fields[2]), int(fields[3])
                if at.get((p, o)) != n:
                    violations.append("the group member read %d at partition %d offset %d; the log has %r"
                                      % (n, p, o, at.get((p, o))))
                if (p, o) in read:
                    redelivered += 1
                expected = position.get(p)
                if expected is not None and o < expected:
                    if p not in reassigned:
                        violations.append("partition %d: the group member went back from %d to %d without a new "
                                          "assignment" % (p, expected, o))
                    elif o < committed.get(p, 0):
                        violations.append("partition %d: back to %d, below its committed offset %d"
                                          % (p, o, committed[p]))
                elif expected is not None and o > expected:
                    skipped = [x for x in offsets_of.get(p, []) if expected <= x < o]
                    if skipped:
                        violations.append("partition %d: the group member skipped offsets %s" % (p, skipped[:10]))
                reassigned.discard(p)
                position[p] = o + 1
                read.add((p, o))
    unread = sorted((p, o) for p, o, _s, _a in acked.values() if (p, o) not in read)
    if unread:
        violations.append("%d acknowledged records never read by the group member, e.g. %s" % (len(unread), unread[:10]))
    return violations, redelivered, len(read)


def test_the_java_clients_write_and_read_exactly_once_in_order_through_the_leaders_death(cluster, tmp_path):
    """Apache Kafka's Java clients (kafka-clients 4.4, java/ReplicatedNumbers.java):
    an idempotent acks=all producer sends numbered messages at 1000 a
    second to a topic of three partitions with replication factor 3 while a
    group member reads it; partition 0's leader is SIGKILLed mid-stream.
    Every number is acknowledged, and the log read afterwards holds each
    exactly once, in order, at the offset its acknowledgement gave; the
    group member read each acknowledged record where the log has it, in
    order, skipping none. When the killed node also coordinated the group
    (the controller's leader; the new one knows only static members), the
    member's next commitSync fails (ILLEGAL_GENERATION), it rejoins and
    reads again what it had not committed: allowed, as Kafka's
    at-least-once, only from its last successful commit on; counted."""
    import kafka_fixture
    began = time.monotonic()
    topic, partitions, count, rate = "replicated-java", 3, 10000, 1000
    assert create_topic_at(cluster, 1, topic, partitions, replication=3) == (0, None)
    wait_until(lambda: all(agreed_leader(cluster, topic, p) for p in range(partitions)), 20, "leaders of " + topic)
    everyone = ",".join(bootstrap(cluster, i) for i in cluster.ids)
    run = JavaNumbers(tmp_path, everyone, topic, partitions, count, rate, "replicated-java-group", 60000)
    try:
        run.wait_for(["first-ack", "assigned"], 30)
        time.sleep(1)
        leader = wait_until(lambda: agreed_leader(cluster, topic, 0), 10, "the leader of %s-0" % topic)
        killed_at = time.monotonic()
        cluster.nodes[leader].kill()
        result, rc = run.finish(90)
    finally:
        run.close()
    print("java clients: %s (exit %d); leader %d of %s-0 killed %.1f s into the run"
          % (result, rc, leader, topic, killed_at - began), flush=True)
    acked, failed = parse_produced(os.path.join(str(tmp_path), "produced.txt"))
    assert not failed, "every send acknowledged: %d failed, e.g. %s\nstderr tail:\n%s" % (
        len(failed), failed[:5], run.stderr_tail())
    assert len(acked) == count, "acknowledged %d of %d" % (len(acked), count)
    # Partition 0's failover: its longest wait for an acknowledgement, and
    # the kill -> its first acknowledgement after the longest gap.
    p0 = sorted((a, s) for p, _o, s, a in acked.values() if p == 0)
    longest_wait = max(a - s for a, s in p0) / 1e9
    gap_end = max(zip(p0, p0[1:]), key=lambda pair: pair[1][0] - pair[0][0])[1][0] / 1e9
    print("failover (Java): partition 0 acknowledged again %.2f s after its leader was killed; longest wait for an "
          "ack %.2f s" % (gap_end - killed_at, longest_wait), flush=True)
    # The log as a fresh consumer (NumberedCheck records, no group) reads it.
    alive = ",".join(bootstrap(cluster, i) for i in cluster.running())
    log = {p: [] for p in range(partitions)}
    for r in kafka_fixture.dump_records(alive, {topic: partitions}, tmp_path):
        log[r["partition"]].append((r["offset"], int(r["value"])))
    violations, redelivered, read = check_numbered_run(acked, partitions, log, os.path.join(str(tmp_path),
                                                                                          "consumed.txt"))
    print("group member: %d records read, %d re-delivered after a rebalance; commit errors %d"
          % (read, redelivered, result["commit_errors"]), flush=True)
    assert not violations, "%d violations:\n%s\nstderr tail:\n%s" % (len(violations), "\n".join(violations[:20]),
                                                                     run.stderr_tail())
    assert rc == 0 and result["complete"], result
    assert gap_end - killed_at < 10, "acknowledged again %.1f s after the leader died" % (gap_end - killed_at)
    # The killed node comes back as a follower and catches up byte for byte.
    cluster.start(leader)
    for p in range(partitions):
        end = max(o for q, o, _s, _a in acked.values() if q == p) + 1
        wait_until(lambda: replicas_identical(cluster, cluster.ids, end, topic, p), 30,
                   "the replicas of %s-%d holding the same batches below %d" % (topic, p, end))
    print("took %.1f s" % (time.monotonic() - began))


def test_one_node_down_acks_all_goes_on_two_down_it_gets_not_enough_replicas_and_nothing_is_lost(cluster):
    from kafka import KafkaProducer
    from kafka.errors import NotEnoughReplicasError
    cluster.wait_for_leader(timeout=30)
    leader = wait_for_partition_leader(cluster)
    a, b = [i for i in cluster.ids if i != leader]
    everyone = ",".join(bootstrap(cluster, i) for i in cluster.ids)
    # One follower down: a majority (and min.insync.replicas, 1) is still there.
    cluster.nodes[a].kill()
    producer = KafkaProducer(bootstrap_servers=everyone, acks="all", linger_ms=2, retries=5, request_timeout_ms=5000)
    acked = [producer.send(TOPIC, value=b"one-down-%d" % n, partition=0).get(timeout=30).offset for n in range(50)]
    producer.close()
    # Both followers down: the leader loses its majority. It goes on naming
    # itself leader (with itself alone in sync) and answers acks=all with
    # NOT_ENOUGH_REPLICAS, as Kafka's last in-sync replica does: an error,
    # not a wait.
    cluster.nodes[b].kill()
    batch = kw.record_batch([(None, b"two down", ())])
    def refused():
        with kw.Connection(cluster.client_ports[leader]) as conn:
            error, _offset = kw.produce(conn, TOPIC, 0, batch, acks=-1, timeout_ms=3000)
        return error == 19  # NOT_ENOUGH_REPLICAS
    wait_until(refused, 15, "acks=all refused with NOT_ENOUGH_REPLICAS")
    view = partition_view(cluster, leader)
    assert view[0] == leader and view[2] == 0, view
    producer = KafkaProducer(bootstrap_servers=bootstrap(cluster, leader), acks="all", retries=1,
                             retry_backoff_ms=100, request_timeout_ms=5000)
    started = time.monotonic()
    with pytest.raises(NotEnoughReplicasError):
        producer.send(TOPIC, value=b"never", partition=0).get(timeout=30)
    assert time.monotonic() - started < 10, "refused, not left waiting"
    producer.close()
    # They return: a leader again, and everything acknowledged is there.
    cluster.start(a)
    cluster.start(b)
    wait_for_partition_leader(cluster, timeout=30)
    end = acked[-1] + 1
    got = consume_all(cluster, leader, end)
    values = {v for _o, v in got}
    assert all(b"one-down-%d" % n in values for n in range(50))
    # Refused up front, never written. (A raw produce sent while the leader
    # still thought it had its majority may have been written and committed
    # later: that one was never acknowledged either way.)
    assert b"never" not in values
    wait_until(lambda: replicas_identical(cluster, cluster.ids, end), 30, "the replicas agreeing again")


def partition_metadata_v1(cluster, i, topic, partition=0):
    """Node i's Metadata v1 for one partition: (error, leader, replicas, isr),
    None when the node is down or the partition unknown."""
    from kafka.protocol.metadata import MetadataResponse
    try:
        with kw.Connection(cluster.client_ports[i]) as conn:
            response = conn.request(3, 1, kw.metadata_v1([topic]), response_class=MetadataResponse[1])
    except (OSError, kw.Closed):
        return None
    for error, name, _internal, partitions in response.topics:
        if name != topic or error:
            return None
        for perror, p, leader, replicas, isr in partitions:
            if p == partition:
                return perror, leader, sorted(replicas), sorted(isr)
    return None


def test_a_node_without_a_replica_names_the_leader_its_leader_published(cluster):
    """Replication factor 2 on three nodes: the third node holds no replica
    and names the leader (and the ISR) the leader published through the
    controller log (PartitionLeadersRecord), also after leadership moved."""
    cluster.wait_for_leader(timeout=30)
    topic = "two-replicas"
    assert create_topic_at(cluster, 1, topic, 1, replication=2) == (0, None)

    def agreed(other_than=None):
        views = {i: partition_metadata_v1(cluster, i, topic) for i in cluster.ids}
        if any(v is None or v[0] != 0 for v in views.values()):
            return None
        leaders = {v[1] for v in views.values()}
        isrs = {tuple(v[3]) for v in views.values()}
        if len(leaders) != 1 or len(isrs) != 1:
            return None
        leader = leaders.pop()
        return (leader, views) if leader != other_than else None

    leader, views = wait_until(agreed, 30, "every node to name one leader of %s" % topic)
    replicas = views[leader][2]
    outsider = next(i for i in cluster.ids if i not in replicas)
    assert views[outsider][3] == replicas, "the ISR as the leader published it: %s" % (views,)
    # The leader stops (it resigns); with two replicas no leader can be
    # elected until it is back, and then leadership may move.
    moved = False
    for _attempt in range(4):
        cluster.nodes[leader].stop()
        cluster.start(leader)
        found = wait_until(agreed, 30, "every node to name one leader of %s again" % topic)
        if found[0] != leader:
            moved = True
            leader, views = found
            break
    assert moved, "leadership moved to the other replica at least once in four restarts"
    assert views[outsider][1] == leader


def test_a_follower_names_the_isr_its_leader_measured(cluster):
    """A follower down for longer than replica.lag.time.max.ms (3 s here)
    leaves the leader's ISR; the other follower names the same ISR (the
    leader published it), not every replica."""
    cluster.wait_for_leader(timeout=30)
    leader = wait_for_partition_leader(cluster)
    a, b = [i for i in cluster.ids if i != leader]
    cluster.nodes[b].kill()
    try:
        def shrunk():
            view = partition_metadata_v1(cluster, leader, TOPIC)
            return view is not None and view[3] == sorted([leader, a])
        wait_until(shrunk, 20, "the leader to drop node %d from the ISR" % b)
        wait_until(lambda: partition_metadata_v1(cluster, a, TOPIC) == partition_metadata_v1(cluster, leader, TOPIC),
                   10, "follower %d to name the leader's ISR" % a)
        assert partition_metadata_v1(cluster, a, TOPIC)[3] == sorted([leader, a])
    finally:
        cluster.start(b)
    wait_until(lambda: partition_metadata_v1(cluster, a, TOPIC) is not None and
               partition_metadata_v1(cluster, a, TOPIC)[3] == [1, 2, 3], 30, "node %d back in the ISR everywhere" % b)


def test_a_fetch_on_the_controller_listener_from_no_replica_is_refused_and_the_connection_stays(cluster):
    """The controller listener's Fetch of a partition group (a follower
    node's; partition_group_fetches.cc) from anything but one of the
    group's other replicas gets INVALID_REQUEST for that partition, at once
    (never held), on a connection that stays open; the group goes on."""
    leader = wait_for_partition_leader(cluster)

    from test_flexible_versions import metadata_v12
    with kw.Connection(cluster.client_ports[leader]) as conn:
        topic_id = metadata_v12(conn, [TOPIC], allow_auto_create=False)[3][0][2]

    def fetch_v13(replica_id):
        """Fetch v13 (the controller listener's oldest: topics by id), one partition at offset 0."""
        partition = struct.pack(">iiqiqi", 0, -1, 0, 0, -1, 1 << 20) + b"\x00"
        topic = bytes(topic_id) + kw.uvarint(2) + partition + b"\x00"
        return (struct.pack(">iiiibii", replica_id, 5000, 1, 1 << 20, 0, 0, -1) + kw.uvarint(2) + topic +
                kw.uvarint(1) + kw.compact_string("") + b"\x00")

    def partition_error(body):
        with kw.Connection(cluster.controller_ports[leader], timeout=10) as conn:
            errors = []
            for _ in range(2):  # the same connection answers again
                data = conn.request(1, 13, body, flexible=True)
                pos = 4 + 2 + 4 + 1  # throttle, error, session id, topic count
                pos += 16 + 1 + 4  # topic id, partition count, partition index
                errors.append(struct.unpack_from(">h", data, pos)[0])
            return errors

    started = time.monotonic()
    assert partition_error(fetch_v13(-1)) == [42, 42]  # a consumer's: INVALID_REQUEST
    assert partition_error(fetch_v13(7)) == [42, 42]   # a node that is no replica
    assert time.monotonic() - started < 4, "refused at once, not held for MaxWaitMs"
    assert wait_for_partition_leader(cluster) == leader
