#include "app/tool_flags.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "app/cli.h"
#include "app/command_config.h"

namespace eddy::app {

namespace {

const FlagSpec* find_spec(std::span<const FlagSpec> specs, std::string_view name) {
  for (const auto& spec : specs) {
    if (name == spec.name) return &spec;
  }
  return nullptr;
}

}  // namespace

Status ToolFlags::parse(const std::vector<std::string>& args, std::span<const FlagSpec> specs, ToolFlags* out) {
  out->values_.clear();
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) {
      return Status::invalid_argument("unexpected argument '" + arg + "'");
    }
    std::string name = arg;
    std::string value;
    bool inline_value = false;
    size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      inline_value = true;
    }
    const FlagSpec* spec = find_spec(specs, name);
    if (spec == nullptr) {
      return Status::invalid_argument("unknown option '" + name + "'");
    }
    if (spec->value_name == nullptr) {
      if (inline_value) {
        return Status::invalid_argument("option '" + name + "' takes no value");
      }
    } else if (!inline_value) {
      if (i + 1 >= args.size()) {
        return Status::invalid_argument("option '" + name + "' needs a value (" + spec->value_name + ")");
      }
      value = args[++i];
    }
    auto& slot = out->values_[name];
    if (!slot.empty() && !spec->repeatable) {
      return Status::invalid_argument("option '" + name + "' given more than once");
    }
    slot.push_back(std::move(value));
  }
  return Status();
}

const std::string* ToolFlags::value(std::string_view name) const {
  auto it = values_.find(std::string(name));
  return it == values_.end() || it->second.empty() ? nullptr : &it->second.back();
}

std::vector<std::string> ToolFlags::values(std::string_view name) const {
  auto it = values_.find(std::string(name));
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

std::string describe_flags(const char* synopsis, std::span<const FlagSpec> specs) {
  std::string out = std::string("Usage: ") + synopsis + "\n\nOptions:\n";
  for (const auto& spec : specs) {
    std::string left = std::string("  ") + spec.name;
    if (spec.value_name != nullptr) left += std::string(" ") + spec.value_name;
    if (left.size() < 34) left.resize(34, ' ');
    else left += "  ";
    out += left + spec.help + (spec.repeatable ? " (repeatable)" : "") + "\n";
  }
  return out;
}

bool parse_int64(std::string_view text, int64_t min, int64_t max, int64_t* out) {
  if (text.empty() || text.size() > 19 + (text[0] == '-' ? 1 : 0)) return false;
  size_t i = 0;
  bool negative = false;
  if (text[0] == '-') {
    negative = true;
    i = 1;
    if (text.size() == 1) return false;
  }
  int64_t value = 0;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c < '0' || c > '9') return false;
    if (value > (INT64_MAX - (c - '0')) / 10) return false;
    value = value * 10 + (c - '0');
  }
  if (negative) value = -value;
  if (value < min || value > max) return false;
  *out = value;
  return true;
}

Status int_flag(const ToolFlags& flags, const char* name, int64_t min, int64_t max, int64_t* out) {
  const std::string* text = flags.value(name);
  if (text == nullptr) return Status();
  if (!parse_int64(*text, min, max, out)) {
    return Status::invalid_argument(std::string(name) + ": expected an integer from " + std::to_string(min) + " to " + std::to_string(max) +
             ", got '" + *text + "'");
  }
  return Status();
}

Status parse_properties(const std::vector<std::string>& items, std::span<const char* const> known,
                        std::map<std::string, std::string>* out) {
  for (const auto& item : items) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::invalid_argument("--property: expected key=value, got '" + item + "'");
    }
    std::string key = item.substr(0, eq);
    if (!known.empty()) {
      bool found = false;
      for (const char* k : known) found = found || key == k;
      if (!found) {
        std::string list;
        for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
        return Status::invalid_argument("--property: unknown property '" + key + "' (known: " + list + ")");
      }
    }
    (*out)[key] = item.substr(eq + 1);
  }
  return Status();
}

std::vector<std::string> split_config_list(std::string_view text) {
  std::vector<std::string> out;
  std::string current;
  int depth = 0;  // inside [...]: commas belong to the value
  for (char c : text) {
    if (c == '[') {
      ++depth;  // brackets group; they are not part of the value
    } else if (c == ']' && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      if (!current.empty()) out.push_back(std::move(current));
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) out.push_back(std::move(current));
  return out;
}

Status client_options_from_flags(const ToolFlags& flags, client::ClientOptions* out) {
  const std::string* servers = flags.value("--bootstrap-server");
  if (servers == nullptr) {
    return Status::invalid_argument("--bootstrap-server is required");
  }
  if (Status s = client::parse_broker_list(*servers, &out->bootstrap); !s.ok()) {
    return Status::invalid_argument("--bootstrap-server: " + s.message());
  }
  out->connection.client_id = "eddy-tools";
  int64_t ms = out->request_timeout_ms;
  if (Status s = int_flag(flags, "--request-timeout-ms", 1, INT32_MAX, &ms); !s.ok()) return s;
  out->request_timeout_ms = ms;
  out->connect_timeout_ms = std::min<int64_t>(out->connect_timeout_ms, ms);
  if (const std::string* path = flags.value("--command-config")) {
    std::vector<std::string> warnings;
    if (Status s = apply_command_config(*path, out, &warnings); !s.ok()) return s;
    for (const std::string& w : warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  }
  return Status();
}

bool parse_tool_args(const char* tool, const std::vector<std::string>& args, std::span<const FlagSpec> specs,
                     const std::string& usage, ToolFlags* flags, int* exit_code) {
  if (Status s = ToolFlags::parse(args, specs, flags); !s.ok()) {
    *exit_code = usage_error(tool, s, usage);
    return false;
  }
  if (flags->has("--help")) {
    std::fputs(usage.c_str(), stdout);
    *exit_code = kExitOk;
    return false;
  }
  return true;
}

int usage_error(const char* tool, const std::string& message, const std::string& usage) {
  std::fprintf(stderr, "eddy %s: %s\n\n%s", tool, message.c_str(), usage.c_str());
  return kExitUsage;
}

int usage_error(const char* tool, const Status& status, const std::string& usage) {
  return usage_error(tool, status.message(), usage);
}

int runtime_error(const char* tool, const std::string& message) {
  std::fprintf(stderr, "eddy %s: %s\n", tool, message.c_str());
  return kExitFailure;
}

int runtime_error(const char* tool, const Status& status) { return runtime_error(tool, status.message()); }

}  // namespace eddy::app
