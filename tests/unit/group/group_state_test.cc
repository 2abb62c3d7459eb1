// The group state machine on its own: Kafka's transition table and
// Group::set_state.
#include "group/group.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

namespace eddy::group {
namespace {

constexpr GroupState kAll[] = {GroupState::kEmpty, GroupState::kPreparingRebalance, GroupState::kCompletingRebalance,
                               GroupState::kStable, GroupState::kDead};

TEST(GroupStateTest, NamesAreKafkas) {
  EXPECT_STREQ(group_state_name(GroupState::kEmpty), "Empty");
  EXPECT_STREQ(group_state_name(GroupState::kPreparingRebalance), "PreparingRebalance");
  EXPECT_STREQ(group_state_name(GroupState::kCompletingRebalance), "CompletingRebalance");
  EXPECT_STREQ(group_state_name(GroupState::kStable), "Stable");
  EXPECT_STREQ(group_state_name(GroupState::kDead), "Dead");
}

TEST(GroupStateTest, TransitionTableIsKafkas) {
  using S = GroupState;
  const std::set<std::pair<S, S>> allowed = {
      {S::kEmpty, S::kPreparingRebalance},       {S::kStable, S::kPreparingRebalance},
      {S::kCompletingRebalance, S::kPreparingRebalance}, {S::kPreparingRebalance, S::kCompletingRebalance},
      {S::kCompletingRebalance, S::kStable},     {S::kPreparingRebalance, S::kEmpty},
  };
  for (S from : kAll) {
    for (S to : kAll) {
      const bool expected = to == S::kDead || allowed.count({from, to}) > 0;
      EXPECT_EQ(transition_allowed(from, to), expected) << group_state_name(from) << " -> " << group_state_name(to);
    }
  }
}

TEST(GroupStateTest, SetStateTellsTheObserver) {
  std::vector<std::pair<GroupState, GroupState>> seen;
  TransitionObserver observer = [&](const std::string& id, GroupState from, GroupState to) {
    EXPECT_EQ(id, "g");
    seen.push_back({from, to});
  };
  Group g("g", GroupState::kEmpty, &observer);
  g.set_state(GroupState::kPreparingRebalance);
  g.set_state(GroupState::kCompletingRebalance);
  g.set_state(GroupState::kStable);
  EXPECT_EQ(g.state(), GroupState::kStable);
  EXPECT_EQ(seen.size(), 3u);
  Group quiet("q", GroupState::kStable, nullptr);  // no observer
  quiet.set_state(GroupState::kDead);
  EXPECT_EQ(quiet.state(), GroupState::kDead);
}

TEST(GroupStateTest, IllegalTransitionIsAProgrammingError) {
  Group g("g", GroupState::kEmpty, nullptr);
  if (kAbortOnIllegalTransition) {
    // Debug and sanitizer builds stop at once.
    EXPECT_DEATH(g.set_state(GroupState::kStable), "illegal state transition Empty -> Stable");
  } else {
    // Release builds log it and carry on in the state asked for.
    g.set_state(GroupState::kStable);
    EXPECT_EQ(g.state(), GroupState::kStable);
  }
}

// Parked answers: taken out of the member before the callback runs.
TEST(ParkedAnswerTest, EachAnswerIsGivenOnceAndTakenOutFirst) {
  Member m;
  m.member_id = "m-1";
  int joins = 0, syncs = 0;
  m.join_done = [&](const protocol::JoinGroupResponse& r) {
    joins++;
    EXPECT_EQ(r.error_code, protocol::to_int(protocol::ErrorCode::kRebalanceInProgress));
    EXPECT_EQ(r.member_id, "m-1");
    EXPECT_FALSE(m.join_done);  // a reentrant call finds nothing parked
  };
  m.sync_done = [&](const protocol::SyncGroupResponse& r) {
    syncs++;
    EXPECT_EQ(r.error_code, protocol::to_int(protocol::ErrorCode::kUnknownMemberId));
    EXPECT_FALSE(m.sync_done);
  };
  m.fail_parked_join(protocol::ErrorCode::kRebalanceInProgress);
  m.fail_parked_join(protocol::ErrorCode::kRebalanceInProgress);  // none parked: nothing
  m.fail_parked_sync(protocol::ErrorCode::kUnknownMemberId);
  m.fail_parked_sync(protocol::ErrorCode::kUnknownMemberId);
  EXPECT_EQ(joins, 1);
  EXPECT_EQ(syncs, 1);
  protocol::JoinGroupResponse ok;
  ok.member_id = "m-1";
  m.answer_parked_join(ok);  // none parked
  EXPECT_EQ(joins, 1);
  EXPECT_FALSE(m.take_parked_sync());
}

}  // namespace
}  // namespace eddy::group
