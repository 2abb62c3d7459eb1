// The transaction coordinator's markers for partitions led by other nodes
// (broker/txn_markers.cc decides which): a WriteTxnMarkers to the leader's
// controller listener (ControllerQuorum::send_to_node), its answer back on
// the reactor.
#include "app/cluster_controller.h"
#include "port/log.h"

namespace eddy::app {

int32_t ClusterController::epoch() const {
  const raft::QuorumView view = quorum_->view();
  return view.leader_id == raft::kNoNode ? -1 : static_cast<int32_t>(view.epoch);
}

void ClusterController::send_txn_markers(int32_t node_id, protocol::WriteTxnMarkersRequest request,
                                         MarkersAnswer done) {
  ControllerQuorum* quorum = quorum_;
  // done runs once: on the reactor after an answer, or after the failure.
  auto call = [quorum, request, done](client::BrokerConnection& node, client::Deadline deadline) {
    protocol::WriteTxnMarkersResponse answer;
    Status s = node.call(request, 1, &answer, deadline);
    if (!s.ok()) return s;  // failed runs next
    quorum->post([done, answer = std::move(answer)] { done(Status(), answer); });
    return Status();
  };
  auto failed = [quorum, node_id, done](const Status& why) {
    EDDY_LOG_DEBUG("transactions: WriteTxnMarkers to node {}: {}", node_id, why.to_string());
    quorum->post([done, why] { done(why, {}); });
  };
  quorum_->send_to_node(node_id, std::move(call), std::move(failed));
}

}  // namespace eddy::app
