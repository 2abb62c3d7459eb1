// Produce batching without I/O: records collect per partition into an open
// RecordBatch; a batch is sealed (built, compressed, CRC set) when the next
// record would take it past batch_bytes, or on drain. The blocking Producer
// and, later, the forwarder's event-driven sender send what drain() returns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "port/status.h"
#include "protocol/record_batch.h"

namespace eddy::client {

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;

  std::string to_string() const { return topic + "-" + std::to_string(partition); }
  auto operator<=>(const TopicPartition&) const = default;
};

// A finished batch: magic 2, base offset 0 (the broker assigns offsets), no
// producer id (not idempotent), CRC set.
struct SealedBatch {
  TopicPartition tp;
  std::vector<uint8_t> bytes;
  int32_t record_count = 0;
};

struct AccumulatorOptions {
  // Target size of a batch before compression. A record larger than this
  // gets a batch of its own.
  size_t batch_bytes = 16384;
  protocol::Compression compression = protocol::Compression::kNone;
};

class RecordAccumulator {
 public:
  explicit RecordAccumulator(AccumulatorOptions options) : options_(options) {}

  // Adds a record to tp's open batch, sealing that batch first when the
  // record would not fit. Fails only when sealing fails (compression).
  Status append(const TopicPartition& tp, const protocol::RecordInput& record);
  // Seals every open batch.
  Status seal_all();
  // Moves out the sealed batches, oldest first.
  std::vector<SealedBatch> take_sealed();
  bool has_sealed() const { return !sealed_.empty(); }
  size_t open_batches() const { return open_.size(); }
  bool empty() const { return sealed_.empty() && open_.empty(); }

  // Upper bound of the bytes a record adds to an uncompressed batch.
  static size_t record_size_bound(const protocol::RecordInput& record);

 private:
  struct OpenBatch {
    protocol::RecordBatchBuilder builder;
    size_t bytes = protocol::batch_layout::kHeaderSize;
  };
  Status seal(const TopicPartition& tp, OpenBatch& batch);

  AccumulatorOptions options_;
  std::map<TopicPartition, OpenBatch> open_;
  std::deque<SealedBatch> sealed_;
};

// Rewrites an uncompressed batch as a compressed one: same header with the
// codec in the attributes, records section compressed, length and CRC
// updated. REQUIRES: batch is a valid uncompressed batch.
Status compress_batch(const std::vector<uint8_t>& batch, protocol::Compression codec, std::vector<uint8_t>* out);

}  // namespace eddy::client
