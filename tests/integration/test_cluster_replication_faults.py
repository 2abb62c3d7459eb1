"""Replicated partitions under faults (issue 16), the short run of
tests/bench/replication_faults.py (`make replication-faults` runs it for 10
minutes): a 3-node cluster, a topic of 3 partitions with replication
factor 3 and min.insync.replicas=2, an idempotent acks=all producer and a
group consumer (the newest confluent-kafka, clients/confluent_numbered.py;
the producer at 40 000 messages a second), and for about 90 seconds a
fault every 11 s, each kind at least once (SIGKILL of a leader, SIGSTOP of
a leader, SIGKILL of a follower, a wiped data directory, SIGTERM of a
leader, a leader and a follower cut off the other nodes while clients still
reach them, a power cut of one node that drops its unsynced writes), in an
order the seed shuffles (the run goes on until each came). The Raft traffic
goes through a proxy per pair of nodes (EddyCluster(partitionable=True))
and the nodes run eddy-power-cut (tests/integration/eddy_power_cut.cc:
eddy with a simulated power cut on SIGUSR1), built with the tests
(EDDY_POWER_CUT_BIN, else next to EDDY_BIN).

Asserted: no violation of the bench's checker (every acknowledged number
present once where its acknowledgement said, no duplicate at all, send
order kept, the consumer never went back nor skipped nor saw what vanished,
byte-identical replicas, no crash or hang), and every failover (a fault on a
partition's leader -> the producer acknowledged again in a newer epoch)
under 10 s. The seed is 1 unless EDDY_FAULTS_SEED names another (printed;
pytest -s shows the run's lines).
"""

import os
import sys

import newest_clients as nc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import replication_faults as rf  # noqa: E402

RATE = 40000


def test_faults_lose_nothing_acknowledged_and_leaders_fail_over_within_10_s():
    python = nc.provision("confluent-kafka %s (venv)" % nc.CONFLUENT_KAFKA, nc.venv_python)
    # A fixed order of faults by default, so that a run is replayable (the
    # timing still differs from run to run); EDDY_FAULTS_SEED picks another.
    seed = int(os.environ.get("EDDY_FAULTS_SEED") or 1)
    # The clients' files and the nodes' directories are kept on a violation.
    # At most RATE messages a second keep the reading back and checking
    # afterwards short (the bench runs the producer flat out).
    power_cut_bin = rf.power_cut_binary()
    assert power_cut_bin, "eddy-power-cut is not built (cmake --build BUILD --target eddy-power-cut)"
    result = rf.run(minutes=1.5, seed=seed, kill_every=11, python=python, cover_all=True, rate=RATE,
                    power_cut_bin=power_cut_bin)
    assert result.violations == [], "seed %d: %d violations (kept: %s):\n%s" % (
        seed, len(result.violations), result.kept, "\n".join(result.violations)[:6000])
    assert sorted(result.faults) == sorted(rf.FAULTS), "each kind of fault at least once: %s" % dict(result.faults)
    assert result.acked > 0
    slow = [(f, p, s) for f, p, s in result.failovers if s is None or s >= 10]
    assert result.failovers and not slow, "seed %d: failovers of 10 s or more (or none): %s" % (seed, slow)
