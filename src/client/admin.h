// Topic administration over a Client: create, delete, add partitions, read
// and change topic configs (the operations of kafka-topics.sh and
// kafka-configs.sh for topics). Requests go to the controller named by the
// metadata, or to any broker when none is named.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "client/client.h"
#include "port/status.h"
#include "protocol/errors.h"

namespace eddy::client {

struct NewTopic {
  std::string name;
  int32_t partitions = -1;          // -1: the broker's num.partitions
  int16_t replication_factor = -1;  // -1: the broker's default
  std::vector<std::pair<std::string, std::string>> configs;
};

// Kafka's ConfigSource values (DescribeConfigs v1+).
enum class ConfigSource : int8_t {
  kUnknown = 0,
  kDynamicTopic = 1,
  kDynamicBroker = 2,
  kDynamicDefaultBroker = 3,
  kStaticBroker = 4,
  kDefault = 5,
  kDynamicBrokerLogger = 6,
};

struct ConfigEntry {
  std::string name;
  std::optional<std::string> value;  // null for sensitive values
  ConfigSource source = ConfigSource::kUnknown;
  bool read_only = false;
  bool is_sensitive = false;
  // True for values set on the topic itself (what kafka-topics --describe
  // lists under Configs).
  bool is_topic_override() const { return source == ConfigSource::kDynamicTopic; }
};

// One log directory of a broker (DescribeLogDirs). On Eddy the volume is the
// disk budget: total_bytes is eddy.disk.budget.bytes, usable_bytes what is
// left of it, and a partition's size is its charge on the budget.
struct LogDirInfo {
  std::string path;
  int64_t total_bytes = -1;   // -1: the broker does not say (DescribeLogDirs before v4)
  int64_t usable_bytes = -1;
  // (topic, partition) -> size in bytes
  std::vector<std::pair<std::pair<std::string, int32_t>, int64_t>> partition_sizes;
};

enum class ConfigOperation : int8_t { kSet = 0, kDelete = 1, kAppend = 2, kSubtract = 3 };

struct ConfigChange {
  std::string name;
  ConfigOperation operation = ConfigOperation::kSet;
  std::optional<std::string> value;  // null for kDelete
};

class Admin {
 public:
  explicit Admin(Client* client) : client_(client) {}

  Status create_topic(const NewTopic& topic);
  Status delete_topic(const std::string& name);
  // Grows the topic to total_count partitions.
  Status create_partitions(const std::string& topic, int32_t total_count);
  Status describe_topic_configs(const std::string& topic, std::vector<ConfigEntry>* out);
  Status alter_topic_configs(const std::string& topic, const std::vector<ConfigChange>& changes);
  // The log directories of the broker the client talks to (the controller
  // named by the metadata, or any), with every partition in them.
  Status describe_log_dirs(std::vector<LogDirInfo>* out);

 private:
  int32_t controller() const;

  Client* client_;
};

}  // namespace eddy::client
