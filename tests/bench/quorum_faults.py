#!/usr/bin/python3
"""Faults on purpose against the controller quorum of a 3-node cluster
(issue 16): for MINUTES, every few seconds one random fault among SIGKILL of
the leader, SIGKILL of a follower, SIGSTOP of the leader for a while, a
restart with the data kept, a restart on a wiped data directory (started as
a wiped node: no eddy.quorum.bootstrap), a graceful SIGTERM; meanwhile every
node's controller listener is sampled with DescribeQuorum.

Checked, in the spirit of the Jepsen analyses of KRaft and Redpanda:
  - at most one leader per epoch across all samples (election safety);
  - every leader's log holds every entry seen committed before (its log
    end offset >= the largest high watermark seen so far: Raft's leader
    completeness; a wiped voter that voted at once would break it);
  - after the faults stop and every node runs: one leader within 20 s,
    every voter's log end equal to the leader's (they converge).
Printed: fault counts, failover times (leader killed -> a new leader
answers), the violations (none expected). Exit 1 on a violation.

Not run by ctest. Usage, from the repository root:
  EDDY_BIN=build/eddy EDDY_SOURCE_DIR=. /usr/bin/python3 tests/bench/quorum_faults.py [--minutes 10] [--seed N]
"""

import argparse
import os
import random
import shutil
import signal
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from cluster_fixture import EddyCluster  # noqa: E402
from eddy_fixture import wait_until  # noqa: E402


class Checker:
    def __init__(self):
        self.leaders = {}        # epoch -> node seen leading it
        self.max_hw = 0          # the largest committed high watermark seen
        self.violations = []
        self.samples = 0

    def sample(self, cluster):
        for i in cluster.running():
            v = cluster.quorum(i)
            if v is None or v["error"] != 0:
                continue
            self.samples += 1
            epoch, hw = v["epoch"], v["high_watermark"]
            other = self.leaders.setdefault(epoch, i)
            if other != i:
                self.violations.append("epoch %d led by both %d and %d" % (epoch, other, i))
            own_end = v["voters"].get(i, -1)
            if own_end < self.max_hw:
                self.violations.append("leader %d of epoch %d has log end %d, below the committed %d seen before"
                                       % (i, epoch, own_end, self.max_hw))
            self.max_hw = max(self.max_hw, hw)


def run(minutes, seed):
    rng = random.Random(seed)
    checker = Checker()
    faults = {}
    failovers = []
    with EddyCluster(3) as c:
        c.start_all()
        c.wait_for_leader(timeout=30)
        deadline = time.monotonic() + minutes * 60
        while time.monotonic() < deadline:
            leader = c.leader()
            fault = rng.choice(["kill_leader", "kill_follower", "pause_leader", "restart", "wipe", "term_leader"])
            victim = leader if (fault.endswith("leader") and leader is not None) else rng.choice(c.ids)
            faults[fault] = faults.get(fault, 0) + 1
            node = c.nodes[victim]
            started = time.monotonic()
            if fault in ("kill_leader", "kill_follower", "restart") and node.alive():
                node.kill()
            elif fault == "term_leader" and node.alive():
                node.stop()
            elif fault == "wipe" and node.alive():
                node.kill()
                shutil.rmtree(node.data_dir, ignore_errors=True)
            elif fault == "pause_leader" and node.alive():
                os.kill(node.eddy_pid(), signal.SIGSTOP)
            # Sample while the fault lasts (1-4 s), then heal it.
            until = time.monotonic() + rng.uniform(1, 4)
            new_leader_at = None
            while time.monotonic() < until:
                checker.sample(c)
                if fault in ("kill_leader", "pause_leader", "term_leader") and new_leader_at is None:
                    now = c.leader()
                    if now is not None and now != victim:
                        new_leader_at = time.monotonic()
                time.sleep(0.05)
            if new_leader_at is not None:
                failovers.append(new_leader_at - started)
            if fault == "pause_leader" and node.alive():
                os.kill(node.eddy_pid(), signal.SIGCONT)
            if not node.alive():
                c.start(victim, wiped=(fault == "wipe"))
            time.sleep(rng.uniform(0.5, 2))
            checker.sample(c)
        # Healed: everyone runs; one leader, equal log ends.
        try:
            leader = c.wait_for_leader(timeout=20)
            ends = c.quorum(leader)["voters"]
            wait_until(lambda: len(set(c.quorum(leader)["voters"].values())) == 1, 20, "equal log ends")
        except Exception as e:  # noqa: BLE001 - reported as a violation
            checker.violations.append("after healing: %s" % e)
    print("seed %d, %.1f minutes, %d samples of a leader" % (seed, minutes, checker.samples))
    print("faults: " + ", ".join("%s %d" % kv for kv in sorted(faults.items())))
    if failovers:
        print("failover (fault -> another node leads): median %.2f s, max %.2f s over %d"
              % (statistics.median(failovers), max(failovers), len(failovers)))
    print("epochs seen leading: %d, largest committed high watermark %d" % (len(checker.leaders), checker.max_hw))
    for v in checker.violations:
        print("VIOLATION: " + v)
    print("violations: %d" % len(checker.violations))
    return 1 if checker.violations else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    args = ap.parse_args()
    sys.exit(run(args.minutes, args.seed))


if __name__ == "__main__":
    main()
