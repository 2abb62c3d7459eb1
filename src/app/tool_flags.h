// Flag parsing and shared plumbing of the client tools (eddy topics,
// produce, consume): Kafka-style long flags ("--topic T" or "--topic=T"),
// "--property key=value" lists, integer checks, the client built from
// --bootstrap-server, and uniform error reporting with the exit codes of
// app/cli.h (2 for usage errors, 1 for runtime failures).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "client/client.h"
#include "port/status.h"
#include "protocol/errors.h"

namespace eddy::app {

struct FlagSpec {
  const char* name;        // "--topic"
  const char* value_name;  // "TOPIC"; nullptr for a switch without value
  bool repeatable;
  const char* help;        // one line
};

class ToolFlags {
 public:
  // Parses args against specs. Errors: unknown flags, missing values,
  // repeats of a non-repeatable flag, and arguments that are not flags.
  // kInvalidArgument naming the argument.
  static Status parse(const std::vector<std::string>& args, std::span<const FlagSpec> specs, ToolFlags* out);

  bool has(std::string_view name) const { return values_.count(std::string(name)) != 0; }
  // The value of a flag given once; nullptr when absent.
  const std::string* value(std::string_view name) const;
  // Every value of a repeatable flag, in order.
  std::vector<std::string> values(std::string_view name) const;

 private:
  std::map<std::string, std::vector<std::string>> values_;
};

// "Usage: ..." followed by one line per flag.
std::string describe_flags(const char* synopsis, std::span<const FlagSpec> specs);

// Parses a decimal integer within [min, max].
bool parse_int64(std::string_view text, int64_t min, int64_t max, int64_t* out);
// Reads flag `name` (when present) as an integer within [min, max] into
// *out; kInvalidArgument naming the flag otherwise.
Status int_flag(const ToolFlags& flags, const char* name, int64_t min, int64_t max, int64_t* out);

// "key=value" items into *out (later keys win). Keys must be in `known`
// unless it is empty. kInvalidArgument naming the item otherwise.
Status parse_properties(const std::vector<std::string>& items, std::span<const char* const> known,
                        std::map<std::string, std::string>* out);

// Splits "a=1,b=[x,y]" at commas outside brackets (kafka-configs syntax);
// the brackets of a bracketed value are removed.
std::vector<std::string> split_config_list(std::string_view text);

// Client options from --bootstrap-server (required) and the common
// timeouts. kInvalidArgument naming the flag otherwise.
Status client_options_from_flags(const ToolFlags& flags, client::ClientOptions* out);

// The start every tool shares: parses args against specs; a bad flag prints
// the usage error, --help prints the usage to stdout. True when the tool
// goes on; false with *exit_code, what the tool returns now.
bool parse_tool_args(const char* tool, const std::vector<std::string>& args, std::span<const FlagSpec> specs,
                     const std::string& usage, ToolFlags* flags, int* exit_code);

// Prints "eddy <tool>: <message>" (and the usage for usage errors) to
// stderr and returns the exit code.
int usage_error(const char* tool, const std::string& message, const std::string& usage);
int usage_error(const char* tool, const Status& status, const std::string& usage);
int runtime_error(const char* tool, const std::string& message);
int runtime_error(const char* tool, const Status& status);

}  // namespace eddy::app
