// The broker's configuration keys: Kafka's names and defaults where Kafka has
// a key with the same meaning, Eddy's own keys under the "eddy." prefix.
// README.md's configuration reference is generated from the same table
// (`eddy help config`).
#pragma once

#include <string>
#include <vector>

#include "app/config.h"

namespace eddy::app {

const ConfigSchema& broker_schema();

// Loads a properties file (may be empty: defaults only) then the overrides
// ("key=value"). kIOError when the file cannot be read, kInvalidArgument
// for a bad entry, in the "file:line: key: why" form.
Status load_broker_config(const std::string& path, const std::vector<std::string>& overrides, Config* config,
                          std::vector<std::string>* warnings);

// Prints the reference table (key, default, meaning) as Markdown.
std::string describe_broker_schema_markdown();

}  // namespace eddy::app
