// RecordBatch (magic 2): a view over the bytes of one batch exactly as they
// travel on the wire and lie in a segment file, in-place patching of the
// fields the broker owns, record iteration for uncompressed batches, and a
// builder for tests and tools.
//
// Header layout (61 bytes, big-endian):
//    0 baseOffset i64          8 batchLength i32 (bytes after this field)
//   12 partitionLeaderEpoch i32 16 magic i8 (=2)  17 crc u32
//   21 attributes i16          23 lastOffsetDelta i32
//   27 baseTimestamp i64       35 maxTimestamp i64
//   43 producerId i64          51 producerEpoch i16
//   53 baseSequence i32        57 recordCount i32  61 records...
// The CRC-32C covers bytes [21, end). baseOffset and partitionLeaderEpoch lie
// outside it and can be patched without recomputing it.
//
// Magic 0/1 message sets share the first 17 bytes' framing (offset i64,
// size i32, crc u32, magic i8 at offset 16); they are recognised and reported
// as kUnsupportedMagic, never parsed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "protocol/big_endian.h"

namespace eddy::protocol {

namespace batch_layout {
inline constexpr size_t kBaseOffset = 0;
inline constexpr size_t kBatchLength = 8;
inline constexpr size_t kPartitionLeaderEpoch = 12;
inline constexpr size_t kMagic = 16;
inline constexpr size_t kCrc = 17;
inline constexpr size_t kAttributes = 21;
inline constexpr size_t kLastOffsetDelta = 23;
inline constexpr size_t kBaseTimestamp = 27;
inline constexpr size_t kMaxTimestamp = 35;
inline constexpr size_t kProducerId = 43;
inline constexpr size_t kProducerEpoch = 51;
inline constexpr size_t kBaseSequence = 53;
inline constexpr size_t kRecordCount = 57;
inline constexpr size_t kRecords = 61;
inline constexpr size_t kHeaderSize = 61;
// baseOffset + batchLength: the bytes not counted by batchLength.
inline constexpr size_t kLogOverhead = 12;
}  // namespace batch_layout

inline constexpr int8_t kRecordBatchMagic = 2;

namespace batch_attributes {
inline constexpr int16_t kCompressionMask = 0x07;
inline constexpr int16_t kLogAppendTime = 0x08;  // timestamp type bit
inline constexpr int16_t kTransactional = 0x10;
inline constexpr int16_t kControl = 0x20;
inline constexpr int16_t kDeleteHorizon = 0x40;
}  // namespace batch_attributes

enum class Compression : uint8_t { kNone = 0, kGzip = 1, kSnappy = 2, kLz4 = 3, kZstd = 4 };

enum class TimestampType : uint8_t { kCreateTime = 0, kLogAppendTime = 1 };

// Why a buffer is not a valid batch. Ordered by how far parsing got.
enum class BatchError : uint8_t {
  kOk = 0,
  kTruncated,         // fewer bytes than the header or than batchLength says
  kUnsupportedMagic,  // a magic 0/1 message set (old clients)
  kInvalid,           // malformed: bad magic value, length, counts or offsets
  kCrcMismatch,       // well-formed header but the CRC-32C does not match
};
const char* batch_error_name(BatchError error);


// A read-only view of one magic-2 batch. Holds a span, does not own it.
// Accessors REQUIRE a view produced by parse() (header present).
class RecordBatchView {
 public:
  RecordBatchView() = default;

  // Checks that bytes begin with a complete magic-2 batch (header fields
  // consistent, batchLength within bytes) and points the view at exactly
  // that batch (bytes may continue with more batches). Does NOT verify the
  // CRC: call crc_matches(). Consistency means: batchLength >= 49, and
  // lastOffsetDelta == recordCount - 1 with recordCount >= 1 (every batch a
  // producer may send), or recordCount == 0 and lastOffsetDelta == 0: an
  // empty batch spanning one offset, which only a partition leader writes
  // (the first batch of its epoch, src/raft/README.md "Partition groups";
  // Kafka's compaction leaves such batches too, and every client reads past
  // them). The produce path refuses empty batches (INVALID_RECORD).
  static BatchError parse(std::span<const uint8_t> bytes, RecordBatchView* out);

  std::span<const uint8_t> bytes() const { return bytes_; }
  // Total size: batchLength + 12.
  size_t size() const { return bytes_.size(); }

  int64_t base_offset() const;
  int32_t batch_length() const;
  int32_t partition_leader_epoch() const;
  int8_t magic() const;
  uint32_t crc() const;
  int16_t attributes() const;
  int32_t last_offset_delta() const;
  int64_t base_timestamp() const;
  int64_t max_timestamp() const;
  int64_t producer_id() const;
  int16_t producer_epoch() const;
  int32_t base_sequence() const;
  int32_t record_count() const;
  // No records (recordCount 0): see parse().
  bool is_empty() const { return record_count() == 0; }

  int64_t last_offset() const { return base_offset() + last_offset_delta(); }
  int64_t next_offset() const { return last_offset() + 1; }
  Compression compression() const;
  TimestampType timestamp_type() const;
  bool is_transactional() const;
  bool is_control() const;
  // The records section (after the 61-byte header), compressed or not.
  std::span<const uint8_t> records_bytes() const { return bytes_.subspan(batch_layout::kRecords); }

  uint32_t compute_crc() const;
  bool crc_matches() const { return compute_crc() == crc(); }

 private:
  std::span<const uint8_t> bytes_;
};

// Reads the size of the batch (or magic 0/1 message) that starts at bytes
// from its first 12 bytes: 12 + batchLength. kTruncated when fewer than 12
// bytes; kInvalid when batchLength is negative.
BatchError peek_batch_size(std::span<const uint8_t> bytes, size_t* size);

// In-place patching. Each REQUIRES batch to hold a whole batch that
// RecordBatchView::parse accepts.
void set_base_offset(std::span<uint8_t> batch, int64_t base_offset);
void set_partition_leader_epoch(std::span<uint8_t> batch, int32_t epoch);
// Recomputes and stores the CRC-32C.
void update_crc(std::span<uint8_t> batch);
// What Kafka does for a LogAppendTime topic: sets the timestamp-type bit and
// maxTimestamp to append_time_ms, then recomputes the CRC.
void set_log_append_time(std::span<uint8_t> batch, int64_t append_time_ms);
// Sets maxTimestamp (keeping the timestamp type) and recomputes the CRC.
void set_max_timestamp(std::span<uint8_t> batch, int64_t max_timestamp);
// Rewrites the idempotence fields (inside the CRC) and recomputes the CRC.
// The forwarder uses this when it re-sends a batch under its own producer id.
void rewrite_producer(std::span<uint8_t> batch, int64_t producer_id, int16_t producer_epoch,
                      int32_t base_sequence);

// Iterates over the batches of a buffer holding several concatenated batches
// (the records field of a Produce request, or a Fetch response). Each batch is
// parsed and its CRC verified (unless verify_crc is false); the first error
// stops iteration and is kept in error(). A buffer that ends exactly after a
// batch finishes with error() == kOk.
//
//   BatchIterator it(records);
//   RecordBatchView batch;
//   while (it.next(&batch)) { ... }
//   if (it.error() != BatchError::kOk) { reject at it.position() }
class BatchIterator {
 public:
  explicit BatchIterator(std::span<const uint8_t> bytes, bool verify_crc = true)
      : bytes_(bytes), verify_crc_(verify_crc) {}

  // Returns true and fills *batch with the next valid batch; false at the end
  // or at the first error.
  bool next(RecordBatchView* batch);
  BatchError error() const { return error_; }
  // Byte position of the next batch to read (of the failing batch after an
  // error).
  size_t position() const { return position_; }

 private:
  std::span<const uint8_t> bytes_;
  size_t position_ = 0;
  bool verify_crc_;
  BatchError error_ = BatchError::kOk;
};

// Validates a whole buffer of batches. Returns kOk when it holds at least one
// batch and every batch is valid. *batches (optional) gets the count.
BatchError validate_batches(std::span<const uint8_t> bytes, size_t* batches = nullptr);

// ---------------------------------------------------------------------------
// Records (uncompressed batches only; for tools and tests)
// ---------------------------------------------------------------------------

struct RecordHeader {
  std::string_view key;
  std::optional<std::span<const uint8_t>> value;  // nullopt: null value
};

// One record, pointing into the batch bytes.
struct Record {
  int8_t attributes = 0;
  int64_t timestamp_delta = 0;
  int32_t offset_delta = 0;
  std::optional<std::span<const uint8_t>> key;    // nullopt: null key
  std::optional<std::span<const uint8_t>> value;  // nullopt: null value (tombstone)
  std::vector<RecordHeader> headers;
};

// Iterates over the records of an uncompressed batch.
//   RecordIterator it(batch);
//   Record r;
//   while (it.next(&r)) { offset = batch.base_offset() + r.offset_delta; }
//   if (it.error() != BatchError::kOk) { malformed }
// A compressed batch yields no records and error() == kInvalid. After the
// last record, error() is kInvalid when the records do not end exactly at the
// batch end or their number differs from recordCount.
class RecordIterator {
 public:
  explicit RecordIterator(const RecordBatchView& batch);
  bool next(Record* record);
  BatchError error() const { return error_; }

 private:
  std::span<const uint8_t> records_;
  size_t position_ = 0;
  int32_t remaining_;
  BatchError error_ = BatchError::kOk;
  bool done_ = false;
};

// Walks every record of an uncompressed batch: kOk when the records are well
// formed, their count is recordCount and offset deltas are 0..count-1.
// Compressed batches are not inspected (kOk).
BatchError validate_records(const RecordBatchView& batch);

// ---------------------------------------------------------------------------
// Builder (tests and tools): an uncompressed magic-2 batch.
// ---------------------------------------------------------------------------

struct RecordInput {
  std::optional<std::span<const uint8_t>> key;
  std::optional<std::span<const uint8_t>> value;
  int64_t timestamp = 0;
  std::vector<std::pair<std::string_view, std::optional<std::span<const uint8_t>>>> headers;
};

// An empty batch (no records, one offset: RecordBatchView::parse) with both
// timestamps timestamp_ms, producer id -1, base offset 0, CRC set: the
// first batch a partition leader writes in its epoch.
std::vector<uint8_t> build_empty_batch(int64_t timestamp_ms);

class RecordBatchBuilder {
 public:
  RecordBatchBuilder& base_offset(int64_t v) { base_offset_ = v; return *this; }
  RecordBatchBuilder& partition_leader_epoch(int32_t v) { leader_epoch_ = v; return *this; }
  RecordBatchBuilder& producer(int64_t id, int16_t epoch, int32_t base_sequence) {
    producer_id_ = id;
    producer_epoch_ = epoch;
    base_sequence_ = base_sequence;
    return *this;
  }
  RecordBatchBuilder& attributes(int16_t v) { attributes_ = v; return *this; }

  // Convenience: key/value given as strings (copied).
  RecordBatchBuilder& add(std::string_view key, std::string_view value, int64_t timestamp);
  RecordBatchBuilder& add(const RecordInput& record);
  size_t record_count() const { return count_; }

  // REQUIRES: at least one record added. Returns the encoded batch with its
  // CRC set. The builder can be reused after clear().
  std::vector<uint8_t> build() const;
  void clear();

 private:
  int64_t base_offset_ = 0;
  int32_t leader_epoch_ = -1;
  int64_t producer_id_ = -1;
  int16_t producer_epoch_ = -1;
  int32_t base_sequence_ = -1;
  int16_t attributes_ = 0;
  int64_t base_timestamp_ = 0;  // the first record's timestamp
  int64_t max_timestamp_ = -1;
  int32_t count_ = 0;
  std::vector<uint8_t> records_;  // encoded records; timestamps relative to base_timestamp_
};

}  // namespace eddy::protocol
