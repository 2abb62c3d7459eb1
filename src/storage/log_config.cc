#include "storage/log_config.h"

#include <algorithm>

namespace eddy::storage {

Status validate(const LogConfig& c) {
  if (c.segment_bytes < 1024 || c.segment_bytes > kMaxSegmentBytes) return Status::invalid_argument("segment.bytes");
  if (c.retention_bytes < kNoLimit || c.retention_ms < kNoLimit) return Status::invalid_argument("retention");
  if (c.flush_interval_messages < 1 || c.flush_interval_ms < 0) return Status::invalid_argument("flush interval");
  if (c.index_interval_bytes == 0) return Status::invalid_argument("index.interval.bytes");
  return Status();
}

uint64_t ring_segments(const LogConfig& c) {
  if (c.retention_bytes < 0) return 0;
  uint64_t bytes = static_cast<uint64_t>(c.retention_bytes);
  return std::max<uint64_t>(2, bytes / c.segment_bytes + (bytes % c.segment_bytes != 0));
}

}  // namespace eddy::storage
