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
// on clean shutdown (after syncing, at the log end); never above the
// partition's high watermark, nor above the bound the broker gives (a
// replicated partition's commit index: see snapshot()), and the point never
// moves back.
//
// A partition of a Raft group (broker/partition_replication.h): on its
// leader, Produce records each batch it appends; on a follower, follow()
// replays what replication appended, so that a new leader on this node
// knows the idempotent producers' sequences; when replication cut the log
// (a diverging suffix, or a reset to the leader's start), rebuild() does
// what open_partition does. Since a snapshot point never exceeds the commit
// index, and Raft never cuts committed entries, a truncation never removes
// what a snapshot covers (a reset to a start above the point loses the
// producers' batches in between, as a restart after recycling does).
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

  // A replica's log grew by replication from offset from (its old log
  // end): the batch headers of [max(from, log start), log end) are replayed
  // into the partition's state. REQUIRES: those batches were not recorded
  // yet (Produce records the leader's own appends). kNotFound when log was
  // never opened here; otherwise fails only when the log cannot be read.
  Status follow(storage::PartitionLog* log, int64_t from, int64_t now_ms);
  // Replication cut the log (truncate_to / reset_to): the partition's state
  // is rebuilt as open_partition builds it (snapshot rows, then the log after
  // the snapshot point). kNotFound when log was never opened here.
  Status rebuild(storage::PartitionLog* log, int64_t now_ms, ProducerReplayStats* stats);

  // The state of a partition; nullptr when it was never opened.
  PartitionProducers* find(const std::string& topic, int32_t partition);
  // The same by its open log (Produce's path: no key to build).
  PartitionProducers* find(const storage::PartitionLog* log);
  // A producer wrote (keeps its epoch known to InitProducerId).
  void saw_producer(int64_t producer_id, int16_t epoch, int64_t now_ms);

  // Expires idle producers (not those with a transaction open in the
  // partition, as Kafka) and snapshots every partition whose state or log
  // changed since its last snapshot. With sync, the logs are synced first
  // and the snapshot point is the log end (clean shutdown); otherwise it is
  // each log's durable offset. Either way at most the log's high watermark
  // and bound(log) when a bound is given (-1: do not snapshot that log now);
  // a point below the last one is not written (the rows stay). Partitions
  // whose log is no longer the one current_log names (topic deleted or
  // re-created) are dropped, state and rows. Returns the number of
  // partitions written.
  using CurrentLog = std::function<storage::PartitionLog*(const std::string& topic, int32_t partition)>;
  using SnapshotBound = std::function<int64_t(const storage::PartitionLog* log)>;
  size_t snapshot(const CurrentLog& current_log, int64_t now_ms, bool sync, const SnapshotBound& bound = {});

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
