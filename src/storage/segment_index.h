// The in-memory index of one segment: a sparse offset index (one entry every
// index.interval.bytes) and a coarser time index (the running maximum
// timestamp sampled every kTimeSampleStride offset entries), plus the
// segment's end. Rebuilt by the recovery scan or loaded from the segment's
// index file, which is written only after the segment's data is durable.
//
// Memory: 8 bytes per offset entry + 8 bytes per kTimeSampleStride entries,
// i.e. about 2.25 MiB per GiB of log at the default 4096-byte interval.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "port/status.h"

namespace eddy::storage {

// What the storage needs to know about one batch it holds.
struct BatchInfo {
  int64_t base_offset = 0;
  int64_t last_offset = 0;
  int64_t max_timestamp = -1;
  uint32_t size = 0;  // bytes, header included
};

class SegmentIndex {
 public:
  struct Entry {
    uint32_t relative_offset;  // batch base offset - segment base offset
    uint32_t position;         // byte position of that batch in the file
  };
  static constexpr size_t kTimeSampleStride = 8;

  SegmentIndex(int64_t base_offset, uint32_t interval_bytes);

  // Records the batch written at position. REQUIRES batches are added in
  // file order, position == end_position() and
  // info.base_offset == next_offset().
  void add(uint64_t position, const BatchInfo& info);

  int64_t base_offset() const { return base_offset_; }
  uint32_t interval_bytes() const { return interval_bytes_; }
  int64_t next_offset() const { return next_offset_; }
  uint64_t end_position() const { return end_position_; }
  // Position of the last batch (meaningless when empty()).
  uint64_t last_batch_position() const { return last_batch_position_; }
  // Largest batch maxTimestamp; -1 when empty.
  int64_t max_timestamp() const { return max_timestamp_; }
  bool empty() const { return end_position_ == 0; }
  size_t entry_count() const { return entries_.size(); }

  // The last entry whose batch starts at or before offset.
  // REQUIRES !empty() and offset >= base_offset().
  Entry floor_offset(int64_t offset) const;
  // The last entry whose position is <= position. REQUIRES !empty().
  Entry floor_position(uint64_t position) const;
  // An entry from which scanning forward reaches the first batch whose
  // maxTimestamp >= timestamp (every batch before it has a smaller one).
  // REQUIRES !empty().
  Entry floor_timestamp(int64_t timestamp) const;

  // Heap bytes held by the index.
  size_t memory_bytes() const;
  void shrink_to_fit() {
    entries_.shrink_to_fit();
    time_samples_.shrink_to_fit();
  }

  // The index file: all fields, big-endian, followed by a CRC-32C.
  std::vector<uint8_t> encode() const;
  // false when the bytes are not a well-formed index for base_offset.
  static bool decode(std::span<const uint8_t> bytes, int64_t base_offset, uint32_t interval_bytes,
                     SegmentIndex* out);

 private:
  int64_t base_offset_;
  uint32_t interval_bytes_;
  int64_t next_offset_;
  uint64_t end_position_ = 0;
  uint64_t last_batch_position_ = 0;
  uint64_t last_entry_position_ = 0;
  int64_t max_timestamp_ = -1;
  std::vector<Entry> entries_;
  // time_samples_[k]: largest maxTimestamp of the batches before
  // entries_[k * kTimeSampleStride] (-1 when there are none).
  std::vector<int64_t> time_samples_;
};

// Writes the index file at path (replacing it). No sync: the CRC lets a reader
// detect a torn file, which then costs a rescan, never wrong data.
Status write_index_file(const std::string& path, const SegmentIndex& index);
// Reads and decodes path; false when missing, unreadable or not valid.
bool read_index_file(const std::string& path, int64_t base_offset, uint32_t interval_bytes, SegmentIndex* out);

}  // namespace eddy::storage
