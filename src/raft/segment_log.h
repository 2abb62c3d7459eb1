// raft/segment_log.h — a RaftLog over a partition's segment files
// (storage::PartitionLog): the log of a partition's Raft group, or of the
// controller group.
//
// One entry is one RecordBatch v2 holding one record, at base offset = the
// entry's offset, with partitionLeaderEpoch = the entry's epoch:
//   kData          a plain batch (producer id -1); the record's value is the
//                  payload, its key null;
//   kLeaderChange  KRaft's LeaderChange control batch (protocol/
//                  control_batch.h), which every Kafka client skips; the
//                  payload is the record's value, a LeaderChangeMessage v0.
//                  An entry appended with an empty payload (the replica's
//                  own, at the start of its epoch) gets the message naming
//                  options.local_id as leader and options.voters as voters
//                  (granting voters are not known here: none), so that
//                  reading it back gives that message as its payload, and a
//                  follower stores the leader's message as it fetched it.
// Epochs come from the partition's epoch index (storage/epoch_index.h), so
// last_epoch, epoch_at and end_offset_for_epoch read no file.
//
// The start (a snapshot's end): delete_before moves the partition's log
// start there (DeleteRecords; the segments below it are recycled at the
// next rolls), reset_to replaces the partition's directory by an empty one
// whose log start is the snapshot's end. Neither records the start's epoch:
// the caller's snapshot store does (its latest snapshot), and open() is
// given it, so a crash between storing a snapshot and moving the start is
// finished there.
//
// Threading: the thread that owns the Raft replica owns the SegmentLog and
// its PartitionLog.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "raft/raft_log.h"
#include "storage/flusher.h"
#include "storage/log_config.h"
#include "storage/partition_log.h"

namespace eddy::raft {

struct SegmentLogOptions {
  // Named as leader in the LeaderChange records this node writes.
  NodeId local_id = kNoNode;
  std::vector<NodeId> voters;
  // The timestamp of each batch, in milliseconds; empty: the wall clock.
  std::function<int64_t()> clock;
  // How long flush() waits for the flusher's sync.
  int64_t flush_timeout_ms = 30000;
};

class SegmentLog final : public RaftLog {
 public:
  // Opens (creating it when missing) the partition log in directory and
  // makes it start at `start`, the caller's latest snapshot ({0, 0}: none):
  // a log that starts below it is moved there (delete_before, or reset_to
  // when it does not hold the snapshot's last entry). kCorruption when the
  // log starts past it, or starts above 0 without one.
  // REQUIRES config has no retention (retention.bytes, retention.ms: the
  // start moves only through this class) and flusher outlives the log.
  static Status open(const std::string& directory, const storage::LogConfig& config, storage::Flusher* flusher,
                     SegmentLogOptions options, SnapshotId start, std::unique_ptr<SegmentLog>* out);

  SnapshotId start() const override { return start_; }
  Offset end_offset() const override { return log_->log_end_offset(); }
  Offset durable_offset() const override;
  Epoch last_epoch() const override;
  Epoch epoch_at(Offset offset) const override;
  // Every offset is a boundary: one entry per offset.
  Offset boundary_at_or_below(Offset offset) const override { return offset; }
  EpochEndOffset end_offset_for_epoch(Epoch epoch) const override;
  // Copies the batches (PartitionLog::read_copy) and decodes them, CRCs
  // checked: kCorruption for a batch that is not an entry as written here.
  Status read(Offset offset, size_t max_entries, std::vector<Entry>* out) const override;

  // Appends each entry as its batch. On an error after some were written,
  // those are truncated away again (best effort; the log refuses appends
  // anyway after a write error).
  Status append(const std::vector<Entry>& entries) override;
  // PartitionLog::truncate_to: durable when it returns.
  Status truncate_to(Offset offset) override;
  // Requests a sync and waits for it (kIOError when it failed or timed out).
  Status flush() override;
  // Flushes up to id first (DeleteRecords stays below the durable offset).
  Status delete_before(SnapshotId id) override;
  Status reset_to(SnapshotId id) override;

  // A clean close of the partition log (its checkpoint written).
  Status close() { return log_->close(); }
  storage::PartitionLog* partition_log() const { return log_.get(); }

 private:
  SegmentLog(std::string directory, const storage::LogConfig& config, storage::Flusher* flusher,
             SegmentLogOptions options)
      : directory_(std::move(directory)), config_(config), flusher_(flusher), options_(std::move(options)) {}
  // Moves the start to `start` after open (see open()).
  Status start_at(SnapshotId start);
  // The batch that stores entry (kInvalidArgument for a leader-change
  // payload that is not a LeaderChangeMessage).
  Status encode_entry(const Entry& entry, int64_t timestamp_ms, std::vector<uint8_t>* batch) const;

  const std::string directory_;
  const storage::LogConfig config_;
  storage::Flusher* const flusher_;
  const SegmentLogOptions options_;
  std::unique_ptr<storage::PartitionLog> log_;
  SnapshotId start_;
};

}  // namespace eddy::raft
