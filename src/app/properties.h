// Reading Kafka-style .properties files (java.util.Properties syntax: `key=value`
// or `key: value` or `key value`, `#` and `!` comments, backslash line
// continuation, \t \n \r \uXXXX escapes). Each entry remembers its line so that
// errors can name file:line.
#pragma once

#include <string>
#include <vector>

#include "port/status.h"

namespace eddy::app {

struct Property {
  std::string key;
  std::string value;
  std::string source;  // file path, or "--override"
  int line = 0;        // 1-based line of the key; 0 for overrides
};

// Parses text. Never fails: every non-blank, non-comment line is an entry
// (a line without a separator is a key with an empty value, as in Java).
std::vector<Property> parse_properties(const std::string& text, const std::string& source);

// Reads and parses a file. kIOError ("path: why") when the file cannot be
// read.
Status read_properties_file(const std::string& path, std::vector<Property>* out);

// "source:line: key: why" (or "source: key: why" without a line).
std::string describe_property_error(const Property& p, const std::string& why);

}  // namespace eddy::app
