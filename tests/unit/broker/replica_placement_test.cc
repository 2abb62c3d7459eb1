// Replica placement on a cluster (replica_placement.h): replication factors
// a cluster can place, the round robin of leaders and followers, and which
// manual assignments are acceptable, with Kafka's messages.
#include "broker/replica_placement.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace eddy::broker {
namespace {

using protocol::ErrorCode;
using Replicas = std::vector<std::vector<int32_t>>;

TEST(ReplicaPlacement, ReplicationFactorBetweenOneAndTheRegisteredNodes) {
  EXPECT_TRUE(check_replication_factor(1, 1).ok());
  EXPECT_TRUE(check_replication_factor(3, 3).ok());
  TopicResult r = check_replication_factor(3, 2);
  EXPECT_EQ(r.code, ErrorCode::kInvalidReplicationFactor);
  EXPECT_EQ(r.message, "Replication factor: 3 larger than available brokers: 2.");
  for (int32_t rf : {0, -2}) {
    r = check_replication_factor(rf, 3);
    EXPECT_EQ(r.code, ErrorCode::kInvalidReplicationFactor) << rf;
    EXPECT_EQ(r.message, "Replication factor must be larger than 0, or -1 to use the default value.");
  }
}

TEST(ReplicaPlacement, RoundRobinFromTheStart) {
  const std::vector<int32_t> nodes = {1, 2, 3};
  EXPECT_EQ(place_replicas(nodes, 1, 0, 4, 3), (Replicas{{2, 3, 1}, {3, 1, 2}, {1, 2, 3}, {2, 3, 1}}));
  EXPECT_EQ(place_replicas(nodes, 0, 0, 3, 1), (Replicas{{1}, {2}, {3}}));
  // Partitions added later continue the round robin where it stood.
  EXPECT_EQ(place_replicas(nodes, 1, 4, 2, 2), (Replicas{{3, 1}, {1, 2}}));
  EXPECT_TRUE(place_replicas(nodes, 2, 0, 0, 2).empty());
}

TEST(ReplicaPlacement, LeadersAndReplicasSpreadEvenly) {
  const std::vector<int32_t> nodes = {4, 7, 9, 12, 15};
  const Replicas placed = place_replicas(nodes, 3, 0, 10, 3);
  std::map<int32_t, int> leaders;
  std::map<int32_t, int> replicas;
  for (const auto& p : placed) {
    ASSERT_EQ(p.size(), 3u);
    EXPECT_EQ(std::set<int32_t>(p.begin(), p.end()).size(), 3u) << "distinct nodes";
    ++leaders[p.front()];
    for (int32_t id : p) ++replicas[id];
  }
  for (int32_t id : nodes) {
    EXPECT_EQ(leaders[id], 2) << id;
    EXPECT_EQ(replicas[id], 6) << id;
  }
}

TEST(ReplicaPlacement, ManualAssignments) {
  const std::vector<int32_t> nodes = {1, 2, 3};
  EXPECT_TRUE(check_replica_assignment({{1, 2}, {2, 3}, {3, 1}}, nodes, -1).ok());
  EXPECT_TRUE(check_replica_assignment({{2}}, nodes, 1).ok());
  TopicResult r = check_replica_assignment({{1, 1}}, nodes, -1);
  EXPECT_EQ(r.code, ErrorCode::kInvalidReplicaAssignment);
  EXPECT_EQ(r.message, "Duplicate brokers not allowed in replica assignment: 1, 1 for partition id 0.");
  r = check_replica_assignment({{1, 2}, {2, 5}}, nodes, -1);
  EXPECT_EQ(r.code, ErrorCode::kInvalidReplicaAssignment);
  EXPECT_EQ(r.message, "The manual partition assignment includes broker 5, but no such broker is registered.");
  r = check_replica_assignment({{1, 2}, {3}}, nodes, -1);
  EXPECT_EQ(r.code, ErrorCode::kInvalidReplicaAssignment) << "inconsistent factors";
  r = check_replica_assignment({{1, 2}}, nodes, 3);
  EXPECT_EQ(r.code, ErrorCode::kInvalidReplicaAssignment) << "not the topic's factor";
  r = check_replica_assignment({{}}, nodes, -1);
  EXPECT_EQ(r.code, ErrorCode::kInvalidReplicaAssignment);
}

}  // namespace
}  // namespace eddy::broker
