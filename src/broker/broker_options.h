// What the broker needs from the configuration, filled by the app.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/log_config.h"

namespace eddy::broker {

struct AdvertisedListener {
  std::string name;  // "PLAINTEXT"
  std::string host;
  int32_t port = 0;
};

// One broker configuration value as DescribeConfigs shows it.
struct BrokerConfigEntry {
  std::string name;
  std::string value;
  bool is_default = true;
  bool read_only = true;
};

struct BrokerOptions {
  int32_t node_id = 1;
  std::vector<AdvertisedListener> advertised_listeners;
  bool auto_create_topics = true;
  int32_t num_partitions = 1;
  int16_t default_replication_factor = 1;
  // message.max.bytes: the broker default of the topic config max.message.bytes.
  int32_t message_max_bytes = 1048588;
  // Broker defaults of the topic-level storage configs.
  storage::LogConfig log_defaults;
  // The static broker configuration, for DescribeConfigs.
  std::vector<BrokerConfigEntry> static_configs;
};

}  // namespace eddy::broker
