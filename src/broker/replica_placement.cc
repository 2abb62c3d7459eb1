#include "broker/replica_placement.h"

#include <algorithm>

namespace eddy::broker {

using protocol::ErrorCode;

namespace {

std::string join(const std::vector<int32_t>& ids) {
  std::string out;
  for (int32_t id : ids) out += (out.empty() ? "" : ", ") + std::to_string(id);
  return out;
}

}  // namespace

TopicResult check_replication_factor(int32_t replication_factor, size_t node_count) {
  if (replication_factor < 1) {
    return {ErrorCode::kInvalidReplicationFactor,
            "Replication factor must be larger than 0, or -1 to use the default value."};
  }
  if (static_cast<size_t>(replication_factor) > node_count) {
    return {ErrorCode::kInvalidReplicationFactor, "Replication factor: " + std::to_string(replication_factor) +
                                                      " larger than available brokers: " +
                                                      std::to_string(node_count) + "."};
  }
  return {};
}

std::vector<std::vector<int32_t>> place_replicas(std::span<const int32_t> nodes, size_t start, int32_t first,
                                                 int32_t count, int32_t replication_factor) {
  const size_t n = nodes.size();
  std::vector<std::vector<int32_t>> out;
  out.reserve(static_cast<size_t>(count));
  for (int32_t i = 0; i < count; ++i) {
    std::vector<int32_t> replicas;
    replicas.reserve(static_cast<size_t>(replication_factor));
    const size_t leader = start + static_cast<size_t>(first + i);
    for (int32_t r = 0; r < replication_factor; ++r) replicas.push_back(nodes[(leader + static_cast<size_t>(r)) % n]);
    out.push_back(std::move(replicas));
  }
  return out;
}

TopicResult check_replica_assignment(const std::vector<std::vector<int32_t>>& assignment,
                                     std::span<const int32_t> nodes, int32_t replication_factor) {
  for (size_t p = 0; p < assignment.size(); ++p) {
    const std::vector<int32_t>& replicas = assignment[p];
    const std::string where = " for partition id " + std::to_string(p) + ".";
    if (replicas.empty()) {
      return {ErrorCode::kInvalidReplicaAssignment, "Empty replica assignment" + where};
    }
    std::vector<int32_t> sorted = replicas;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      return {ErrorCode::kInvalidReplicaAssignment,
              "Duplicate brokers not allowed in replica assignment: " + join(replicas) + where};
    }
    for (int32_t id : replicas) {
      if (std::find(nodes.begin(), nodes.end(), id) == nodes.end()) {
        return {ErrorCode::kInvalidReplicaAssignment, "The manual partition assignment includes broker " +
                                                          std::to_string(id) + ", but no such broker is registered."};
      }
    }
    const size_t expected = replication_factor > 0 ? static_cast<size_t>(replication_factor) : assignment[0].size();
    if (replicas.size() != expected) {
      return {ErrorCode::kInvalidReplicaAssignment,
              "The manual partition assignment includes a partition with " + std::to_string(replicas.size()) +
                  " replica(s), but this is not consistent with previous partitions, which have " +
                  std::to_string(expected) + " replica(s)."};
    }
  }
  return {};
}

}  // namespace eddy::broker
