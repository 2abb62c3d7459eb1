// The transaction coordinator's durable state (src/txn/): one row per
// transactional id with its producer id and epoch, timeout, state, the
// partitions and groups of its current transaction and its timestamps.
//
// The store checks shapes only (a non-empty id, a known state code, a
// positive timeout); the coordinator owns the state machine
// (txn/transaction_state.h) and writes a row after every transition.
//
// Durability: save() and remove() return after their transaction is on
// stable storage (meta_store.h), so a transition acknowledged to a client
// survives a crash or power loss.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "meta/sqlite_db.h"
#include "meta/topic_partition.h"
#include "port/status.h"

namespace eddy::meta {

struct TransactionRow {
  std::string transactional_id;
  int64_t producer_id = -1;
  int64_t last_producer_id = -1;  // before the last producer id rotation; -1: none
  int16_t producer_epoch = -1;
  int16_t last_producer_epoch = -1;  // before the last epoch bump; -1: none
  int32_t timeout_ms = 0;
  int8_t state = 0;  // Kafka's TransactionState id: 0 Empty .. 7 PrepareEpochFence
  int64_t start_ms = -1;  // when the current transaction began; -1: none
  int64_t last_update_ms = 0;
  std::vector<TopicPartition> partitions;  // sorted, distinct
  std::vector<std::string> groups;         // sorted, distinct (AddOffsetsToTxn)

  friend bool operator==(const TransactionRow&, const TransactionRow&) = default;
};

class TransactionStore {
 public:
  explicit TransactionStore(Database* db) : db_(db) {}

  // Inserts or replaces the row of row.transactional_id, its partitions and
  // groups, in one transaction. invalid_argument for a bad shape.
  Status save(const TransactionRow& row);
  // Deletes a transactional id (expiry). Not an error when it is absent.
  Status remove(const std::string& transactional_id);
  // Every row, sorted by transactional id.
  Status load_all(std::vector<TransactionRow>* out);
  // The row of transactional_id; *found false when there is none.
  Status load(const std::string& transactional_id, TransactionRow* out, bool* found);
  // Deletes every row (a cluster node loading a controller snapshot).
  Status remove_all();

 private:
  Status load_members(std::vector<TransactionRow>* rows);

  Database* db_;
};

}  // namespace eddy::meta
