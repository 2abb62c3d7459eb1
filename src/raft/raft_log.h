// raft/raft_log.h — the log a replica replicates, as an interface the caller
// implements (the partition's segment files later; MemoryLog in tests).
//
// Invariants every implementation keeps:
//  - entries are contiguous from offset 0 to end_offset() - 1;
//  - entry epochs never decrease along the log;
//  - durable_offset() <= end_offset(); entries below durable_offset()
//    survive a crash, entries at or above it may be lost (power loss of
//    unsynced writes) but only as a suffix.
#pragma once

#include <optional>
#include <vector>

#include "port/status.h"
#include "raft/types.h"

namespace eddy::raft {

class RaftLog {
 public:
  virtual ~RaftLog() = default;

  virtual Offset end_offset() const = 0;
  virtual Offset durable_offset() const = 0;
  // Epoch of the last entry; 0 for an empty log.
  virtual Epoch last_epoch() const = 0;
  // Epoch of the entry at offset. REQUIRES: 0 <= offset < end_offset().
  virtual Epoch epoch_at(Offset offset) const = 0;
  // Kafka's endOffsetForEpoch: the largest epoch in the log that is <= epoch
  // and the end offset of its entries (the start offset of the next larger
  // epoch, or end_offset() when it is the last). {0, 0} when every entry's
  // epoch is larger than epoch (or the log is empty).
  virtual EpochEndOffset end_offset_for_epoch(Epoch epoch) const = 0;
  // Replaces *out with up to max_entries entries from offset (none at or
  // past the end). An error (corrupt or unreadable storage) leaves *out
  // empty.
  virtual Status read(Offset offset, size_t max_entries, std::vector<Entry>* out) const = 0;

  // Appends entries at end_offset(). Fails (invalid argument) when an
  // entry's epoch is below last_epoch() or is 0; nothing is appended then.
  virtual Status append(const std::vector<Entry>& entries) = 0;
  // Removes every entry at or after offset. REQUIRES: offset <= end_offset().
  virtual Status truncate_to(Offset offset) = 0;
  // Makes every entry below end_offset() durable.
  virtual Status flush() = 0;
};

// Checks that entries may be appended after a log whose last epoch is
// last_epoch (shared by the implementations).
Status check_appendable(Epoch last_epoch, const std::vector<Entry>& entries);

}  // namespace eddy::raft
