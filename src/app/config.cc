#include "app/config.h"

#include <cerrno>
#include <cstdlib>
#include <stdexcept>

namespace eddy::app {

std::optional<int64_t> parse_int64(const std::string& text) {
  if (text.empty()) return std::nullopt;
  size_t i = (text[0] == '-' || text[0] == '+') ? 1 : 0;
  if (i == text.size()) return std::nullopt;
  for (size_t j = i; j < text.size(); ++j) {
    if (text[j] < '0' || text[j] > '9') return std::nullopt;
  }
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE || *end != '\0') return std::nullopt;
  return static_cast<int64_t>(v);
}

ConfigSchema::ConfigSchema(std::vector<ConfigKey> keys) : keys_(std::move(keys)) {}

const ConfigKey* ConfigSchema::find(const std::string& name) const {
  for (const auto& k : keys_) {
    if (k.name == name) return &k;
  }
  // Per-instance keys: "eddy.forward.<link>.acks" matches "eddy.forward.central.acks".
  for (const auto& k : keys_) {
    size_t open = k.name.find('<');
    size_t close = k.name.find('>', open);
    if (open == std::string::npos || close == std::string::npos) continue;
    const std::string prefix = k.name.substr(0, open);
    const std::string suffix = k.name.substr(close + 1);
    if (name.size() <= prefix.size() + suffix.size()) continue;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    if (name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    if (!valid_instance_name(name.substr(prefix.size(), name.size() - prefix.size() - suffix.size()))) continue;
    return &k;
  }
  return nullptr;
}

bool valid_instance_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::vector<std::string> Config::set_keys() const {
  std::vector<std::string> out;
  for (const auto& entry : values_) out.push_back(entry.first);
  return out;
}

std::string ConfigSchema::validate(const ConfigKey& key, const std::string& value) {
  switch (key.type) {
    case ConfigType::kInt:
    case ConfigType::kLong: {
      auto v = parse_int64(value);
      if (!v) return "expected an integer, got '" + value + "'";
      int64_t lo = key.min, hi = key.max;
      if (key.type == ConfigType::kInt) {
        lo = std::max<int64_t>(lo, INT32_MIN);
        hi = std::min<int64_t>(hi, INT32_MAX);
      }
      if (*v < lo || *v > hi) {
        std::string range = "[" + (lo == INT64_MIN || lo == INT32_MIN ? std::string("...") : std::to_string(lo)) + ", " +
                            (hi == INT64_MAX || hi == INT32_MAX ? std::string("...") : std::to_string(hi)) + "]";
        return "value " + value + " out of range " + range;
      }
      return "";
    }
    case ConfigType::kBool:
      if (value == "true" || value == "false") return "";
      return "expected true or false, got '" + value + "'";
    case ConfigType::kEnum: {
      std::string options;
      for (const auto& a : key.allowed) {
        if (a == value) return "";
        options += (options.empty() ? "" : ", ") + a;
      }
      return "expected one of " + options + ", got '" + value + "'";
    }
    case ConfigType::kString:
    case ConfigType::kList:
      return "";
  }
  return "";
}

Status Config::apply(const std::vector<Property>& properties, std::vector<std::string>* warnings) {
  for (const Property& p : properties) {
    const ConfigKey* key = schema_->find(p.key);
    if (key == nullptr) {
      return Status::invalid_argument(describe_property_error(p, "unknown configuration key (see `eddy help config`)"));
    }
    if (key->ignored) {
      warnings->push_back(describe_property_error(p, "accepted for Kafka compatibility; has no effect in Eddy"));
      continue;
    }
    if (!key->alias_of.empty()) key = schema_->find(key->alias_of);
    std::string why = ConfigSchema::validate(*key, p.value);
    if (!why.empty()) {
      return Status::invalid_argument(describe_property_error(p, why));
    }
    // Per-instance keys are kept under the instance's own name.
    values_[key->name.find('<') == std::string::npos ? key->name : p.key] = p;
  }
  return Status();
}

const std::string& Config::raw(const std::string& name) const {
  auto it = values_.find(name);
  if (it != values_.end()) return it->second.value;
  const ConfigKey* key = schema_->find(name);
  if (key == nullptr) throw std::logic_error("config key not in schema: " + name);
  return key->default_value;
}

int64_t Config::get_long(const std::string& name) const {
  auto v = parse_int64(raw(name));
  return v ? *v : 0;
}

bool Config::get_bool(const std::string& name) const { return raw(name) == "true"; }

std::string Config::get_string(const std::string& name) const { return raw(name); }

std::vector<std::string> Config::get_list(const std::string& name) const {
  std::vector<std::string> out;
  const std::string& text = raw(name);
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(start, comma - start);
    size_t a = item.find_first_not_of(" \t");
    size_t b = item.find_last_not_of(" \t");
    if (a != std::string::npos) out.push_back(item.substr(a, b - a + 1));
    start = comma + 1;
  }
  return out;
}

std::string Config::origin(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return "default";
  if (it->second.line == 0) return it->second.source;
  return it->second.source + ":" + std::to_string(it->second.line);
}

}  // namespace eddy::app
