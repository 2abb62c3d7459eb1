// Transactional consumer offsets (TxnOffsetCommit): staged per (group,
// producer id) until the transaction ends. complete() with commit moves
// them into committed_offsets (replacing earlier commits of the same
// partitions) and with abort drops them, in one SQLite transaction: a crash
// leaves either the staged offsets or the committed ones, never half.
//
// Durability: every call that returns ok is on stable storage (meta_store.h).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "meta/offset_store.h"
#include "meta/sqlite_db.h"
#include "meta/topic_partition.h"
#include "port/status.h"

namespace eddy::meta {

class PendingOffsetStore {
 public:
  explicit PendingOffsetStore(Database* db) : db_(db) {}

  // Stages offsets of group for producer_id, replacing what that producer
  // staged for the same partitions. invalid_argument for a negative partition.
  Status stage(const std::string& group, int64_t producer_id, const std::vector<CommittedOffset>& offsets);
  // Ends producer_id's transaction in group: commit applies its staged
  // offsets, abort drops them. *applied (optional): rows moved or dropped.
  Status complete(const std::string& group, int64_t producer_id, bool commit, int64_t* applied = nullptr);
  // The partitions of group with offsets staged by any producer, sorted.
  Status pending_partitions(const std::string& group, std::vector<TopicPartition>* out);
  // What producer_id staged in group, sorted by topic then partition.
  Status staged(const std::string& group, int64_t producer_id, std::vector<CommittedOffset>* out);
  // Every (group, producer id) with staged offsets, sorted.
  Status stagers(std::vector<std::pair<std::string, int64_t>>* out);
  // Deletes every staged offset (a cluster node loading a controller
  // snapshot).
  Status remove_all();
  // Deletes what any producer staged in group (the group is deleted: a
  // transaction that commits later applies nothing to it, as on Kafka,
  // whose deleted group takes its pending transactional offsets along).
  Status remove_group(const std::string& group);

 private:
  Database* db_;
};

}  // namespace eddy::meta
