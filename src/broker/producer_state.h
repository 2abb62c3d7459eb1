// Idempotent-producer sequence state of one partition: for each producer id
// that wrote there, its epoch, the sequence ranges and offsets of its last
// five batches, and when it last wrote. Produce checks each batch against it
// before the append and records the batch after.
//
// Rules (Kafka's ProducerStateManager, with the pre-KIP-360 answer for a
// producer the partition does not know):
//   epoch older than the producer's        -> INVALID_PRODUCER_EPOCH
//   epoch newer                             -> accepted when base sequence 0
//                                              (the new epoch restarts at 0),
//                                              else OUT_OF_ORDER_SEQUENCE_NUMBER
//   same epoch, same sequence range as one of the last five batches
//                                           -> duplicate: success with the
//                                              original base offset, nothing written
//   same epoch, range at or below the last sequence and older than the cached
//   batches (e.g. the state was rebuilt from a snapshot, which keeps one
//   batch per producer; Produce then looks for it in the log)
//                                           -> DUPLICATE_SEQUENCE_NUMBER
//                                              (clients treat it as success)
//   same epoch, base sequence == last + 1   -> append
//   same epoch, anything else               -> OUT_OF_ORDER_SEQUENCE_NUMBER
//   unknown producer (never wrote here, or expired): base sequence 0 ->
//   append; otherwise UNKNOWN_PRODUCER_ID (the client bumps its epoch or
//   resets, KIP-360), since the broker cannot tell a gap from lost state.
// Sequences wrap from INT32_MAX to 0, as Kafka's do.
//
// Invariant: an entry's cached batches are in offset order, at most
// kCachedBatches, and the last one (when any) ends at last_sequence and
// last_offset.
//
// Threading: reactor thread only. Not persistent by itself: the broker
// snapshots it (to_snapshot) and rebuilds it at startup (load_snapshot +
// replay of the batch headers after the snapshot).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "meta/producer_snapshot_store.h"
#include "protocol/errors.h"

namespace eddy::broker {

struct ProducerBatch {
  int32_t first_sequence = 0;
  int32_t last_sequence = 0;
  int64_t first_offset = 0;
  int64_t last_offset = 0;
};

struct ProducerEntry {
  static constexpr int kCachedBatches = 5;

  int16_t epoch = -1;
  int32_t last_sequence = -1;
  int64_t last_offset = -1;
  int64_t last_write_ms = 0;  // broker clock of the last append (expiry)
  // The coordinator epoch of the last COMMIT / ABORT marker of this
  // producer here (Kafka's ProducerStateEntry.coordinatorEpoch); -1 until
  // one is written. Not kept in snapshot rows: after a restart it is -1
  // again unless a marker after the snapshot point is replayed.
  int32_t coordinator_epoch = -1;
  // Ring of the last kCachedBatches batches; batch_count of them valid,
  // oldest at (next_slot - batch_count) mod kCachedBatches.
  ProducerBatch batches[kCachedBatches];
  int batch_count = 0;
  int next_slot = 0;

  const ProducerBatch* find(int32_t first_sequence, int32_t last_sequence) const;
  // REQUIRES batch_count > 0.
  const ProducerBatch& oldest() const;
  void push(const ProducerBatch& batch);
};

// The verdict on one batch before its append.
struct SequenceCheck {
  enum class Action {
    kAppend,     // write it, then call record()
    kDuplicate,  // answer success with duplicate_base_offset, write nothing
    kReject,     // answer error, write nothing
  };
  Action action = Action::kAppend;
  protocol::ErrorCode error = protocol::ErrorCode::kNone;  // kReject, or kDuplicateSequenceNumber
  int64_t duplicate_base_offset = -1;
  int64_t duplicate_last_offset = -1;  // durability to wait for (acks=-1)
  std::string message;
};

// The last sequence of a batch of record_count records starting at
// first_sequence (wrapping at INT32_MAX).
int32_t batch_last_sequence(int32_t first_sequence, int32_t record_count);

class PartitionProducers {
 public:
  // REQUIRES producer_id >= 0 (a batch without a producer id is not checked).
  SequenceCheck check(int64_t producer_id, int16_t epoch, int32_t first_sequence, int32_t record_count) const;
  // Records an appended batch (after check() said kAppend, or while
  // replaying the log, where it trusts what is written).
  void record(int64_t producer_id, int16_t epoch, int32_t first_sequence, int32_t record_count, int64_t first_offset,
              int64_t last_offset, int64_t now_ms);

  // A COMMIT or ABORT marker of producer_id at offset (written by a
  // transaction coordinator, or replayed): as Kafka's appendEndTxnMarker,
  // the producer's epoch becomes epoch and its coordinator epoch
  // coordinator_epoch; a new epoch forgets the old batches, so the next
  // batch of that epoch starts at sequence 0.
  // REQUIRES epoch >= the producer's epoch (check_marker).
  void record_marker(int64_t producer_id, int16_t epoch, int32_t coordinator_epoch, int64_t offset,
                     int64_t now_ms);
  // Whether a marker may be written (Kafka's appendEndTxnMarker checks):
  // INVALID_PRODUCER_EPOCH when epoch is older than the producer's epoch
  // on this partition, TRANSACTION_COORDINATOR_FENCED when coordinator_epoch
  // is older than the one of the producer's last marker here; NONE otherwise
  // (a producer the partition does not know passes).
  protocol::ErrorCode check_marker(int64_t producer_id, int16_t epoch, int32_t coordinator_epoch) const;

  // Drops producers whose last write is older than cutoff_ms, except those
  // for which keep(producer_id) is true (Kafka keeps a producer with a
  // transaction open in the partition). Returns how many.
  template <typename Keep>
  size_t expire(int64_t cutoff_ms, Keep keep) {
    size_t removed = 0;
    for (auto it = producers_.begin(); it != producers_.end();) {
      if (it->second.last_write_ms < cutoff_ms && !keep(it->first)) {
        it = producers_.erase(it);
        ++removed;
      } else {
        ++it;
      }
    }
    return removed;
  }
  size_t expire(int64_t cutoff_ms) {
    return expire(cutoff_ms, [](int64_t) { return false; });
  }

  // Restores entries from snapshot rows (one batch each: its last sequence
  // and offset; the first ones are unknown). Rows with producer_id < 0 are
  // ignored.
  void load_snapshot(const std::vector<meta::ProducerSnapshot>& rows);
  // Rows describing the state as it was after the batch ending below
  // upto_offset: for each producer the newest cached batch ending below it,
  // or, when every cached batch lies at or above it, the row from
  // previous (the last snapshot, REQUIRES sorted by producer id), if any.
  // Sorted by producer id.
  std::vector<meta::ProducerSnapshot> to_snapshot(const std::string& topic, int32_t partition, int64_t upto_offset,
                                                  const std::vector<meta::ProducerSnapshot>& previous) const;

  const ProducerEntry* find(int64_t producer_id) const;
  size_t size() const { return producers_.size(); }
  template <typename Visit>
  void for_each(Visit visit) const {
    for (const auto& [id, e] : producers_) visit(id, e);
  }

 private:
  std::unordered_map<int64_t, ProducerEntry> producers_;

};

}  // namespace eddy::broker
