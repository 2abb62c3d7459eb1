// The group coordinator's state machine, on a fake clock and a real meta
// store in a temp dir.
#include "group/coordinator.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "protocol/consumer_protocol.h"
#include "tests/unit/port/test_dir.h"

namespace eddy::group {
namespace {

using protocol::ErrorCode;
using State = Coordinator::State;

class FakeTimers : public Timers {
 public:
  Id schedule_after(int64_t delay_ms, std::function<void()> fn) override {
    Id id = next_++;
    timers_[id] = {now_ + delay_ms, std::move(fn)};
    return id;
  }
  void cancel(Id id) override { timers_.erase(id); }
  int64_t now_ms() override { return now_; }
  // Moves the clock, running due timers in deadline order.
  void advance(int64_t ms) {
    const int64_t end = now_ + ms;
    for (;;) {
      auto due = timers_.end();
      for (auto it = timers_.begin(); it != timers_.end(); ++it) {
        if (it->second.first <= end && (due == timers_.end() || it->second.first < due->second.first)) due = it;
      }
      if (due == timers_.end()) break;
      now_ = std::max(now_, due->second.first);
      auto fn = std::move(due->second.second);
      timers_.erase(due);
      fn();
    }
    now_ = end;
  }

 private:
  Id next_ = 1;
  int64_t now_ = 1'000'000;
  std::map<Id, std::pair<int64_t, std::function<void()>>> timers_;
};

// A parked JoinGroup/SyncGroup answer.
template <typename R>
struct Answer {
  std::shared_ptr<std::optional<R>> slot = std::make_shared<std::optional<R>>();
  std::function<void(const R&)> callback() {
    auto s = slot;
    return [s](const R& r) { *s = r; };
  }
  bool ready() const { return slot->has_value(); }
  const R& operator*() const { return **slot; }
  const R* operator->() const { return &**slot; }
};

using Transition = std::pair<State, State>;

// Kafka's GroupMetadata transitions, written out independently of
// group_state.cc: the target state and the states it may be entered from.
bool kafka_allows(State from, State to) {
  static const std::set<Transition> allowed = {
      {State::kEmpty, State::kPreparingRebalance},
      {State::kStable, State::kPreparingRebalance},
      {State::kCompletingRebalance, State::kPreparingRebalance},
      {State::kPreparingRebalance, State::kCompletingRebalance},
      {State::kCompletingRebalance, State::kStable},
      {State::kPreparingRebalance, State::kEmpty},
      {State::kEmpty, State::kDead},
      {State::kPreparingRebalance, State::kDead},
      {State::kCompletingRebalance, State::kDead},
      {State::kStable, State::kDead},
      {State::kDead, State::kDead},
  };
  return allowed.count({from, to}) > 0;
}

class CoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override { open(); }

  // Whatever a test does, the coordinator never makes an illegal transition.
  void TearDown() override {
    for (const auto& [group, t] : transitions_) {
      EXPECT_TRUE(kafka_allows(t.first, t.second))
          << "group " << group << ": " << group_state_name(t.first) << " -> " << group_state_name(t.second);
    }
  }

  // The transitions group "g" made since the last call.
  std::vector<Transition> take_transitions() {
    std::vector<Transition> out;
    for (; taken_ < transitions_.size(); taken_++) {
      if (transitions_[taken_].first == "g") out.push_back(transitions_[taken_].second);
    }
    return out;
  }

  void open() {
    coordinator_.reset();
    meta_.reset();
    ASSERT_TRUE(meta::MetaStore::open(dir_.path() + "/eddy.db", &meta_).ok());
    CoordinatorOptions o;
    o.offsets_retention_ms = 60'000;
    o.offsets_retention_check_interval_ms = 10'000;
    o.initial_rebalance_delay_ms = initial_delay_ms_;
    coordinator_ = std::make_unique<Coordinator>(
        timers_, meta_.get(), [](const std::string& t, int32_t p) { return t == "t" && p >= 0 && p < 6; }, o);
    coordinator_->observe_transitions(
        [this](const std::string& group, State from, State to) { transitions_.push_back({group, {from, to}}); });
    ASSERT_TRUE(coordinator_->start().ok());
  }

  protocol::JoinGroupRequest join_request(const std::string& member, std::optional<std::string> instance = {},
                                          std::vector<uint8_t> metadata = {1, 2, 3}) {
    protocol::JoinGroupRequest r;
    r.group_id = "g";
    r.session_timeout_ms = 10'000;
    r.rebalance_timeout_ms = 30'000;
    r.member_id = member;
    r.group_instance_id = std::move(instance);
    r.protocol_type = "consumer";
    protocol::JoinGroupRequest::JoinGroupRequestProtocol p;
    p.name = "range";
    p.metadata = std::move(metadata);
    r.protocols.push_back(p);
    return r;
  }

  Answer<protocol::JoinGroupResponse> join(const protocol::JoinGroupRequest& r, int16_t version = 9) {
    Answer<protocol::JoinGroupResponse> a;
    coordinator_->join(r, {version, "client", "/127.0.0.1"}, a.callback());
    return a;
  }

  // Joins a dynamic member through the MEMBER_ID_REQUIRED round trip; the
  // answer may still be parked (rebalance in progress).
  Answer<protocol::JoinGroupResponse> join_new(std::string* member_id) {
    auto first = join(join_request(""));
    EXPECT_TRUE(first.ready());
    EXPECT_EQ(first->error_code, protocol::to_int(ErrorCode::kMemberIdRequired));
    *member_id = first->member_id;
    return join(join_request(*member_id));
  }

  Answer<protocol::SyncGroupResponse> sync(const std::string& member, int32_t generation,
                                           std::vector<std::pair<std::string, std::vector<uint8_t>>> assignments = {},
                                           std::optional<std::string> instance = {}) {
    protocol::SyncGroupRequest r;
    r.group_id = "g";
    r.generation_id = generation;
    r.member_id = member;
    r.group_instance_id = std::move(instance);
    for (auto& [m, a] : assignments) {
      protocol::SyncGroupRequest::SyncGroupRequestAssignment sa;
      sa.member_id = m;
      sa.assignment = a;
      r.assignments.push_back(sa);
    }
    Answer<protocol::SyncGroupResponse> a;
    coordinator_->sync(r, {5, "client", "/127.0.0.1"}, a.callback());
    return a;
  }

  int16_t heartbeat(const std::string& member, int32_t generation, std::optional<std::string> instance = {}) {
    protocol::HeartbeatRequest r;
    r.group_id = "g";
    r.generation_id = generation;
    r.member_id = member;
    r.group_instance_id = std::move(instance);
    return coordinator_->heartbeat(r).error_code;
  }

  int16_t commit(const std::string& member, int32_t generation, int32_t partition, int64_t offset,
                 std::optional<std::string> instance = {}, std::string metadata = "") {
    protocol::OffsetCommitRequest r;
    r.group_id = "g";
    r.generation_id_or_member_epoch = generation;
    r.member_id = member;
    r.group_instance_id = std::move(instance);
    protocol::OffsetCommitRequest::OffsetCommitRequestTopic t;
    t.name = "t";
    protocol::OffsetCommitRequest::OffsetCommitRequestPartition p;
    p.partition_index = partition;
    p.committed_offset = offset;
    p.committed_metadata = metadata;
    t.partitions.push_back(p);
    r.topics.push_back(t);
    auto resp = coordinator_->commit_offsets(r, 8);
    return resp.topics.at(0).partitions.at(0).error_code;
  }

  int64_t committed(int32_t partition) {
    protocol::OffsetFetchRequest r;
    r.group_id = "g";
    protocol::OffsetFetchRequest::OffsetFetchRequestTopic t;
    t.name = "t";
    t.partition_indexes = {partition};
    r.topics->push_back(t);
    auto resp = coordinator_->fetch_offsets(r, 7);
    return resp.topics.at(0).partitions.at(0).committed_offset;
  }

  static int16_t code(ErrorCode c) { return protocol::to_int(c); }

  int32_t initial_delay_ms_ = 0;
  std::vector<std::pair<std::string, Transition>> transitions_;  // every group's, in order
  size_t taken_ = 0;
  eddy::testing::TempDir dir_;
  FakeTimers timers_;
  std::unique_ptr<meta::MetaStore> meta_;
  std::unique_ptr<Coordinator> coordinator_;
};

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
  timers_.advance(30'000);  // a's rebalance timeout; a heartbeats but never rejoins
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
    timers_.advance(3'000);
    EXPECT_EQ(heartbeat(b, 2), 0);
  }
  EXPECT_EQ(coordinator_->group_state("g"), State::kStable);
  timers_.advance(1'001);  // a's session timeout (10 s after its SyncGroup)
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
  timers_.advance(10'001);
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
  timers_.advance(10'001);  // offsets.retention.check.interval.ms
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

TEST_F(CoordinatorTest, OffsetCommitChecksGenerationAndMember) {
  // Outside group management (manual assignment).
  EXPECT_EQ(commit("", -1, 0, 10), 0);
  EXPECT_EQ(committed(0), 10);
  EXPECT_EQ(commit("", -1, 7, 10), code(ErrorCode::kUnknownTopicOrPartition));
  EXPECT_EQ(commit("", -1, 0, 11, std::nullopt, std::string(5000, 'x')), code(ErrorCode::kOffsetMetadataTooLarge));
  EXPECT_EQ(commit("someone", 3, 0, 11), code(ErrorCode::kIllegalGeneration));
  EXPECT_EQ(committed(0), 10);
  std::string a;
  join_new(&a);
  EXPECT_EQ(commit(a, 1, 0, 12), code(ErrorCode::kRebalanceInProgress));  // CompletingRebalance
  sync(a, 1, {{a, {1}}});
  EXPECT_EQ(commit(a, 1, 0, 12), 0);
  EXPECT_EQ(commit(a, 0, 0, 13), code(ErrorCode::kIllegalGeneration));
  EXPECT_EQ(commit("stranger", 1, 0, 13), code(ErrorCode::kUnknownMemberId));
  EXPECT_EQ(commit("", -1, 0, 13), code(ErrorCode::kUnknownMemberId));  // group is not empty
  EXPECT_EQ(committed(0), 12);
  EXPECT_EQ(committed(1), -1);
}

TEST_F(CoordinatorTest, OffsetsSurviveRestartAndExpireWhenEmpty) {
  EXPECT_EQ(commit("", -1, 2, 42), 0);
  open();
  EXPECT_EQ(committed(2), 42);
  timers_.advance(50'000);
  EXPECT_EQ(committed(2), 42);
  timers_.advance(30'000);  // past retention, checked every 10 s
  EXPECT_EQ(committed(2), -1);
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

TEST_F(CoordinatorTest, ReloadedStaticMemberThatNeverReturnsIsRemoved) {
  auto ja = join(join_request("", "inst-a"));
  sync(ja->member_id, 1, {{ja->member_id, {1}}}, "inst-a");
  open();
  timers_.advance(10'001);
  EXPECT_EQ(coordinator_->group_state("g"), State::kDead);  // removed, then swept (no offsets)
  open();
  EXPECT_EQ(coordinator_->group_state("g"), State::kDead);
}

TEST_F(CoordinatorTest, DescribeListDelete) {
  std::string a;
  join_new(&a);
  sync(a, 1, {{a, {7}}});
  EXPECT_EQ(commit(a, 1, 0, 3), 0);
  protocol::DescribeGroupsRequest d;
  d.groups = {"g", "none"};
  auto desc = coordinator_->describe_groups(d);
  ASSERT_EQ(desc.groups.size(), 2u);
  EXPECT_EQ(desc.groups[0].group_state, "Stable");
  EXPECT_EQ(desc.groups[0].protocol_data, "range");
  ASSERT_EQ(desc.groups[0].members.size(), 1u);
  EXPECT_EQ(desc.groups[0].members[0].member_assignment, (std::vector<uint8_t>{7}));
  EXPECT_EQ(desc.groups[1].group_state, "Dead");
  auto list = coordinator_->list_groups({});
  ASSERT_EQ(list.groups.size(), 1u);
  EXPECT_EQ(list.groups[0].group_state, "Stable");
  protocol::DeleteGroupsRequest del;
  del.groups_names = {"g", "none"};
  auto dr = coordinator_->delete_groups(del);
  EXPECT_EQ(dr.results[0].error_code, code(ErrorCode::kNonEmptyGroup));
  EXPECT_EQ(dr.results[1].error_code, code(ErrorCode::kGroupIdNotFound));
  protocol::LeaveGroupRequest leave;
  leave.group_id = "g";
  leave.member_id = a;
  EXPECT_EQ(coordinator_->leave(leave, 0).error_code, 0);
  list = coordinator_->list_groups({});
  ASSERT_EQ(list.groups.size(), 1u);
  EXPECT_EQ(list.groups[0].group_state, "Empty");
  dr = coordinator_->delete_groups(del);
  EXPECT_EQ(dr.results[0].error_code, 0);
  EXPECT_EQ(committed(0), -1);
}

TEST_F(CoordinatorTest, InitialRebalanceDelayGathersMembersStartingTogether) {
  initial_delay_ms_ = 3'000;
  open();
  std::string a, b, c;
  auto ja = join_new(&a);
  EXPECT_FALSE(ja.ready());
  timers_.advance(2'000);
  auto jb = join_new(&b);
  timers_.advance(2'000);  // first delay over, b came during it: wait again
  EXPECT_FALSE(ja.ready());
  auto jc = join_new(&c);   // t = 4 s, during the second delay (until 6 s): a third one
  timers_.advance(4'999);
  EXPECT_FALSE(ja.ready());
  timers_.advance(1);
  ASSERT_TRUE(ja.ready() && jb.ready() && jc.ready());
  EXPECT_EQ(ja->generation_id, 1);  // one rebalance for all three
  EXPECT_EQ(ja->members.size(), 3u);
}

TEST_F(CoordinatorTest, InitialRebalanceDelayIsBoundedByTheRebalanceTimeout) {
  initial_delay_ms_ = 3'000;
  open();
  std::string id;
  const int64_t start = timers_.now_ms();
  auto first = join_new(&id);
  int64_t ready_after = -1;
  for (int64_t t = 100; t <= 40'000 && ready_after < 0; t += 100) {
    timers_.advance(100);
    if (first.ready()) ready_after = timers_.now_ms() - start;
    if (t % 2'900 == 0) join_new(&id);  // members keep coming
  }
  EXPECT_GT(ready_after, 27'000);
  EXPECT_LE(ready_after, 30'000);  // the rebalance timeout
}

TEST_F(CoordinatorTest, OffsetDeleteRefusesSubscribedTopics) {
  protocol::ConsumerProtocolSubscription sub;
  sub.topics = {"t"};
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(protocol::encode_consumer_subscription(sub, 1, &bytes).ok());
  auto r = join_request("", std::nullopt, bytes);
  auto j = join(r, 3);
  ASSERT_EQ(j->error_code, 0);
  sync(j->member_id, 1, {{j->member_id, {}}});
  ASSERT_EQ(commit(j->member_id, 1, 0, 5), 0);
  ASSERT_EQ(commit(j->member_id, 1, 1, 6), 0);
  protocol::OffsetDeleteRequest del;
  del.group_id = "g";
  protocol::OffsetDeleteRequest::OffsetDeleteRequestTopic t;
  t.name = "t";
  t.partitions.resize(1);
  t.partitions[0].partition_index = 0;
  del.topics.push_back(t);
  auto resp = coordinator_->delete_offsets(del);
  EXPECT_EQ(resp.error_code, 0);
  EXPECT_EQ(resp.topics.at(0).partitions.at(0).error_code, code(ErrorCode::kGroupSubscribedToTopic));
  EXPECT_EQ(committed(0), 5);
  protocol::LeaveGroupRequest leave;
  leave.group_id = "g";
  leave.member_id = j->member_id;
  coordinator_->leave(leave, 0);
  resp = coordinator_->delete_offsets(del);
  EXPECT_EQ(resp.topics.at(0).partitions.at(0).error_code, 0);
  EXPECT_EQ(committed(0), -1);
  EXPECT_EQ(committed(1), 6);
  del.group_id = "unknown";
  EXPECT_EQ(coordinator_->delete_offsets(del).error_code, code(ErrorCode::kGroupIdNotFound));
}

TEST_F(CoordinatorTest, ListGroupsFiltersIgnoreCase) {
  std::string a;
  join_new(&a);
  sync(a, 1, {{a, {7}}});
  protocol::OffsetCommitRequest c;
  c.group_id = "simple";
  c.generation_id_or_member_epoch = -1;
  c.topics.resize(1);
  c.topics[0].name = "t";
  c.topics[0].partitions.resize(1);
  ASSERT_EQ(coordinator_->commit_offsets(c, 8).topics.at(0).partitions.at(0).error_code, 0);
  auto names = [&](std::vector<std::string> states, std::vector<std::string> types) {
    protocol::ListGroupsRequest r;
    r.states_filter = std::move(states);
    r.types_filter = std::move(types);
    std::vector<std::string> out;
    for (const auto& g : coordinator_->list_groups(r).groups) out.push_back(g.group_id);
    return out;
  };
  EXPECT_EQ(names({}, {}), (std::vector<std::string>{"g", "simple"}));
  EXPECT_EQ(names({"STABLE"}, {}), (std::vector<std::string>{"g"}));
  EXPECT_EQ(names({"empty", "Dead"}, {}), (std::vector<std::string>{"simple"}));
  EXPECT_EQ(names({}, {"Classic"}), (std::vector<std::string>{"g", "simple"}));
  EXPECT_TRUE(names({}, {"consumer"}).empty());
  EXPECT_TRUE(names({"stable"}, {"consumer"}).empty());
}

// ---- State transitions ----------------------------------------------------

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
  timers_.advance(10'001);  // the offsets sweep forgets an empty group without offsets
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
  timers_.advance(5'000);
  EXPECT_EQ(heartbeat(b, 2), 0);
  timers_.advance(5'001);  // a's session is over; b's is not
  EXPECT_EQ(take_transitions(), (std::vector<Transition>{{kStable, kPreparing}}));
  join(join_request(b));
  EXPECT_EQ(take_transitions(), (std::vector<Transition>{{kPreparing, kCompleting}}));
  timers_.advance(10'001);  // b goes silent too
  EXPECT_EQ(take_transitions(), (std::vector<Transition>{{kCompleting, kPreparing}, {kPreparing, kEmpty}}));
}

TEST_F(CoordinatorTest, ReloadedGroupIsCreatedStableWithoutATransition) {
  auto ja = join(join_request("", "inst-a"));
  sync(ja->member_id, 1, {{ja->member_id, {1}}}, "inst-a");
  open();
  EXPECT_EQ(take_transitions().size(), 3u);  // the first coordinator's: Empty -> ... -> Stable
  EXPECT_EQ(coordinator_->group_state("g"), kStable);
  timers_.advance(10'001);  // the reloaded member never returns
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
