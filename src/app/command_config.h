// Kafka's --command-config for Eddy's client tools (eddy topics, produce,
// consume, groups, users): a Kafka client properties file whose
// security.protocol, sasl.* and ssl.* keys (the same keys and meanings as a
// forward link's, without the link prefix) say how the tool connects.
// Other client settings in the file (client.id, request.timeout.ms, ...)
// are ignored with a warning, as Kafka's tools warn about keys they do not
// know; ssl.truststore.type / ssl.keystore.type must be PEM when given
// (Eddy reads no Java keystores).
#pragma once

#include <string>
#include <vector>

#include "client/client.h"
#include "port/status.h"

namespace eddy::app {

// Reads path and sets out->connection.sasl and out->transport_factory (TLS
// over TCP) as its keys say. kInvalidArgument naming file, line or key and
// why (the tools exit 2); *warnings gets one line per ignored key.
Status apply_command_config(const std::string& path, client::ClientOptions* out, std::vector<std::string>* warnings);

}  // namespace eddy::app
