// security/tls_config.h — TLS material and settings, built once at startup
// into an immutable mbedTLS configuration that every connection of a
// listener shares.
//
//   security::TlsSettings s;                  // Kafka's ssl.* values
//   s.keystore_location = "/etc/eddy/broker.pem";
//   std::shared_ptr<const security::TlsContext> tls;
//   if (Status st = security::TlsContext::create_server(s, &tls); !st.ok()) {
//     ... st.message() names the key, the file and why; exit 2 ...
//   }
//
// The loader (PEM certificates, keys, CA bundles, protocol versions, cipher
// suites) is shared by both ends: create_server now, a create_client for the
// forwarder's uplink later (the same TlsSettings, with the truststore
// verifying the server and the keystore presenting a client certificate).
//
// No mbedTLS header here: TlsContext hides its mbedtls_* structs (see
// tls_context_impl in tls_config.cc), so net/ and app/ compile without them.
//
// armhf (32-bit time_t in Debian's libmbedtls, 64-bit in Eddy): nothing that
// holds a time_t (mbedtls_ssl_session, mbedtls_ssl_cache_entry,
// mbedtls_ssl_ticket_key) is ever allocated, read or passed by Eddy; no
// session cache and no session tickets are configured. The structs Eddy
// allocates (mbedtls_ssl_config, mbedtls_ssl_context, mbedtls_x509_crt,
// mbedtls_pk_context) hold no time_t (checked against 2.28's headers), so
// their layouts agree on both sides of the library boundary.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "port/status.h"

struct mbedtls_ssl_config;

namespace eddy::security {

// ssl.client.auth.
enum class ClientAuth { kNone, kRequested, kRequired };

// Parses "none", "requested", "required" (case-insensitive).
bool parse_client_auth(std::string_view text, ClientAuth* out);

// Kafka's ssl.* settings for one end (a listener, later an uplink). Every
// text is as configured; the key names are used in error messages.
struct TlsSettings {
  // Our own certificate chain and private key: a PEM file holding both
  // (keystore_location), or the PEM text inline (keystore_certificate_chain
  // plus keystore_key). keystore type is PEM only.
  std::string keystore_type = "PEM";
  std::string keystore_location;
  std::string keystore_certificate_chain;
  std::string keystore_key;
  std::string key_password;  // ssl.key.password: for an encrypted private key
  // CA certificates that verify the peer: a PEM bundle file or inline text.
  std::string truststore_type = "PEM";
  std::string truststore_location;
  std::string truststore_certificates;
  ClientAuth client_auth = ClientAuth::kNone;
  // Kafka's names: "TLSv1.2", "TLSv1.3". Those this mbedTLS lacks are
  // skipped; none left is an error.
  std::vector<std::string> enabled_protocols = {"TLSv1.2", "TLSv1.3"};
  // Kafka/JSSE (IANA) names, e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256.
  // Empty: mbedTLS's default list.
  std::vector<std::string> cipher_suites;
  // ssl.endpoint.identification.algorithm (a client's): "https" (Kafka's
  // default) checks that the server certificate names the host connected
  // to; "" turns that off (the chain is still verified against the
  // truststore). Ignored by create_server.
  std::string endpoint_identification_algorithm = "https";
  // ssl.principal.mapping.rules (a server's): how a client certificate's
  // subject becomes the principal's name (ssl_principal_mapper.h).
  std::string principal_mapping_rules = "DEFAULT";
  // Prefix for the key names in messages, e.g. "listener.name.ssl." when
  // the value came from a listener override; "" for the plain keys.
  std::string key_prefix;
};

// mbedTLS's ciphersuite id for a Kafka/JSSE cipher suite name
// (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256; the SSL_ prefix of JSSE's older
// names is accepted too); 0 when this mbedTLS does not know it.
int cipher_suite_id(std::string_view kafka_name);

// True for the TLS 1.3 suite names (TLS_AES_128_GCM_SHA256, ...).
bool is_tls13_cipher_suite(std::string_view kafka_name);

// Whether this build's mbedTLS can speak TLS 1.3.
bool tls13_available();

// An mbedtls_ssl_config with the certificates, key and CA chain it points
// to. Immutable once built; shared (shared_ptr) by the sessions using it,
// from the reactor thread.
class SslPrincipalMapper;

class TlsContext {
 public:
  // Loads and checks everything (files readable, PEM valid, key matches the
  // certificate, protocols and suites known). Errors name the key, the file
  // and mbedTLS's reason (kInvalidArgument; kIOError for unreadable files).
  [[nodiscard]] static Status create_server(const TlsSettings& settings, std::shared_ptr<const TlsContext>* out);

  // The client end (an uplink): the truststore (required: Eddy has no
  // default CA list) verifies the server's chain, always; the keystore, when
  // set, is the client certificate for mutual TLS; hostname verification as
  // endpoint_identification_algorithm says ("https" or ""; anything else is
  // kInvalidArgument naming the key).
  [[nodiscard]] static Status create_client(const TlsSettings& settings, std::shared_ptr<const TlsContext>* out);

  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  const mbedtls_ssl_config* ssl_config() const;
  ClientAuth client_auth() const;
  // A client context: whether the server certificate must name the host.
  bool verifies_hostname() const;
  // A server context: ssl.principal.mapping.rules, parsed.
  const SslPrincipalMapper& principal_mapper() const;
  // "TLSv1.2", the enabled versions, for the startup log.
  const std::string& description() const;

  struct Impl;

 private:
  explicit TlsContext(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace eddy::security
