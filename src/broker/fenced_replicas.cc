#include "broker/fenced_replicas.h"

#include <algorithm>

#include "protocol/errors.h"

namespace eddy::broker {

void describe_fenced_replicas(const std::set<int32_t>& fenced, bool leader_seen_here,
                              protocol::MetadataResponse::MetadataResponsePartition* out) {
  if (fenced.empty()) return;
  if (out->leader_id >= 0 && fenced.count(out->leader_id) > 0 && !leader_seen_here) {
    out->leader_id = -1;
    out->error_code = protocol::to_int(protocol::ErrorCode::kLeaderNotAvailable);
  }
  auto offline = [&](int32_t node) { return node != out->leader_id && fenced.count(node) > 0; };
  out->offline_replicas.clear();
  for (int32_t node : out->replica_nodes) {
    if (offline(node)) out->offline_replicas.push_back(node);
  }
  std::erase_if(out->isr_nodes, offline);
}

}  // namespace eddy::broker
