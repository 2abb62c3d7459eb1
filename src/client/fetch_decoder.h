// Turns the record batches of one fetched partition into records, without
// I/O: verifies each batch's CRC, skips control batches (transaction
// markers), decompresses compressed batches (compression.h), and delivers
// the records at or after the fetch position in offset order.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "port/status.h"
#include "protocol/record_batch.h"

namespace eddy::client {

// A record as delivered: its offset and timestamp resolved from the batch.
// The views in `record` live until the callback returns.
struct DecodedRecord {
  int64_t offset = 0;
  int64_t timestamp = 0;
  protocol::TimestampType timestamp_type = protocol::TimestampType::kCreateTime;
  const protocol::Record* record = nullptr;
};

// Returns false to stop delivery after this record.
using DecodedRecordCallback = std::function<bool(const DecodedRecord&)>;

class FetchDecoder {
 public:
  // max_decompressed_bytes bounds the memory one compressed batch may take.
  explicit FetchDecoder(size_t max_decompressed_bytes = 256u << 20) : max_decompressed_(max_decompressed_bytes) {}

  // Decodes `records` (a Fetch response's records for one partition) and
  // calls on_record for every record whose offset is >= position. Sets
  // *next_position to the offset after the last record delivered, or after
  // the last batch read when none was (control batches, records before the
  // position). A batch cut off at the end of `records` (the broker filled the
  // size limit) ends decoding without error, unless it is the first batch.
  // On error *next_position is where decoding stopped.
  Status decode(std::span<const uint8_t> records, int64_t position, const DecodedRecordCallback& on_record,
                int64_t* next_position);

 private:
  // Points *out at an uncompressed copy of a compressed batch (in scratch_).
  Status inflate(const protocol::RecordBatchView& batch, protocol::RecordBatchView* out);

  size_t max_decompressed_;
  std::vector<uint8_t> decompressed_;
  std::vector<uint8_t> scratch_;
};

}  // namespace eddy::client
