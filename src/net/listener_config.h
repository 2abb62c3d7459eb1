// Kafka-style listener configuration: the values of `listeners`,
// `advertised.listeners` and `listener.security.protocol.map`.
//
//   listeners=PLAINTEXT://127.0.0.1:9092,INTERNAL://:9093
//   listener.security.protocol.map=PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT
//
// A listener is NAME://HOST:PORT. Names are case-insensitive and stored
// upper-cased (as Kafka does). An empty host means every interface; an IPv6
// host is written in brackets ("[::1]:9092") and stored without them. Port 0
// asks the OS for an ephemeral port (Server reports the bound one).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "port/status.h"

namespace eddy::security {
class TlsContext;
}

namespace eddy::net {

enum class SecurityProtocol { kPlaintext, kSsl, kSaslPlaintext, kSaslSsl };

// Two independent properties of a protocol: whether its bytes travel in
// TLS (SSL, SASL_SSL) and whether its clients must authenticate with SASL
// before anything else (SASL_PLAINTEXT, SASL_SSL).
inline bool uses_tls(SecurityProtocol p) { return p == SecurityProtocol::kSsl || p == SecurityProtocol::kSaslSsl; }
inline bool needs_sasl(SecurityProtocol p) {
  return p == SecurityProtocol::kSaslPlaintext || p == SecurityProtocol::kSaslSsl;
}

// "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL".
const char* security_protocol_name(SecurityProtocol protocol);
// Parses one of the names above (case-insensitive); false when unknown.
bool parse_security_protocol(std::string_view text, SecurityProtocol* out);

struct ListenerConfig {
  std::string name;  // upper-cased listener name, e.g. "PLAINTEXT"
  std::string host;  // empty: all interfaces; IPv6 literals without brackets
  uint16_t port = 0;  // 0: ephemeral
  SecurityProtocol security_protocol = SecurityProtocol::kPlaintext;
  // The TLS configuration of a listener that uses_tls(): built by the app
  // from the ssl.* keys (app/listener_tls.h); null for the others.
  std::shared_ptr<const security::TlsContext> tls;
};

// Listener name -> security protocol, in the order given.
using SecurityProtocolMap = std::vector<std::pair<std::string, SecurityProtocol>>;

// Parses listener.security.protocol.map ("NAME:PROTOCOL,..."). Names are
// upper-cased; a name given twice is an error. kInvalidArgument on a
// malformed value.
Status parse_security_protocol_map(std::string_view value, SecurityProtocolMap* out);

// Parses a `listeners` or `advertised.listeners` value: comma-separated
// NAME://HOST:PORT entries, whitespace around entries ignored. The security
// protocol of each listener comes from protocol_map, or when protocol_map is
// null from Kafka's default map (PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL
// map to themselves, other names are errors). An empty value yields an empty
// list. Listener names must be distinct. kInvalidArgument (naming the
// offending entry) on a malformed value; *out is then unspecified.
Status parse_listeners(std::string_view value, const SecurityProtocolMap* protocol_map,
                       std::vector<ListenerConfig>* out);

// "NAME://HOST:PORT", brackets around IPv6 hosts.
std::string format_listener(std::string_view name, std::string_view host, uint16_t port);

}  // namespace eddy::net
