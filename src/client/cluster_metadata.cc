#include "client/cluster_metadata.h"

#include <algorithm>

namespace eddy::client {

const PartitionInfo* TopicInfo::partition(int32_t index) const {
  auto it = std::lower_bound(partitions.begin(), partitions.end(), index,
                             [](const PartitionInfo& p, int32_t i) { return p.partition < i; });
  return it != partitions.end() && it->partition == index ? &*it : nullptr;
}

void ClusterMetadata::update(const protocol::MetadataResponse& response, bool all_topics) {
  brokers_.clear();
  for (const auto& b : response.brokers) {
    if (b.port <= 0 || b.port > 65535) continue;
    BrokerNode node;
    node.node_id = b.node_id;
    node.address.host = b.host;
    node.address.port = static_cast<uint16_t>(b.port);
    node.rack = b.rack;
    brokers_.push_back(std::move(node));
  }
  cluster_id_ = response.cluster_id;
  controller_id_ = response.controller_id;
  if (all_topics) topics_.clear();
  for (const auto& t : response.topics) {
    if (!t.name) continue;  // topics named only by id: not asked for by this client
    TopicInfo info;
    info.name = *t.name;
    info.topic_id = t.topic_id;
    info.error_code = t.error_code;
    info.is_internal = t.is_internal;
    for (const auto& p : t.partitions) {
      PartitionInfo pi;
      pi.partition = p.partition_index;
      pi.error_code = p.error_code;
      pi.leader = p.leader_id;
      pi.leader_epoch = p.leader_epoch;
      pi.replicas = p.replica_nodes;
      pi.isr = p.isr_nodes;
      pi.offline_replicas = p.offline_replicas;
      info.partitions.push_back(std::move(pi));
    }
    std::sort(info.partitions.begin(), info.partitions.end(),
              [](const PartitionInfo& a, const PartitionInfo& b) { return a.partition < b.partition; });
    topics_[info.name] = std::move(info);
  }
}

const BrokerNode* ClusterMetadata::broker(int32_t node_id) const {
  for (const auto& b : brokers_) {
    if (b.node_id == node_id) return &b;
  }
  return nullptr;
}

const TopicInfo* ClusterMetadata::topic(std::string_view name) const {
  auto it = topics_.find(name);
  return it == topics_.end() ? nullptr : &it->second;
}

int32_t ClusterMetadata::leader_for(std::string_view topic_name, int32_t partition) const {
  const TopicInfo* t = topic(topic_name);
  if (t == nullptr || t->error_code != 0) return -1;
  const PartitionInfo* p = t->partition(partition);
  if (p == nullptr || p->error_code != 0) return -1;
  return p->leader;
}

std::string format_topic_id(const protocol::Uuid& id) {
  static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  const auto& b = id.bytes;
  size_t i = 0;
  for (; i + 3 <= b.size(); i += 3) {
    uint32_t v = (uint32_t{b[i]} << 16) | (uint32_t{b[i + 1]} << 8) | b[i + 2];
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (b.size() - i == 1) {  // 16 = 5*3 + 1
    uint32_t v = uint32_t{b[i]} << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
  }
  return out;
}

}  // namespace eddy::client
