// The disk budget of the data directory (eddy.disk.budget.bytes): what all
// partitions together, plus the other files of the directory, may take on
// disk. See README.md, "The disk budget".
//
// Every partition is charged its footprint on the budget:
//   charge      = max(reservation, what its files take now)
//   reservation = R x segment footprint + partition overhead, where R is the
//                 ring size (retention.bytes in whole segments, at least 2),
//                 or 2 when retention.bytes = -1
//   segment footprint = segment.bytes rounded up to whole disk blocks, plus
//                 the largest index file such a segment can have
// used = the reserve for other files + the sum of all charges.
//
// Invariants kept by PartitionLog and the broker's topic table:
//   - a topic or partition is created, or a topic config changed, only when
//     the charges it adds fit in free_bytes();
//   - a partition adds a segment file only when its charge stays the same
//     (the file is within its reservation) or the growth fits in
//     free_bytes(); otherwise it recycles its oldest segment, as a full ring
//     does. So used_bytes() <= limit_bytes() holds whenever it held when the
//     limit was set. (A recycled file that a reader still sends from is
//     unlinked and replaced; it is not charged until the reader lets go.)
//
// Threading: owned by the LogManager, reactor thread only.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "port/status.h"
#include "storage/log_config.h"

namespace eddy::storage {

// Allocation unit assumed for every file (ext4, f2fs and xfs default).
inline constexpr uint64_t kDiskBlockBytes = 4096;
// Set aside for the files of the data directory that are not partitions:
// eddy.db and forward.db with their WAL and shared-memory files (SQLite
// checkpoints its WAL at 1000 pages, about 4 MiB), the lock file and the
// control socket.
inline constexpr uint64_t kOtherFilesReserveBytes = uint64_t{16} << 20;
// A ring needs two segments to recycle one while appending to the other.
inline constexpr uint64_t kMinRingSegments = 2;
inline constexpr uint64_t kUnlimitedBudget = std::numeric_limits<uint64_t>::max();

// bytes rounded up to whole kDiskBlockBytes blocks.
uint64_t round_up_to_blocks(uint64_t bytes);
// Largest index file (segment_index.h) of a segment of segment_bytes: one
// offset entry per index_interval_bytes at most, one time sample per 8 entries.
uint64_t index_file_bound_bytes(uint64_t segment_bytes, uint32_t index_interval_bytes);
// One segment file and its index file, in whole blocks.
uint64_t segment_footprint_bytes(uint64_t segment_bytes, uint32_t index_interval_bytes);
// The partition directory itself and its two checkpoint files.
uint64_t partition_overhead_bytes();
// Segments a partition reserves: ring_segments(config), or kMinRingSegments
// when retention.bytes is unbounded.
uint64_t reserved_segments(const LogConfig& config);
// What a new partition with config is charged.
uint64_t partition_reservation_bytes(const LogConfig& config);

// What the data directory's filesystem offers, measured at startup.
struct DataDirectorySpace {
  uint64_t filesystem_bytes = 0;  // size of the filesystem
  uint64_t available_bytes = 0;   // still free for an unprivileged process
  uint64_t directory_bytes = 0;   // already allocated under the data directory
};
// Measures the filesystem of directory (which must exist) and what is
// allocated under it.
Status measure_data_directory(const std::string& directory, DataDirectorySpace* out);
// The budget when eddy.disk.budget.bytes is not set: half of the filesystem,
// but never more than what is free plus what the data directory already
// holds (so that Eddy alone cannot fill the disk).
uint64_t default_budget_bytes(const DataDirectorySpace& space);

// For messages and tools: "16 MiB", "128.2 MiB", "512 B".
std::string human_bytes(uint64_t bytes);

class DiskBudget {
 public:
  explicit DiskBudget(uint64_t limit_bytes = kUnlimitedBudget) : limit_(limit_bytes) {}

  void set_limit(uint64_t limit_bytes) { limit_ = limit_bytes; }
  uint64_t limit_bytes() const { return limit_; }
  // kOtherFilesReserveBytes plus every charge.
  uint64_t used_bytes() const { return kOtherFilesReserveBytes + charged_; }
  // limit - used; 0 when the budget is overcommitted (a lower limit than
  // what existing partitions were promised).
  uint64_t free_bytes() const { return used_bytes() >= limit_ ? 0 : limit_ - used_bytes(); }
  bool has_room(uint64_t bytes) const { return bytes <= free_bytes(); }

  // A partition's charge moves from `from` to `to`. REQUIRES: `from` is
  // what that partition was charged so far (0 when new).
  void recharge(uint64_t from, uint64_t to) { charged_ = charged_ - from + to; }

 private:
  uint64_t limit_;
  uint64_t charged_ = 0;
};

}  // namespace eddy::storage
