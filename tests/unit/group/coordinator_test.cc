// The group coordinator's membership: JoinGroup, SyncGroup, Heartbeat,
// LeaveGroup, rebalances, static members, on a fake clock and a real meta
// store in a temp dir.
#include <gtest/gtest.h>

#include "tests/unit/group/coordinator_fixture.h"

namespace eddy::group {
namespace {

TEST_F(CoordinatorTest, SingleMemberJoinsSyncsAndHeartbeats) {
  std::string id;
  auto j = join_new(&id);
  ASSERT_TRUE(j.ready());
  EXPECT_EQ(j->error_code, 0);
  EXPECT_EQ(j->generation_id, 1);
  EXPECT_EQ(j->leader, id);
  EXPECT_EQ(j->protocol_name, "range");
  ASSERT_EQ(j->members.size(), 1u);
  EXPECT_EQ(coordinator_->group_state("g"), State::kCompletingRebalance);
  auto s = sync(id, 1, {{id, {9, 9}}});
  ASSERT_TRUE(s.ready());
  EXPECT_EQ(s->error_code, 0);
  EXPECT_EQ(s->assignment, (std::vector<uint8_t>{9, 9}));
  EXPECT_EQ(coordinator_->group_state("g"), State::kStable);
  EXPECT_EQ(heartbeat(id, 1), 0);
  EXPECT_EQ(heartbeat(id, 0), code(ErrorCode::kIllegalGeneration));
  EXPECT_EQ(heartbeat("nobody", 1), code(ErrorCode::kUnknownMemberId));
}

TEST_F(CoordinatorTest, OldVersionsJoinWithoutMemberIdRoundTrip) {
  auto j = join(join_request(""), 3);
  ASSERT_TRUE(j.ready());
  EXPECT_EQ(j->error_code, 0);
  EXPECT_FALSE(j->member_id.empty());
  EXPECT_EQ(j->leader, j->member_id);
}

TEST_F(CoordinatorTest, SecondMemberTriggersRebalanceAndWaitsForTheFirst) {
  std::string a, b;
  auto ja = join_new(&a);
  ASSERT_TRUE(ja.ready());
  ASSERT_TRUE(sync(a, 1, {{a, {1}}}).ready());
  auto jb = join_new(&b);
  EXPECT_FALSE(jb.ready());  // waits for a to rejoin
  EXPECT_EQ(coordinator_->group_state("g"), State::kPreparingRebalance);
  EXPECT_EQ(heartbeat(a, 1), code(ErrorCode::kRebalanceInProgress));
  auto ja2 = join(join_request(a));
  ASSERT_TRUE(ja2.ready());
  ASSERT_TRUE(jb.ready());
  EXPECT_EQ(ja2->generation_id, 2);
  EXPECT_EQ(jb->generation_id, 2);
  EXPECT_EQ(ja2->leader, a);  // the leader stays
  EXPECT_EQ(ja2->members.size(), 2u);
  EXPECT_TRUE(jb->members.empty());
  auto sb = sync(b, 2);
  EXPECT_FALSE(sb.ready());  // followers wait for the leader
  auto sa = sync(a, 2, {{a, {1}}, {b, {2}}});
  ASSERT_TRUE(sa.ready());
  ASSERT_TRUE(sb.ready());
  EXPECT_EQ(sb->assignment, (std::vector<uint8_t>{2}));
  EXPECT_EQ(sa->assignment, (std::vector<uint8_t>{1}));
}

TEST_F(CoordinatorTest, RebalanceTimeoutDropsMembersThatDoNotRejoin) {
  std::string a, b;
  join_new(&a);
  sync(a, 1, {{a, {1}}});
  auto jb = join_new(&b);
  EXPECT_FALSE(jb.ready());
  clock_.advance(30'000);  // a's rebalance timeout; a heartbeats but never rejoins
  ASSERT_TRUE(jb.ready());
  EXPECT_EQ(jb->generation_id, 2);
  EXPECT_EQ(jb->leader, b);
  EXPECT_EQ(heartbeat(a, 2), code(ErrorCode::kUnknownMemberId));
}

TEST_F(CoordinatorTest, SessionTimeoutRemovesMemberAndRebalances) {
  std::string a, b;
  join_new(&a);
  sync(a, 1, {{a, {1}}});
  auto jb = join_new(&b);
  auto ja = join(join_request(a));
  ASSERT_TRUE(jb.ready());
  sync(a, 2, {{a, {1}}, {b, {2}}});
  sync(b, 2);
  // b keeps heartbeating, a goes silent.
  for (int i = 0; i < 3; i++) {
    clock_.advance(3'000);
    EXPECT_EQ(heartbeat(b, 2), 0);
  }
  EXPECT_EQ(coordinator_->group_state("g"), State::kStable);
  clock_.advance(1'001);  // a's session timeout (10 s after its SyncGroup)
  EXPECT_EQ(coordinator_->group_state("g"), State::kPreparingRebalance);
  EXPECT_EQ(heartbeat(b, 2), code(ErrorCode::kRebalanceInProgress));
  auto jb2 = join(join_request(b));
  ASSERT_TRUE(jb2.ready());
  EXPECT_EQ(jb2->generation_id, 3);
  EXPECT_EQ(jb2->leader, b);
  EXPECT_EQ(jb2->members.size(), 1u);
}

TEST_F(CoordinatorTest, PendingMemberIdExpires) {
  auto first = join(join_request(""));
  ASSERT_EQ(first->error_code, code(ErrorCode::kMemberIdRequired));
  clock_.advance(10'001);
  auto late = join(join_request(first->member_id));
  ASSERT_TRUE(late.ready());
  EXPECT_EQ(late->error_code, code(ErrorCode::kUnknownMemberId));
}

TEST_F(CoordinatorTest, ProtocolSelectionAndInconsistentProtocols) {
  auto r1 = join_request("");
  r1.protocols.clear();
  for (const char* n : {"cooperative-sticky", "range"}) {
    protocol::JoinGroupRequest::JoinGroupRequestProtocol p;
    p.name = n;
    r1.protocols.push_back(p);
  }
  auto j1 = join(r1, 3);
  ASSERT_TRUE(j1.ready());
  EXPECT_EQ(j1->protocol_name, "cooperative-sticky");
  sync(j1->member_id, 1);
  // Only range is common: it wins.
  auto j2 = join(join_request(""), 3);
  EXPECT_FALSE(j2.ready());
  auto r1b = r1;
  r1b.member_id = j1->member_id;
  auto j1b = join(r1b, 3);
  ASSERT_TRUE(j2.ready());
  EXPECT_EQ(j2->protocol_name, "range");
  // Nothing in common: refused.
  auto r3 = join_request("");
  r3.protocols[0].name = "roundrobin";
  auto j3 = join(r3, 3);
  ASSERT_TRUE(j3.ready());
  EXPECT_EQ(j3->error_code, code(ErrorCode::kInconsistentGroupProtocol));
}

TEST_F(CoordinatorTest, BadInput) {
  auto r = join_request("");
  r.session_timeout_ms = 10;
  EXPECT_EQ(join(r)->error_code, code(ErrorCode::kInvalidSessionTimeout));
  r = join_request("");
  r.group_id = "";
  EXPECT_EQ(join(r)->error_code, code(ErrorCode::kInvalidGroupId));
  r = join_request("", std::nullopt, std::vector<uint8_t>(1 << 20, 7));
  EXPECT_EQ(join(r)->error_code, code(ErrorCode::kInvalidRequest));
  EXPECT_EQ(join(join_request("made-up"))->error_code, code(ErrorCode::kUnknownMemberId));
  EXPECT_EQ(sync("made-up", 1)->error_code, code(ErrorCode::kUnknownMemberId));
  EXPECT_EQ(coordinator_->group_state("g"), State::kDead);
}

TEST_F(CoordinatorTest, LeaveGroupSeveralMembers) {
  std::string a, b;
  join_new(&a);
  sync(a, 1, {{a, {1}}});
  auto jb = join_new(&b);
  join(join_request(a));
  protocol::LeaveGroupRequest leave;
  leave.group_id = "g";
  for (const auto& id : {a, b, std::string("ghost")}) {
    protocol::LeaveGroupRequest::MemberIdentity m;
    m.member_id = id;
    leave.members.push_back(m);
  }
  auto resp = coordinator_->leave(leave, 5);
  ASSERT_EQ(resp.members.size(), 3u);
  EXPECT_EQ(resp.members[0].error_code, 0);
  EXPECT_EQ(resp.members[1].error_code, 0);
  EXPECT_EQ(resp.members[2].error_code, code(ErrorCode::kUnknownMemberId));
  // An empty group stays, as in Kafka, until the offsets sweep finds it
  // without committed offsets.
  EXPECT_EQ(coordinator_->group_state("g"), State::kEmpty);
  clock_.advance(10'001);  // offsets.retention.check.interval.ms
  EXPECT_EQ(coordinator_->group_state("g"), State::kDead);
}

TEST_F(CoordinatorTest, EmptyGroupsKeptInMemoryAreBounded) {
  // A client joining and leaving ever new groups: past 1024 groups in
  // memory, an emptied group is dropped at once instead of at the sweep.
  for (int i = 0; i < 1100; ++i) {
    auto r = join_request("");
    r.group_id = "loop-" + std::to_string(i);
    auto j = join(r, 3);  // v3: no MEMBER_ID_REQUIRED round trip
    ASSERT_TRUE(j.ready());
    ASSERT_EQ(j->error_code, 0);
    protocol::LeaveGroupRequest leave;
    leave.group_id = r.group_id;
    leave.member_id = j->member_id;
    coordinator_->leave(leave, 0);
  }
  EXPECT_EQ(coordinator_->group_state("loop-0"), State::kEmpty);     // kept, as in Kafka
  EXPECT_EQ(coordinator_->group_state("loop-1099"), State::kDead);   // over the bound: dropped
}

TEST_F(CoordinatorTest, StaticMemberRejoinKeepsAssignmentWithoutRebalance) {
  auto ja = join(join_request("", "inst-a"));
  ASSERT_TRUE(ja.ready());
  const std::string a = ja->member_id;
  std::string b;
  auto jb = join_new(&b);
  auto ja2 = join(join_request(a, "inst-a"));
  ASSERT_TRUE(jb.ready());
  ASSERT_TRUE(ja2.ready());
  sync(a, 2, {{a, {1}}, {b, {2}}}, "inst-a");
  sync(b, 2);
  ASSERT_EQ(coordinator_->group_state("g"), State::kStable);
  // inst-a restarts: joins with no member id.
  auto re = join(join_request("", "inst-a"));
  ASSERT_TRUE(re.ready());
  EXPECT_EQ(re->error_code, 0);
  EXPECT_EQ(re->generation_id, 2);
  EXPECT_NE(re->member_id, a);
  EXPECT_EQ(coordinator_->group_state("g"), State::kStable);
  auto s = sync(re->member_id, 2, {}, "inst-a");
  ASSERT_TRUE(s.ready());
  EXPECT_EQ(s->assignment, (std::vector<uint8_t>{1}));
  EXPECT_EQ(heartbeat(b, 2), 0);  // b saw no rebalance
  // The old instance is fenced.
  EXPECT_EQ(heartbeat(a, 2, "inst-a"), code(ErrorCode::kFencedInstanceId));
  EXPECT_EQ(commit(a, 2, 0, 5, "inst-a"), code(ErrorCode::kFencedInstanceId));
  EXPECT_EQ(committed(0), -1);
  // LeaveGroup by instance id.
  protocol::LeaveGroupRequest leave;
  leave.group_id = "g";
  protocol::LeaveGroupRequest::MemberIdentity m;
  m.group_instance_id = "inst-a";
  leave.members.push_back(m);
  auto resp = coordinator_->leave(leave, 4);
  EXPECT_EQ(resp.members.at(0).error_code, 0);
  EXPECT_EQ(coordinator_->group_state("g"), State::kPreparingRebalance);
}

TEST_F(CoordinatorTest, StaticMemberRejoinWithNewMetadataButTheSameProtocolDoesNotRebalance) {
  // A restarted Java consumer's subscription differs (no owned partitions,
  // generation -1); Kafka rebalances only when the group's protocol would
  // change.
  auto ja = join(join_request("", "inst-a", {1}));
  ASSERT_TRUE(ja.ready());
  const std::string a = ja->member_id;
  std::string b;
  auto jb = join_new(&b);
  auto ja2 = join(join_request(a, "inst-a", {1}));
  ASSERT_TRUE(jb.ready() && ja2.ready());
  sync(a, 2, {{a, {1}}, {b, {2}}}, "inst-a");
  sync(b, 2);
  auto re = join(join_request("", "inst-a", {9, 9, 9}));
  ASSERT_TRUE(re.ready());
  EXPECT_EQ(re->generation_id, 2);
  EXPECT_EQ(coordinator_->group_state("g"), State::kStable);
  EXPECT_EQ(heartbeat(b, 2), 0);
  // Offering only a protocol the other members do not support is refused,
  // as Kafka does, and the group stays as it is.
  auto other = join_request("", "inst-a");
  other.protocols[0].name = "roundrobin";
  auto re2 = join(other);
  ASSERT_TRUE(re2.ready());
  EXPECT_EQ(re2->error_code, code(ErrorCode::kInconsistentGroupProtocol));
  EXPECT_EQ(coordinator_->group_state("g"), State::kStable);
}

TEST_F(CoordinatorTest, StaticMembersSurviveRestart) {
  auto ja = join(join_request("", "inst-a"));
  sync(ja->member_id, 1, {{ja->member_id, {4, 2}}}, "inst-a");
  ASSERT_EQ(coordinator_->group_state("g"), State::kStable);
  open();
  EXPECT_EQ(coordinator_->group_state("g"), State::kStable);
  EXPECT_EQ(coordinator_->group_generation("g"), 1);
  auto re = join(join_request("", "inst-a"));
  ASSERT_TRUE(re.ready());
  EXPECT_EQ(re->error_code, 0);
  EXPECT_EQ(re->generation_id, 1);
  auto s = sync(re->member_id, 1, {}, "inst-a");
  EXPECT_EQ(s->assignment, (std::vector<uint8_t>{4, 2}));
}

TEST_F(CoordinatorTest, AClusterNodeHandsStaticMembersToTheSinkAndReloadsThemWhenItTakesOver) {
  std::vector<meta::StaticMember> saved;
  std::vector<std::pair<std::string, std::string>> removed;
  coordinator_->set_static_members_sink({[&](const meta::StaticMember& m) { saved.push_back(m); },
                                         [&](const std::string& g, const std::string& i) { removed.push_back({g, i}); }});
  auto ja = join(join_request("", "inst-a"));
  const std::string a = ja->member_id;
  sync(a, 1, {{a, {4, 2}}}, "inst-a");
  ASSERT_EQ(coordinator_->group_state("g"), State::kStable);
  ASSERT_FALSE(saved.empty());
  EXPECT_EQ(saved.back().member_id, a);
  EXPECT_EQ(saved.back().assignment, (std::vector<uint8_t>{4, 2}));
  std::vector<meta::StaticMember> stored;
  ASSERT_TRUE(meta_->static_members().load_all(&stored).ok());
  EXPECT_TRUE(stored.empty()) << "the controller log's record stores it, not the coordinator";

  // Another node coordinated meanwhile; the log stored the member as that
  // node last saw it, a generation later.
  coordinator_->step_down();
  EXPECT_EQ(coordinator_->group_state("g"), State::kDead);
  meta::StaticMember later = saved.back();
  later.generation_id = 2;
  ASSERT_TRUE(meta_->static_members().save(later).ok());
  coordinator_->take_over();
  EXPECT_EQ(coordinator_->group_state("g"), State::kStable);
  EXPECT_EQ(coordinator_->group_generation("g"), 2);
  EXPECT_EQ(heartbeat(a, 2, "inst-a"), 0) << "the member goes on without a rebalance";

  protocol::LeaveGroupRequest leave;
  leave.group_id = "g";
  protocol::LeaveGroupRequest::MemberIdentity m;
  m.group_instance_id = "inst-a";
  leave.members.push_back(m);
  EXPECT_EQ(coordinator_->leave(leave, 4).members.at(0).error_code, 0);
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(removed[0], (std::pair<std::string, std::string>{"g", "inst-a"}));
}

TEST_F(CoordinatorTest, ReloadedStaticMemberThatNeverReturnsIsRemoved) {
  auto ja = join(join_request("", "inst-a"));
  sync(ja->member_id, 1, {{ja->member_id, {1}}}, "inst-a");
  open();
  clock_.advance(10'001);
  EXPECT_EQ(coordinator_->group_state("g"), State::kDead);  // removed, then swept (no offsets)
  open();
  EXPECT_EQ(coordinator_->group_state("g"), State::kDead);
}

TEST_F(CoordinatorTest, InitialRebalanceDelayGathersMembersStartingTogether) {
  initial_delay_ms_ = 3'000;
  open();
  std::string a, b, c;
  auto ja = join_new(&a);
  EXPECT_FALSE(ja.ready());
  clock_.advance(2'000);
  auto jb = join_new(&b);
  clock_.advance(2'000);  // first delay over, b came during it: wait again
  EXPECT_FALSE(ja.ready());
  auto jc = join_new(&c);   // t = 4 s, during the second delay (until 6 s): a third one
  clock_.advance(4'999);
  EXPECT_FALSE(ja.ready());
  clock_.advance(1);
  ASSERT_TRUE(ja.ready() && jb.ready() && jc.ready());
  EXPECT_EQ(ja->generation_id, 1);  // one rebalance for all three
  EXPECT_EQ(ja->members.size(), 3u);
}

TEST_F(CoordinatorTest, InitialRebalanceDelayIsBoundedByTheRebalanceTimeout) {
  initial_delay_ms_ = 3'000;
  open();
  std::string id;
  const int64_t start = clock_.now_ms();
  auto first = join_new(&id);
  int64_t ready_after = -1;
  for (int64_t t = 100; t <= 40'000 && ready_after < 0; t += 100) {
    clock_.advance(100);
    if (first.ready()) ready_after = clock_.now_ms() - start;
    if (t % 2'900 == 0) join_new(&id);  // members keep coming
  }
  EXPECT_GT(ready_after, 27'000);
  EXPECT_LE(ready_after, 30'000);  // the rebalance timeout
}

}  // namespace
}  // namespace eddy::group
