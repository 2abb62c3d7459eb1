#include "broker/replicated_partition.h"

namespace eddy::broker {

using protocol::ErrorCode;

ErrorCode leader_error(const ReplicaStatus& status, int32_t current_leader_epoch) {
  if (current_leader_epoch >= 0) {
    if (current_leader_epoch < status.leader_epoch) return ErrorCode::kFencedLeaderEpoch;
    if (current_leader_epoch > status.leader_epoch) return ErrorCode::kUnknownLeaderEpoch;
  }
  // A leader without its majority still serves what is committed.
  return status.leader || status.without_majority ? ErrorCode::kNone : ErrorCode::kNotLeaderOrFollower;
}

bool leader_hint(const ReplicaStatus& status, ErrorCode error, int32_t self, LeaderHint* hint) {
  if (status.leader_id < 0) return false;
  const bool hinted = (error == ErrorCode::kNotLeaderOrFollower && status.leader_id != self) ||
                      error == ErrorCode::kFencedLeaderEpoch;
  if (!hinted) return false;
  *hint = LeaderHint{status.leader_id, status.leader_epoch};
  return true;
}

bool enough_in_sync(const ReplicaStatus& status, int32_t min_insync_replicas) {
  return static_cast<int64_t>(status.isr.size()) >= min_insync_replicas;
}

std::string not_enough_replicas_message(const std::string& topic, int32_t partition, const ReplicaStatus& status,
                                        int32_t min_insync_replicas) {
  std::string isr;
  for (int32_t id : status.isr) isr += (isr.empty() ? "" : ", ") + std::to_string(id);
  return "The size of the current ISR Set(" + isr + ") is insufficient to satisfy the min.isr requirement of " +
         std::to_string(min_insync_replicas) + " for partition " + topic + "-" + std::to_string(partition);
}

void describe_replicated_partition(const ReplicaStatus& status,
                                   protocol::MetadataResponse::MetadataResponsePartition* out) {
  out->error_code = protocol::to_int(status.leader_id < 0 ? ErrorCode::kLeaderNotAvailable : ErrorCode::kNone);
  out->leader_id = status.leader_id < 0 ? -1 : status.leader_id;
  out->leader_epoch = status.leader_epoch;
  out->replica_nodes = status.replicas;
  // Only the leader measures its followers' lag: a follower's status.isr is
  // the one its leader published through the controller log (metadata.cc),
  // and until that arrives it names every replica, as if all were in sync.
  out->isr_nodes = status.isr.empty() ? status.replicas : status.isr;
  out->offline_replicas.clear();
}

storage::EpochEndOffset kafka_end_offset_for_epoch(const storage::EpochIndex& epochs, int32_t epoch,
                                                   int64_t log_end_offset) {
  const storage::EpochEndOffset undefined{storage::kNoLeaderEpoch, -1};
  const std::vector<storage::EpochStart>& entries = epochs.entries();
  if (epoch < 0 || entries.empty()) return undefined;
  if (entries.back().epoch == epoch) return {epoch, log_end_offset};
  // The first entry of a larger epoch, and the one before it (the largest
  // epoch <= epoch), if any.
  size_t higher = 0;
  while (higher < entries.size() && entries[higher].epoch <= epoch) ++higher;
  if (higher == entries.size()) return undefined;
  const int32_t floor = higher == 0 ? epoch : entries[higher - 1].epoch;
  return {floor, entries[higher].start_offset};
}

}  // namespace eddy::broker
