// The group coordinator's committed offsets and group administration
// (OffsetCommit checks, OffsetDelete, expiry, List/Describe/DeleteGroups).
#include <gtest/gtest.h>

#include "protocol/consumer_protocol.h"
#include "tests/unit/group/coordinator_fixture.h"

namespace eddy::group {
namespace {

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
  clock_.advance(50'000);
  EXPECT_EQ(committed(2), 42);
  clock_.advance(30'000);  // past retention, checked every 10 s
  EXPECT_EQ(committed(2), -1);
}

TEST_F(CoordinatorTest, AClusterNodeExpiresOnlyWhileCoordinatingAndThroughTheSink) {
  EXPECT_EQ(commit("", -1, 2, 42), 0);
  EXPECT_EQ(commit("", -1, 4, 43), 0);
  bool serving = false;
  std::vector<std::vector<meta::GroupTopicPartition>> handed;
  coordinator_->set_serving([&] { return serving; });
  coordinator_->set_expired_offsets_sink(
      [&](std::vector<meta::GroupTopicPartition> expired) { handed.push_back(std::move(expired)); });
  clock_.advance(80'000);  // past retention: another node coordinates the group
  EXPECT_TRUE(handed.empty());
  serving = true;
  EXPECT_EQ(coordinator_->availability(), ErrorCode::kNone);
  clock_.advance(10'000);
  ASSERT_FALSE(handed.empty());
  const std::vector<meta::GroupTopicPartition> want = {{"g", {"t", 2}}, {"g", {"t", 4}}};
  EXPECT_EQ(handed[0], want);
  // Nothing is deleted here: applying the controller log's record does that.
  EXPECT_EQ(committed(2), 42);
  EXPECT_EQ(committed(4), 43);
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
  // Offsets a transaction staged in the group go with it: a commit that
  // comes later applies nothing to the deleted group.
  ASSERT_TRUE(meta_->pending_offsets().stage("g", 4001, {{"t", 1, 9, -1, "", 0}}).ok());
  dr = coordinator_->delete_groups(del);
  EXPECT_EQ(dr.results[0].error_code, 0);
  EXPECT_EQ(committed(0), -1);
  int64_t applied = -1;
  ASSERT_TRUE(meta_->pending_offsets().complete("g", 4001, true, &applied).ok());
  EXPECT_EQ(applied, 0) << "nothing staged was left to apply";
  EXPECT_EQ(committed(1), -1);
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

}  // namespace
}  // namespace eddy::group

namespace eddy::group {
namespace {

// A cluster node that is not the controller leader coordinates nothing:
// every group request is answered NOT_COORDINATOR (clients then ask
// FindCoordinator again), and it lists no groups; once it serves, it does.
TEST_F(CoordinatorTest, ANodeThatDoesNotServeAnswersNotCoordinator) {
  EXPECT_EQ(commit("", -1, 0, 10), 0);
  bool serving = false;
  coordinator_->set_serving([&serving] { return serving; });
  const int16_t not_coordinator = code(ErrorCode::kNotCoordinator);
  auto joined = join(join_request(""));
  ASSERT_TRUE(joined.ready());
  EXPECT_EQ(joined->error_code, not_coordinator);
  EXPECT_EQ(heartbeat("m", 1), not_coordinator);
  EXPECT_EQ(commit("", -1, 0, 11), not_coordinator);
  protocol::OffsetFetchRequest fetch;
  fetch.group_id = "g";
  protocol::OffsetFetchRequest::OffsetFetchRequestTopic t;
  t.name = "t";
  t.partition_indexes = {0};
  fetch.topics->push_back(t);
  EXPECT_EQ(coordinator_->fetch_offsets(fetch, 7).error_code, not_coordinator) << "no stale offsets from here";
  auto v1 = coordinator_->fetch_offsets(fetch, 1);
  ASSERT_EQ(v1.topics.size(), 1u);
  EXPECT_EQ(v1.topics[0].partitions.at(0).error_code, not_coordinator) << "before v2: on the partitions";
  protocol::DescribeGroupsRequest d;
  d.groups = {"g"};
  EXPECT_EQ(coordinator_->describe_groups(d).groups.at(0).error_code, not_coordinator);
  protocol::DeleteGroupsRequest del;
  del.groups_names = {"g"};
  EXPECT_EQ(coordinator_->delete_groups(del).results.at(0).error_code, not_coordinator);
  EXPECT_TRUE(coordinator_->list_groups({}).groups.empty());
  serving = true;
  EXPECT_EQ(committed(0), 10) << "nothing was changed meanwhile";
  EXPECT_EQ(coordinator_->list_groups({}).groups.size(), 1u);
}

}  // namespace
}  // namespace eddy::group
