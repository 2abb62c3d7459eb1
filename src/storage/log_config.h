// Per-partition storage settings, filled by the app from broker defaults and
// topic overrides. Field comments give the Kafka / Eddy key names; see
// src/storage/README.md for their meaning. This room never parses
// properties files.
#pragma once

#include <cstdint>
#include <limits>

#include "port/status.h"
#include "protocol/record_batch.h"

namespace eddy::storage {

// What happens when a new segment is needed, the budget is full and the
// oldest segment holds pinned data (offsets >= the pin).
enum class FullPolicy : uint8_t {
  kDropOldest,  // eddy.full.policy=drop-oldest: recycle it anyway (logged, counted)
  kReject,      // eddy.full.policy=reject: refuse the append with Status::Code::kLogFull
};

// What an acks=all produce waits for, and what the high watermark means.
enum class AcksAllWaitsFor : uint8_t {
  kDisk,       // eddy.acks.all.waits.for=disk: fdatasync covering the batch
  kPageCache,  // eddy.acks.all.waits.for=page-cache: the append itself
};

inline constexpr int64_t kNoLimit = -1;
// The default segment.bytes: 16 MiB bounds recovery work and preallocation
// on flash (Kafka's 1 GiB would preallocate a gigabyte per partition).
inline constexpr uint64_t kDefaultSegmentBytes = uint64_t{16} << 20;
// The largest segment file: Kafka's segment.bytes is an int, and byte
// positions in a segment fit the uint32_t of SegmentIndex::Entry.
inline constexpr uint64_t kMaxSegmentBytes = static_cast<uint64_t>(std::numeric_limits<int32_t>::max());
inline constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

struct LogConfig {
  // segment.bytes / log.segment.bytes: size of every segment file,
  // preallocated when the file is created. 1 KiB .. kMaxSegmentBytes
  // (2 GiB - 1). Eddy's default is gateway-sized (16 MiB), not Kafka's 1 GiB.
  uint64_t segment_bytes = kDefaultSegmentBytes;
  // retention.bytes / log.retention.bytes: the partition's disk budget,
  // rounded up to whole segments (at least 2). kNoLimit: the ring grows.
  int64_t retention_bytes = kNoLimit;
  // retention.ms / log.retention.ms: whole segments whose newest timestamp is
  // older are dropped (never the active segment). kNoLimit: keep forever.
  int64_t retention_ms = 7LL * 24 * 3600 * 1000;
  // flush.messages / log.flush.interval.messages: in page-cache mode, sync
  // after this many appended records. kNever: only on roll / by time.
  int64_t flush_interval_messages = kNever;
  // flush.ms / log.flush.interval.ms: in page-cache mode, no record stays
  // unsynced longer than this. kNever: only on roll / by count.
  int64_t flush_interval_ms = kNever;
  // index.interval.bytes / log.index.interval.bytes: bytes between two
  // entries of the sparse offset index.
  uint32_t index_interval_bytes = 4096;
  // message.timestamp.type / log.message.timestamp.type.
  protocol::TimestampType timestamp_type = protocol::TimestampType::kCreateTime;
  // eddy.full.policy.
  FullPolicy full_policy = FullPolicy::kDropOldest;
  // eddy.acks.all.waits.for.
  AcksAllWaitsFor acks_all_waits_for = AcksAllWaitsFor::kDisk;
};

// kInvalidArgument when a value is outside the allowed range.
Status validate(const LogConfig& config);

// Number of segment files the budget allows (0: unlimited).
uint64_t ring_segments(const LogConfig& config);

}  // namespace eddy::storage
