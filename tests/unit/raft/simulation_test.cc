// Randomized deterministic simulation runs of 3- and 5-node groups under
// faults (simulation.h lists the invariants). EDDY_RAFT_SIM_RUNS sets the
// number of seeds per group size (1 000 each by default, 2 000 in all);
// EDDY_RAFT_SIM_SEED runs that one seed alone.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "port/log.h"
#include "simulation.h"

namespace eddy::raft::sim {
namespace {

uint64_t env_or(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v ? std::strtoull(v, nullptr, 10) : fallback;
}

struct Totals {
  size_t acked = 0;
  size_t committed = 0;
  size_t snapshots_taken = 0;
  size_t snapshots_installed = 0;
};

std::string run_one(int nodes, uint64_t seed, Totals* totals) {
  Cluster cluster(nodes, seed);
  if (std::getenv("EDDY_RAFT_SIM_SEED")) {
    cluster.set_trace(true);
    port::set_log_level(port::LogLevel::kDebug);
  }
  cluster.run_chaos(3000);
  // Liveness bound: a leader elected and everything caught up within 40
  // election timeouts of the network healing.
  std::string failure = cluster.failure().empty() ? cluster.heal_and_settle(6000) : cluster.failure();
  totals->acked += cluster.acked().size();
  totals->committed += cluster.committed().size();
  totals->snapshots_taken += cluster.snapshots_taken();
  totals->snapshots_installed += cluster.snapshots_installed();
  return failure;
}

void run_many(int nodes) {
  uint64_t runs = env_or("EDDY_RAFT_SIM_RUNS", 1000);
  uint64_t first = env_or("EDDY_RAFT_SIM_SEED", 0);
  if (std::getenv("EDDY_RAFT_SIM_SEED")) runs = 1;
  Totals totals;
  for (uint64_t seed = first; seed < first + runs; ++seed) {
    std::string failure = run_one(nodes, seed * 1000003 + static_cast<uint64_t>(nodes), &totals);
    ASSERT_EQ(failure, "") << nodes << " nodes, seed " << seed << " (EDDY_RAFT_SIM_SEED=" << seed << ")";
  }
  // The runs must have done something: appends acknowledged and committed.
  EXPECT_GT(totals.acked, runs * 5) << "too few acknowledged appends for the runs to mean anything";
  // ... and snapshots taken, and installed from leaders by lagging or wiped nodes.
  if (runs >= 100) {  // not for one seed replayed alone
    EXPECT_GT(totals.snapshots_taken, runs) << "too few snapshots taken";
    EXPECT_GT(totals.snapshots_installed, runs / 10) << "too few snapshots installed from a leader";
  }
  std::printf("%d nodes: %llu runs, %zu acked appends, %zu committed entries, %zu snapshots taken, %zu installed\n",
              nodes, static_cast<unsigned long long>(runs), totals.acked, totals.committed, totals.snapshots_taken,
              totals.snapshots_installed);
}

TEST(RaftSimulation, ThreeNodes) { run_many(3); }
TEST(RaftSimulation, FiveNodes) { run_many(5); }

}  // namespace
}  // namespace eddy::raft::sim
