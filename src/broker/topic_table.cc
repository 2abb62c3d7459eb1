#include "broker/topic_table.h"

#include <algorithm>
#include <cstring>

#include "broker/disk_budget_check.h"
#include "meta/topic_name.h"
#include "port/log.h"

namespace eddy::broker {
namespace {

using protocol::ErrorCode;

protocol::Uuid to_protocol(const meta::Uuid& id) {
  protocol::Uuid out;
  std::memcpy(out.bytes.data(), id.bytes.data(), 16);
  return out;
}

TopicResult fail(ErrorCode code, std::string message) { return TopicResult{code, std::move(message)}; }

TopicResult from_meta(const Status& s) {
  if (s.ok()) return {};
  switch (s.code()) {
    case Status::Code::kNotFound: return fail(ErrorCode::kUnknownTopicOrPartition, s.message());
    case Status::Code::kAlreadyExists: return fail(ErrorCode::kTopicAlreadyExists, s.message());
    case Status::Code::kInvalidArgument: return fail(ErrorCode::kInvalidTopicException, s.message());
    default: return fail(ErrorCode::kUnknownServerError, s.message());
  }
}

TopicResult validate_configs(const ConfigMap& configs, TopicConfigScope scope) {
  for (const auto& [key, value] : configs) {
    std::string why = validate_topic_config(key, value, scope);
    if (!why.empty()) return fail(ErrorCode::kInvalidConfig, why);
  }
  return {};
}

}  // namespace

TopicTable::TopicTable(const BrokerOptions& options, meta::MetaStore* meta, storage::LogManager* logs,
                       PartitionOpened on_opened)
    : options_(options), meta_(meta), logs_(logs), on_opened_(std::move(on_opened)) {}

Topic* TopicTable::insert(const meta::TopicRecord& record) {
  auto topic = std::make_unique<Topic>();
  topic->name = record.name;
  topic->id = to_protocol(record.id);
  topic->replication_factor = record.replication_factor;
  topic->overrides = record.configs;
  topic->config = effective_topic_config(options_, topic->overrides);
  Topic* raw = topic.get();
  topics_[record.name] = std::move(topic);
  return raw;
}

Status TopicTable::load_replicas(Topic* topic, int32_t from, int32_t to) {
  std::map<int32_t, std::vector<int32_t>> recorded;
  meta::Uuid id;
  std::memcpy(id.bytes.data(), topic->id.bytes.data(), 16);
  Status s = meta_->cluster().replicas(id, &recorded);
  if (!s.ok()) return s;
  topic->replicas.resize(static_cast<size_t>(to));
  for (int32_t p = from; p < to; ++p) {
    auto it = recorded.find(p);
    topic->replicas[static_cast<size_t>(p)] = it != recorded.end() ? it->second : std::vector<int32_t>{options_.node_id};
  }
  return Status();
}

TopicResult TopicTable::open_partitions(Topic* topic, int32_t from, int32_t to) {
  for (int32_t p = from; p < to; ++p) {
    const std::vector<int32_t>& replicas = topic->replicas[static_cast<size_t>(p)];
    if (std::find(replicas.begin(), replicas.end(), options_.node_id) == replicas.end()) {
      topic->partitions.push_back(nullptr);  // held by other nodes only
      continue;
    }
    storage::PartitionLog* log = nullptr;
    Status s = logs_->open_partition({topic->name, p}, topic->config.log, &log);
    if (!s.ok()) {
      return fail(ErrorCode::kKafkaStorageError, "cannot open partition " + topic->name + "-" + std::to_string(p) +
                                                     ": " + s.to_string());
    }
    topic->partitions.push_back(log);
    if (on_opened_) on_opened_(*topic, p, log);
  }
  return {};
}

Status TopicTable::load() {
  std::vector<meta::TopicRecord> records;
  Status s = meta_->topics().list(&records);
  if (!s.ok()) return s;
  for (const auto& record : records) {
    Topic* topic = insert(record);
    if (s = load_replicas(topic, 0, record.partition_count); !s.ok()) return s;
    TopicResult r = open_partitions(topic, 0, record.partition_count);
    // open_partitions fails only with KAFKA_STORAGE_ERROR (a log that cannot be opened).
    if (!r.ok()) return Status::io_error(r.message);
  }
  for (const auto& tp : logs_->partitions_on_disk()) {
    Topic* topic = find(tp.topic);
    if (topic == nullptr || tp.partition >= static_cast<int32_t>(topic->partitions.size())) {
      EDDY_LOG_WARN("partition directory {}-{} belongs to no known topic; left untouched", tp.topic,
                    tp.partition);
    }
  }
  EDDY_LOG_INFO("loaded {} topics", topics_.size());
  return Status();
}

Topic* TopicTable::find(const std::string& name) {
  auto it = topics_.find(name);
  return it == topics_.end() ? nullptr : it->second.get();
}

Topic* TopicTable::find(const protocol::Uuid& id) {
  for (auto& [name, topic] : topics_) {
    if (topic->id == id) return topic.get();
  }
  return nullptr;
}

std::vector<Topic*> TopicTable::all() {
  std::vector<Topic*> out;
  out.reserve(topics_.size());
  for (auto& [name, topic] : topics_) out.push_back(topic.get());
  return out;
}

TopicResult TopicTable::create(const std::string& name, int32_t partitions, int16_t replication_factor,
                               const ConfigMap& configs, bool validate_only, Topic** out) {
  std::string name_error = meta::topic_name_error(name);
  if (!name_error.empty()) return fail(ErrorCode::kInvalidTopicException, name_error);
  if (find(name) != nullptr) return fail(ErrorCode::kTopicAlreadyExists, "Topic '" + name + "' already exists.");
  for (auto& [existing, topic] : topics_) {
    if (meta::topic_names_collide(existing, name)) {
      return fail(ErrorCode::kInvalidTopicException,
                  "Topic '" + name + "' collides with existing topic: " + existing);
    }
  }
  if (partitions == -1) partitions = options_.num_partitions;
  if (replication_factor == -1) replication_factor = options_.default_replication_factor;
  if (partitions < 1) return fail(ErrorCode::kInvalidPartitions, "Number of partitions must be larger than 0.");
  if (partitions > 100000) return fail(ErrorCode::kInvalidPartitions, "Number of partitions is too large.");
  if (cluster_node_ && replication_factor < 1) {
    return fail(ErrorCode::kInvalidReplicationFactor,
                "Replication factor must be larger than 0, or -1 to use the default value.");
  }
  if (!cluster_node_ && replication_factor != 1) {
    return fail(ErrorCode::kInvalidReplicationFactor,
                "Replication factor must be 1: this Eddy broker is a single node (replication comes with Raft).");
  }
  TopicResult r = validate_configs(configs, config_scope());
  if (!r.ok()) return r;
  const EffectiveTopicConfig effective = effective_topic_config(options_, configs);
  if (!storage::validate(effective.log).ok()) {
    return fail(ErrorCode::kInvalidConfig, "The resulting storage configuration is not valid.");
  }
  r = check_new_partitions(logs_->budget(), "topic '" + name + "'", partitions, effective.log);
  if (!r.ok()) return r;
  if (validate_only) return {};

  meta::NewTopic topic;
  topic.name = name;
  topic.partition_count = partitions;
  topic.replication_factor = replication_factor;
  topic.configs = configs;
  meta::TopicRecord record;
  r = from_meta(meta_->topics().create(topic, &record));
  if (!r.ok()) return r;
  Topic* created = insert(record);
  created->replicas.assign(static_cast<size_t>(partitions), {options_.node_id});
  r = open_partitions(created, 0, partitions);
  if (!r.ok()) {
    EDDY_LOG_ERROR("create topic {}: {}", name, r.message);
    return r;
  }
  EDDY_LOG_INFO("created topic {} with {} partitions", name, partitions);
  if (out != nullptr) *out = created;
  return {};
}

TopicResult TopicTable::remove(const std::string& name) {
  if (find(name) == nullptr) return fail(ErrorCode::kUnknownTopicOrPartition, "This server does not host this topic.");
  TopicResult r = from_meta(meta_->topics().remove(name));
  if (!r.ok()) return r;
  if (on_closing_) {
    const Topic& topic = *find(name);
    for (size_t p = 0; p < topic.partitions.size(); ++p) {
      if (topic.partitions[p] != nullptr) on_closing_(topic, static_cast<int32_t>(p), topic.partitions[p]);
    }
  }
  topics_.erase(name);
  Status s = logs_->delete_topic(name);
  if (!s.ok()) {
    EDDY_LOG_ERROR("delete topic {}: removing its logs failed: {}", name, s.to_string());
  }
  EDDY_LOG_INFO("deleted topic {}", name);
  return {};
}

TopicResult TopicTable::add_partitions(const std::string& name, int32_t new_count, bool validate_only) {
  Topic* topic = find(name);
  if (topic == nullptr) return fail(ErrorCode::kUnknownTopicOrPartition, "This server does not host this topic.");
  int32_t current = static_cast<int32_t>(topic->partitions.size());
  if (new_count <= current) {
    return fail(ErrorCode::kInvalidPartitions, "Topic currently has " + std::to_string(current) +
                                                   " partitions, which is higher than the requested " +
                                                   std::to_string(new_count) + ".");
  }
  if (new_count > 100000) return fail(ErrorCode::kInvalidPartitions, "Number of partitions is too large.");
  const int32_t added = new_count - current;
  TopicResult r = check_new_partitions(logs_->budget(),
                                       std::to_string(added) + (added == 1 ? " new partition" : " new partitions") +
                                           " of topic '" + name + "'",
                                       added, topic->config.log);
  if (!r.ok()) return r;
  if (validate_only) return {};
  r = from_meta(meta_->topics().set_partition_count(name, new_count));
  if (!r.ok()) return r;
  topic->replicas.resize(static_cast<size_t>(new_count), {options_.node_id});
  return open_partitions(topic, current, new_count);
}

TopicResult TopicTable::alter_configs(const std::string& name, const std::vector<meta::ConfigChange>& changes,
                                      bool validate_only) {
  Topic* topic = find(name);
  if (topic == nullptr) return fail(ErrorCode::kUnknownTopicOrPartition, "This server does not host this topic.");
  ConfigMap next = topic->overrides;
  for (const auto& change : changes) {
    if (change.op == meta::ConfigChange::Op::kSet) {
      std::string why = validate_topic_config(change.key, change.value, config_scope());
      if (!why.empty()) return fail(ErrorCode::kInvalidConfig, why);
      next[change.key] = change.value;
    } else {
      if (!is_topic_config(change.key)) {
        return fail(ErrorCode::kInvalidConfig, "Unknown topic config name: " + change.key);
      }
      next.erase(change.key);
    }
  }
  EffectiveTopicConfig effective = effective_topic_config(options_, next);
  if (!storage::validate(effective.log).ok()) {
    return fail(ErrorCode::kInvalidConfig, "The resulting storage configuration is not valid.");
  }
  TopicResult r = check_config_change(logs_->budget(), name, topic->partitions, effective.log);
  if (!r.ok()) return r;
  if (validate_only) return {};
  r = from_meta(meta_->topics().alter_configs(name, changes));
  if (!r.ok()) return r;
  topic->overrides = std::move(next);
  topic->config = effective;
  for (auto* log : topic->partitions) {
    if (log == nullptr) continue;
    Status s = log->update_config(effective.log);
    if (!s.ok()) {
      EDDY_LOG_WARN("topic {}: new config not applied to {}: {}", name, log->directory(),
                    s.to_string());
    }
  }
  return {};
}

}  // namespace eddy::broker
