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
// Threading: the thread that owns the Raft replica owns the SegmentLog and
// the PartitionLog (PartitionLog::set_owner names it, or nullptr).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "raft/raft_log.h"
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
  // Borrows log. kNotSupported when its log start is not 0 (entries are
  // contiguous from 0: a Raft log has no retention until snapshots exist).
  // REQUIRES log outlives the SegmentLog, nothing else appends to it,
  // truncates it or moves its log start (no retention.bytes, no
  // retention.ms, no DeleteRecords; a disk budget that forces recycling
  // makes reads below the new log start fail with kOutOfRange).
  static Status open(storage::PartitionLog* log, SegmentLogOptions options, std::unique_ptr<SegmentLog>* out);

  Offset end_offset() const override { return log_->log_end_offset(); }
  Offset durable_offset() const override;
  Epoch last_epoch() const override;
  Epoch epoch_at(Offset offset) const override;
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

  storage::PartitionLog* partition_log() const { return log_; }

 private:
  SegmentLog(storage::PartitionLog* log, SegmentLogOptions options) : log_(log), options_(std::move(options)) {}
  // The batch that stores entry (kInvalidArgument for a leader-change
  // payload that is not a LeaderChangeMessage).
  Status encode_entry(const Entry& entry, int64_t timestamp_ms, std::vector<uint8_t>* batch) const;

  storage::PartitionLog* const log_;
  const SegmentLogOptions options_;
};

}  // namespace eddy::raft
