// The answers for a partition of a Raft group (replicated_partition.h):
// KIP-320's epoch checks and leadership, KIP-951's leader hint,
// min.insync.replicas, Metadata's entry and OffsetForLeaderEpoch's rule.
#include "broker/replicated_partition.h"

#include <gtest/gtest.h>

namespace eddy::broker {
namespace {

using protocol::ErrorCode;

ReplicaStatus leader(int32_t self, int32_t epoch, std::vector<int32_t> isr) {
  ReplicaStatus s;
  s.replicated = true;
  s.leader = true;
  s.leader_id = self;
  s.leader_epoch = epoch;
  s.replicas = {1, 2, 3};
  s.isr = std::move(isr);
  return s;
}

ReplicaStatus follower(int32_t leader_id, int32_t epoch) {
  ReplicaStatus s;
  s.replicated = true;
  s.leader_id = leader_id;
  s.leader_epoch = epoch;
  s.replicas = {1, 2, 3};
  return s;
}

TEST(ReplicatedPartition, EpochsAreCheckedBeforeLeadership) {
  const ReplicaStatus lead = leader(1, 5, {1, 2});
  EXPECT_EQ(leader_error(lead, -1), ErrorCode::kNone) << "no epoch given";
  EXPECT_EQ(leader_error(lead, 5), ErrorCode::kNone);
  EXPECT_EQ(leader_error(lead, 4), ErrorCode::kFencedLeaderEpoch);
  EXPECT_EQ(leader_error(lead, 6), ErrorCode::kUnknownLeaderEpoch);
  const ReplicaStatus follow = follower(2, 5);
  EXPECT_EQ(leader_error(follow, -1), ErrorCode::kNotLeaderOrFollower);
  EXPECT_EQ(leader_error(follow, 5), ErrorCode::kNotLeaderOrFollower);
  EXPECT_EQ(leader_error(follow, 3), ErrorCode::kFencedLeaderEpoch) << "as Kafka: the epoch first";
  EXPECT_EQ(leader_error(follow, 9), ErrorCode::kUnknownLeaderEpoch);
  // No leader, no epoch known: any epoch given is unknown here.
  EXPECT_EQ(leader_error(follower(-1, -1), 0), ErrorCode::kUnknownLeaderEpoch);
  EXPECT_EQ(leader_error(follower(-1, -1), -1), ErrorCode::kNotLeaderOrFollower);
}

TEST(ReplicatedPartition, LeaderHintNamesAnotherLeaderOnly) {
  LeaderHint hint;
  ASSERT_TRUE(leader_hint(follower(2, 5), ErrorCode::kNotLeaderOrFollower, 1, &hint));
  EXPECT_EQ(hint.leader_id, 2);
  EXPECT_EQ(hint.leader_epoch, 5);
  EXPECT_FALSE(leader_hint(follower(-1, 5), ErrorCode::kNotLeaderOrFollower, 1, &hint)) << "no leader known";
  EXPECT_FALSE(leader_hint(follower(1, 5), ErrorCode::kNotLeaderOrFollower, 1, &hint)) << "names itself";
  // A stale epoch on the leader itself: the hint carries the current epoch.
  ASSERT_TRUE(leader_hint(leader(1, 5, {1}), ErrorCode::kFencedLeaderEpoch, 1, &hint));
  EXPECT_EQ(hint.leader_id, 1);
  EXPECT_FALSE(leader_hint(leader(1, 5, {1}), ErrorCode::kUnknownLeaderEpoch, 1, &hint));
}

TEST(ReplicatedPartition, MinInsyncReplicas) {
  const ReplicaStatus lead = leader(1, 5, {1, 2});
  EXPECT_TRUE(enough_in_sync(lead, 1));
  EXPECT_TRUE(enough_in_sync(lead, 2));
  EXPECT_FALSE(enough_in_sync(lead, 3));
  EXPECT_EQ(not_enough_replicas_message("t", 0, lead, 3),
            "The size of the current ISR Set(1, 2) is insufficient to satisfy the min.isr requirement of 3 for "
            "partition t-0");
}

TEST(ReplicatedPartition, MetadataEntry) {
  protocol::MetadataResponse::MetadataResponsePartition out;
  out.partition_index = 4;
  describe_replicated_partition(leader(1, 5, {1, 3}), &out);
  EXPECT_EQ(out.partition_index, 4);
  EXPECT_EQ(out.error_code, 0);
  EXPECT_EQ(out.leader_id, 1);
  EXPECT_EQ(out.leader_epoch, 5);
  EXPECT_EQ(out.replica_nodes, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(out.isr_nodes, (std::vector<int32_t>{1, 3}));
  EXPECT_TRUE(out.offline_replicas.empty());
  // A follower does not know the ISR: its replicas stand for it.
  describe_replicated_partition(follower(2, 5), &out);
  EXPECT_EQ(out.leader_id, 2);
  EXPECT_EQ(out.isr_nodes, (std::vector<int32_t>{1, 2, 3}));
  // No leader: LEADER_NOT_AVAILABLE, as Kafka.
  describe_replicated_partition(follower(-1, 6), &out);
  EXPECT_EQ(out.error_code, protocol::to_int(ErrorCode::kLeaderNotAvailable));
  EXPECT_EQ(out.leader_id, -1);
  EXPECT_EQ(out.leader_epoch, 6);
}

TEST(ReplicatedPartition, EndOffsetForEpochAsKafka) {
  storage::EpochIndex epochs;
  epochs.add(2, 10);
  epochs.add(4, 30);
  epochs.add(7, 50);
  const int64_t leo = 80;
  using E = storage::EpochEndOffset;
  EXPECT_EQ(kafka_end_offset_for_epoch(epochs, 7, leo), (E{7, 80})) << "the latest: the log end";
  EXPECT_EQ(kafka_end_offset_for_epoch(epochs, 4, leo), (E{4, 50}));
  EXPECT_EQ(kafka_end_offset_for_epoch(epochs, 5, leo), (E{4, 50})) << "between: the one below";
  EXPECT_EQ(kafka_end_offset_for_epoch(epochs, 1, leo), (E{1, 10})) << "below all: the first start";
  EXPECT_EQ(kafka_end_offset_for_epoch(epochs, 8, leo), (E{-1, -1})) << "above all";
  EXPECT_EQ(kafka_end_offset_for_epoch(epochs, -1, leo), (E{-1, -1}));
  EXPECT_EQ(kafka_end_offset_for_epoch(storage::EpochIndex(), 3, leo), (E{-1, -1}));
}

}  // namespace
}  // namespace eddy::broker
