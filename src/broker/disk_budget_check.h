// The disk budget's say in topic administration: creating a topic, adding
// partitions or changing a topic's storage configs is refused with
// POLICY_VIOLATION (44) when the charges it adds (storage/disk_budget.h) do
// not fit in what is left of eddy.disk.budget.bytes. validate_only requests
// get the same answer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "broker/topic_table.h"
#include "storage/disk_budget.h"
#include "storage/log_config.h"
#include "storage/partition_log.h"

namespace eddy::broker {

// count new partitions of topic under config. what: "topic 'x'" or
// "2 new partitions of topic 'x'", the start of the refusal message.
TopicResult check_new_partitions(const storage::DiskBudget& budget, const std::string& what, int32_t count,
                                 const storage::LogConfig& config);

// The partitions of topic reconfigured to next.
TopicResult check_config_change(const storage::DiskBudget& budget, const std::string& topic,
                                const std::vector<storage::PartitionLog*>& partitions,
                                const storage::LogConfig& next);

}  // namespace eddy::broker
