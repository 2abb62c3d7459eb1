#!/usr/bin/python3
"""Faults on purpose against replicated partitions on a 3-node cluster
(issue 16): a topic of 3 partitions with replication factor 3 (each a Raft
group whose log is the partition's segment files), min.insync.replicas=2,
written by an idempotent acks=all producer (confluent-kafka) sending the
numbers 0, 1, 2, ... (number n to partition n % 3) and read meanwhile by a
group consumer, while every KILL_EVERY seconds one fault chosen by the seed
hits one node: SIGKILL of a partition's leader (restarted on its data a few
seconds later), SIGSTOP of a leader for a few seconds (then SIGCONT),
SIGKILL of a follower (restarted), SIGKILL and a restart on a wiped data
directory, a graceful SIGTERM of a leader (restarted), a leader or a
follower cut off the other nodes for 3 to 8 s (isolate_leader,
isolate_follower: then healed), a power cut of a partition's leader or of
one of its followers (power_cut: its unsynced writes dropped, then
restarted on what is left). One node at a time: before each fault every
node runs and has caught up.

The isolations cut the Raft traffic only: each node's controller.quorum.
voters names every other node through a proxy of its own for that direction
(cluster_fixture.EddyCluster(partitionable=True); a proxy per directed pair,
in a child process), and isolating node j resets and refuses every
connection through the proxies into and out of j ("reset": a peer that is
gone) or relays nothing through them any more, connections staying open
("drop": packets lost, requests time out; what was held back is delivered
on healing); the seed picks the mode. Clients still reach every node
directly, as they would across a real partition: the producer goes on
sending to an isolated leader, which (min.insync.replicas=2, acks=all) must
acknowledge none of it, resigns within the fetch timeout (check-quorum),
and after healing rejoins as a follower and truncates what it appended
alone (counted from the nodes' logs: "divergent log suffixes truncated").

The power cut needs the nodes to run eddy-power-cut
(tests/integration/eddy_power_cut.cc, built with the tests, never
installed): eddy's own main with the storage room's PowerCutFilesystem over
the data directory, which on SIGUSR1 drops at random what no fdatasync or
directory sync covered (at a moment when some write is not yet synced) and
_exit()s with 86. Not modelled: eddy.db (SQLite writes it through its own
VFS, outside the port layer), which keeps every write it made, synced or
not: one of the outcomes a real power cut allows, not all of them.

Checked afterwards, in the spirit of the Jepsen analyses of Kafka and
Redpanda, on every partition read from offset 0 by a fresh consumer once the
faults stopped and the replicas agree:
  - every acknowledged number present, exactly once, at the offset its
    acknowledgement gave (no lost write);
  - no number twice at all, acknowledged or not (idempotence), none in
    another partition, none never sent;
  - numbers in send order within each partition (idempotence with at most
    5 requests in flight keeps it);
  - the group consumer never went back within a partition without a
    rebalance, skipped no record, and everything it read is in the final
    log at the offset it read it (nothing it saw vanished or changed);
  - the three nodes' segment files hold the same batches, byte for byte,
    below the high watermark, contiguous from offset 0;
  - no node crashed or hung (a restart that fails, a SIGTERM not answered
    by exit code 0, a power cut not answered by exit code 86, a cluster that
    does not heal within 120 s, a producer that acknowledges nothing for a
    partition 60 s after healing, a fatal producer error).
Unacknowledged numbers that are present are allowed and counted.

One client bug is told apart, narrowly, and reported on its own line
("CLIENT:", not a violation): librdkafka (issue #4953) bumps the producer
epoch after a sequence gap and sends again, under the new epoch, messages
an old leader answered NOT_LEADER_OR_FOLLOWER after it had written them
(Kafka's leaders answer so too); the log then holds them twice, once per
epoch, which no broker can tell apart. Only a second copy in a newer epoch
of the same producer, an epoch the producer logged bumping to (its
debug=eos log), and whose number was not acknowledged at the first copy, is
counted so (check_logs); anything else stays a violation.

Printed: fault counts, failover times (a fault on a node that led a
partition -> the producer's next acknowledgement on that partition in a
newer leader epoch, min/median/max), messages acknowledged, throughput,
the violations (none expected). Exit 1 on a violation; the nodes' data and
logs (eddy-N.stderr) and the clients' files are then kept, as with
EDDY_KEEP_TMP=1.

Not run by ctest (test_cluster_replication_faults.py runs it for about 90
seconds). Usage, from the repository root:
  EDDY_BIN=build/eddy EDDY_SOURCE_DIR=. /usr/bin/python3 tests/bench/replication_faults.py \\
      [--minutes 10] [--seed N] [--kill-every 20] [--messages 0] [--in-flight 5000] [--rate 0] \\
      [--override eddy.log.level=debug] [--faults kill_leader,...] [--power-cut-bin PATH]
--faults leaves kinds out (without the isolations the nodes talk directly;
without power_cut they run EDDY_BIN); eddy-power-cut is found through
EDDY_POWER_CUT_BIN, else next to EDDY_BIN (tests/integration/eddy-power-cut
in its build directory).
The producer runs flat out (about 90 000 messages a second on 2 cores), so
a 10-minute run writes about 55 million messages; reading them back and
checking takes about 6 minutes more and up to about 3 GB of memory.
"""

import argparse
import bisect
import collections
import itertools
import os
import random
import re
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import time
from array import array

HERE = os.path.dirname(os.path.abspath(__file__))
INTEGRATION = os.path.join(HERE, "..", "integration")
sys.path.insert(0, INTEGRATION)
import kafka_wire as kw  # noqa: E402
import metrics_fixture  # noqa: E402
import newest_clients as nc  # noqa: E402
from cluster_fixture import EddyCluster  # noqa: E402
from eddy_fixture import FixtureError, temp_dir, wait_until  # noqa: E402
from test_cluster_metadata import metadata  # noqa: E402

TOPIC = "numbered"
PARTITIONS = 3
GROUP = "numbered-readers"
FAULTS = ("kill_leader", "pause_leader", "kill_follower", "wipe", "term_leader", "isolate_leader",
          "isolate_follower", "power_cut")
# The faults on a partition's leader, and on one of its followers.
LEADER_FAULTS = ("kill_leader", "pause_leader", "term_leader", "isolate_leader")
FOLLOWER_FAULTS = ("kill_follower", "isolate_follower")
# What a node of eddy-power-cut exits with when its power was cut.
POWER_CUT_EXIT = 86
CLIENT = os.path.join(INTEGRATION, "clients", "confluent_numbered.py")
# Nothing leaves the log but what the faults take: no retention.
TOPIC_CONFIGS = (("min.insync.replicas", "2"), ("retention.ms", "-1"), ("retention.bytes", "-1"))
HEAL_TIMEOUT_S = 120
PROGRESS_TIMEOUT_S = 60


# ------------------------------------------------------------ the cluster

def create_topic(cluster, i, name, partitions, replication, configs=()):
    """CreateTopics v1 (with topic configs) sent to node i: (error, message)."""
    with kw.Connection(cluster.client_ports[i], timeout=30) as conn:
        payload = conn.request(19, 1, kw.create_topics_v1(name, partitions, replication, configs=configs,
                                                          timeout_ms=20000))
    n = struct.unpack_from(">h", payload, 4)[0]
    pos = 6 + n
    error, m = struct.unpack_from(">hh", payload, pos)
    return error, (payload[pos + 4:pos + 4 + m].decode() if m > 0 else None)


def partition_states(cluster, i, topic=TOPIC):
    """Node i's Metadata v7 of topic: {partition: (error, leader, leader
    epoch, replicas, isr)}; None when the node does not answer."""
    try:
        with kw.Connection(cluster.client_ports[i], timeout=5) as conn:
            data = conn.request(3, 7, kw.array([kw.string(topic)]) + b"\x00")
    except (OSError, kw.Closed, AssertionError):
        return None
    pos = 4  # throttle

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from(fmt, data, pos)
        pos += struct.calcsize(fmt)
        return v[0] if len(v) == 1 else v

    def string():
        nonlocal pos
        n = take(">h")
        pos += max(n, 0)

    def ints():
        return [take(">i") for _ in range(take(">i"))]

    for _ in range(take(">i")):  # brokers
        take(">i")
        string()
        take(">i")
        string()
    string()  # cluster id
    take(">i")  # controller
    out = {}
    for _ in range(take(">i")):
        take(">h")
        string()
        take(">b")
        for _ in range(take(">i")):
            error, index, leader, epoch = take(">hiii")
            replicas, isr = ints(), ints()
            ints()  # offline
            out[index] = (error, leader, epoch, replicas, isr)
    return out


def agreed_leaders(cluster, topic=TOPIC):
    """{partition: (leader, its epoch)} for each partition whose leader
    every running node names, the leader among them."""
    views = {i: partition_states(cluster, i, topic) for i in cluster.running()}
    out = {}
    for p in range(PARTITIONS):
        named = {v[p][1] for v in views.values() if v is not None and p in v and v[p][0] == 0}
        if len(named) != 1 or any(v is None or p not in v or v[p][0] != 0 for v in views.values()):
            continue
        leader = named.pop()
        if leader in views:
            out[p] = (leader, views[leader][p][2])
    return out


def log_offsets(cluster, i, topic=TOPIC):
    """Node i's {partition: (log end, high watermark)}, from its metrics
    listener; None when it does not answer."""
    try:
        samples, _, _ = metrics_fixture.scrape(cluster.metrics_ports[i])
    except Exception:  # noqa: BLE001 - a node restarting
        return None
    out = {}
    for p in range(PARTITIONS):
        labels = {"topic": topic, "partition": str(p)}
        end = metrics_fixture.value(samples, "eddy_partition_log_end_offset", **labels)
        hw = metrics_fixture.value(samples, "eddy_partition_high_watermark", **labels)
        if end is None or hw is None:
            return None
        out[p] = (int(end), int(hw))
    return out


def wait_healthy(cluster, timeout):
    """Every node runs, the controller quorum has its leader, every partition
    a leader all nodes name, and every node's log and high watermark reached
    what the leaders had committed when this began. Returns the leaders;
    FixtureError on the timeout."""
    deadline = time.monotonic() + timeout

    def leaders_known():
        if len(cluster.running()) != cluster.size or cluster.leader() is None:
            return None
        known = agreed_leaders(cluster)
        return known if len(known) == PARTITIONS else None

    known = wait_until(leaders_known, timeout, "a leader of every partition named by every node", interval=0.1)

    def targets():
        t = {}
        for p, (leader, _epoch) in known.items():
            offsets = log_offsets(cluster, leader)
            if offsets is None:
                return None
            t[p] = offsets[p][1]
        return t

    target = wait_until(targets, max(1, deadline - time.monotonic()), "the leaders' high watermarks", interval=0.1)

    def caught_up():
        for i in cluster.ids:
            offsets = log_offsets(cluster, i)
            if offsets is None or any(offsets[p][0] < target[p] or offsets[p][1] < target[p] for p in target):
                return False
        return True

    wait_until(caught_up, max(1, deadline - time.monotonic()),
               "every node holding what was committed (%s)" % target, interval=0.1)
    return known


def segment_batches(cluster, i, topic, partition):
    """The batches of node i's segment files of the partition, in offset
    order: (base offset, batch bytes). The files are preallocated (and a
    truncation zeroes what it cut): each ends at its first zero length."""
    directory = os.path.join(cluster.nodes[i].data_dir, "%s-%d" % (topic, partition))
    for name in sorted(n for n in os.listdir(directory) if n.endswith(".log")):
        with open(os.path.join(directory, name), "rb") as f:
            data = f.read()
        pos = 0
        while pos + 12 <= len(data):
            base, length = struct.unpack_from(">qi", data, pos)
            if length <= 0:
                break
            yield base, data[pos:pos + 12 + length]
            pos += 12 + length


def _describe_batch(b):
    if b is None:
        return "none"
    base, data = b
    epoch, _magic, crc = struct.unpack_from(">ibI", data, 12)
    delta = struct.unpack_from(">i", data, 23)[0]
    return "%d..%d epoch %d crc %08x (%d bytes)" % (base, base + delta, epoch, crc, len(data))


def check_replicas(cluster, ends, violations, notes):
    """Every node's batches below ends[p] the same bytes, contiguous from
    offset 0 up to ends[p]. Returns, per partition, the batches' (base
    offsets, last offsets, leader epochs, record counts, producer ids,
    producer epochs) as arrays."""
    layout = {}
    sizes = []
    before = len(violations)
    for p in range(PARTITIONS):
        streams = [itertools.takewhile(lambda b, end=ends[p]: b[0] < end, segment_batches(cluster, i, TOPIC, p))
                   for i in cluster.ids]
        bases, lasts, epochs, counts = array("q"), array("q"), array("i"), array("i")
        pids, pepochs = array("q"), array("h")
        layout[p] = (bases, lasts, epochs, counts, pids, pepochs)
        expected = size = 0
        for batches in itertools.zip_longest(*streams):
            first = batches[0]
            if any(b != first for b in batches[1:]):
                violations.append("replicas of partition %d differ after offset %d: %s" % (
                    p, expected, "; ".join("node %d: %s" % (i, _describe_batch(b))
                                           for i, b in zip(cluster.ids, batches))))
                break
            base, data = first
            epoch = struct.unpack_from(">i", data, 12)[0]
            delta = struct.unpack_from(">i", data, 23)[0]
            count = struct.unpack_from(">i", data, 57)[0]
            pid, pepoch = struct.unpack_from(">qh", data, 43)
            if base != expected:
                violations.append("partition %d: a batch at offset %d, expected %d (a gap or an overlap)"
                                  % (p, base, expected))
                break
            bases.append(base)
            lasts.append(base + delta)
            epochs.append(epoch)
            counts.append(count)
            pids.append(pid)
            pepochs.append(pepoch)
            expected = base + delta + 1
            size += len(data)
        else:
            if expected != ends[p]:
                violations.append("partition %d: the replicas' batches end at %d, the high watermark is %d"
                                  % (p, expected, ends[p]))
        sizes.append("partition %d: %d batches, %.1f MiB" % (p, len(bases), size / 1048576.0))
    notes.append("replicas %s below the high watermarks %s on nodes %s (%s)"
                 % ("byte-identical" if len(violations) == before else "compared", [ends[p] for p in range(PARTITIONS)],
                    cluster.ids, "; ".join(sizes)))
    return layout


def node_errors(cluster, context=6):
    """The ERROR lines of every node's logs (all its starts), each with the
    context lines before it: [(line, context)]."""
    found = []
    for i in cluster.ids:
        tmp = cluster.nodes[i].tmp
        for name in sorted(n for n in os.listdir(tmp) if n.endswith(".stderr")):
            with open(os.path.join(tmp, name), "rb") as f:
                lines = f.read().decode("utf-8", "replace").splitlines()
            for k, line in enumerate(lines):
                if " ERROR " in line or "check failed" in line:
                    found.append(("node %d %s: %s" % (i, name, line),
                                  "\n".join("    " + x for x in lines[max(0, k - context):k])))
    return found


class ProduceErrors:
    """The error codes the nodes answered Produce with (their metrics'
    eddy_request_errors_total{api="Produce"}), over all their lives: seen()
    before a node stops (its counters start again at 0) and at the end."""

    def __init__(self):
        self.total = collections.Counter()  # (node, error) -> count
        self.current = {}  # node -> Counter of its present life

    def seen(self, cluster, i, stopping=False):
        try:
            samples, _, _ = metrics_fixture.scrape(cluster.metrics_ports[i])
            now = collections.Counter()
            for labels, v in samples.get("eddy_request_errors_total", {}).items():
                labels = dict(labels)
                if labels.get("api") == "Produce":
                    now[labels.get("error")] += int(v)
            self.current[i] = now
        except Exception:  # noqa: BLE001 - a node that does not answer keeps its last figures
            pass
        if stopping:
            for error, n in self.current.pop(i, {}).items():
                self.total[(i, error)] += n

    def text(self):
        counts = collections.Counter(self.total)
        for i, now in self.current.items():
            for error, n in now.items():
                counts[(i, error)] += n
        by_node = collections.defaultdict(dict)
        for (i, error), n in sorted(counts.items()):
            by_node[i][error] = n
        return "; ".join("node %d %s" % (i, errors) for i, errors in sorted(by_node.items())) or "none"


def truncations(cluster):
    """What the nodes' logs (all their starts) say they truncated of the
    topic's partitions (a suffix that diverged from a new leader's log, cut
    when rejoining as a follower): (times, offsets)."""
    pattern = re.compile(r"/%s-\d+: truncated to offset (\d+) \(log end was (\d+)\)" % re.escape(TOPIC))
    times = offsets = 0
    for i in cluster.ids:
        tmp = cluster.nodes[i].tmp
        for name in sorted(n for n in os.listdir(tmp) if n.endswith(".stderr")):
            with open(os.path.join(tmp, name), "rb") as f:
                for m in pattern.finditer(f.read().decode("utf-8", "replace")):
                    times += 1
                    offsets += int(m.group(2)) - int(m.group(1))
    return times, offsets


# ------------------------------------------------------------ the clients

class ProducerLog:
    """The producer's delivery reports (clients/confluent_numbered.py
    produce), read as the file grows."""

    def __init__(self, path):
        self.path = path
        self.pos = 0
        self.partial = b""
        self.offset = array("q")  # per number: its acknowledged offset; -1 failed; -2 no report
        self.ack_times = [array("d") for _ in range(PARTITIONS)]  # per partition, in report order
        self.ack_offsets = [array("q") for _ in range(PARTITIONS)]
        self.failed = collections.Counter()
        self.client_errors = collections.Counter()
        self.fatal = []
        self.end = None  # (sent, delivered, failed, unreported, time)
        self.bad = []  # reports that contradict the producer's own choice

    def _slot(self, n):
        if n >= len(self.offset):
            self.offset.extend(itertools.repeat(-2, n + 1 - len(self.offset) + (1 << 16)))

    def poll(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.pos)
                data = f.read()
        except OSError:
            return
        self.pos += len(data)
        data = self.partial + data
        cut = data.rfind(b"\n") + 1
        self.partial = data[cut:]
        for line in data[:cut].split(b"\n")[:-1]:
            f = line.split(b" ")
            kind = f[0]
            if kind == b"d":
                n, p, offset, t = int(f[1]), int(f[2]), int(f[3]), float(f[4])
                if p != n % PARTITIONS:
                    self.bad.append("number %d acknowledged in partition %d" % (n, p))
                    continue
                self._slot(n)
                if self.offset[n] != -2:
                    self.bad.append("number %d reported twice" % n)
                self.offset[n] = offset
                self.ack_times[p].append(t)
                self.ack_offsets[p].append(offset)
            elif kind == b"f":
                n = int(f[1])
                self._slot(n)
                if self.offset[n] != -2:
                    self.bad.append("number %d reported twice" % n)
                self.offset[n] = -1
                self.failed[f[3].decode()] += 1
            elif kind in (b"e", b"F"):
                text = b" ".join(f[2:]).decode(errors="replace")
                self.client_errors[f[2].decode(errors="replace")] += 1
                if kind == b"F":
                    self.fatal.append(text)
            elif kind == b"x":
                self.end = (int(f[1]), int(f[2]), int(f[3]), int(f[4]), float(f[5]))

    def acked(self):
        return sum(len(a) for a in self.ack_times)

    def last_ack(self, p):
        return self.ack_times[p][-1] if self.ack_times[p] else None


class Client:
    """One clients/confluent_numbered.py process under the venv's python."""

    def __init__(self, python, args, workdir, label):
        self.label = label
        self.stderr_path = os.path.join(workdir, label + ".stderr")
        self._stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen([python, CLIENT] + [str(a) for a in args], stdin=subprocess.DEVNULL,
                                     stdout=self._stderr, stderr=self._stderr)

    def alive(self):
        return self.proc.poll() is None

    def wait(self, timeout):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._stderr.close()

    def tail(self, n=3000):
        with open(self.stderr_path, "rb") as f:
            return f.read().decode("utf-8", "replace")[-n:]


# ------------------------------------------------------------ the run

class Result:
    def __init__(self):
        self.violations = []
        self.notes = []
        self.faults = collections.Counter()
        self.failovers = []  # (fault, partition, seconds or None)
        # Numbers the producer sent again under a new epoch (check_logs):
        # (number, partition, first offset, second offset, first epoch, second epoch, producer id)
        self.client_resent = []
        self.acked = 0
        self.sent = 0
        self.seconds = 0.0
        self.kept = []


def power_cut_binary():
    """eddy-power-cut (tests/integration/eddy_power_cut.cc): $EDDY_POWER_CUT_BIN,
    else next to $EDDY_BIN in its build directory; None when not built."""
    path = os.environ.get("EDDY_POWER_CUT_BIN")
    if not path and os.environ.get("EDDY_BIN"):
        path = os.path.join(os.path.dirname(os.path.abspath(os.environ["EDDY_BIN"])), "tests", "integration",
                            "eddy-power-cut")
    return path if path and os.access(path, os.X_OK) else None


def _start(cluster, i, wiped, power_seeds):
    """Starts node i; an eddy-power-cut node gets a fresh seed for its next
    cut (printed in its log)."""
    if power_seeds is not None:
        cluster.nodes[i].env["EDDY_POWER_CUT_SEED"] = str(power_seeds.getrandbits(63))
    cluster.start(i, wiped=wiped)


def _restart(cluster, i, wiped, result, out, power_seeds=None):
    """Starts node i again; a start that fails is a violation (tried twice)."""
    for attempt in range(2):
        try:
            _start(cluster, i, wiped, power_seeds)
            return True
        except FixtureError as e:
            node = cluster.nodes[i]
            result.violations.append("node %d did not start again (attempt %d): %s" % (i, attempt + 1, str(e)[-2000:]))
            if node.proc is not None:
                if node.proc.poll() is None:
                    node.proc.kill()
                node.proc.wait()
                node.proc = None
                node._log.close()
            time.sleep(2)
    out("node %d cannot be started again" % i)
    return False


def _check_nodes(cluster, expected, result, out, power_seeds=None):
    """A node that should run and exited on its own: a violation (its log's
    tail with it); it is started again."""
    for i in sorted(expected):
        node = cluster.nodes[i]
        if node.proc is not None and node.proc.poll() is not None:
            code = node.proc.returncode
            tail = "\n".join(node.log_text().splitlines()[-30:])
            result.violations.append("node %d exited on its own with code %s (%s):\n%s"
                                     % (i, code, node.log_path, tail))
            out("node %d exited on its own with code %s" % (i, code))
            node.proc = None
            node._log.close()
            _restart(cluster, i, False, result, out, power_seeds)


def run(minutes=10, seed=None, kill_every=20, messages=0, python=None, workdir=None, cover_all=False,
        in_flight=5000, rate=0, overrides=None, out=None, faults=FAULTS, power_cut_bin=None):
    """The fault run; returns a Result. python: the venv's python with
    confluent-kafka (newest_clients.venv_python()); workdir: where the
    clients' files go (a fresh temporary directory by default); cover_all:
    the first faults are each kind once, in an order the seed shuffles (the
    run goes on past `minutes` until each came); rate: messages a second at
    most (0: as fast as the producer goes); overrides: more --override
    settings of every node; faults: the kinds to choose from. With an
    isolation among them the Raft traffic goes through the cluster's links
    (EddyCluster(partitionable=True)); with power_cut the nodes run
    power_cut_bin (default power_cut_binary(); FixtureError when not built)."""
    if out is None:
        def out(s):
            print(s, flush=True)
    seed = int(time.time()) if seed is None else seed
    python = python or nc.venv_python()
    rng = random.Random(seed)
    result = Result()
    own_workdir = workdir is None
    workdir = workdir or temp_dir("eddy-replication-faults-")
    os.makedirs(workdir, exist_ok=True)
    producer_out = os.path.join(workdir, "produced.txt")
    consumer_out = os.path.join(workdir, "consumed.txt")
    read_out = os.path.join(workdir, "read.txt")
    producer_stop = os.path.join(workdir, "producer.stop")
    consumer_stop = os.path.join(workdir, "consumer.stop")
    faults = tuple(faults)
    unknown = [f for f in faults if f not in FAULTS]
    if unknown or not faults:
        raise ValueError("faults: %s not among %s" % (unknown or "none", FAULTS))
    schedule = list(faults) if cover_all else []
    rng.shuffle(schedule)
    events = []  # (fault, victim, time, {partition: leader epoch} it led)
    produce_errors = ProduceErrors()
    out("seed %d, %.1f minutes, a fault every %d s, workdir %s" % (seed, minutes, kill_every, workdir))
    power_seeds = None
    if "power_cut" in faults:
        power_cut_bin = power_cut_bin or power_cut_binary()
        if power_cut_bin is None:
            raise FixtureError("the power cut needs eddy-power-cut (cmake --build BUILD --target eddy-power-cut; "
                               "EDDY_POWER_CUT_BIN names it)")
        power_seeds = random.Random(seed * 7919 + 1)
        out("nodes: %s (SIGUSR1 cuts the power)" % power_cut_bin)
    partitionable = any(f.startswith("isolate_") for f in faults)
    cluster = EddyCluster(3, overrides=overrides, partitionable=partitionable,
                          binary=power_cut_bin if power_seeds is not None else None)
    producer = consumer = None
    try:
        for i in cluster.ids:
            _start(cluster, i, False, power_seeds)
        cluster.wait_for_leader(timeout=30)
        wait_until(lambda: all(len(metadata(cluster, i)[2]) == 3 for i in cluster.ids), 20, "three registered nodes")
        error, message = create_topic(cluster, 1, TOPIC, PARTITIONS, 3, TOPIC_CONFIGS)
        if error != 0:
            raise FixtureError("CreateTopics: error %d %s" % (error, message))
        leaders = wait_until(lambda: len(agreed_leaders(cluster)) == PARTITIONS and agreed_leaders(cluster), 30,
                             "a leader of every partition")
        out("topic %s: leaders %s" % (TOPIC, {p: v[0] for p, v in sorted(leaders.items())}))
        bootstrap = ",".join("127.0.0.1:%d" % cluster.client_ports[i] for i in cluster.ids)
        consumer = Client(python, ["consume", bootstrap, GROUP, TOPIC, consumer_out, consumer_stop], workdir,
                          "consumer")
        producer = Client(python, ["produce", bootstrap, TOPIC, PARTITIONS, producer_out, producer_stop, messages,
                                   in_flight, rate], workdir, "producer")
        plog = ProducerLog(producer_out)
        expected = set(cluster.ids)  # the nodes that should be running
        producer_exit_noted = []

        def idle(seconds):
            """Waits, reading the producer's reports and watching for crashes."""
            until = time.monotonic() + seconds
            while True:
                plog.poll()
                _check_nodes(cluster, expected, result, out, power_seeds)
                if not producer.alive() and not producer_exit_noted:
                    producer_exit_noted.append(True)
                    result.violations.append("the producer exited during the run (code %s):\n%s"
                                             % (producer.proc.returncode, producer.tail()))
                left = until - time.monotonic()
                if left <= 0:
                    return
                time.sleep(min(0.1, left))

        started = time.monotonic()
        deadline = started + minutes * 60
        next_fault = started + kill_every
        while True:
            idle(max(0, min(next_fault, deadline) - time.monotonic()) if not schedule else
                 max(0, next_fault - time.monotonic()))
            if time.monotonic() >= deadline and not schedule:
                break
            try:
                leaders = wait_healthy(cluster, HEAL_TIMEOUT_S)
            except FixtureError as e:
                result.violations.append("before a fault: the cluster did not heal within %d s: %s"
                                         % (HEAL_TIMEOUT_S, e))
                break
            fault = schedule.pop() if schedule else rng.choice(faults)
            p = rng.randrange(PARTITIONS)
            leader = leaders[p][0]
            followers = [i for i in cluster.ids if i != leader]
            if fault in LEADER_FAULTS:
                victim = leader
            elif fault in FOLLOWER_FAULTS:
                victim = rng.choice(followers)
            elif fault == "power_cut":
                victim = leader if rng.random() < 0.5 else rng.choice(followers)
            else:
                victim = rng.choice(cluster.ids)
            led = {q: e for q, (l, e) in leaders.items() if l == victim}
            node = cluster.nodes[victim]
            down = rng.uniform(2, 5)
            how = mode = ""
            if fault.startswith("isolate_"):
                # Longer than the check-quorum and election timeouts, so that
                # the others elect a new leader while it is cut off.
                down = rng.uniform(3, 8)
                mode = rng.choice(cluster.links.MODES)
                how = ", " + mode
            elif fault == "power_cut":
                how = ", the %s of partition %d" % ("leader" if victim == leader else "follower", p)
            if fault != "pause_leader" and not fault.startswith("isolate_"):
                produce_errors.seen(cluster, victim, stopping=True)  # its counters end with it
            at = time.monotonic()
            events.append((fault, victim, at, led))
            result.faults[fault] += 1
            out("%6.1f s  %-16s node %d (leads %s%s), %.1f s; %d acknowledged so far"
                % (at - started, fault, victim, sorted(led) or "nothing", how, down, plog.acked()))
            if fault == "pause_leader":
                os.kill(node.eddy_pid(), signal.SIGSTOP)
                try:
                    idle(down)
                finally:
                    os.kill(node.eddy_pid(), signal.SIGCONT)
            elif fault.startswith("isolate_"):
                # The node runs on and its clients still reach it: the
                # producer sends it what it led; it must not acknowledge it.
                cluster.isolate(victim, mode)
                try:
                    idle(down)
                finally:
                    cluster.heal()
            elif fault == "power_cut":
                expected.discard(victim)
                try:
                    rc = node.stop(signal.SIGUSR1)
                    if rc != POWER_CUT_EXIT:
                        result.violations.append("node %d exited with code %s on its power cut, not %d"
                                                 % (victim, rc, POWER_CUT_EXIT))
                except FixtureError as e:
                    result.violations.append("node %d on its power cut: %s" % (victim, e))
                cut = [line for line in node.log_text().splitlines() if "POWER CUT" in line]
                out("          %s" % (cut[-1].split(": ", 1)[-1] if cut else "(no power cut logged)"))
                idle(down)
                if not _restart(cluster, victim, False, result, out, power_seeds):
                    break
                expected.add(victim)
            else:
                expected.discard(victim)
                if fault == "term_leader":
                    try:
                        rc = node.stop()
                        if rc != 0:
                            result.violations.append("node %d exited with code %s on SIGTERM" % (victim, rc))
                    except FixtureError as e:
                        result.violations.append("node %d on SIGTERM: %s" % (victim, e))
                else:
                    node.kill()
                if fault == "wipe":
                    shutil.rmtree(node.data_dir, ignore_errors=True)
                idle(down)
                if not _restart(cluster, victim, fault == "wipe", result, out, power_seeds):
                    break
                expected.add(victim)
            next_fault = max(next_fault + kill_every, time.monotonic() + 1)

        # Healed: every node runs; the producer acknowledges again on every
        # partition, then stops.
        healed_at = time.monotonic()
        result.seconds = healed_at - started
        try:
            wait_healthy(cluster, HEAL_TIMEOUT_S)
        except FixtureError as e:
            result.violations.append("after the faults: the cluster did not heal within %d s: %s"
                                     % (HEAL_TIMEOUT_S, e))
        plog.poll()
        def reported():
            return plog.acked() + sum(plog.failed.values())

        if not messages or reported() < messages:
            def acknowledging():
                plog.poll()
                return (all((plog.last_ack(p) or 0) > healed_at for p in range(PARTITIONS)) or
                        (messages and reported() >= messages))
            try:
                wait_until(acknowledging, PROGRESS_TIMEOUT_S, "an acknowledgement on every partition", interval=0.1)
            except FixtureError:
                stalled = [p for p in range(PARTITIONS) if (plog.last_ack(p) or 0) <= healed_at]
                result.violations.append("no acknowledgement on partitions %s within %d s after healing"
                                         % (stalled, PROGRESS_TIMEOUT_S))
        produced_until = time.monotonic()
        open(producer_stop, "w").close()
        if producer.wait(240) is None:
            result.violations.append("the producer did not end within 240 s of being told to:\n" + producer.tail())
        producer.kill()
        plog.poll()
        open(consumer_stop, "w").close()
        if consumer.wait(60) is None:
            result.notes.append("the consumer did not end within 60 s of being told to")
        consumer.kill()
        if plog.end is None:
            result.violations.append("the producer wrote no end line:\n" + producer.tail())
            sent = len(plog.offset)
        else:
            sent = plog.end[0]
            if plog.end[3]:
                result.notes.append("%d messages never reported by the producer" % plog.end[3])
        result.sent = sent
        result.acked = plog.acked()
        result.throughput = result.acked / max(1e-9, produced_until - started)
        for b in plog.bad:
            result.violations.append("producer: " + b)
        for f in plog.fatal:
            result.violations.append("producer: fatal error: " + f)

        # Settled: no more appends; every node at the leaders' high watermark.
        ends = {}

        def settled():
            views = {i: log_offsets(cluster, i) for i in cluster.ids}
            if any(v is None for v in views.values()):
                return False
            for p in range(PARTITIONS):
                values = {views[i][p] for i in cluster.ids}
                if len(values) != 1:
                    return False
                end, hw = values.pop()
                if end != hw:
                    return False
                ends[p] = hw
            return True

        try:
            wait_until(settled, 60, "every node's log end and high watermark equal", interval=0.2)
        except FixtureError as e:
            views = {i: log_offsets(cluster, i) for i in cluster.ids}
            result.violations.append("the replicas did not settle within 60 s: %s; (log end, high watermark) by "
                                     "node: %s" % (e, views))
            known = agreed_leaders(cluster)
            for p in range(PARTITIONS):
                leader = known.get(p, (1, 0))[0]
                ends[p] = (views.get(leader) or {}).get(p, (0, 0))[1]
        checking = time.monotonic()
        layout = check_replicas(cluster, ends, result.violations, result.notes)
        compared = time.monotonic()

        # A fresh consumer reads every partition from offset 0.
        bootstrap = ",".join("127.0.0.1:%d" % cluster.client_ports[i] for i in cluster.ids)
        read_timeout = 300 + sum(ends.values()) / 20000
        reader = Client(python, ["read", bootstrap, TOPIC, ",".join(str(ends[p]) for p in range(PARTITIONS)),
                                 read_out, read_timeout], workdir, "reader")
        code = reader.wait(read_timeout + 60)
        reader.kill()
        if code != 0:
            result.violations.append("the final read did not reach the high watermarks %s (exit %s):\n%s"
                                     % (ends, code, reader.tail()))
        read_done = time.monotonic()
        bumps = epoch_bumps(producer.stderr_path)
        check_logs(plog, consumer_out, read_out, ends, layout, sent, result, bumps)
        if result.client_resent:
            first = result.client_resent[0]
            epochs = sorted({(e1, e2) for _n, _p, _o1, _o2, e1, e2, _pid in result.client_resent})
            result.notes.append(
                "CLIENT: the producer wrote %d numbers twice, the second time under a producer epoch it bumped to "
                "(epochs %s), not counted as violations (librdkafka issue #4953: after a sequence gap it gives new "
                "sequences to messages an old leader answered NOT_LEADER_OR_FOLLOWER after writing them); e.g. "
                "number %d in partition %d at offsets %d and %d; librdkafka's reason: %s"
                % (len(result.client_resent), epochs, first[0], first[1], first[2], first[3],
                   bumps.get((first[6], first[5]), "?")[-400:]))
        result.notes.append("afterwards: replicas compared in %.0f s, read back in %.0f s, checked in %.0f s"
                            % (compared - checking, read_done - compared, time.monotonic() - read_done))
        failovers(events, plog, layout, result)
        for i in cluster.ids:
            produce_errors.seen(cluster, i)
        result.notes.append("Produce errors answered: %s" % produce_errors.text())
        times, offsets = truncations(cluster)
        result.notes.append("divergent log suffixes truncated by nodes rejoining as followers: %d, %d offsets in all"
                            % (times, offsets))
        errors = node_errors(cluster)
        for line, before in errors:
            if "replica stopped" in line or "check failed" in line or "truncation" in line:
                result.violations.append("a node logged: %s\n  after:\n%s" % (line, before))
        if errors:
            result.notes.append("%d ERROR lines in the nodes' logs:\n%s" % (
                len(errors), "\n".join("  %s\n  after:\n%s" % e for e in errors[:5])))
    except Exception as e:  # noqa: BLE001 - reported as a violation, with the evidence kept
        import traceback
        result.violations.append("the run failed: %s\n%s" % (e, traceback.format_exc()))
    finally:
        for c in (producer, consumer):
            if c is not None:
                c.kill()
        keep = bool(result.violations) or os.environ.get("EDDY_KEEP_TMP") == "1"
        for node in cluster.nodes.values():
            if keep:
                node.keep = True
                result.kept.append(node.tmp)
        cluster.close()
        if keep:
            result.kept.append(workdir)
        elif own_workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    report(result, seed, minutes, kill_every, out)
    return result


def epoch_bumps(producer_stderr):
    """The producer epochs librdkafka says it bumped to (its debug=eos log,
    clients/confluent_numbered.py): {(producer id, epoch): the ERRSEQ line
    that gave the reason, or the bump line itself}."""
    bumps = {}
    reason = None
    pattern = re.compile(r"bumped epoch to PID\{Id:(\d+),Epoch:(\d+)\}")
    try:
        with open(producer_stderr, "rb") as f:
            for raw in f:
                line = raw.decode("utf-8", "replace").rstrip()
                if "|ERRSEQ|" in line or "|ERRPID|" in line:
                    reason = line
                m = pattern.search(line)
                if m:
                    bumps[(int(m.group(1)), int(m.group(2)))] = reason or line
    except OSError:
        pass
    return bumps


def check_logs(plog, consumer_out, read_out, ends, layout, sent, result, bumps=None):
    """The final log (read_out) against the producer's reports and the group
    consumer's reads.

    One exception, narrow and reported on its own (result.client_resent):
    a number the log holds twice, whose second copy is in a batch of the same
    producer in a newer producer epoch that the producer itself logged
    bumping to (bumps: epoch_bumps()), and whose acknowledgement, if any, is
    the second copy's. That is the client sending again, under a new epoch,
    what it had been told was not written (librdkafka bumps the epoch after a
    sequence gap and gives the new epoch's sequences to every message not yet
    acknowledged, including a batch whose old leader answered
    NOT_LEADER_OR_FOLLOWER after it had written it, as Kafka's leaders also
    do: librdkafka issue #4953); a broker cannot tell the two epochs' copies
    apart (idempotence is per producer epoch). The second copy is then not a
    duplicate, an order or an offset violation; everything else about the
    number is checked as usual."""
    v = result.violations
    limit = collections.Counter()
    bumps = bumps or {}

    def producer_of(p, offset):
        bases, _lasts, _epochs, _counts, pids, pepochs = layout[p]
        i = bisect.bisect_right(bases, offset) - 1
        return (pids[i], pepochs[i]) if i >= 0 else (None, None)

    resent_at = set()  # (partition, offset) of a second copy sent again by the client

    def violation(kind, text):
        limit[kind] += 1
        if limit[kind] <= 20:
            v.append(text)
        elif limit[kind] == 21:
            v.append("(more violations of the kind '%s' not listed)" % kind)

    # The final log: per partition, the number at each offset (-1: none).
    log = {p: array("q", itertools.repeat(-1, ends[p])) for p in range(PARTITIONS)}
    where = array("q", itertools.repeat(-1, max(sent, len(plog.offset))))  # number -> offset
    records = 0
    with open(read_out, "rb") as f:
        for line in f:
            parts = line.split()
            if parts[0] != b"m":
                continue
            p, offset = int(parts[1]), int(parts[2])
            try:
                n = int(parts[3])
            except ValueError:
                violation("foreign", "partition %d offset %d: a value never sent: %r" % (p, offset, parts[3]))
                continue
            records += 1
            if offset >= ends[p]:
                violation("beyond", "partition %d: a record at %d, at or past the high watermark %d"
                          % (p, offset, ends[p]))
                continue
            if log[p][offset] != -1:
                violation("reread", "partition %d offset %d read twice by the final reader" % (p, offset))
            log[p][offset] = n
            if n < 0 or n >= len(where):
                violation("foreign", "partition %d offset %d: number %d was never sent" % (p, offset, n))
                continue
            if n % PARTITIONS != p:
                violation("misplaced", "number %d found in partition %d (sent to %d)" % (n, p, n % PARTITIONS))
            if where[n] != -1:
                first_pid, first_epoch = producer_of(p, where[n])
                pid, epoch = producer_of(p, offset)
                acked = plog.offset[n] if n < len(plog.offset) else -2
                if (p in layout and pid == first_pid and pid is not None and epoch > first_epoch and
                        (pid, epoch) in bumps and acked != where[n]):
                    result.client_resent.append((n, p, where[n], offset, first_epoch, epoch, pid))
                    resent_at.add((p, offset))
                    if acked == offset:
                        where[n] = offset
                    continue
                violation("duplicate", "number %d twice: partition %d offsets %d and %d" % (n, p, where[n], offset))
                continue
            where[n] = offset
    # Offsets holding no record must be batches of none (leader changes).
    for p in range(PARTITIONS):
        bases, lasts, _epochs, counts = layout.get(p, ((), (), (), (), (), ()))[:4]
        for base, last, count in zip(bases, lasts, counts):
            got = sum(1 for o in range(base, min(last + 1, ends[p])) if log[p][o] != -1)
            if got != count:
                violation("unread", "partition %d: the batch %d..%d holds %d records, the reader got %d"
                          % (p, base, last, count, got))
        previous = -1
        for offset in range(ends[p]):
            n = log[p][offset]
            if n == -1 or (p, offset) in resent_at:
                continue
            if n <= previous:
                violation("order", "partition %d: number %d at offset %d after number %d" % (p, n, offset, previous))
            previous = n
    # Every acknowledged number where its acknowledgement said.
    unacked_present = failed_present = 0
    for n in range(len(plog.offset)):
        acked = plog.offset[n]
        found = where[n]
        if acked >= 0:
            if found == -1:
                violation("lost", "number %d acknowledged at partition %d offset %d is missing"
                          % (n, n % PARTITIONS, acked))
            elif found != acked:
                violation("moved", "number %d acknowledged at partition %d offset %d is at offset %d"
                          % (n, n % PARTITIONS, acked, found))
        elif found != -1:
            if acked == -1:
                failed_present += 1
            else:
                unacked_present += 1
    result.records = records
    result.failed_present = failed_present
    result.unreported_present = unacked_present
    result.failed = sum(plog.failed.values())
    if plog.failed:
        result.notes.append("failed deliveries: %s" % dict(plog.failed))
    if plog.client_errors:
        result.notes.append("producer error_cb events: %s" % dict(plog.client_errors))

    # The group consumer: forward within an assignment, nothing skipped,
    # everything it read in the final log where it read it.
    last = {}
    read = assignments = 0
    errors = collections.Counter()
    resets = []
    with open(consumer_out, "rb") as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            kind = parts[0]
            if kind == b"m":
                if len(parts) < 5:
                    continue  # cut short by the end of the run
                p, offset, value = int(parts[1]), int(parts[2]), parts[3]
                read += 1
                try:
                    n = int(value)
                except ValueError:
                    n = None
                if offset >= ends[p] or log[p][offset] != n:
                    violation("vanished", "the consumer read %r at partition %d offset %d; the final log has %s"
                              % (value, p, offset, "nothing" if offset >= ends[p] or log[p][offset] == -1
                                 else log[p][offset]))
                previous = last.get(p)
                if previous is not None:
                    if offset <= previous:
                        violation("backwards", "the consumer went from offset %d back to %d in partition %d "
                                  "without a rebalance" % (previous, offset, p))
                    else:
                        skipped = [o for o in range(previous + 1, min(offset, ends[p])) if log[p][o] != -1]
                        if skipped:
                            violation("skipped", "the consumer skipped offsets %s of partition %d (from %d to %d)"
                                      % (skipped[:5], p, previous, offset))
                last[p] = offset
            elif kind in (b"a", b"r", b"l"):
                if kind == b"a":
                    assignments += 1
                if len(parts) > 2 and parts[2] != b"-":
                    for q in parts[2].split(b","):
                        last.pop(int(q), None)
            elif kind == b"e":
                errors[parts[2].decode(errors="replace")] += 1
            elif kind == b"o":
                resets.append(b" ".join(parts[2:]).decode(errors="replace"))
    result.consumed = read
    result.notes.append("group consumer: %d records read, %d assignments, errors %s"
                        % (read, assignments, dict(errors) or "none"))
    if resets:
        result.notes.append("group consumer: %d offset resets or truncations logged by librdkafka, e.g. %s"
                            % (len(resets), resets[:3]))


def failovers(events, plog, layout, result):
    """Per fault and partition its victim led: the time from the fault to
    the producer's next acknowledgement on that partition in a newer epoch
    than the victim's (None: none came)."""
    def epoch_at(p, offset):
        bases, _lasts, epochs, _counts = layout[p][:4]
        i = bisect.bisect_right(bases, offset) - 1
        return epochs[i] if i >= 0 else -1

    for fault, _victim, at, led in events:
        for p, epoch in sorted(led.items()):
            times, offsets = plog.ack_times[p], plog.ack_offsets[p]
            seconds = None
            for k in range(bisect.bisect_right(times, at), len(times)):
                if epoch_at(p, offsets[k]) > epoch:
                    seconds = times[k] - at
                    break
            result.failovers.append((fault, p, seconds))


def report(result, seed, minutes, kill_every, out):
    out("seed %d, %.1f minutes, a fault every %d s" % (seed, minutes, kill_every))
    out("faults: " + (", ".join("%s %d" % kv for kv in sorted(result.faults.items())) or "none"))
    measured = [s for _f, _p, s in result.failovers if s is not None]
    if measured:
        out("failover (fault on a partition's leader -> acknowledged again in a newer epoch): min %.2f s, "
            "median %.2f s, max %.2f s over %d" % (min(measured), statistics.median(measured), max(measured),
                                                   len(measured)))
        by = collections.defaultdict(list)
        for f, _p, s in result.failovers:
            if s is not None:
                by[f].append(s)
        out("  by fault: " + ", ".join("%s median %.2f max %.2f" % (f, statistics.median(v), max(v))
                                       for f, v in sorted(by.items())))
    missing = [(f, p) for f, p, s in result.failovers if s is None]
    if missing:
        out("failovers without a later acknowledgement in a newer epoch: %s" % missing)
    out("messages: %d sent, %d acknowledged, %d failed, in %.0f s: %.0f acknowledged/s"
        % (result.sent, result.acked, getattr(result, "failed", 0), result.seconds, getattr(result, "throughput", 0)))
    if hasattr(result, "records"):
        out("final log: %d records; present though not acknowledged: %d failed, %d never reported (allowed)"
            % (result.records, result.failed_present, result.unreported_present))
    for n in result.notes:
        out("note: " + n)
    for v in result.violations:
        out("VIOLATION: " + v)
    out("violations: %d" % len(result.violations))
    if result.kept:
        out("kept: " + " ".join(result.kept))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--kill-every", type=float, default=20, help="seconds between faults")
    ap.add_argument("--messages", type=int, default=0, help="stop producing after this many (0: until the end)")
    ap.add_argument("--in-flight", type=int, default=5000, help="messages sent and not yet reported, at most")
    ap.add_argument("--rate", type=int, default=0, help="messages a second at most (0: as fast as it goes)")
    ap.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                    help="a setting of every node (e.g. eddy.log.level=debug), repeatable")
    ap.add_argument("--faults", default=",".join(FAULTS),
                    help="the kinds of fault to choose from, comma-separated (default: all of %(default)s)")
    ap.add_argument("--power-cut-bin", default=None, metavar="PATH",
                    help="eddy-power-cut, for the nodes when power_cut is among the faults (default: "
                         "$EDDY_POWER_CUT_BIN, else tests/integration/eddy-power-cut next to $EDDY_BIN)")
    args = ap.parse_args()
    overrides = dict(o.split("=", 1) for o in args.override)
    faults = [f.strip() for f in args.faults.split(",") if f.strip()]
    unknown = [f for f in faults if f not in FAULTS]
    if unknown or not faults:
        ap.error("--faults: unknown %s (known: %s)" % (unknown or "(none given)", ",".join(FAULTS)))
    if "power_cut" in faults and not (args.power_cut_bin or power_cut_binary()):
        ap.error("power_cut needs eddy-power-cut: build it (cmake --build BUILD --target eddy-power-cut) and "
                 "name it with --power-cut-bin or EDDY_POWER_CUT_BIN, or leave power_cut out of --faults")
    result = run(args.minutes, args.seed, args.kill_every, args.messages, in_flight=args.in_flight,
                 rate=args.rate, overrides=overrides, faults=faults, power_cut_bin=args.power_cut_bin)
    sys.exit(1 if result.violations else 0)


if __name__ == "__main__":
    main()
