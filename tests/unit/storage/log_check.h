// check_log: what every storage fault test asks of a recovered log.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/record_batch.h"
#include "storage/partition_log.h"
#include "storage_test_util.h"

namespace eddy::storage::testing {

// Records written with batch_for_offsets(first, n, min_value, max_value).
// Reads [log start, LEO) and checks that it is a gap-free sequence of valid
// batches whose records hold exactly what was written at their offsets.
// Returns a description of the first problem, empty when all is well.
inline std::string check_log(PartitionLog& log, size_t min_value, size_t max_value) {
  std::vector<uint8_t> bytes;
  int64_t next = 0;
  Status s = log.read_copy(log.log_start_offset(), SIZE_MAX, log.log_end_offset(), &bytes, &next);
  if (!s.ok()) return std::string("read: ") + s.to_string();
  protocol::BatchIterator it(bytes);
  protocol::RecordBatchView view;
  int64_t expected = -1;
  while (it.next(&view)) {
    if (expected >= 0 && view.base_offset() != expected) {
      return "gap: batch at " + std::to_string(view.base_offset()) + ", expected " + std::to_string(expected);
    }
    expected = view.next_offset();
    protocol::RecordIterator records(view);
    protocol::Record r;
    while (records.next(&r)) {
      int64_t offset = view.base_offset() + r.offset_delta;
      std::string key(reinterpret_cast<const char*>(r.key->data()), r.key->size());
      std::string value(reinterpret_cast<const char*>(r.value->data()), r.value->size());
      if (key != key_for_offset(offset) || value != value_for_offset(offset, min_value, max_value)) {
        return "wrong record at offset " + std::to_string(offset);
      }
    }
    if (records.error() != protocol::BatchError::kOk) return "bad records in batch " + std::to_string(view.base_offset());
  }
  if (it.error() != protocol::BatchError::kOk) return std::string("batch error: ") + protocol::batch_error_name(it.error());
  if (it.position() != bytes.size()) return "trailing bytes";
  if (!bytes.empty() && expected != log.log_end_offset()) return "log does not end at the LEO";
  if (next != log.log_end_offset()) return "read stopped early";
  return "";
}

}  // namespace eddy::storage::testing
