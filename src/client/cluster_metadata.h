// What the client knows about the cluster: brokers and their endpoints, and
// per topic its id and partitions with leader, replicas and ISR. Filled from
// Metadata responses; answers leader lookups. No I/O.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/broker_address.h"
#include "protocol/generated/metadata.h"

namespace eddy::client {

struct BrokerNode {
  int32_t node_id = -1;
  BrokerAddress address;
  std::optional<std::string> rack;
};

struct PartitionInfo {
  int32_t partition = 0;
  int16_t error_code = 0;
  int32_t leader = -1;
  int32_t leader_epoch = -1;
  std::vector<int32_t> replicas;
  std::vector<int32_t> isr;
  std::vector<int32_t> offline_replicas;
};

struct TopicInfo {
  std::string name;
  protocol::Uuid topic_id;
  int16_t error_code = 0;  // e.g. UNKNOWN_TOPIC_OR_PARTITION
  bool is_internal = false;
  std::vector<PartitionInfo> partitions;  // sorted by partition

  const PartitionInfo* partition(int32_t index) const;
};

class ClusterMetadata {
 public:
  // Takes the brokers and topics of a response. Topics listed replace what
  // was known of them; when the response answered a request for all topics,
  // topics it does not list are forgotten. Brokers with a port outside
  // 1-65535 are ignored.
  void update(const protocol::MetadataResponse& response, bool all_topics);

  const std::vector<BrokerNode>& brokers() const { return brokers_; }
  const BrokerNode* broker(int32_t node_id) const;
  // nullptr when the topic is unknown (never asked for, or forgotten).
  const TopicInfo* topic(std::string_view name) const;
  const std::map<std::string, TopicInfo, std::less<>>& topics() const { return topics_; }
  // The partition's leader, -1 when unknown or the partition has an error.
  int32_t leader_for(std::string_view topic, int32_t partition) const;
  const std::optional<std::string>& cluster_id() const { return cluster_id_; }
  int32_t controller_id() const { return controller_id_; }

 private:
  std::vector<BrokerNode> brokers_;
  std::map<std::string, TopicInfo, std::less<>> topics_;
  std::optional<std::string> cluster_id_;
  int32_t controller_id_ = -1;
};

// A topic id as Kafka prints it: URL-safe base64 of the 16 bytes without
// padding (22 characters).
std::string format_topic_id(const protocol::Uuid& id);

}  // namespace eddy::client
