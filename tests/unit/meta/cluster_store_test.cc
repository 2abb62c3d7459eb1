#include <gtest/gtest.h>

#include "meta/cluster_store.h"
#include "meta/node_ids.h"
#include "tests/unit/meta/meta_test_util.h"

namespace eddy::meta {
namespace {

using ClusterStoreTest = testing::MetaStoreTest;

ClusterForwardCursor cursor(const Uuid& topic_id, int64_t next_offset, int32_t sequence) {
  return ClusterForwardCursor{"central", topic_id, "sensors", 0, next_offset, 7, 0, sequence, 1000 + next_offset, 0};
}

TEST_F(ClusterStoreTest, TheFurthestCursorIsKeptAndALaterEqualOneReplacesIt) {
  TopicRecord t;
  ASSERT_TRUE(store_->topics().create(testing::new_topic("sensors", 2), &t).ok());
  bool kept = false;
  ASSERT_TRUE(store_->cluster().merge_forward_cursor(cursor(t.id, 100, 10), &kept).ok());
  EXPECT_TRUE(kept);
  // An older one (a node that shared late) does not move it back.
  ASSERT_TRUE(store_->cluster().merge_forward_cursor(cursor(t.id, 50, 5), &kept).ok());
  EXPECT_FALSE(kept);
  ClusterForwardCursor same = cursor(t.id, 100, 10);
  same.remote_next_offset = 2000;
  ASSERT_TRUE(store_->cluster().merge_forward_cursor(same, &kept).ok());
  EXPECT_TRUE(kept);
  ClusterForwardCursor other_partition = cursor(t.id, 3, 1);
  other_partition.partition = 1;
  ASSERT_TRUE(store_->cluster().merge_forward_cursor(other_partition, &kept).ok());
  EXPECT_TRUE(kept);

  std::vector<ClusterForwardCursor> held;
  ASSERT_TRUE(store_->cluster().forward_cursors(&held).ok());
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(held[0], same);
  EXPECT_EQ(held[1], other_partition);

  reopen();
  ASSERT_TRUE(store_->cluster().forward_cursors(&held).ok());
  EXPECT_EQ(held.size(), 2u);
  ASSERT_TRUE(store_->cluster().remove_all_forward_cursors().ok());
  ASSERT_TRUE(store_->cluster().forward_cursors(&held).ok());
  EXPECT_TRUE(held.empty());
}

TEST_F(ClusterStoreTest, AnUnknownTopicKeepsNothingAndARemovedTopicTakesItsCursors) {
  bool kept = true;
  ASSERT_TRUE(store_->cluster().merge_forward_cursor(cursor(Uuid::random(), 10, 1), &kept).ok());
  EXPECT_FALSE(kept);
  TopicRecord t;
  ASSERT_TRUE(store_->topics().create(testing::new_topic("sensors", 1), &t).ok());
  ASSERT_TRUE(store_->cluster().merge_forward_cursor(cursor(t.id, 10, 1), &kept).ok());
  EXPECT_TRUE(kept);
  ASSERT_TRUE(store_->topics().remove("sensors").ok());
  std::vector<ClusterForwardCursor> held;
  ASSERT_TRUE(store_->cluster().forward_cursors(&held).ok());
  EXPECT_TRUE(held.empty());
}

TEST_F(ClusterStoreTest, NegativeFieldsAreRefused) {
  TopicRecord t;
  ASSERT_TRUE(store_->topics().create(testing::new_topic("sensors", 1), &t).ok());
  bool kept = true;
  EXPECT_EQ(store_->cluster().merge_forward_cursor(cursor(t.id, -1, 0), &kept).code(),
            Status::Code::kInvalidArgument);
  EXPECT_FALSE(kept);
}

TEST_F(ClusterStoreTest, APartitionLeaderOfAnOlderEpochDoesNotReplaceANewerOne) {
  TopicRecord t;
  ASSERT_TRUE(store_->topics().create(testing::new_topic("sensors", 2), &t).ok());
  bool kept = false;
  ASSERT_TRUE(store_->cluster().merge_partition_leader({t.id, 0, 2, 5, {1, 2, 3}}, &kept).ok());
  EXPECT_TRUE(kept);
  ASSERT_TRUE(store_->cluster().merge_partition_leader({t.id, 0, 1, 4, {1}}, &kept).ok());
  EXPECT_FALSE(kept) << "a late record of an older epoch";
  ASSERT_TRUE(store_->cluster().merge_partition_leader({t.id, 0, 2, 5, {2, 3}}, &kept).ok());
  EXPECT_TRUE(kept) << "the same epoch's ISR shrank";
  ASSERT_TRUE(store_->cluster().merge_partition_leader({Uuid::random(), 0, 2, 5, {2}}, &kept).ok());
  EXPECT_FALSE(kept) << "a topic not held";
  EXPECT_EQ(store_->cluster().merge_partition_leader({t.id, 0, -1, 5, {2}}, &kept).code(),
            Status::Code::kInvalidArgument);
  std::vector<PartitionLeader> held;
  ASSERT_TRUE(store_->cluster().partition_leaders(&held).ok());
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0], (PartitionLeader{t.id, 0, 2, 5, {2, 3}}));
  ASSERT_TRUE(store_->topics().remove("sensors").ok());
  ASSERT_TRUE(store_->cluster().partition_leaders(&held).ok());
  EXPECT_TRUE(held.empty());
}

TEST_F(ClusterStoreTest, FencingANodeTwiceOrUnfencingAnUnfencedOneChangesNothing) {
  std::vector<int32_t> fenced;
  ASSERT_TRUE(store_->cluster().set_fenced(3, true).ok());
  ASSERT_TRUE(store_->cluster().set_fenced(3, true).ok());
  ASSERT_TRUE(store_->cluster().set_fenced(1, true).ok());
  ASSERT_TRUE(store_->cluster().set_fenced(2, false).ok());
  ASSERT_TRUE(store_->cluster().fenced_nodes(&fenced).ok());
  EXPECT_EQ(fenced, (std::vector<int32_t>{1, 3}));
  // Fenced before it ever registered (a node that never started): kept
  // apart from the registrations, which it does not join.
  std::vector<ClusterBroker> brokers;
  ASSERT_TRUE(store_->cluster().brokers(&brokers).ok());
  EXPECT_TRUE(brokers.empty());
  reopen();
  ASSERT_TRUE(store_->cluster().set_fenced(1, false).ok());
  ASSERT_TRUE(store_->cluster().fenced_nodes(&fenced).ok());
  EXPECT_EQ(fenced, (std::vector<int32_t>{3}));
  EXPECT_EQ(store_->cluster().set_fenced(-1, true).code(), Status::Code::kInvalidArgument);
  ASSERT_TRUE(store_->cluster().unfence_all().ok());
  ASSERT_TRUE(store_->cluster().fenced_nodes(&fenced).ok());
  EXPECT_TRUE(fenced.empty());
}

TEST(NodeIds, JoinAndSplitRoundTripAndBadTextIsCorruption) {
  EXPECT_EQ(join_node_ids({}), "");
  EXPECT_EQ(join_node_ids({3, 1, 20}), "3,1,20");
  std::vector<int32_t> ids;
  ASSERT_TRUE(split_node_ids("3,1,20", "t", &ids).ok());
  EXPECT_EQ(ids, (std::vector<int32_t>{3, 1, 20}));
  ASSERT_TRUE(split_node_ids("", "t", &ids).ok());
  EXPECT_TRUE(ids.empty());
  for (const char* bad : {"1,,2", ",1", "1,", "a", "-1", "99999999999", "2147483648"}) {
    EXPECT_EQ(split_node_ids(bad, "t", &ids).code(), Status::Code::kCorruption) << bad;
  }
}

}  // namespace
}  // namespace eddy::meta
