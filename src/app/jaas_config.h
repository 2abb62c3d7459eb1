// Kafka's client sasl.jaas.config value, the subset a SASL PLAIN or SCRAM
// client uses: exactly one login module with its control flag and options,
//
//   org.apache.kafka.common.security.scram.ScramLoginModule required
//       username="gateway-7" password="s3cr\"et";
//
// Options are key=value with the value a bare word or a double-quoted
// string (backslash escapes the next character, as Java's StreamTokenizer
// reads it); the entry ends with ';'.
#pragma once

#include <map>
#include <string>

#include "port/status.h"

namespace eddy::app {

struct JaasLoginModule {
  std::string module_class;  // e.g. org.apache.kafka.common.security.plain.PlainLoginModule
  std::string flag;          // required, requisite, sufficient or optional
  std::map<std::string, std::string> options;
};

// kInvalidArgument saying what is wrong (never quoting option values: they
// hold passwords).
Status parse_jaas_config(const std::string& text, JaasLoginModule* out);

// The login module Kafka's clients use for mechanism (PLAIN,
// SCRAM-SHA-256, SCRAM-SHA-512); empty for others.
std::string jaas_module_for(const std::string& mechanism);

}  // namespace eddy::app
