// TopicTable on a cluster node: the controller log's topic records applied
// to this node's meta store and logs (see topic_table.h, "apply_*").
#include <algorithm>
#include <cstring>

#include "broker/topic_table.h"
#include "port/log.h"

namespace eddy::broker {
namespace {

using protocol::ErrorCode;

meta::Uuid to_meta(const protocol::Uuid& id) {
  meta::Uuid out;
  std::memcpy(out.bytes.data(), id.bytes.data(), 16);
  return out;
}

TopicResult fail(ErrorCode code, std::string message) { return TopicResult{code, std::move(message)}; }

TopicResult storage_failure(const std::string& what, const Status& s) {
  return fail(ErrorCode::kKafkaStorageError, what + ": " + s.to_string());
}

}  // namespace

TopicResult TopicTable::apply_created(const std::string& name, const protocol::Uuid& id,
                                      const std::vector<std::vector<int32_t>>& replicas, const ConfigMap& configs) {
  if (find(id) != nullptr) return {};  // applied before
  if (replicas.empty() || replicas[0].empty()) {
    return fail(ErrorCode::kInvalidRequest, "topic " + name + " without partitions or replicas");
  }
  if (find(name) != nullptr) {
    return fail(ErrorCode::kTopicAlreadyExists, "topic " + name + " exists here with another id");
  }
  meta::NewTopic topic;
  topic.name = name;
  topic.id = to_meta(id);
  topic.partition_count = static_cast<int32_t>(replicas.size());
  topic.replication_factor = static_cast<int16_t>(replicas[0].size());
  topic.configs = configs;
  topic.replicas = replicas;
  meta::TopicRecord record;
  if (Status s = meta_->topics().create(topic, &record); !s.ok()) return storage_failure("create topic " + name, s);
  Topic* created = insert(record);
  created->replicas = replicas;
  TopicResult r = open_partitions(created, 0, topic.partition_count);
  if (r.ok()) {
    const auto here = std::count_if(created->partitions.begin(), created->partitions.end(),
                                    [](const storage::PartitionLog* log) { return log != nullptr; });
    EDDY_LOG_INFO("created topic {} with {} partitions ({} on this node)", name, topic.partition_count, here);
  }
  return r;
}

TopicResult TopicTable::apply_removed(const protocol::Uuid& id) {
  Topic* topic = find(id);
  if (topic == nullptr) return {};  // applied before
  const std::string name = topic->name;  // remove() destroys the Topic, and its name with it
  return remove(name);
}

TopicResult TopicTable::apply_partitions_added(const protocol::Uuid& id, int32_t first,
                                               const std::vector<std::vector<int32_t>>& replicas) {
  Topic* topic = find(id);
  if (topic == nullptr) return {};  // deleted since: a later record removed it
  const auto current = static_cast<int32_t>(topic->partitions.size());
  const int32_t count = first + static_cast<int32_t>(replicas.size());
  if (current >= count) return {};  // applied before
  if (current != first) {
    return fail(ErrorCode::kInvalidPartitions, "topic " + topic->name + " has " + std::to_string(current) +
                                                   " partitions, the record adds from " + std::to_string(first));
  }
  if (Status s = meta_->topics().set_partition_count(topic->name, count, replicas); !s.ok()) {
    return storage_failure("add partitions to " + topic->name, s);
  }
  topic->replicas.insert(topic->replicas.end(), replicas.begin(), replicas.end());
  return open_partitions(topic, current, count);
}

TopicResult TopicTable::apply_configs(const protocol::Uuid& id, const ConfigMap& overrides) {
  Topic* topic = find(id);
  if (topic == nullptr) return {};  // deleted since
  std::vector<meta::ConfigChange> changes;
  for (const auto& [key, value] : topic->overrides) {
    if (overrides.count(key) == 0) changes.push_back(meta::ConfigChange::remove(key));
  }
  for (const auto& [key, value] : overrides) changes.push_back(meta::ConfigChange::set(key, value));
  // The leader validated the change; this node's budget is not asked again
  // (a node cannot refuse what the cluster committed).
  if (Status s = meta_->topics().alter_configs(topic->name, changes); !s.ok()) {
    return storage_failure("alter configs of " + topic->name, s);
  }
  topic->overrides = overrides;
  topic->config = effective_topic_config(options_, topic->overrides);
  for (storage::PartitionLog* log : topic->partitions) {
    if (log == nullptr) continue;
    if (Status s = log->update_config(topic->config.log); !s.ok()) {
      EDDY_LOG_WARN("topic {}: new config not applied to {}: {}", topic->name, log->directory(), s.to_string());
    }
  }
  return {};
}

}  // namespace eddy::broker
