// The controller quorum's configuration (Kafka's KRaft keys): who the
// voters are, which listener carries Raft traffic, the timeouts. Absent
// (controller.quorum.voters empty): a single node, exactly as before.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/config.h"
#include "net/listener_config.h"
#include "port/status.h"
#include "raft/quorum_voters.h"

namespace eddy::app {

struct QuorumConfig {
  int32_t node_id = 0;
  std::vector<raft::QuorumVoter> voters;  // node_id among them
  std::string listener;                   // the controller listener's name
  int32_t election_timeout_ms = 1000;
  int32_t fetch_timeout_ms = 2000;
  int32_t request_timeout_ms = 2000;
  bool bootstrap = false;  // eddy.quorum.bootstrap
  // metadata.log.max.record.bytes.between.snapshots
  int64_t snapshot_bytes = 1 << 20;
  // metadata.log.max.snapshot.interval.ms (0: no snapshots by time)
  int64_t snapshot_interval_ms = 3600000;
  // broker.session.timeout.ms: the leader fences a node that has not
  // fetched from it for this long (cluster_node_fencing.cc).
  int32_t session_timeout_ms = 9000;
};

// Reads and checks the keys against the parsed listeners: node.id is a
// voter; the first of controller.listener.names is one of the listeners,
// PLAINTEXT, not the only one (clients need another); a voter's own address
// names that listener's port unless it binds port 0. *out stays empty for a
// single node. kInvalidArgument naming the key otherwise.
Status quorum_config_from(const Config& config, const std::vector<net::ListenerConfig>& listeners,
                          std::optional<QuorumConfig>* out);

// Whether listener carries Raft traffic (its name is in
// controller.listener.names) rather than clients: never advertised.
bool is_controller_listener(const Config& config, const std::string& listener);

}  // namespace eddy::app
