#include "broker/topic_configs.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace eddy::broker {
namespace {

enum class Kind { kLong, kChoice };

struct TopicConfigDef {
  const char* name;
  Kind kind;
  int64_t min;
  int64_t max;
  std::vector<std::string> choices;
};

constexpr int64_t kLongMax = INT64_MAX;

const std::vector<TopicConfigDef>& defs() {
  static const std::vector<TopicConfigDef> kDefs = {
      {"cleanup.policy", Kind::kChoice, 0, 0, {"delete"}},
      {"eddy.acks.all.waits.for", Kind::kChoice, 0, 0, {"disk", "page-cache"}},
      {"eddy.full.policy", Kind::kChoice, 0, 0, {"drop-oldest", "reject"}},
      {"flush.messages", Kind::kLong, 1, kLongMax, {}},
      {"flush.ms", Kind::kLong, 0, kLongMax, {}},
      {"max.message.bytes", Kind::kLong, 64, INT32_MAX, {}},
      {"message.timestamp.type", Kind::kChoice, 0, 0, {"CreateTime", "LogAppendTime"}},
      {"min.insync.replicas", Kind::kLong, 1, 1, {}},
      {"retention.bytes", Kind::kLong, -1, kLongMax, {}},
      {"retention.ms", Kind::kLong, -1, kLongMax, {}},
      {"segment.bytes", Kind::kLong, 64 * 1024, INT32_MAX, {}},
  };
  return kDefs;
}

const TopicConfigDef* find_def(const std::string& key) {
  for (const auto& d : defs()) {
    if (key == d.name) return &d;
  }
  return nullptr;
}

bool parse_long(const std::string& text, int64_t* out) {
  if (text.empty()) return false;
  size_t i = (text[0] == '-') ? 1 : 0;
  if (i == text.size()) return false;
  for (size_t j = i; j < text.size(); ++j) {
    if (text[j] < '0' || text[j] > '9') return false;
  }
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE) return false;
  *out = v;
  return true;
}

int64_t long_or(const ConfigMap& m, const char* key, int64_t fallback) {
  auto it = m.find(key);
  int64_t v = 0;
  if (it != m.end() && parse_long(it->second, &v)) return v;
  return fallback;
}

std::string string_or(const ConfigMap& m, const char* key, const std::string& fallback) {
  auto it = m.find(key);
  return it == m.end() ? fallback : it->second;
}

std::string default_value(const BrokerOptions& b, const std::string& name) {
  const storage::LogConfig& d = b.log_defaults;
  if (name == "cleanup.policy") return "delete";
  if (name == "eddy.acks.all.waits.for")
    return d.acks_all_waits_for == storage::AcksAllWaitsFor::kDisk ? "disk" : "page-cache";
  if (name == "eddy.full.policy") return d.full_policy == storage::FullPolicy::kDropOldest ? "drop-oldest" : "reject";
  if (name == "flush.messages") return std::to_string(d.flush_interval_messages);
  if (name == "flush.ms") return std::to_string(d.flush_interval_ms);
  if (name == "max.message.bytes") return std::to_string(b.message_max_bytes);
  if (name == "message.timestamp.type")
    return d.timestamp_type == protocol::TimestampType::kCreateTime ? "CreateTime" : "LogAppendTime";
  if (name == "min.insync.replicas") return "1";
  if (name == "retention.bytes") return std::to_string(d.retention_bytes);
  if (name == "retention.ms") return std::to_string(d.retention_ms);
  if (name == "segment.bytes") return std::to_string(d.segment_bytes);
  return "";
}

}  // namespace

std::string validate_topic_config(const std::string& key, const std::string& value) {
  const TopicConfigDef* def = find_def(key);
  if (def == nullptr) return "Unknown topic config name: " + key;
  if (def->kind == Kind::kChoice) {
    if (std::find(def->choices.begin(), def->choices.end(), value) != def->choices.end()) return "";
    std::string options;
    for (const auto& c : def->choices) options += (options.empty() ? "" : ", ") + c;
    return "Invalid value " + value + " for configuration " + key + ": String must be one of: " + options;
  }
  int64_t v = 0;
  if (!parse_long(value, &v)) return "Invalid value " + value + " for configuration " + key + ": Not a number of type LONG";
  if (v < def->min || v > def->max) {
    return "Invalid value " + value + " for configuration " + key + ": Value must be in [" +
           std::to_string(def->min) + ", " + std::to_string(def->max) + "]";
  }
  return "";
}

EffectiveTopicConfig effective_topic_config(const BrokerOptions& broker, const ConfigMap& o) {
  EffectiveTopicConfig out;
  storage::LogConfig& c = out.log;
  c = broker.log_defaults;
  c.segment_bytes = static_cast<uint64_t>(long_or(o, "segment.bytes", static_cast<int64_t>(c.segment_bytes)));
  c.retention_bytes = long_or(o, "retention.bytes", c.retention_bytes);
  c.retention_ms = long_or(o, "retention.ms", c.retention_ms);
  c.flush_interval_messages = long_or(o, "flush.messages", c.flush_interval_messages);
  c.flush_interval_ms = long_or(o, "flush.ms", c.flush_interval_ms);
  std::string ts = string_or(o, "message.timestamp.type", "");
  if (ts == "CreateTime") c.timestamp_type = protocol::TimestampType::kCreateTime;
  if (ts == "LogAppendTime") c.timestamp_type = protocol::TimestampType::kLogAppendTime;
  std::string full = string_or(o, "eddy.full.policy", "");
  if (full == "drop-oldest") c.full_policy = storage::FullPolicy::kDropOldest;
  if (full == "reject") c.full_policy = storage::FullPolicy::kReject;
  std::string acks = string_or(o, "eddy.acks.all.waits.for", "");
  if (acks == "disk") c.acks_all_waits_for = storage::AcksAllWaitsFor::kDisk;
  if (acks == "page-cache") c.acks_all_waits_for = storage::AcksAllWaitsFor::kPageCache;
  out.max_message_bytes = static_cast<int32_t>(long_or(o, "max.message.bytes", broker.message_max_bytes));
  return out;
}

std::vector<DescribedConfig> describe_topic_configs(const BrokerOptions& broker, const ConfigMap& overrides) {
  std::vector<DescribedConfig> out;
  for (const auto& def : defs()) {
    DescribedConfig c;
    c.name = def.name;
    auto it = overrides.find(def.name);
    if (it != overrides.end()) {
      c.value = it->second;
      c.is_default = false;
      c.source = 1;
    } else {
      c.value = default_value(broker, def.name);
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace eddy::broker
