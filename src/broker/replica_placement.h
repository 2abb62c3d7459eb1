// broker/replica_placement.h — where a cluster's partitions live: the
// replication factor a topic may have, the nodes each new partition is
// placed on, and which manual assignments are acceptable. Pure functions
// over the registered nodes' ids (the controller leader's broker calls them
// before it proposes a Topic or PartitionsAdded record; a single node never
// does: every partition is its own, with replication factor 1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "broker/topic_table.h"

namespace eddy::broker {

// A replication factor a cluster of node_count registered nodes can place
// (after -1 was replaced by default.replication.factor):
// INVALID_REPLICATION_FACTOR with Kafka's messages when below 1 or above
// node_count.
TopicResult check_replication_factor(int32_t replication_factor, size_t node_count);

// Replicas for count new partitions from first on, replication_factor
// distinct nodes each, round robin from start (Kafka starts a topic's round
// robin at a random node; the caller derives start from the topic name):
// partition i gets nodes[(start + i) % n], nodes[(start + i + 1) % n], ...;
// the first is its preferred leader. So the leaders of a topic's
// partitions take turns over the nodes, and so do the followers.
// REQUIRES: nodes not empty and without duplicates, 1 <= replication_factor
// <= nodes.size(), first >= 0, count >= 0.
std::vector<std::vector<int32_t>> place_replicas(std::span<const int32_t> nodes, size_t start, int32_t first,
                                                 int32_t count, int32_t replication_factor);

// A manual assignment (CreateTopics' or CreatePartitions' assignments) on a
// cluster: every partition names at least one node, no node twice, only
// registered nodes (nodes), and every partition as many as the others and,
// when replication_factor > 0, as many as that (the topic's current factor
// for CreatePartitions). INVALID_REPLICA_ASSIGNMENT otherwise, with a
// message in Kafka's words where Kafka has them.
TopicResult check_replica_assignment(const std::vector<std::vector<int32_t>>& assignment,
                                     std::span<const int32_t> nodes, int32_t replication_factor);

}  // namespace eddy::broker
