// raft/raft_log.h — the log a replica replicates, as an interface the caller
// implements (the partition's segment files later; MemoryLog in tests).
//
// Invariants every implementation keeps:
//  - entries are contiguous from start().end_offset to end_offset() - 1,
//    each covering Entry::offsets offsets from its own; the offsets an
//    entry starts at and the end offset are its boundaries: reads,
//    truncations and snapshots happen only there (a replica only ever
//    names boundaries: log ends, epoch ends, high watermarks); the entries
//    below the start are gone, covered by the snapshot start() names
//    (raft/snapshot_store.h), and the start counts as an entry of
//    start().epoch at start().end_offset - 1 for every epoch question;
//  - entry epochs never decrease along the log (start().epoch included);
//  - durable_offset() <= end_offset(); entries below durable_offset()
//    survive a crash, entries at or above it may be lost (power loss of
//    unsynced writes) but only as a suffix; a change of the start is
//    durable when delete_before() or reset_to() returns, a truncation when
//    truncate_to() returns;
//  - flush() may be synchronous (durable_offset() == end_offset() when it
//    returns) or asynchronous (it asks, and durable_offset() catches up
//    later): the replica never assumes the former, so that a log whose
//    syncs run on another thread (a partition's flusher) never blocks the
//    thread that drives the replica.
#pragma once

#include <optional>
#include <vector>

#include "port/status.h"
#include "raft/types.h"

namespace eddy::raft {

class RaftLog {
 public:
  virtual ~RaftLog() = default;

  // Where the log starts: {0, 0} for a log from offset 0, else the
  // snapshot that covers the entries below it.
  virtual SnapshotId start() const = 0;
  virtual Offset end_offset() const = 0;
  virtual Offset durable_offset() const = 0;
  // Epoch of the last entry; start().epoch when the log holds no entry past
  // its start (0 for an empty log from 0).
  virtual Epoch last_epoch() const = 0;
  // Epoch of the entry covering offset.
  // REQUIRES: start().end_offset <= offset < end_offset().
  virtual Epoch epoch_at(Offset offset) const = 0;
  // The boundary at or below offset: where the entry covering offset
  // starts (offset itself at a boundary). A follower truncating to the end
  // of a diverging epoch takes the whole entry holding that end, as Kafka
  // drops the whole batch (another leader's entries may split the offsets
  // differently). REQUIRES: start().end_offset <= offset <= end_offset().
  virtual Offset boundary_at_or_below(Offset offset) const = 0;
  // Kafka's endOffsetForEpoch: the largest epoch in the log that is <= epoch
  // and the end offset of its entries (the start offset of the next larger
  // epoch, or end_offset() when it is the last); the start counts as an
  // entry of start().epoch. {0, 0} when every entry's epoch, the start's
  // included, is larger than epoch (or the log is empty from 0).
  virtual EpochEndOffset end_offset_for_epoch(Epoch epoch) const = 0;
  // Replaces *out with up to max_entries entries from offset (none at or
  // past the end, none for a negative offset). An offset from 0 to below the
  // start is kOutOfRange, one inside an entry kInvalidArgument; an error
  // (corrupt or unreadable storage) leaves *out empty.
  virtual Status read(Offset offset, size_t max_entries, std::vector<Entry>* out) const = 0;

  // Appends entries at end_offset(). Fails (invalid argument) when an
  // entry's epoch is below last_epoch() or is 0, or it covers no offset (or
  // more than the log can hold in one entry); nothing is appended then.
  virtual Status append(const std::vector<Entry>& entries) = 0;
  // Removes every entry at or after offset.
  // REQUIRES: start().end_offset <= offset <= end_offset(), a boundary.
  virtual Status truncate_to(Offset offset) = 0;
  // Asks for every entry below end_offset() to become durable: done when
  // it returns (a synchronous log) or later (an asynchronous one), as
  // durable_offset() shows.
  virtual Status flush() = 0;

  // Drops the entries below id.end_offset, which the snapshot id now covers
  // (it is stored before this is called): the log starts at id. Fails
  // (invalid argument, nothing changed) unless start().end_offset <
  // id.end_offset <= end_offset() is a boundary and epoch_at(id.end_offset
  // - 1) == id.epoch. Durable when it returns.
  virtual Status delete_before(SnapshotId id) = 0;
  // Drops every entry and starts the log at id (a follower that stored the
  // leader's snapshot id): end_offset() == id.end_offset afterwards. Fails
  // (invalid argument) for an empty id. Durable when it returns.
  virtual Status reset_to(SnapshotId id) = 0;
};

// Checks that entries may be appended after a log whose last epoch is
// last_epoch (shared by the implementations).
Status check_appendable(Epoch last_epoch, const std::vector<Entry>& entries);
// Checks delete_before's REQUIRES on log (shared by the implementations).
Status check_deletable(const RaftLog& log, SnapshotId id);

}  // namespace eddy::raft
