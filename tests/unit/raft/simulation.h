// A deterministic simulation of one Raft group: N replicas on simulated
// clocks over a simulated network that drops, delays (and so reorders),
// duplicates and partitions messages; nodes that crash (losing their
// unflushed log suffix, as a power cut does), pause, restart, and restart
// with a wiped disk. Everything random comes from one seeded generator, so
// a seed replays a run exactly.
//
// check() verifies after every step:
//  - at most one leader per epoch (over the whole run);
//  - every node's entries below its high watermark equal the committed log
//    (the union of all high watermarks ever seen): logs agree below the HW
//    and a committed entry never changes;
//  - every committed entry is still held durably by a majority, counting a
//    node whose disk was wiped and that has not caught up yet as holding it
//    (the one loss the fault model allows);
//  - a node's high watermark never goes backwards while it runs;
//  - no data entry is committed twice (no duplicates).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "raft/memory_log.h"
#include "raft/memory_snapshot_store.h"
#include "raft/quorum_state_store.h"
#include "raft/replica.h"

namespace eddy::raft::sim {

struct Faults {
  double drop = 0.05;       // per message
  double duplicate = 0.02;  // per message
  int64_t max_delay_ms = 30;
};

struct Node {
  NodeId id = kNoNode;
  MemoryLog log;
  MemorySnapshotStore snapshots;  // bytes: encode_entries() of the entries it covers
  MemoryQuorumStateStore store;
  std::unique_ptr<Replica> replica;  // null while down
  bool paused = false;
  bool wiped = false;  // wiped and not yet caught up
  int incarnation = 0;
  Offset last_high_watermark = 0;
};

struct InFlight {
  int64_t deliver_at = 0;
  uint64_t seq = 0;
  int from_incarnation = 0;
  Message message;
};

struct Append {
  NodeId leader = kNoNode;
  Epoch epoch = 0;
  Offset offset = 0;
  std::string payload;
};

class Cluster {
 public:
  Cluster(int nodes, uint64_t seed);
  // Prints each fault and the cluster's state to stderr (replaying a seed).
  void set_trace(bool on) { trace_ = on; }

  // One step of step_ms: deliveries, polls, invariants. Returns the first
  // violation (empty when none).
  std::string step();
  // Snapshots taken and installed from a leader, over all nodes.
  size_t snapshots_taken() const { return snapshots_taken_; }
  size_t snapshots_installed() const { return snapshots_installed_; }
  void run_chaos(int64_t duration_ms);
  // Heals the network, restarts every node and runs until a leader has
  // committed an entry of its epoch and every acked append; a violation or
  // a timeout is returned.
  std::string heal_and_settle(int64_t limit_ms);

  const std::string& failure() const { return failure_; }
  const std::vector<Append>& acked() const { return acked_; }
  const std::vector<Entry>& committed() const { return committed_; }
  int64_t now() const { return now_; }
  std::string describe() const;

 private:
  std::string check();
  void deliver_due();
  void poll_all();
  void client_appends();
  void collect_acks();
  void random_fault();
  // Asynchronous logs: each node's outstanding flush completes with even
  // odds every step (a disk whose syncs take a few steps).
  void complete_flushes();
  // Now and then a node snapshots its committed entries (the simulation's
  // state machine is the list of committed entries itself).
  void maybe_snapshot(Node& node);
  // The entry at offset of node's state: from its snapshot below its log
  // start, from its log above. REQUIRES offset < node.log.end_offset().
  Entry entry_at(const Node& node, Offset offset) const;
  // The entries node's latest snapshot covers (checked against the
  // committed ones when first seen).
  std::vector<Entry> snapshot_entries(const Node& node) const;
  void crash(Node& node);
  void restart(Node& node, bool wipe);
  bool link_up(NodeId a, NodeId b) const;
  Node* leader_node();
  size_t majority() const { return nodes_.size() / 2 + 1; }
  void fail(std::string what);
  ReplicaOptions options_for(NodeId id, bool bootstrap) const;

  std::mt19937_64 rng_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<NodeId> voters_;
  std::vector<InFlight> network_;
  uint64_t seq_ = 0;
  int64_t now_ = 0;
  int64_t step_ms_ = 5;
  Faults faults_;
  std::map<NodeId, int> partition_;  // node -> group; equal groups connect

  std::map<Epoch, NodeId> leaders_;
  std::vector<Entry> committed_;
  std::set<std::string> committed_payloads_;
  std::vector<Append> pending_;
  std::vector<Append> acked_;
  uint64_t next_payload_ = 0;
  size_t snapshots_taken_ = 0;
  size_t snapshots_installed_ = 0;
  std::map<NodeId, SnapshotId> seen_snapshot_;  // each node's latest, as last checked
  std::map<NodeId, SnapshotId> own_snapshot_;   // each node's latest own (not installed)
  bool clients_on_ = true;  // off while settling, so that settling can end
  bool async_flush_ = false;  // every log's flush() only asks (half the seeds)
  std::string failure_;
  bool trace_ = false;
  void trace(const std::string& what) const;
};

}  // namespace eddy::raft::sim
