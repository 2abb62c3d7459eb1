#include "txn/transaction_state.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>

namespace eddy::txn {
namespace {

using S = TransactionState;

constexpr S kAll[] = {S::kEmpty,          S::kOngoing,       S::kPrepareCommit, S::kPrepareAbort,
                      S::kCompleteCommit, S::kCompleteAbort, S::kDead,          S::kPrepareEpochFence};

TEST(TransactionStateTest, TransitionsAreKafkas) {
  // Kafka's validPreviousStates, written out independently of the code.
  const std::set<std::pair<S, S>> allowed = {
      {S::kEmpty, S::kEmpty},           {S::kCompleteCommit, S::kEmpty},     {S::kCompleteAbort, S::kEmpty},
      {S::kOngoing, S::kOngoing},       {S::kEmpty, S::kOngoing},            {S::kCompleteCommit, S::kOngoing},
      {S::kCompleteAbort, S::kOngoing}, {S::kOngoing, S::kPrepareCommit},    {S::kOngoing, S::kPrepareAbort},
      {S::kPrepareEpochFence, S::kPrepareAbort},                              {S::kPrepareCommit, S::kCompleteCommit},
      {S::kPrepareAbort, S::kCompleteAbort},                                  {S::kEmpty, S::kDead},
      {S::kCompleteAbort, S::kDead},    {S::kCompleteCommit, S::kDead},      {S::kOngoing, S::kPrepareEpochFence},
  };
  for (S from : kAll) {
    for (S to : kAll) {
      EXPECT_EQ(is_valid_transition(from, to), allowed.count({from, to}) > 0)
          << state_name(from) << " -> " << state_name(to);
    }
  }
}

TEST(TransactionStateTest, NamesAndIdsRoundTrip) {
  for (S s : kAll) {
    EXPECT_EQ(state_from_name(state_name(s)), s);
    EXPECT_EQ(state_from_id(static_cast<int8_t>(s)), s);
  }
  EXPECT_EQ(state_name(S::kPrepareCommit), "PrepareCommit");
  EXPECT_EQ(state_from_name("Bogus"), std::nullopt);
  EXPECT_EQ(state_from_id(8), std::nullopt);
  EXPECT_EQ(state_from_id(-1), std::nullopt);
}

TEST(TransactionStateTest, OnlyIdleStatesExpire) {
  for (S s : kAll) {
    EXPECT_EQ(is_expiration_allowed(s), s == S::kEmpty || s == S::kCompleteCommit || s == S::kCompleteAbort)
        << state_name(s);
  }
}

}  // namespace
}  // namespace eddy::txn
