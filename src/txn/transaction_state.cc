#include "txn/transaction_state.h"

#include <initializer_list>

namespace eddy::txn {

namespace {

using S = TransactionState;

constexpr S kAllStates[] = {S::kEmpty,          S::kOngoing,       S::kPrepareCommit, S::kPrepareAbort,
                            S::kCompleteCommit, S::kCompleteAbort, S::kDead,          S::kPrepareEpochFence};

bool one_of(S state, std::initializer_list<S> states) {
  for (S s : states) {
    if (s == state) return true;
  }
  return false;
}

}  // namespace

std::string_view state_name(TransactionState state) {
  switch (state) {
    case S::kEmpty: return "Empty";
    case S::kOngoing: return "Ongoing";
    case S::kPrepareCommit: return "PrepareCommit";
    case S::kPrepareAbort: return "PrepareAbort";
    case S::kCompleteCommit: return "CompleteCommit";
    case S::kCompleteAbort: return "CompleteAbort";
    case S::kDead: return "Dead";
    case S::kPrepareEpochFence: return "PrepareEpochFence";
  }
  return "Unknown";
}

std::optional<TransactionState> state_from_name(std::string_view name) {
  for (S s : kAllStates) {
    if (state_name(s) == name) return s;
  }
  return std::nullopt;
}

std::optional<TransactionState> state_from_id(int8_t id) {
  for (S s : kAllStates) {
    if (static_cast<int8_t>(s) == id) return s;
  }
  return std::nullopt;
}

bool is_valid_transition(TransactionState from, TransactionState to) {
  switch (to) {
    case S::kEmpty: return one_of(from, {S::kEmpty, S::kCompleteCommit, S::kCompleteAbort});
    case S::kOngoing: return one_of(from, {S::kOngoing, S::kEmpty, S::kCompleteCommit, S::kCompleteAbort});
    case S::kPrepareCommit: return from == S::kOngoing;
    case S::kPrepareAbort: return one_of(from, {S::kOngoing, S::kPrepareEpochFence});
    case S::kCompleteCommit: return from == S::kPrepareCommit;
    case S::kCompleteAbort: return from == S::kPrepareAbort;
    case S::kDead: return one_of(from, {S::kEmpty, S::kCompleteAbort, S::kCompleteCommit});
    case S::kPrepareEpochFence: return from == S::kOngoing;
  }
  return false;
}

bool is_expiration_allowed(TransactionState state) {
  return one_of(state, {S::kEmpty, S::kCompleteCommit, S::kCompleteAbort});
}

}  // namespace eddy::txn
