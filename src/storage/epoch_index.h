// The leader epochs of one partition's log (Kafka's LeaderEpochFileCache):
// for each epoch present in the log, the offset of its first batch, taken
// from the batches' partitionLeaderEpoch field.
//
// Invariants:
//   - entries ascend strictly in epoch and in start offset;
//   - every entry's start offset lies in [log start, log end): appends add
//     an entry only for a batch whose epoch is larger than the last one
//     (a batch with a smaller epoch, or with no epoch (-1), belongs to the
//     entry before it, as Kafka ignores it), truncate_from() drops entries at
//     or after the new end, trim_before() moves the first one up to the new
//     log start.
//
// Kept in leader-epoch-checkpoint (checkpoint.h), written and synced by the
// owner BEFORE the first batch of a new epoch is written and after a
// truncation is durable, so that the file never lacks an epoch the log
// holds; entries it lists at or after the log end (a power cut took that
// batch back) are dropped at open. Without the file (a partition from an
// older version, or a damaged file) open rebuilds the index from the batch
// headers (scan_epochs).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "port/status.h"

namespace eddy::storage {

class Segment;

// Kafka's RecordBatch.NO_PARTITION_LEADER_EPOCH.
inline constexpr int32_t kNoLeaderEpoch = -1;

struct EpochStart {
  int32_t epoch = 0;
  int64_t start_offset = 0;
  bool operator==(const EpochStart&) const = default;
};

// An epoch and the end offset of its batches (Kafka's OffsetAndEpoch as
// endOffsetForEpoch answers it).
struct EpochEndOffset {
  int32_t epoch = 0;
  int64_t end_offset = 0;
  bool operator==(const EpochEndOffset&) const = default;
};

class EpochIndex {
 public:
  // Whether a batch of epoch appended now starts a new entry.
  bool starts_epoch(int32_t epoch) const { return epoch >= 0 && (entries_.empty() || epoch > entries_.back().epoch); }
  // REQUIRES starts_epoch(epoch) and start_offset > the last entry's start.
  void add(int32_t epoch, int64_t start_offset) { entries_.push_back(EpochStart{epoch, start_offset}); }
  // A batch read back in offset order (the header scan).
  void note_batch(int32_t epoch, int64_t base_offset) {
    if (starts_epoch(epoch)) add(epoch, base_offset);
  }

  // The last entry's epoch; kNoLeaderEpoch when empty.
  int32_t last_epoch() const { return entries_.empty() ? kNoLeaderEpoch : entries_.back().epoch; }
  // The epoch of the batch holding offset: that of the last entry starting
  // at or before it; kNoLeaderEpoch when none does.
  int32_t epoch_at(int64_t offset) const;
  // raft::RaftLog::end_offset_for_epoch (Kafka's endOffsetForEpoch): the
  // largest epoch <= epoch and the start of the next entry (log_end_offset
  // for the last); {0, 0} when every entry's epoch is larger, or none exists.
  EpochEndOffset end_offset_for_epoch(int32_t epoch, int64_t log_end_offset) const;

  // Drops the entries starting at or after offset (the log was truncated
  // to offset). Returns whether anything changed.
  bool truncate_from(int64_t offset);
  // The log start moved up to offset: entries that ended below it are
  // dropped and the one holding it starts there. Returns whether anything
  // changed.
  bool trim_before(int64_t offset);
  void clear() { entries_.clear(); }

  const std::vector<EpochStart>& entries() const { return entries_; }
  // As checkpoint fields: epoch, start offset, epoch, start offset, ...
  std::vector<int64_t> to_fields() const;
  // Replaces the entries with what to_fields() wrote; false (unchanged)
  // when fields are not that (odd count, epochs or offsets not ascending).
  bool from_fields(std::span<const int64_t> fields);

 private:
  std::vector<EpochStart> entries_;
};

// Feeds *index (note_batch) with the batches of segment, oldest first,
// reading only their headers, 4 KiB at a time. REQUIRES the segment's
// batches were validated (recovery did). Adds the bytes read to
// *bytes_read. kCorruption when a header does not fit what the index says.
Status scan_epochs(const Segment& segment, EpochIndex* index, uint64_t* bytes_read);

}  // namespace eddy::storage
