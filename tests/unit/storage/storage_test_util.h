// Helpers shared by the storage tests: temporary directories, batches with
// contents derived from their offsets, and small configurations.
#pragma once

#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "protocol/record_batch.h"
#include "storage/log_config.h"
#include "tests/unit/port/test_dir.h"

namespace eddy::storage::testing {

using eddy::testing::TempDir;

// Deterministic 64-bit mix (splitmix64).
inline uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The value of the record at offset: its length and bytes are a function
// of the offset alone, so any reader can check what it finds.
inline std::string value_for_offset(int64_t offset, size_t min_size, size_t max_size) {
  uint64_t h = mix(static_cast<uint64_t>(offset));
  size_t size = min_size + (max_size > min_size ? h % (max_size - min_size + 1) : 0);
  std::string value(size, '\0');
  for (size_t i = 0; i < size; ++i) value[i] = static_cast<char>('a' + (mix(h + i) % 26));
  return value;
}

inline std::string key_for_offset(int64_t offset) { return "k" + std::to_string(offset); }

// A batch whose records are meant to land at first_offset.. (the broker
// assigns the base offset; the records' contents name their intended
// offsets so that tests can check them).
inline std::vector<uint8_t> batch_for_offsets(int64_t first_offset, int records, size_t min_size, size_t max_size,
                                              int64_t timestamp = 1000) {
  protocol::RecordBatchBuilder builder;
  for (int i = 0; i < records; ++i) {
    builder.add(key_for_offset(first_offset + i), value_for_offset(first_offset + i, min_size, max_size),
                timestamp + i);
  }
  return builder.build();
}

inline std::vector<uint8_t> simple_batch(int records, size_t value_size, int64_t timestamp = 1000) {
  protocol::RecordBatchBuilder builder;
  for (int i = 0; i < records; ++i) builder.add("key", std::string(value_size, 'v'), timestamp + i);
  return builder.build();
}

// Small segments, page-cache durability, no retention.
inline LogConfig small_config(uint64_t segment_bytes = 4096, int64_t retention_bytes = kNoLimit) {
  LogConfig config;
  config.segment_bytes = segment_bytes;
  config.retention_bytes = retention_bytes;
  config.retention_ms = kNoLimit;
  config.index_interval_bytes = 256;
  config.acks_all_waits_for = AcksAllWaitsFor::kPageCache;
  return config;
}

}  // namespace eddy::storage::testing
