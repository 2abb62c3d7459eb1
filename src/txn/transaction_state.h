// The states of a transactional id, as Kafka's TransactionState (ids are
// Kafka's, also on disk: meta/transaction_store.h):
//
//   Empty --AddPartitions/AddOffsets--> Ongoing --EndTxn(COMMIT)--> PrepareCommit --markers--> CompleteCommit
//                                          |----EndTxn(ABORT), timeout--> PrepareAbort --markers--> CompleteAbort
//   Ongoing --InitProducerId (fence)--> PrepareEpochFence --> PrepareAbort
//   Empty, CompleteCommit, CompleteAbort --expiry--> Dead
//
// CompleteCommit / CompleteAbort / Empty take a new transaction (Ongoing) or
// an InitProducerId (Empty, epoch bumped). PrepareEpochFence is never
// stored: it is the moment between deciding to fence and writing the
// PrepareAbort with the bumped epoch.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace eddy::txn {

enum class TransactionState : int8_t {
  kEmpty = 0,
  kOngoing = 1,
  kPrepareCommit = 2,
  kPrepareAbort = 3,
  kCompleteCommit = 4,
  kCompleteAbort = 5,
  kDead = 6,
  kPrepareEpochFence = 7,
};

// Kafka's names ("Empty", "Ongoing", ...), as DescribeTransactions and
// ListTransactions show them.
std::string_view state_name(TransactionState state);
// The state named name (Kafka's spelling); nullopt when none is.
std::optional<TransactionState> state_from_name(std::string_view name);
// The state of a stored id; nullopt when id is not a state.
std::optional<TransactionState> state_from_id(int8_t id);

// Kafka's validPreviousStates: whether a transactional id may move from
// `from` to `to`.
bool is_valid_transition(TransactionState from, TransactionState to);
// Whether a transactional id in this state may expire
// (transactional.id.expiration.ms): no transaction is in flight.
bool is_expiration_allowed(TransactionState state);

}  // namespace eddy::txn
