// client/sasl_client_config.h — what a connection needs to authenticate
// with SASL after ApiVersions (security.protocol=SASL_SSL or
// SASL_PLAINTEXT): the mechanism and the credentials, as the forwarder's
// link config resolved them (sasl.jaas.config or sasl.username +
// sasl.password[.file]).
#pragma once

#include <string>

namespace eddy::client {

struct SaslClientConfig {
  // "PLAIN", "SCRAM-SHA-256" or "SCRAM-SHA-512" (checked by the config
  // parser; an other name fails the exchange with kInvalidArgument).
  std::string mechanism;
  std::string username;
  std::string password;
};

}  // namespace eddy::client
