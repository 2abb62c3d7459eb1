// What Metadata says of fenced nodes (fenced_replicas.h), as Kafka's
// KRaftMetadataCache: offline replicas, the ISR without them, no fenced
// leader unless this node's own group names it.
#include "broker/fenced_replicas.h"

#include <gtest/gtest.h>

#include "protocol/errors.h"

namespace eddy::broker {
namespace {

using Partition = protocol::MetadataResponse::MetadataResponsePartition;

Partition entry(int32_t leader, std::vector<int32_t> replicas, std::vector<int32_t> isr) {
  Partition p;
  p.partition_index = 4;
  p.leader_id = leader;
  p.leader_epoch = 7;
  p.replica_nodes = std::move(replicas);
  p.isr_nodes = std::move(isr);
  return p;
}

TEST(FencedReplicas, NoneFencedChangesNothing) {
  Partition p = entry(2, {2, 3}, {2, 3});
  const Partition before = p;
  describe_fenced_replicas({}, false, &p);
  EXPECT_EQ(p, before);
  describe_fenced_replicas({1}, false, &p);
  EXPECT_EQ(p, before) << "a node holding no replica of it";
}

TEST(FencedReplicas, AFencedFollowerIsOfflineAndOutOfTheIsr) {
  Partition p = entry(2, {3, 2, 1}, {2, 3, 1});
  describe_fenced_replicas({1, 3}, false, &p);
  EXPECT_EQ(p.leader_id, 2);
  EXPECT_EQ(p.error_code, 0);
  EXPECT_EQ(p.offline_replicas, (std::vector<int32_t>{3, 1})) << "in replica order";
  EXPECT_EQ(p.isr_nodes, (std::vector<int32_t>{2}));
  EXPECT_EQ(p.replica_nodes, (std::vector<int32_t>{3, 2, 1})) << "replicas stay named";
}

TEST(FencedReplicas, APublishedFencedLeaderIsNone) {
  Partition p = entry(2, {2, 3}, {2, 3});
  describe_fenced_replicas({2}, false, &p);
  EXPECT_EQ(p.leader_id, -1);
  EXPECT_EQ(p.error_code, protocol::to_int(protocol::ErrorCode::kLeaderNotAvailable));
  EXPECT_EQ(p.leader_epoch, 7) << "the epoch kept, as Kafka";
  EXPECT_EQ(p.offline_replicas, (std::vector<int32_t>{2}));
  EXPECT_EQ(p.isr_nodes, (std::vector<int32_t>{3}));
  Partition both = entry(2, {2, 3}, {2});
  describe_fenced_replicas({2, 3}, false, &both);
  EXPECT_EQ(both.leader_id, -1);
  EXPECT_EQ(both.offline_replicas, (std::vector<int32_t>{2, 3}));
  EXPECT_TRUE(both.isr_nodes.empty());
}

TEST(FencedReplicas, ALeaderThisNodesGroupNamesStands) {
  Partition p = entry(2, {1, 2, 3}, {1, 2, 3});
  describe_fenced_replicas({2, 3}, true, &p);
  EXPECT_EQ(p.leader_id, 2);
  EXPECT_EQ(p.error_code, 0);
  EXPECT_EQ(p.offline_replicas, (std::vector<int32_t>{3})) << "the leader is not offline";
  EXPECT_EQ(p.isr_nodes, (std::vector<int32_t>{1, 2}));
}

TEST(FencedReplicas, NoLeaderStaysNone) {
  Partition p = entry(-1, {1, 2}, {1, 2});
  p.error_code = protocol::to_int(protocol::ErrorCode::kLeaderNotAvailable);
  describe_fenced_replicas({2}, true, &p);
  EXPECT_EQ(p.leader_id, -1);
  EXPECT_EQ(p.error_code, protocol::to_int(protocol::ErrorCode::kLeaderNotAvailable));
  EXPECT_EQ(p.offline_replicas, (std::vector<int32_t>{2}));
  EXPECT_EQ(p.isr_nodes, (std::vector<int32_t>{1}));
}

}  // namespace
}  // namespace eddy::broker
