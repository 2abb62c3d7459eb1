// The broker's idempotent-producer state: one PartitionProducers per open
// partition, the current epoch of every producer id InitProducerId handed
// out or the logs showed, and their persistence.
//
// Persistence: each partition's state is saved in the meta store
// (producer_snapshots) as one row per producer (its last batch at or below
// the snapshot point) plus one marker row with producer_id -1 whose
// last_offset is the snapshot point P: the state after every batch below P.
// Opening a partition loads the rows and replays the batch headers of
// [max(P, log start), log end), so a restart reads only what was written
// since the last snapshot. Snapshots are taken periodically (at the durable
// offset, so that a power cut cannot leave a snapshot ahead of the log) and
// on clean shutdown (after syncing, at the log end).
//
// Threading: reactor thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "broker/producer_state.h"
#include "meta/meta_store.h"
#include "storage/partition_log.h"

namespace eddy::broker {

struct ProducerReplayStats {
  size_t snapshot_rows = 0;
  size_t batches_replayed = 0;
  uint64_t bytes_replayed = 0;
};

class ProducerStateTable {
 public:
  // REQUIRES meta outlives the table.
  ProducerStateTable(meta::MetaStore* meta, int64_t expiration_ms) : meta_(meta), expiration_ms_(expiration_ms) {}

  // (Re)builds the state of a partition whose log was just opened: snapshot
  // rows, then the log after the snapshot point. Rows pointing beyond the
  // log end (a deleted and re-created topic) are dropped. Fails only when
  // the meta store or the log cannot be read (or written).
  Status open_partition(const std::string& topic, int32_t partition, storage::PartitionLog* log, int64_t now_ms,
                        ProducerReplayStats* stats);

  // The state of a partition; nullptr when it was never opened.
  PartitionProducers* find(const std::string& topic, int32_t partition);
  // The same by its open log (Produce's path: no key to build).
  PartitionProducers* find(const storage::PartitionLog* log);
  // A producer wrote (keeps its epoch known to InitProducerId).
  void saw_producer(int64_t producer_id, int16_t epoch, int64_t now_ms);

  // Expires idle producers and snapshots every partition whose state or log
  // changed since its last snapshot. With sync, the logs are synced first
  // and the snapshot point is the log end (clean shutdown); otherwise it is
  // each log's durable offset. Partitions whose log is no longer the one
  // current_log names (topic deleted or re-created) are dropped, state and
  // rows. Returns the number of partitions written.
  using CurrentLog = std::function<storage::PartitionLog*(const std::string& topic, int32_t partition)>;
  size_t snapshot(const CurrentLog& current_log, int64_t now_ms, bool sync);

  // InitProducerId: the current epoch of producer_id (-1 when unknown) and
  // the epoch InitProducerId last bumped it from (-1: none), so that a
  // retried bump gets the same answer.
  int16_t current_epoch(int64_t producer_id, int16_t* bumped_from = nullptr) const;
  void set_epoch(int64_t producer_id, int16_t epoch, int16_t bumped_from, int64_t now_ms);

  int64_t expiration_ms() const { return expiration_ms_; }

 private:
  struct PartitionState {
    storage::PartitionLog* log = nullptr;
    PartitionProducers producers;
    std::vector<meta::ProducerSnapshot> last_rows;  // sorted by producer id, without the marker
    int64_t last_point = -1;                         // snapshot point of last_rows
  };
  struct EpochEntry {
    int16_t epoch = -1;
    int16_t bumped_from = -1;
    int64_t last_seen_ms = 0;
  };
  using Key = std::pair<std::string, int32_t>;

  Status replay(PartitionState& state, int64_t from, int64_t now_ms, ProducerReplayStats* stats);

  meta::MetaStore* meta_;
  int64_t expiration_ms_;
  std::map<Key, PartitionState> partitions_;
  // Every open log of partitions_ (map nodes are stable).
  std::unordered_map<const storage::PartitionLog*, PartitionState*> by_log_;
  std::unordered_map<int64_t, EpochEntry> epochs_;
};

}  // namespace eddy::broker
