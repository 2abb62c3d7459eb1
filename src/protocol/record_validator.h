// Record-level validation of a magic-2 batch before it is appended, as
// Kafka's LogValidator does for what a client sends: whatever a producer
// sends, what is stored must be readable by every consumer.
//
// The records are walked in place for an uncompressed batch (no copy) and
// through a RecordStream for a compressed one (decompressed into a small
// buffer chunk by chunk; the decompressed batch is never held in memory and
// the stored bytes stay the producer's). Key, value and header bytes are
// skipped, never copied. The walker reads the records as one stream, as
// Kafka does: a record's fields are read in order and must then have used
// exactly the length the record declared.
//
// Faults and Kafka's answers (checked against Apache Kafka 4.4 in
// tests/integration/test_record_validation.py):
//   - malformed records (a varint too long or cut short, a length past the
//     end, a negative header count, a record of another length than it
//     declares, fewer or more records than recordCount, bytes after the
//     last record, a compressed stream that does not decompress):
//     INVALID_RECORD. Where Kafka answers UNKNOWN_SERVER_ERROR (an
//     exception it does not catch, e.g. the length varint of a record too
//     long in an uncompressed batch) Eddy answers INVALID_RECORD as Kafka
//     does for the same fault compressed.
//   - On purpose stricter than Kafka (it stores or rewrites these, Eddy
//     never rewrites a batch): lengths below -1 (Kafka reads them as
//     null), offset deltas other than 0, 1, 2, ... (Kafka stores them in an
//     uncompressed batch, so consumers see offsets that are not the log's,
//     and re-compresses a compressed one), a compressed record whose fields
//     run past its declared length. INVALID_RECORD.
//   - A record larger than max.decompressed.message.bytes when
//     decompressed: INVALID_RECORD (Kafka 4.4's topic config).
//   - A compressed batch that decompresses to more than the batch bound
//     (a decompression bomb): MESSAGE_TOO_LARGE, after at most that many
//     bytes of work. Java producers split a batch on that answer.
//   - Timestamps (CreateTime topics): a record older than
//     message.timestamp.before.max.ms or newer than
//     message.timestamp.after.max.ms against the broker's clock, or a batch
//     a producer marked LogAppendTime on a LogAppendTime topic:
//     INVALID_TIMESTAMP with record_errors naming each bad record (their
//     index and message, as Kafka; at most kMaxRecordErrors of them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "protocol/errors.h"
#include "protocol/record_batch.h"

namespace eddy::protocol {

// The decompressed records section of a compressed batch, read in order.
class RecordStream {
 public:
  enum class Result { kOk, kCorrupt, kTooLarge };
  virtual ~RecordStream() = default;
  // Fills up to into.size() bytes, *got = 0 at the end of the stream.
  // kCorrupt (with *error) when the compressed data is corrupt; kTooLarge
  // when the stream can tell without decompressing that it holds more than
  // the bound it was opened with.
  virtual Result read(std::span<uint8_t> into, size_t* got, std::string* error) = 0;
};

// Opens the decompressed stream of a batch's records section; nullptr when
// the codec is not built in (the records are then not inspected).
using RecordStreamFactory =
    std::function<std::unique_ptr<RecordStream>(Compression codec, std::span<const uint8_t> compressed)>;

struct RecordRules {
  TimestampType topic_timestamp_type = TimestampType::kCreateTime;
  int64_t now_ms = 0;
  int64_t timestamp_before_max_ms = INT64_MAX;
  int64_t timestamp_after_max_ms = INT64_MAX;
  // max.decompressed.message.bytes: one record's size, compressed batches.
  int64_t max_decompressed_record_bytes = INT64_MAX;
  // The most a compressed batch may decompress to.
  uint64_t max_decompressed_batch_bytes = 64ull << 20;
  // Compressed batches are walked only with a factory and when enabled
  // (eddy.validate.compressed.records).
  bool validate_compressed = true;
  const RecordStreamFactory* open_stream = nullptr;
};

struct RecordError {
  int32_t index = 0;
  std::string message;
};

inline constexpr size_t kMaxRecordErrors = 100;

struct RecordVerdict {
  ErrorCode error = ErrorCode::kNone;
  std::string message;                    // why, for error_message and the log
  std::vector<RecordError> record_errors;  // INVALID_TIMESTAMP: the bad records
  // The newest record timestamp (CreateTime), -1 when no record has one
  // or the records were not walked (compressed, no codec).
  int64_t max_timestamp = -1;
  bool walked = false;  // false: a compressed batch whose codec is not built in, or validation off
};

// REQUIRES: batch passed RecordBatchView::parse (header consistent).
RecordVerdict validate_batch_records(const RecordBatchView& batch, const RecordRules& rules);

}  // namespace eddy::protocol
