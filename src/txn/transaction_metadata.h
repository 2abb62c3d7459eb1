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
#include <string_view>

#include "meta/topic_partition.h"
#include "meta/transaction_store.h"
#include "txn/transaction_state.h"

namespace eddy::txn {

// A partition named without owning its topic name (Produce's lookup: no
// string is built per batch).
struct PartitionRef {
  PartitionRef(std::string_view t, int32_t p) : topic(t), partition(p) {}
  PartitionRef(const meta::TopicPartition& tp) : topic(tp.topic), partition(tp.partition) {}  // NOLINT: implicit
  std::string_view topic;
  int32_t partition = 0;
};

// Orders partitions by topic then partition, and finds one by PartitionRef.
struct PartitionOrder {
  using is_transparent = void;
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    const int c = std::string_view(a.topic).compare(std::string_view(b.topic));
    return c < 0 || (c == 0 && a.partition < b.partition);
  }
};
using PartitionSet = std::set<meta::TopicPartition, PartitionOrder>;

struct TransactionMetadata {
  std::string transactional_id;
  int64_t producer_id = -1;
  int64_t last_producer_id = -1;
  int16_t producer_epoch = -1;
  int16_t last_producer_epoch = -1;
  int32_t timeout_ms = 60000;
  TransactionState state = TransactionState::kEmpty;
  PartitionSet partitions;
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
