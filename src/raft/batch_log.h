// raft/batch_log.h — the log of a replicated partition's Raft group: a
// RaftLog over the partition's own segment files whose entries are the
// producers' record batches, and the SnapshotStore that goes with it.
//
// Entries (src/raft/README.md, "Partition groups"):
//   kData          one record batch as a producer (or the leader's
//                  transaction coordinator) wrote it; the payload is the
//                  whole batch, entry.offsets its lastOffsetDelta + 1;
//   kLeaderChange  an empty batch (no records, one offset, producer id -1,
//                  not a control batch), the first batch of a leader's
//                  epoch; every client of the test matrix reads past it.
// The batch's partitionLeaderEpoch is the entry's epoch and its base offset
// the entry's offset (both set by the append). Appends keep every other
// byte as given, timestamps included, so that a follower's copy of the
// leader's batches is byte-identical to the leader's (a LogAppendTime
// topic's time is stamped by the leader's produce path before the append,
// never here). Reads return the batches as stored, CRCs checked.
//
// The start. A partition has no state machine to snapshot: what lies below
// its log start is simply gone (the ring recycled it, retention or
// DeleteRecords removed it). So the "snapshot" of a partition group is its
// log start: SnapshotId{log start, epoch}, whose bytes are the id itself
// (12 bytes: the core wants a snapshot to hold something). A follower whose
// leader no longer holds the entries it needs "fetches" that snapshot and
// resets its log to start there (storage::PartitionLog::reset_to, Kafka's
// truncateFullyAndStartAt); what the fetch of 12 bytes costs is one round
// trip, as Kafka's OFFSET_OUT_OF_RANGE answer does.
//
// The start's epoch (the epoch of the entry just below it) is exact where
// this class moved the start (delete_before, reset_to: kept in the file
// `raft-log-start` of the partition's directory, written by store() before
// the move). Where the start moved by itself (the ring recycled a segment,
// retention.ms), it is the epoch of the first batch kept, which is at least
// the true one: the start then answers some epoch questions with a larger
// epoch than a log that still held those entries would. That errs on the
// safe side only: a follower whose last fetched epoch is below it is sent
// to the start (it drops entries that are committed and gone on the leader
// anyway), never told it matches where it does not; and a log that holds
// entries past its start reports their epochs, not the start's, in
// elections.
//
// Threading: the partition's owner thread (the reactor) only; the
// PartitionLog outlives the BatchLog.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "protocol/record_batch.h"
#include "raft/raft_log.h"
#include "raft/snapshot_store.h"
#include "storage/partition_log.h"

namespace eddy::raft {

// What the batch view stores: kLeaderChange for an empty batch no producer
// wrote that is not a control batch, kData for any other.
EntryKind batch_entry_kind(const protocol::RecordBatchView& view);

struct BatchLogOptions {
  // read() returns batches up to about this many bytes (the first batch
  // always, however large).
  size_t max_read_bytes = 1024 * 1024;
  // The timestamp of the leader-change batches this node writes, in
  // milliseconds; empty: the wall clock.
  std::function<int64_t()> clock;
  // How long delete_before waits for the partition's sync when the new
  // start is not durable yet.
  int64_t flush_timeout_ms = 30000;
};

class BatchLog final : public RaftLog, public SnapshotStore {
 public:
  // Over partition (opened, recovered, not closed while this log lives).
  // Reads the start file (kCorruption when it is not one; one naming a start
  // below the partition's is simply older than the partition's own moves).
  // A start file ahead of the partition's log start is a move a crash
  // interrupted: latest() names it and the replica finishes it at open
  // (Replica::open makes the log start at the latest snapshot).
  static Status open(storage::PartitionLog* partition, BatchLogOptions options, std::unique_ptr<BatchLog>* out);

  // -- RaftLog --
  SnapshotId start() const override;
  Offset end_offset() const override { return partition_->log_end_offset(); }
  Offset durable_offset() const override;
  Epoch last_epoch() const override;
  Epoch epoch_at(Offset offset) const override;
  // The base offset of the batch holding offset.
  Offset boundary_at_or_below(Offset offset) const override;
  EpochEndOffset end_offset_for_epoch(Epoch epoch) const override;
  // Up to max_entries batches from offset, up to about max_read_bytes.
  Status read(Offset offset, size_t max_entries, std::vector<Entry>* out) const override;
  // Each entry's batch (kInvalidArgument for a payload that is not one
  // whole, consistent batch of entry.offsets offsets, or a leader-change
  // payload that is not an empty batch; kCorruption for a CRC mismatch).
  // On an error after some were written, those are truncated away again
  // (best effort; the partition refuses appends after a write error).
  Status append(const std::vector<Entry>& entries) override;
  Status truncate_to(Offset offset) override;
  // Asks the partition's flusher for a sync and returns: durable_offset()
  // catches up when the sync is done (asynchronous, see raft_log.h).
  Status flush() override;
  Status delete_before(SnapshotId id) override;
  Status reset_to(SnapshotId id) override;

  // -- SnapshotStore: the start as a snapshot --
  // The start file's id when it is ahead of start() (a move not finished),
  // else start().
  SnapshotId latest() const override;
  int64_t latest_size() const override;
  Status read(SnapshotId id, int64_t position, size_t max_bytes, std::string* out) const override;
  // Records id as the log's next start (durably, in the start file) before
  // the replica moves the start there. bytes must be snapshot_bytes(id).
  Status store(SnapshotId id, const std::string& bytes) override;

  // The bytes of the partition start id as a snapshot: end offset (8
  // bytes) and epoch (4), big-endian.
  static std::string snapshot_bytes(SnapshotId id);
  static constexpr const char* kStartFileName = "raft-log-start";

  storage::PartitionLog* partition() const { return partition_; }

 private:
  BatchLog(storage::PartitionLog* partition, BatchLogOptions options)
      : partition_(partition), options_(std::move(options)) {}
  // The start file's contents; {0, 0} when there is none.
  Status read_start_file(SnapshotId* id) const;
  // The batch that stores entry, in *batch.
  Status encode_entry(const Entry& entry, std::vector<uint8_t>* batch) const;

  storage::PartitionLog* const partition_;
  const BatchLogOptions options_;
  // The id in the start file (the last start this class recorded).
  SnapshotId recorded_start_;
};

}  // namespace eddy::raft
