// Topic-level configuration: the keys a topic may override (Kafka's names),
// their validation, and the effective storage settings of a topic (override,
// else the broker default).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "broker/broker_options.h"
#include "storage/log_config.h"

namespace eddy::broker {

using ConfigMap = std::map<std::string, std::string>;

// Empty when key=value is a valid topic override, otherwise why not, in
// Kafka's words (the caller answers INVALID_CONFIG).
std::string validate_topic_config(const std::string& key, const std::string& value);

struct EffectiveTopicConfig {
  storage::LogConfig log;
  int32_t max_message_bytes = 0;
};
// REQUIRES: every override passed validate_topic_config.
EffectiveTopicConfig effective_topic_config(const BrokerOptions& broker, const ConfigMap& overrides);

struct DescribedConfig {
  std::string name;
  std::string value;
  bool is_default = true;
  // DescribeConfigs source: 1 DYNAMIC_TOPIC_CONFIG, 5 DEFAULT_CONFIG.
  int8_t source = 5;
};
// Every topic config with its effective value, sorted by name.
std::vector<DescribedConfig> describe_topic_configs(const BrokerOptions& broker, const ConfigMap& overrides);

}  // namespace eddy::broker
