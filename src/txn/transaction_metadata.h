// What the coordinator knows of one transactional id (Kafka's
// TransactionMetadata without the pending-transition bookkeeping: on one
// reactor thread a transition is computed on a copy, stored, then applied).
//
// Invariants: producer_id >= 0 once InitProducerId answered; partitions
// and groups are empty unless state is Ongoing, PrepareCommit or
// PrepareAbort; start_ms >= 0 exactly when a transaction began and has not
// completed.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "meta/topic_partition.h"
#include "meta/transaction_store.h"
#include "txn/transaction_state.h"

namespace eddy::txn {

struct TransactionMetadata {
  std::string transactional_id;
  int64_t producer_id = -1;
  int64_t last_producer_id = -1;
  int16_t producer_epoch = -1;
  int16_t last_producer_epoch = -1;
  int32_t timeout_ms = 60000;
  TransactionState state = TransactionState::kEmpty;
  std::set<meta::TopicPartition> partitions;
  std::set<std::string> groups;  // consumer groups whose offsets the transaction commits
  int64_t start_ms = -1;
  int64_t last_update_ms = 0;

  // Moves to next when Kafka allows it (is_valid_transition); false and
  // unchanged otherwise.
  bool set_state(TransactionState next);

  meta::TransactionRow to_row() const;
  // false when the row's state code is not a state.
  static bool from_row(const meta::TransactionRow& row, TransactionMetadata* out);
};

// Kafka's rule: an epoch this high is not bumped again; the producer id is
// rotated instead.
inline bool is_epoch_exhausted(int16_t epoch) { return epoch >= 32766; }

}  // namespace eddy::txn
