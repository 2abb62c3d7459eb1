// A cluster node's broker and its controller quorum: requests a follower
// carries to the leader, replica placement (replica_placement.h), proposal
// outcomes.
#include <functional>
#include <memory>

#include "broker/broker.h"
#include "broker/replica_placement.h"
#include "port/log.h"

namespace eddy::broker {

using protocol::ErrorCode;

bool Broker::forward_to_controller(RequestPtr& request, Refusal refuse) {
  if (controller_ == nullptr || controller_->is_leader()) return false;
  if (controller_->leader_id() < 0) {
    // Kafka's brokers answer NOT_CONTROLLER while there is none: clients retry.
    refuse(*this, *request, ErrorCode::kNotController);
    return true;
  }
  Request* raw = request.get();
  // std::function needs a copyable callable: the request travels in a shared_ptr.
  auto held = std::make_shared<RequestPtr>(std::move(request));
  controller_->forward(*raw, [this, held, refuse](const Status& s, protocol::OutputBuffer response) {
    Request& r = **held;
    if (!s.ok()) {
      EDDY_LOG_DEBUG("{} from {} not forwarded to the controller leader: {}", protocol::api_name(r.api_key()),
                     r.client.peer, s.to_string());
      refuse(*this, r, ErrorCode::kNotController);
      return;
    }
    r.reply->send(std::move(response));
  });
  return true;
}

std::vector<std::vector<int32_t>> Broker::assign_replicas(const std::string& topic, int32_t first, int32_t count,
                                                          int32_t replication_factor) const {
  // The nodes check_replication_factor counted (none registered yet: this one).
  std::vector<int32_t> nodes = cluster_node_ids();
  if (nodes.empty()) nodes.push_back(options_.node_id);
  // Kafka starts each topic's round robin at a random node; a hash of the
  // name spreads topics the same way and is the same on a retry.
  const size_t start = std::hash<std::string>()(topic) % nodes.size();
  return place_replicas(nodes, start, first, count, replication_factor);
}

ErrorCode Broker::proposal_error(const Status& s) {
  if (s.ok()) return ErrorCode::kNone;
  if (s.code() == Status::Code::kTimeout) return ErrorCode::kRequestTimedOut;
  // Leadership moved before the change was committed: Kafka's controllers
  // answer NOT_CONTROLLER, and clients retry on the new one.
  return ErrorCode::kNotController;
}

}  // namespace eddy::broker
