#include "storage/disk_budget.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "port/port.h"
#include "protocol/record_batch.h"
#include "storage/segment_index.h"

namespace eddy::storage {

namespace {
// Index file layout (segment_index.cc): a 56-byte header, 8 bytes per offset
// entry, 8 bytes per time sample, a 4-byte CRC.
constexpr uint64_t kIndexFileFixedBytes = 56 + 4;
constexpr uint64_t kIndexEntryBytes = 8;
constexpr uint64_t kTimeSampleBytes = 8;
// The partition directory and its two checkpoint files.
constexpr uint64_t kPartitionFiles = 3;
}  // namespace

uint64_t round_up_to_blocks(uint64_t bytes) { return (bytes + kDiskBlockBytes - 1) / kDiskBlockBytes * kDiskBlockBytes; }

uint64_t index_file_bound_bytes(uint64_t segment_bytes, uint32_t index_interval_bytes) {
  // An entry is added for a batch starting at least one interval after the
  // previous entry, and a batch is at least a header long.
  const uint64_t spacing = std::max<uint64_t>(index_interval_bytes, protocol::batch_layout::kHeaderSize);
  const uint64_t entries = (segment_bytes + spacing - 1) / spacing;
  const uint64_t samples = (entries + SegmentIndex::kTimeSampleStride - 1) / SegmentIndex::kTimeSampleStride;
  return kIndexFileFixedBytes + entries * kIndexEntryBytes + samples * kTimeSampleBytes;
}

uint64_t segment_footprint_bytes(uint64_t segment_bytes, uint32_t index_interval_bytes) {
  return round_up_to_blocks(segment_bytes) + round_up_to_blocks(index_file_bound_bytes(segment_bytes, index_interval_bytes));
}

uint64_t partition_overhead_bytes() { return kPartitionFiles * kDiskBlockBytes; }

uint64_t reserved_segments(const LogConfig& config) {
  uint64_t ring = ring_segments(config);
  return ring == 0 ? kMinRingSegments : ring;
}

uint64_t partition_reservation_bytes(const LogConfig& config) {
  return reserved_segments(config) * segment_footprint_bytes(config.segment_bytes, config.index_interval_bytes) +
         partition_overhead_bytes();
}

Status measure_data_directory(const std::string& directory, DataDirectorySpace* out) {
  port::FilesystemSpace fs;
  std::error_code ec = port::filesystem_space(directory, &fs);
  if (!ec) ec = port::allocated_bytes(directory, &out->directory_bytes);
  if (ec) return Status::from_error_code(ec);
  out->filesystem_bytes = fs.total_bytes;
  out->available_bytes = fs.available_bytes;
  return Status();
}

uint64_t default_budget_bytes(const DataDirectorySpace& space) {
  return std::min(space.filesystem_bytes / 2, space.available_bytes + space.directory_bytes);
}

std::string human_bytes(uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  size_t unit = 0;
  uint64_t scale = 1;
  while (unit + 1 < sizeof(kUnits) / sizeof(kUnits[0]) && bytes / scale >= 1024) {
    scale *= 1024;
    ++unit;
  }
  char text[32];
  if (bytes % scale == 0) {
    std::snprintf(text, sizeof(text), "%" PRIu64 " %s", bytes / scale, kUnits[unit]);
  } else {
    std::snprintf(text, sizeof(text), "%.1f %s", static_cast<double>(bytes) / static_cast<double>(scale),
                  kUnits[unit]);
  }
  return text;
}

}  // namespace eddy::storage
