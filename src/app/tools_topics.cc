// eddy topics: kafka-topics.sh for Eddy (create, list, describe, alter,
// delete), plus topic config changes (--add-config/--delete-config, which
// Kafka has in kafka-configs.sh) sent as IncrementalAlterConfigs.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "app/cli.h"
#include "app/tool_flags.h"
#include "app/tools.h"
#include "client/admin.h"
#include "meta/node_ids.h"
#include "client/client.h"
#include "storage/disk_budget.h"

namespace eddy::app {
namespace {

constexpr const char* kTool = "topics";

constexpr FlagSpec kFlags[] = {
    {"--bootstrap-server", "HOST:PORT[,...]", false, "brokers to connect to (required)"},
    {"--command-config", "FILE", false, "Kafka client properties: security.protocol, sasl.*, ssl.* (PEM)"},
    {"--create", nullptr, false, "create a topic"},
    {"--list", nullptr, false, "list topic names"},
    {"--describe", nullptr, false, "describe one topic (--topic) or all, with the disk budget"},
    {"--alter", nullptr, false, "add partitions (--partitions) or change configs"},
    {"--delete", nullptr, false, "delete a topic"},
    {"--topic", "TOPIC", false, "the topic (exact name)"},
    {"--partitions", "N", false, "partition count (create: default num.partitions; alter: new total)"},
    {"--replication-factor", "N", false, "replication factor (create; a single node keeps 1 copy, a cluster N)"},
    {"--config", "KEY=VALUE", true, "topic config for --create"},
    {"--add-config", "K=V[,K=V...]", true, "--alter: set topic configs ([a,b] groups a list value)"},
    {"--delete-config", "KEY[,KEY...]", true, "--alter: remove topic configs (back to the default)"},
    {"--if-exists", nullptr, false, "alter/delete/describe: no error when the topic is missing"},
    {"--if-not-exists", nullptr, false, "create: no error when the topic exists"},
    {"--exclude-internal", nullptr, false, "list/describe: skip internal topics"},
    {"--request-timeout-ms", "MS", false, "per request (default 30000)"},
    {"--help", nullptr, false, "this text"},
};

std::string usage() {
  return describe_flags("eddy topics --bootstrap-server HOST:PORT (--create|--list|--describe|--alter|--delete) "
                        "[--topic TOPIC] [options]",
                        kFlags);
}


bool topic_exists_error(const Status& s) {
  return protocol::kafka_error(s) == protocol::ErrorCode::kTopicAlreadyExists;
}

bool topic_missing_error(const Status& s) {
  return protocol::kafka_error(s) == protocol::ErrorCode::kUnknownTopicOrPartition ||
         protocol::kafka_error(s) == protocol::ErrorCode::kUnknownTopicId;
}

int do_create(client::Client& client, const ToolFlags& flags, const std::string& topic) {
  client::NewTopic t;
  t.name = topic;
  int64_t partitions = -1;
  int64_t replication = -1;
  if (Status bad = int_flag(flags, "--partitions", 1, INT32_MAX, &partitions); !bad.ok()) {
    return usage_error(kTool, bad, usage());
  }
  if (Status bad = int_flag(flags, "--replication-factor", 1, INT16_MAX, &replication); !bad.ok()) {
    return usage_error(kTool, bad, usage());
  }
  t.partitions = static_cast<int32_t>(partitions);
  t.replication_factor = static_cast<int16_t>(replication);
  for (const auto& item : flags.values("--config")) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return usage_error(kTool, "--config: expected key=value, got '" + item + "'", usage());
    }
    t.configs.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  client::Admin admin(&client);
  Status s = admin.create_topic(t);
  if (!s.ok()) {
    if (flags.has("--if-not-exists") && topic_exists_error(s)) return kExitOk;
    return runtime_error(kTool, s);
  }
  std::printf("Created topic %s.\n", topic.c_str());
  return kExitOk;
}

int do_list(client::Client& client, const ToolFlags& flags) {
  Status s = client.refresh_metadata(nullptr, false);
  if (!s.ok()) return runtime_error(kTool, s);
  for (const auto& [name, info] : client.metadata().topics()) {
    if (info.is_internal && flags.has("--exclude-internal")) continue;
    std::printf("%s\n", name.c_str());
  }
  return kExitOk;
}

// What DescribeLogDirs says: each partition's share of the disk budget and
// the budget's totals. Empty when the broker does not answer it (the
// describe output then has no disk figures).
struct DiskFigures {
  std::map<std::pair<std::string, int32_t>, int64_t> partition_bytes;
  std::vector<client::LogDirInfo> dirs;
};

DiskFigures disk_figures(client::Admin& admin) {
  DiskFigures figures;
  if (!admin.describe_log_dirs(&figures.dirs).ok()) figures.dirs.clear();
  for (const auto& dir : figures.dirs) {
    for (const auto& [tp, bytes] : dir.partition_sizes) figures.partition_bytes[tp] = bytes;
  }
  return figures;
}

// "Disk budget of ./data: 4 GiB, 1.2 GiB used, 2.8 GiB free"
void print_disk_budget(const DiskFigures& figures) {
  for (const auto& dir : figures.dirs) {
    if (dir.total_bytes < 0 || dir.usable_bytes < 0) continue;
    const uint64_t total = static_cast<uint64_t>(dir.total_bytes);
    const uint64_t usable = static_cast<uint64_t>(dir.usable_bytes);
    std::printf("Disk budget of %s: %s, %s used, %s free\n", dir.path.c_str(), storage::human_bytes(total).c_str(),
                storage::human_bytes(total > usable ? total - usable : 0).c_str(),
                storage::human_bytes(usable).c_str());
  }
}

int describe_one(client::Admin& admin, const client::TopicInfo& info, const DiskFigures& disk) {
  std::vector<client::ConfigEntry> configs;
  Status s = admin.describe_topic_configs(info.name, &configs);
  if (!s.ok()) return runtime_error(kTool, s);
  std::string config_text;
  for (const auto& c : configs) {
    if (!c.is_topic_override()) continue;
    config_text += (config_text.empty() ? "" : ",") + c.name + "=" +
                   (c.is_sensitive ? "<sensitive>" : c.value.value_or("null"));
  }
  size_t replication = info.partitions.empty() ? 0 : info.partitions.front().replicas.size();
  std::printf("Topic: %s\tTopicId: %s\tPartitionCount: %zu\tReplicationFactor: %zu\tConfigs: %s\n",
              info.name.c_str(), client::format_topic_id(info.topic_id).c_str(), info.partitions.size(), replication,
              config_text.c_str());
  for (const auto& p : info.partitions) {
    std::string leader = p.leader < 0 ? "none" : std::to_string(p.leader);
    std::printf("\tTopic: %s\tPartition: %d\tLeader: %s\tReplicas: %s\tIsr: %s", info.name.c_str(), p.partition,
                leader.c_str(), meta::join_node_ids(p.replicas).c_str(), meta::join_node_ids(p.isr).c_str());
    auto size = disk.partition_bytes.find({info.name, p.partition});
    if (size != disk.partition_bytes.end() && size->second >= 0) {
      std::printf("\tDisk: %s", storage::human_bytes(static_cast<uint64_t>(size->second)).c_str());
    }
    std::printf("\n");
  }
  return kExitOk;
}

int do_describe(client::Client& client, const ToolFlags& flags, const std::string* topic) {
  client::Admin admin(&client);
  if (topic != nullptr) {
    const client::TopicInfo* info = nullptr;
    Status s = client.topic_metadata(*topic, false, &info);
    if (!s.ok()) {
      if (topic_missing_error(s)) {
        if (flags.has("--if-exists")) return kExitOk;
        return runtime_error(kTool, "topic '" + *topic + "' does not exist");
      }
      return runtime_error(kTool, s);
    }
    const DiskFigures disk = disk_figures(admin);
    int rc = describe_one(admin, *info, disk);
    if (rc == kExitOk) print_disk_budget(disk);
    return rc;
  }
  Status s = client.refresh_metadata(nullptr, false);
  if (!s.ok()) return runtime_error(kTool, s);
  // Copy: describing refreshes nothing, but keep the loop independent of the cache.
  std::vector<client::TopicInfo> topics;
  for (const auto& [name, info] : client.metadata().topics()) {
    if (info.is_internal && flags.has("--exclude-internal")) continue;
    topics.push_back(info);
  }
  const DiskFigures disk = disk_figures(admin);
  for (const auto& info : topics) {
    int rc = describe_one(admin, info, disk);
    if (rc != kExitOk) return rc;
  }
  print_disk_budget(disk);
  return kExitOk;
}

int do_delete(client::Client& client, const ToolFlags& flags, const std::string& topic) {
  client::Admin admin(&client);
  Status s = admin.delete_topic(topic);
  if (!s.ok()) {
    if (topic_missing_error(s)) {
      if (flags.has("--if-exists")) return kExitOk;
      return runtime_error(kTool, "topic '" + topic + "' does not exist");
    }
    return runtime_error(kTool, s);
  }
  std::printf("Deleted topic %s.\n", topic.c_str());
  return kExitOk;
}

int do_alter(client::Client& client, const ToolFlags& flags, const std::string& topic) {
  std::vector<client::ConfigChange> changes;
  for (const auto& list : flags.values("--add-config")) {
    for (const auto& item : split_config_list(list)) {
      size_t eq = item.find('=');
      if (eq == std::string::npos || eq == 0) {
        return usage_error(kTool, "--add-config: expected key=value, got '" + item + "'", usage());
      }
      changes.push_back({item.substr(0, eq), client::ConfigOperation::kSet, item.substr(eq + 1)});
    }
  }
  for (const auto& list : flags.values("--delete-config")) {
    for (const auto& key : split_config_list(list)) {
      changes.push_back({key, client::ConfigOperation::kDelete, std::nullopt});
    }
  }
  int64_t partitions = -1;
  if (Status bad = int_flag(flags, "--partitions", 1, INT32_MAX, &partitions); !bad.ok()) {
    return usage_error(kTool, bad, usage());
  }
  if (partitions < 0 && changes.empty()) {
    return usage_error(kTool, "--alter needs --partitions, --add-config or --delete-config", usage());
  }
  const client::TopicInfo* info = nullptr;
  Status s = client.topic_metadata(topic, false, &info);
  if (!s.ok()) {
    if (topic_missing_error(s)) {
      if (flags.has("--if-exists")) return kExitOk;
      return runtime_error(kTool, "topic '" + topic + "' does not exist");
    }
    return runtime_error(kTool, s);
  }
  client::Admin admin(&client);
  if (partitions >= 0) {
    s = admin.create_partitions(topic, static_cast<int32_t>(partitions));
    if (!s.ok()) return runtime_error(kTool, s);
  }
  if (!changes.empty()) {
    s = admin.alter_topic_configs(topic, changes);
    if (!s.ok()) return runtime_error(kTool, s);
    std::printf("Completed updating config for topic %s.\n", topic.c_str());
  }
  return kExitOk;
}

}  // namespace

int run_topics(const std::vector<std::string>& args) {
  ToolFlags flags;
  int exit_code = kExitOk;
  if (!parse_tool_args(kTool, args, kFlags, usage(), &flags, &exit_code)) return exit_code;
  const char* actions[] = {"--create", "--list", "--describe", "--alter", "--delete"};
  int action_count = 0;
  std::string action;
  for (const char* a : actions) {
    if (flags.has(a)) {
      ++action_count;
      action = a;
    }
  }
  if (action_count != 1) {
    return usage_error(kTool, "give exactly one of --create, --list, --describe, --alter, --delete", usage());
  }
  client::ClientOptions options;
  if (Status bad = client_options_from_flags(flags, &options); !bad.ok()) return usage_error(kTool, bad, usage());
  const std::string* topic = flags.value("--topic");
  bool needs_topic = action == "--create" || action == "--alter" || action == "--delete";
  if (needs_topic && topic == nullptr) return usage_error(kTool, action + " needs --topic", usage());
  if (topic != nullptr && topic->empty()) return usage_error(kTool, "--topic: empty topic name", usage());
  if (action != "--create" && (flags.has("--config") || flags.has("--replication-factor") || flags.has("--if-not-exists"))) {
    return usage_error(kTool, "--config, --replication-factor and --if-not-exists go with --create", usage());
  }
  if (action != "--alter" && (flags.has("--add-config") || flags.has("--delete-config"))) {
    return usage_error(kTool, "--add-config and --delete-config go with --alter", usage());
  }
  if (flags.has("--partitions") && action != "--create" && action != "--alter") {
    return usage_error(kTool, "--partitions goes with --create or --alter", usage());
  }

  client::Client client(options);
  Status s = client.bootstrap();
  if (!s.ok()) return runtime_error(kTool, s);
  if (action == "--create") return do_create(client, flags, *topic);
  if (action == "--list") return do_list(client, flags);
  if (action == "--describe") return do_describe(client, flags, topic);
  if (action == "--delete") return do_delete(client, flags, *topic);
  return do_alter(client, flags, *topic);
}

}  // namespace eddy::app
