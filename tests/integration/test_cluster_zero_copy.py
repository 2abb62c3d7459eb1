"""Zero copy between nodes (issue 16): a partition leader sends its
followers the partition's batches with sendfile(2), straight from its
segment files, as it does a client's fetch (test_zero_copy.py), and the
followers' fetches of every partition they follow on one leader node share
one request that the leader holds until there is something to send.

The three nodes run under `strace -f`; a topic with replication factor 3
gets 8 MiB of incompressible batches (acks=all) at its leader, and once
every replica holds them byte for byte the nodes stop. From strace's record
of their system calls:
  - the bytes sendfile() moved from the topic's segment files to sockets
    cover each batch twice (two followers);
  - no node read those segment files into memory (a fetch answer looks up
    where its batches start, a few small reads; copying them would read
    every byte);
  - ordinary writes to sockets carried far less than the data (headers, the
    produce requests' answers, Raft's other requests)."""

import collections
import os

import pytest

import kafka_wire as kw
from cluster_fixture import EddyCluster
from eddy_fixture import wait_until
from test_cluster_metadata import create_topic_at, metadata
from test_cluster_replication import agreed_leader, replicas_identical
from test_zero_copy import TRACED, fd_path, parse_strace, strace  # noqa: F401 - strace is a fixture

TOPIC = "zero-copy-replicated"
BATCHES = 16
RECORD_BYTES = 512 * 1024


@pytest.fixture(scope="module")
def replicated(strace):  # noqa: F811 - the imported fixture
    """{produced: [batch bytes], traces: [paths], leader}."""
    with EddyCluster(3) as c:
        traces = []
        for i in c.ids:
            node = c.nodes[i]
            traces.append(os.path.join(node.tmp, "strace.out"))
            node.wrapper = [strace, "-f", "--seccomp-bpf", "-yy", "-e", "trace=" + TRACED, "-e", "signal=none",
                            "-o", traces[-1]]
            # LeakSanitizer (EDDY_SANITIZE builds) cannot run under ptrace.
            node.env = {"ASAN_OPTIONS": ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"), "detect_leaks=0"]))}
        c.start_all()
        c.wait_for_leader(timeout=60)
        wait_until(lambda: all(len(metadata(c, i)[2]) == 3 for i in c.ids), 30, "three registered nodes")
        assert create_topic_at(c, 1, TOPIC, 1, replication=3) == (0, None)
        leader = wait_until(lambda: agreed_leader(c, topic=TOPIC), 30, "a leader of " + TOPIC)
        produced = []
        with kw.Connection(c.client_ports[leader], timeout=30) as conn:
            for j in range(BATCHES):
                batch = kw.record_batch([(b"zc-%d" % j, os.urandom(RECORD_BYTES), [])])
                error_code, _offset = kw.produce(conn, TOPIC, 0, batch, acks=-1)
                assert error_code == 0, "produce batch %d (acks=all)" % j
                produced.append(batch)
        wait_until(lambda: replicas_identical(c, c.ids, BATCHES, topic=TOPIC), 60,
                   "the three replicas holding the same %d batches" % BATCHES)
        for i in c.ids:
            assert c.nodes[i].stop() == 0, "node %d stops cleanly under strace" % i
        yield {"produced": produced, "traces": traces, "leader": leader}


@pytest.fixture(scope="module")
def seen(replicated):
    """What strace saw over all three nodes: bytes and calls by kind, and
    the largest read of the topic's segment files."""
    segment = "/%s-0/" % TOPIC
    bytes_by = collections.Counter()
    calls_by = collections.Counter()
    largest_read = 0
    for trace in replicated["traces"]:
        for name, args, result in parse_strace(trace):
            if result <= 0:
                continue
            first = fd_path(args)
            if name == "sendfile":
                src = fd_path(args.split(",", 1)[1]) if "," in args else ""
                if first.startswith("TCP:") and segment in src and src.endswith(".log"):
                    bytes_by["sendfile of the topic"] += result
                    calls_by["sendfile of the topic"] += 1
            elif name in ("write", "writev", "sendmsg", "sendto"):
                if first.startswith("TCP:"):
                    bytes_by["writes to sockets"] += result
            elif name in ("read", "readv", "pread64", "preadv", "preadv2"):
                if segment in first and first.endswith(".log"):
                    bytes_by["segment reads"] += result
                    calls_by["segment reads"] += 1
                    largest_read = max(largest_read, result)
    print("strace totals: %s; calls: %s" % (dict(bytes_by), dict(calls_by)))
    return bytes_by, calls_by, largest_read


def test_the_followers_fetched_every_batch_through_sendfile(replicated, seen):
    bytes_by, calls_by, _largest = seen
    data = sum(len(b) for b in replicated["produced"])
    assert bytes_by["sendfile of the topic"] >= 2 * data, \
        "sendfile moved each batch from the leader's segment files to both followers (%d >= 2 x %d in %d calls)" \
        % (bytes_by["sendfile of the topic"], data, calls_by["sendfile of the topic"])


def test_no_node_read_the_batches_into_memory(replicated, seen):
    bytes_by, calls_by, largest = seen
    data = sum(len(b) for b in replicated["produced"])
    assert bytes_by["segment reads"] < data // 10 and largest <= 65536, \
        "no node read the replicated batches into memory (%d bytes from segments in %d calls, largest %d)" \
        % (bytes_by["segment reads"], calls_by["segment reads"], largest)


def test_ordinary_socket_writes_carried_far_less_than_the_data(replicated, seen):
    bytes_by, _calls, _largest = seen
    data = sum(len(b) for b in replicated["produced"])
    assert bytes_by["writes to sockets"] < 2 * data // 10, \
        "ordinary writes to sockets carried headers and small answers only (%d bytes)" % bytes_by["writes to sockets"]
