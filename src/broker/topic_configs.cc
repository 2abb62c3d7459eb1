#include "broker/topic_configs.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "broker/topic_config_defs.h"

namespace eddy::broker {
namespace {

using T = TopicConfigType;
using U = TopicConfigUse;

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

bool parse_double(const std::string& text, double* out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (errno == ERANGE || end != text.c_str() + text.size()) return false;
  *out = v;
  return true;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// Kafka's LIST parsing: comma-separated, items trimmed, empty string is [].
std::vector<std::string> split_list(const std::string& value) {
  std::vector<std::string> out;
  if (trim(value).empty()) return out;
  size_t start = 0;
  while (true) {
    size_t comma = value.find(',', start);
    out.push_back(trim(value.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string join_list(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
  return out;
}

std::string invalid(const std::string& value, const std::string& key, const std::string& why) {
  return "Invalid value " + value + " for configuration " + key + ": " + why;
}

// "partition:broker" pairs or "*" (Kafka's ThrottledReplicaListValidator).
bool valid_throttled_replicas(const std::vector<std::string>& items) {
  if (items.size() == 1 && items[0] == "*") return true;
  for (const auto& item : items) {
    size_t colon = item.find(':');
    int64_t a = 0;
    int64_t b = 0;
    if (colon == std::string::npos || !parse_long(trim(item.substr(0, colon)), &a) ||
        !parse_long(trim(item.substr(colon + 1)), &b) || a < 0 || b < 0) {
      return false;
    }
  }
  return true;
}

// Checks type, bounds and allowed values; empty when valid.
std::string check_type(const TopicConfigDef& d, const std::string& key, const std::string& value) {
  switch (d.type) {
    case T::kBoolean: {
      std::string v = lower(trim(value));
      if (v != "true" && v != "false") return invalid(value, key, "Expected value to be either true or false");
      return "";
    }
    case T::kInt:
    case T::kLong: {
      int64_t v = 0;
      if (!parse_long(trim(value), &v) || (d.type == T::kInt && (v < INT32_MIN || v > INT32_MAX))) {
        return invalid(value, key, d.type == T::kInt ? "Not a number of type INT" : "Not a number of type LONG");
      }
      if (v < d.min) return invalid(value, key, "Value must be at least " + std::to_string(d.min));
      if (v > d.max) return invalid(value, key, "Value must be no more than " + std::to_string(d.max));
      return "";
    }
    case T::kDouble: {
      double v = 0;
      if (!parse_double(trim(value), &v)) return invalid(value, key, "Not a number of type DOUBLE");
      if (v < static_cast<double>(d.min) || v > static_cast<double>(d.max)) {
        return invalid(value, key, "Value must be in [" + std::to_string(d.min) + ", " + std::to_string(d.max) + "]");
      }
      return "";
    }
    case T::kString: {
      if (d.choices.empty()) return "";
      if (std::find(d.choices.begin(), d.choices.end(), value) != d.choices.end()) return "";
      return invalid(value, key, "String must be one of: " + join_list(d.choices));
    }
    case T::kList: {
      std::vector<std::string> items = split_list(value);
      if (std::string(d.name).find("throttled.replicas") != std::string::npos) {
        if (!valid_throttled_replicas(items)) {
          return invalid(value, key, "Must be the literal '*' or a list of replicas in the format "
                                     "[PartitionId]:[BrokerId],[PartitionId]:[BrokerId],...");
        }
        return "";
      }
      for (const auto& item : items) {
        if (!d.choices.empty() && std::find(d.choices.begin(), d.choices.end(), item) == d.choices.end()) {
          return invalid(value, key, "[" + join_list(items) + "] is not in [" + join_list(d.choices) + "]");
        }
      }
      return "";
    }
  }
  return "";
}

// The value as Eddy compares it with `only` (lists and booleans normalised).
std::string normalised(const TopicConfigDef& d, const std::string& value) {
  if (d.type == T::kBoolean) return lower(trim(value));
  if (d.type == T::kList) {
    std::vector<std::string> items = split_list(value);
    std::sort(items.begin(), items.end());
    items.erase(std::unique(items.begin(), items.end()), items.end());
    return join_list(items);
  }
  return trim(value);
}

int64_t long_or(const ConfigMap& m, const char* key, int64_t fallback) {
  auto it = m.find(key);
  int64_t v = 0;
  if (it != m.end() && parse_long(trim(it->second), &v)) return v;
  return fallback;
}

std::string string_or(const ConfigMap& m, const char* key, const std::string& fallback) {
  auto it = m.find(key);
  return it == m.end() ? fallback : it->second;
}

const BrokerConfigEntry* broker_entry(const BrokerOptions& b, const std::string& key) {
  if (key.empty()) return nullptr;
  for (const auto& e : b.static_configs) {
    if (e.name == key) return &e;
  }
  return nullptr;
}

// The broker's default of an honoured key (its configuration, else Kafka's).
std::string honoured_default(const BrokerOptions& b, const TopicConfigDef& def) {
  const storage::LogConfig& d = b.log_defaults;
  const std::string name = def.name;
  if (name == "eddy.acks.all.waits.for")
    return d.acks_all_waits_for == storage::AcksAllWaitsFor::kDisk ? "disk" : "page-cache";
  if (name == "eddy.full.policy") return d.full_policy == storage::FullPolicy::kDropOldest ? "drop-oldest" : "reject";
  if (name == "flush.messages") return std::to_string(d.flush_interval_messages);
  if (name == "flush.ms") return std::to_string(d.flush_interval_ms);
  if (name == "index.interval.bytes") return std::to_string(d.index_interval_bytes);
  if (name == "max.message.bytes") return std::to_string(b.message_max_bytes);
  if (name == "message.timestamp.type")
    return d.timestamp_type == protocol::TimestampType::kCreateTime ? "CreateTime" : "LogAppendTime";
  if (name == "retention.bytes") return std::to_string(d.retention_bytes);
  if (name == "retention.ms") return std::to_string(d.retention_ms);
  if (name == "segment.bytes") return std::to_string(d.segment_bytes);
  if (name == "min.insync.replicas") return std::to_string(b.min_insync_replicas);
  return def.kafka_default;
}

}  // namespace

bool is_topic_config(const std::string& key) { return find_topic_config_def(key) != nullptr; }

bool is_list_topic_config(const std::string& key) {
  const TopicConfigDef* d = find_topic_config_def(key);
  return d != nullptr && d->type == T::kList;
}

std::string append_to_list(const std::string& current, const std::string& items) {
  std::vector<std::string> out = split_list(current);
  for (const auto& item : split_list(items)) {
    if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
  }
  return join_list(out);
}

std::string subtract_from_list(const std::string& current, const std::string& items) {
  std::vector<std::string> out = split_list(current);
  for (const auto& item : split_list(items)) out.erase(std::remove(out.begin(), out.end(), item), out.end());
  return join_list(out);
}

std::string validate_topic_config(const std::string& key, const std::string& value, TopicConfigScope scope) {
  const TopicConfigDef* def = find_topic_config_def(key);
  if (def == nullptr) return "Unknown topic config name: " + key;
  std::string why = check_type(*def, key, value);
  if (!why.empty()) return why;
  if (def->use == U::kOnly || (def->use == U::kHonouredInCluster && scope == TopicConfigScope::kSingleNode)) {
    std::string v = normalised(*def, value);
    if (std::find(def->only.begin(), def->only.end(), v) == def->only.end()) {
      return invalid(value, key, def->why_only);
    }
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
  c.index_interval_bytes =
      static_cast<uint32_t>(long_or(o, "index.interval.bytes", static_cast<int64_t>(c.index_interval_bytes)));
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
  out.timestamp_after_max_ms = long_or(o, "message.timestamp.after.max.ms", out.timestamp_after_max_ms);
  // As Kafka 3.9: difference.max.ms stands for before (and after) where
  // those are not set themselves.
  const int64_t difference = long_or(o, "message.timestamp.difference.max.ms", INT64_MAX);
  out.timestamp_before_max_ms = long_or(o, "message.timestamp.before.max.ms", difference);
  if (o.count("message.timestamp.after.max.ms") == 0 && difference != INT64_MAX) {
    out.timestamp_after_max_ms = difference;
  }
  out.max_decompressed_record_bytes =
      long_or(o, "max.decompressed.message.bytes", out.max_decompressed_record_bytes);
  out.min_insync_replicas = static_cast<int32_t>(long_or(o, "min.insync.replicas", broker.min_insync_replicas));
  return out;
}

std::vector<DescribedConfig> describe_topic_configs(const BrokerOptions& broker, const ConfigMap& overrides) {
  std::vector<DescribedConfig> out;
  for (const auto& def : topic_config_defs()) {
    auto it = overrides.find(def.name);
    if (!def.listed && it == overrides.end()) continue;
    DescribedConfig c;
    c.name = def.name;
    c.config_type = static_cast<int8_t>(def.type);
    c.documentation = def.documentation;
    const BrokerConfigEntry* from_broker = broker_entry(broker, def.broker_key);
    const bool honoured = def.use == U::kHonoured || def.use == U::kHonouredInCluster;
    std::string fallback = honoured ? honoured_default(broker, def) : def.kafka_default;
    if (from_broker != nullptr && !honoured) fallback = from_broker->value;
    if (it != overrides.end()) {
      c.value = it->second;
      c.is_default = false;
      c.source = kDynamicTopicConfig;
      c.synonyms.push_back({def.name, it->second, kDynamicTopicConfig});
    } else {
      c.value = fallback;
      c.source = (from_broker != nullptr && !from_broker->is_default) ? kStaticBrokerConfig : kDefaultConfig;
      c.is_default = c.source == kDefaultConfig;
    }
    if (from_broker != nullptr && !from_broker->is_default) {
      c.synonyms.push_back({from_broker->name, fallback, kStaticBrokerConfig});
    }
    c.synonyms.push_back({from_broker != nullptr ? from_broker->name : def.name,
                          from_broker != nullptr && from_broker->is_default ? fallback : def.kafka_default,
                          kDefaultConfig});
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace eddy::broker
