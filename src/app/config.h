// Typed configuration keys. A ConfigSchema is a table of keys, each with a
// type, a default, an optional range or set of allowed values, and a one-line
// description (shown by `eddy help config`). Loading checks every property
// against the schema: an unknown key or a bad value is an error naming
// file:line and the key. Values are kept as validated text and read back typed.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "app/properties.h"
#include "port/status.h"

namespace eddy::app {

enum class ConfigType { kInt, kLong, kBool, kString, kList, kEnum };

struct ConfigKey {
  std::string name;
  ConfigType type;
  std::string default_value;       // "" with nullable: no value
  std::string doc;
  int64_t min = INT64_MIN;         // kInt/kLong bounds (inclusive)
  int64_t max = INT64_MAX;
  std::vector<std::string> allowed;  // kEnum
  bool kafka = true;               // a key of Apache Kafka's (same name, same meaning)
  std::string alias_of;            // a deprecated/alternative spelling of another key
  bool ignored = false;            // accepted for compatibility, has no effect in Eddy
};

// A schema key whose name holds a placeholder in angle brackets
// ("eddy.forward.<link>.acks") stands for one key per instance name
// ("eddy.forward.central.acks"); instance names are valid_instance_name().
class ConfigSchema {
 public:
  explicit ConfigSchema(std::vector<ConfigKey> keys);
  const ConfigKey* find(const std::string& name) const;
  const std::vector<ConfigKey>& keys() const { return keys_; }

  // Checks value against key's type and constraints; empty string when valid,
  // otherwise why not (e.g. "expected an integer, got 'abc'").
  static std::string validate(const ConfigKey& key, const std::string& value);

 private:
  std::vector<ConfigKey> keys_;
};

// Validated values by key name (aliases resolved); defaults apply for keys
// not set.
class Config {
 public:
  explicit Config(const ConfigSchema* schema) : schema_(schema) {}

  // Applies properties in order (later ones win). kInvalidArgument
  // ("file:line: key: why") at the first bad one. Ignored keys produce a
  // warning in *warnings.
  Status apply(const std::vector<Property>& properties, std::vector<std::string>* warnings);

  // Typed getters. REQUIRES: name is in the schema with a matching type.
  int64_t get_long(const std::string& name) const;
  int32_t get_int(const std::string& name) const { return static_cast<int32_t>(get_long(name)); }
  bool get_bool(const std::string& name) const;
  std::string get_string(const std::string& name) const;
  std::vector<std::string> get_list(const std::string& name) const;
  bool is_set(const std::string& name) const { return values_.count(name) != 0; }
  // Names of the keys set (aliases resolved), sorted.
  std::vector<std::string> set_keys() const;
  // Where the value came from: "file:line", "--override" or "default".
  std::string origin(const std::string& name) const;

 private:
  const std::string& raw(const std::string& name) const;
  const ConfigSchema* schema_;
  std::map<std::string, Property> values_;
};

// 1..64 characters of [a-zA-Z0-9_-]: names of links and other instances.
bool valid_instance_name(const std::string& name);

// Parses an integer with an optional sign; no trailing garbage.
std::optional<int64_t> parse_int64(const std::string& text);

}  // namespace eddy::app
