// Transactional batches for the storage tests: a producer's data batch with
// the transactional bit, and its COMMIT / ABORT marker.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/control_batch.h"
#include "protocol/record_batch.h"
#include "storage/partition_log.h"

namespace eddy::storage::testing {

inline std::vector<uint8_t> transactional_batch(int64_t producer_id, int records, int32_t base_sequence = 0,
                                                int64_t timestamp = 1000) {
  protocol::RecordBatchBuilder builder;
  builder.producer(producer_id, 0, base_sequence).attributes(protocol::batch_attributes::kTransactional);
  for (int i = 0; i < records; ++i) builder.add("k", "txn-" + std::to_string(producer_id), timestamp + i);
  return builder.build();
}

inline std::vector<uint8_t> marker_batch(int64_t producer_id, protocol::ControlType type, int64_t timestamp = 1000) {
  return protocol::build_control_batch(type, producer_id, 0, 0, timestamp);
}

// Appends batch; returns its base offset (-1 on failure).
inline int64_t append_batch(PartitionLog& log, std::vector<uint8_t> batch) {
  AppendResult result;
  Status s = log.append(batch, AppendOptions{}, &result);
  return s.ok() ? result.base_offset : -1;
}

}  // namespace eddy::storage::testing
