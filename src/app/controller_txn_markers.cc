// WriteTxnMarkers between nodes on the controller listener: the cluster's
// transaction coordinator (on the controller leader) asks the leader of
// each partition of a transaction for its COMMIT / ABORT marker, as Kafka's
// TransactionMarkerChannelManager sends WriteTxnMarkers to partition
// leaders. Any node answers it (the broker writes the markers it leads and
// refuses the rest per partition); the sending side is send_to_node, one
// connection and worker per destination node.
#include <algorithm>

#include "app/controller_answer.h"
#include "app/controller_quorum.h"
#include "port/log.h"

namespace eddy::app {

void ControllerQuorum::handle_write_txn_markers(net::ConnectionContext& connection, const protocol::FrameBytes& frame,
                                                const protocol::ParsedRequestHeader& h, net::ResponseSlot slot) {
  protocol::WriteTxnMarkersRequest req;
  if (Status s = protocol::decode_request_body(frame, h, &req); !s.ok()) {
    EDDY_LOG_WARN("controller listener: closing {}: {}", connection.peer(), s.message());
    slot.close_connection();
    return;
  }
  if (!markers_handler_ || stopped_) {
    // Shutting down: the coordinator finds the connection gone and asks
    // again (here after a restart, or the partitions' next leaders).
    slot.close_connection();
    return;
  }
  const uint64_t ticket = park(std::move(slot));
  std::shared_ptr<bool> alive = alive_;
  markers_handler_(std::move(req), [this, alive, ticket, h](protocol::WriteTxnMarkersResponse response) {
    if (!*alive) return;
    auto it = parked_.find(ticket);
    if (it == parked_.end()) return;
    net::ResponseSlot parked = std::move(it->second);
    parked_.erase(it);
    parked.respond(controller_answer(response, h));
  });
}

void ControllerQuorum::send_to_node(raft::NodeId node, LeaderForwarder::Call call, LeaderForwarder::Failed failed) {
  if (stopped_) {
    failed(Status::network("the controller quorum stopped"));
    return;
  }
  // A channel (a thread and a connection) only for a voter: every node of
  // an Eddy cluster is one, and the map stays bounded by them.
  if (std::none_of(config_.voters.begin(), config_.voters.end(),
                   [node](const raft::QuorumVoter& v) { return v.id == node; })) {
    failed(Status::network("node " + std::to_string(node) + " is not a voter of the controller quorum"));
    return;
  }
  std::unique_ptr<LeaderForwarder>& channel = node_channels_[node];
  if (!channel) {
    channel = std::make_unique<LeaderForwarder>(config_.voters, kNodeRequestTimeoutMs,
                                                "eddy-node-" + std::to_string(config_.node_id));
    channel->start();
  }
  channel->forward(node, std::move(call), std::move(failed));
}

}  // namespace eddy::app
