// Topic-level configuration: validation of a topic's overrides (Kafka's
// names, see topic_config_defs.h), the effective settings of a topic
// (override, else the broker default), and the described form of every
// topic config for DescribeConfigs and CreateTopics.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "broker/broker_options.h"
#include "storage/log_config.h"

namespace eddy::broker {

using ConfigMap = std::map<std::string, std::string>;

// Where a topic's configs are validated: on a single node, or on a node of
// a cluster, where partitions may have replicas (keys used
// kHonouredInCluster, such as min.insync.replicas, accept every valid value
// there; topic_config_defs.h).
enum class TopicConfigScope : uint8_t { kSingleNode, kCluster };

// Empty when key=value is a valid topic override, otherwise why not, in
// Kafka's words where Kafka has them (the caller answers INVALID_CONFIG).
std::string validate_topic_config(const std::string& key, const std::string& value,
                                  TopicConfigScope scope = TopicConfigScope::kSingleNode);
// Whether key names a topic config Kafka defines (or one of Eddy's own).
bool is_topic_config(const std::string& key);
// Whether key is a LIST config (IncrementalAlterConfigs APPEND/SUBTRACT).
bool is_list_topic_config(const std::string& key);

// The list `current` (comma-separated) with `items` appended (each item once)
// or subtracted (every occurrence).
std::string append_to_list(const std::string& current, const std::string& items);
std::string subtract_from_list(const std::string& current, const std::string& items);

struct EffectiveTopicConfig {
  storage::LogConfig log;
  int32_t max_message_bytes = 0;
  // message.timestamp.after.max.ms: with CreateTime, a batch whose newest
  // timestamp is further ahead of the broker's clock is refused.
  int64_t timestamp_after_max_ms = 3600000;
  // message.timestamp.before.max.ms (or, set alone, Kafka 3.x's
  // message.timestamp.difference.max.ms): how far behind the broker's clock
  // a CreateTime record may be.
  int64_t timestamp_before_max_ms = INT64_MAX;
  // max.decompressed.message.bytes: one record of a compressed batch.
  int64_t max_decompressed_record_bytes = 2147483639;
  // min.insync.replicas: acks=all to a replicated partition needs at least
  // this many in-sync replicas (always 1 on a single node).
  int32_t min_insync_replicas = 1;
};
// REQUIRES: every override passed validate_topic_config.
EffectiveTopicConfig effective_topic_config(const BrokerOptions& broker, const ConfigMap& overrides);

// DescribeConfigs config_source values.
inline constexpr int8_t kDynamicTopicConfig = 1;
inline constexpr int8_t kStaticBrokerConfig = 4;
inline constexpr int8_t kDefaultConfig = 5;

struct ConfigSynonym {
  std::string name;
  std::string value;
  int8_t source = kDefaultConfig;
};

struct DescribedConfig {
  std::string name;
  std::string value;
  bool is_default = true;
  int8_t source = kDefaultConfig;
  int8_t config_type = 0;  // Kafka's ConfigDef type (TopicConfigType)
  std::string documentation;
  // Where the value comes from, most specific first (topic override, broker
  // configuration, default), as Kafka's synonyms.
  std::vector<ConfigSynonym> synonyms;
};
// Every topic config with its effective value, sorted by name.
std::vector<DescribedConfig> describe_topic_configs(const BrokerOptions& broker, const ConfigMap& overrides);

}  // namespace eddy::broker
