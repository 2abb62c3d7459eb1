// The sessions a controller leader keeps with the nodes, as Kafka's
// controller keeps its brokers' heartbeats: a node is alive while it
// fetches the controller log from the leader (every node is a voter of the
// controller quorum and fetches every few hundred milliseconds); one whose
// last fetch is broker.session.timeout.ms old is to be fenced, one that
// fetched since is to be unfenced (NodeFencingRecord). The leader itself is
// never to be fenced. A leader knows only the fetches of its own epoch:
// while its sessions are new (it has led for less than the timeout), a
// node without one is left as it is, neither fenced nor unfenced.
//
// Pure: what the quorum's view and the controller log say in, the changes
// to propose out (cluster_node_fencing.cc proposes them).
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "protocol/generated/controller_records.h"
#include "raft/quorum_runtime.h"

namespace eddy::app {

struct SessionRules {
  int32_t self = -1;
  int32_t session_timeout_ms = 9000;  // broker.session.timeout.ms
  bool sessions_new = false;          // this node has led for less than session_timeout_ms
};

// The voters of view whose fencing differs from what they ought to have,
// fenced being the fenced nodes as the controller log says. A fetch's age
// is measured against the leader's own entry of view (its clock when the
// view was made), so a step of the wall clock since changes nothing.
// Empty unless view is a leader's (it has voter progress).
std::vector<protocol::NodeFencingRecord::Node> fencing_changes(const raft::QuorumView& view,
                                                              const std::set<int32_t>& fenced,
                                                              const SessionRules& rules);

}  // namespace eddy::app
