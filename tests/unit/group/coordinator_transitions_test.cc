// The group state transitions the coordinator makes in each flow, and the
// answers to parked requests.
#include <gtest/gtest.h>

#include "tests/unit/group/coordinator_fixture.h"

namespace eddy::group {
namespace {

constexpr State kEmpty = State::kEmpty;
constexpr State kPreparing = State::kPreparingRebalance;
constexpr State kCompleting = State::kCompletingRebalance;
constexpr State kStable = State::kStable;
constexpr State kDead = State::kDead;

TEST_F(CoordinatorTest, TransitionsOfJoinAndSync) {
  std::string a, b;
  join_new(&a);
  EXPECT_EQ(take_transitions(), (std::vector<Transition>{{kEmpty, kPreparing}, {kPreparing, kCompleting}}));
  sync(a, 1, {{a, {1}}});
  EXPECT_EQ(take_transitions(), (std::vector<Transition>{{kCompleting, kStable}}));
  auto jb = join_new(&b);
  EXPECT_EQ(take_transitions(), (std::vector<Transition>{{kStable, kPreparing}}));
  join(join_request(a));
  EXPECT_EQ(take_transitions(), (std::vector<Transition>{{kPreparing, kCompleting}}));
  auto sb = sync(b, 2);
  EXPECT_TRUE(take_transitions().empty());  // a follower's SyncGroup waits for the leader
  sync(a, 2, {{a, {1}}, {b, {2}}});
  EXPECT_EQ(take_transitions(), (std::vector<Transition>{{kCompleting, kStable}}));
  // A follower rejoining with the same protocols changes nothing.
  join(join_request(b));
  EXPECT_TRUE(take_transitions().empty());
}

TEST_F(CoordinatorTest, TransitionsOfLeaveAndTheSweep) {
  std::string a;
  join_new(&a);
  sync(a, 1, {{a, {1}}});
  take_transitions();
  protocol::LeaveGroupRequest leave;
  leave.group_id = "g";
  leave.member_id = a;
  ASSERT_EQ(coordinator_->leave(leave, 0).error_code, 0);
  EXPECT_EQ(take_transitions(), (std::vector<Transition>{{kStable, kPreparing}, {kPreparing, kEmpty}}));
  clock_.advance(10'001);  // the offsets sweep forgets an empty group without offsets
  EXPECT_EQ(take_transitions(), (std::vector<Transition>{{kEmpty, kDead}}));
  EXPECT_EQ(coordinator_->group_state("g"), kDead);
}

TEST_F(CoordinatorTest, TransitionsWhenAMemberLeavesDuringCompletingRebalance) {
  std::string a, b;
  join_new(&a);
  sync(a, 1, {{a, {1}}});
  auto jb = join_new(&b);
  join(join_request(a));
  ASSERT_EQ(coordinator_->group_state("g"), kCompleting);
  auto sb = sync(b, 2);  // a follower's: parked until the leader's
  take_transitions();
  protocol::LeaveGroupRequest leave;
  leave.group_id = "g";
  leave.member_id = b;
  ASSERT_EQ(coordinator_->leave(leave, 0).error_code, 0);
  ASSERT_TRUE(sb.ready());
  EXPECT_EQ(sb->error_code, code(ErrorCode::kUnknownMemberId));
  EXPECT_EQ(take_transitions(), (std::vector<Transition>{{kCompleting, kPreparing}}));
  auto ja = join(join_request(a));
  ASSERT_TRUE(ja.ready());
  EXPECT_EQ(ja->generation_id, 3);
  EXPECT_EQ(take_transitions(), (std::vector<Transition>{{kPreparing, kCompleting}}));
}

TEST_F(CoordinatorTest, TransitionsOfSessionExpiry) {
  std::string a, b;
  join_new(&a);
  sync(a, 1, {{a, {1}}});
  auto jb = join_new(&b);
  join(join_request(a));
  sync(a, 2, {{a, {1}}, {b, {2}}});
  sync(b, 2);
  take_transitions();
  clock_.advance(5'000);
  EXPECT_EQ(heartbeat(b, 2), 0);
  clock_.advance(5'001);  // a's session is over; b's is not
  EXPECT_EQ(take_transitions(), (std::vector<Transition>{{kStable, kPreparing}}));
  join(join_request(b));
  EXPECT_EQ(take_transitions(), (std::vector<Transition>{{kPreparing, kCompleting}}));
  clock_.advance(10'001);  // b goes silent too
  EXPECT_EQ(take_transitions(), (std::vector<Transition>{{kCompleting, kPreparing}, {kPreparing, kEmpty}}));
}

TEST_F(CoordinatorTest, ReloadedGroupIsCreatedStableWithoutATransition) {
  auto ja = join(join_request("", "inst-a"));
  sync(ja->member_id, 1, {{ja->member_id, {1}}}, "inst-a");
  open();
  EXPECT_EQ(take_transitions().size(), 3u);  // the first coordinator's: Empty -> ... -> Stable
  EXPECT_EQ(coordinator_->group_state("g"), kStable);
  clock_.advance(10'001);  // the reloaded member never returns
  EXPECT_EQ(take_transitions(),
            (std::vector<Transition>{{kStable, kPreparing}, {kPreparing, kEmpty}, {kEmpty, kDead}}));
}

TEST_F(CoordinatorTest, TransitionsOfDeleteGroups) {
  EXPECT_EQ(commit("", -1, 0, 1), 0);
  protocol::OffsetDeleteRequest od;
  od.group_id = "g";
  coordinator_->delete_offsets(od);  // keeps the group in memory until the sweep
  EXPECT_EQ(coordinator_->group_state("g"), kEmpty);
  protocol::DeleteGroupsRequest del;
  del.groups_names = {"g"};
  EXPECT_EQ(coordinator_->delete_groups(del).results.at(0).error_code, 0);
  EXPECT_EQ(take_transitions(), (std::vector<Transition>{{kEmpty, kDead}}));
}

TEST_F(CoordinatorTest, DrainAnswersParkedRequestsWithoutATransition) {
  std::string a, b;
  join_new(&a);
  sync(a, 1, {{a, {1}}});
  auto jb = join_new(&b);
  take_transitions();
  coordinator_->drain();
  ASSERT_TRUE(jb.ready());
  EXPECT_EQ(jb->error_code, code(ErrorCode::kCoordinatorNotAvailable));
  EXPECT_EQ(jb->member_id, b);
  EXPECT_TRUE(take_transitions().empty());
}

TEST_F(CoordinatorTest, RetriedRequestsSupersedeTheParkedOnes) {
  std::string a, b;
  join_new(&a);
  sync(a, 1, {{a, {1}}});
  auto jb = join_new(&b);
  auto jb2 = join(join_request(b));  // b retries while a has not rejoined
  ASSERT_TRUE(jb.ready());
  EXPECT_EQ(jb->error_code, code(ErrorCode::kRebalanceInProgress));
  EXPECT_EQ(jb->member_id, b);
  EXPECT_FALSE(jb2.ready());
  join(join_request(a));
  ASSERT_TRUE(jb2.ready());
  auto sb = sync(b, 2);
  auto sb2 = sync(b, 2);
  ASSERT_TRUE(sb.ready());
  EXPECT_EQ(sb->error_code, code(ErrorCode::kRebalanceInProgress));
  EXPECT_FALSE(sb2.ready());
  sync(a, 2, {{a, {1}}, {b, {2}}});
  ASSERT_TRUE(sb2.ready());
  EXPECT_EQ(sb2->assignment, (std::vector<uint8_t>{2}));
}

TEST_F(CoordinatorTest, StaticReplacementFencesTheParkedRequestsOfTheOldInstance) {
  std::string b;
  join_new(&b);
  sync(b, 1, {{b, {1}}});
  auto ja = join(join_request("", "inst-a"));
  EXPECT_FALSE(ja.ready());  // b's rejoin is awaited
  join(join_request(b));
  ASSERT_TRUE(ja.ready());
  const std::string a = ja->member_id;
  auto sa = sync(a, 2, {}, "inst-a");  // a follower's: parked
  EXPECT_FALSE(sa.ready());
  take_transitions();
  // inst-a restarts while its SyncGroup is parked.
  auto ja2 = join(join_request("", "inst-a"));
  ASSERT_TRUE(sa.ready());
  EXPECT_EQ(sa->error_code, code(ErrorCode::kFencedInstanceId));
  EXPECT_FALSE(ja2.ready());  // not Stable: the replacement rebalances
  EXPECT_EQ(take_transitions(), (std::vector<Transition>{{kCompleting, kPreparing}}));
  // And again while the second instance's JoinGroup is parked.
  auto ja3 = join(join_request("", "inst-a"));
  ASSERT_TRUE(ja2.ready());
  EXPECT_EQ(ja2->error_code, code(ErrorCode::kFencedInstanceId));
  EXPECT_FALSE(ja2->member_id.empty());
  EXPECT_NE(ja2->member_id, a);
  EXPECT_TRUE(take_transitions().empty());
}

}  // namespace
}  // namespace eddy::group
