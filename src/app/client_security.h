// The security keys of a Kafka client (security.protocol with the sasl.*
// and ssl.* keys of Kafka's clients, under a prefix: "eddy.forward.<link>."
// for a link, none for a tool's --command-config file), resolved into what
// the client's connections use: a client TLS context (certificates loaded
// and checked now) and SASL credentials.
#pragma once

#include <memory>
#include <string>

#include "app/config.h"
#include "client/sasl_client_config.h"
#include "security/tls_config.h"

namespace eddy::app {

struct ClientSecurity {
  // security.protocol, as configured (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL).
  std::string protocol = "PLAINTEXT";
  // Set (SSL, SASL_SSL): every connection runs TLS, verified with this context.
  std::shared_ptr<const security::TlsContext> tls;
  // Set (SASL_PLAINTEXT, SASL_SSL): every connection authenticates after
  // ApiVersions. Holds the password: never logged nor published.
  std::shared_ptr<const client::SaslClientConfig> sasl;
};

// The keys under prefix k. owner names the client in messages ("link
// 'dc'", "--command-config client.properties"). kInvalidArgument naming
// the origin, the key and, for files, the file and why (missing, unreadable,
// too large, not PEM, key not matching the certificate). A sasl.* key
// without SASL or an ssl.* key without TLS is an error too (it would
// silently do nothing). Messages never hold a password.
Status client_security(const Config& config, const std::string& k, const std::string& owner, ClientSecurity* out);

// The suffixes of the keys client_security reads ("security.protocol",
// "sasl.mechanism", ...).
const std::vector<std::string>& client_security_keys();

}  // namespace eddy::app
