#include "broker/disk_budget_check.h"

#include "port/log.h"

namespace eddy::broker {
namespace {

// "... but the disk budget eddy.disk.budget.bytes=N (X) has Y left (Z used)."
std::string budget_state(const storage::DiskBudget& budget) {
  return "the disk budget eddy.disk.budget.bytes=" + std::to_string(budget.limit_bytes()) + " (" +
         storage::human_bytes(budget.limit_bytes()) + ") has " + storage::human_bytes(budget.free_bytes()) + " left (" +
         storage::human_bytes(budget.used_bytes()) + " used)";
}

// "4 partitions x 2 segments of 16 MiB"
std::string layout(int64_t partitions, const storage::LogConfig& config) {
  const uint64_t segments = storage::reserved_segments(config);
  return std::to_string(partitions) + (partitions == 1 ? " partition x " : " partitions x ") +
         std::to_string(segments) + (segments == 1 ? " segment of " : " segments of ") +
         storage::human_bytes(config.segment_bytes);
}

TopicResult refuse(std::string message) {
  EDDY_LOG_WARN("refused: {}", message);
  return TopicResult{protocol::ErrorCode::kPolicyViolation, std::move(message)};
}

}  // namespace

TopicResult check_new_partitions(const storage::DiskBudget& budget, const std::string& what, int32_t count,
                                 const storage::LogConfig& config) {
  const uint64_t need = static_cast<uint64_t>(count) * storage::partition_reservation_bytes(config);
  if (budget.has_room(need)) return {};
  return refuse(what + " needs " + storage::human_bytes(need) + " of disk (" + layout(count, config) +
                ", with their indexes) but " + budget_state(budget));
}

TopicResult check_config_change(const storage::DiskBudget& budget, const std::string& topic,
                                const std::vector<storage::PartitionLog*>& partitions,
                                const storage::LogConfig& next) {
  uint64_t now = 0;
  uint64_t after = 0;
  for (const storage::PartitionLog* log : partitions) {
    if (log == nullptr) continue;  // held by other nodes
    now += log->budget_charge();
    after += log->budget_charge_for(next);
  }
  if (after <= now || budget.has_room(after - now)) return {};
  return refuse("the new configs of topic '" + topic + "' need " + storage::human_bytes(after - now) + " more disk (" +
                layout(static_cast<int64_t>(partitions.size()), next) + ", with their indexes) but " +
                budget_state(budget));
}

}  // namespace eddy::broker
