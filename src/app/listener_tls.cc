#include "app/listener_tls.h"

#include <memory>

#include "port/log.h"
#include "security/ssl_principal_mapper.h"
#include "security/tls_config.h"

namespace eddy::app {
namespace {

constexpr const char* kListenerPrefix = "listener.name.";

std::string lower(std::string text) {
  for (char& c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return text;
}

// The ssl.* keys a listener.name.<listener>. prefix may carry.
bool is_listener_key(const std::string& name, std::string* listener) {
  if (name.rfind(kListenerPrefix, 0) != 0) return false;
  const size_t start = std::char_traits<char>::length(kListenerPrefix);
  const size_t dot = name.find('.', start);
  if (dot == std::string::npos) return false;
  *listener = name.substr(start, dot - start);
  return true;
}

// Every listener.name.<listener>.* key names a configured listener.
Status check_listener_keys(const Config& config, const std::vector<net::ListenerConfig>& listeners) {
  for (const std::string& name : config.set_keys()) {
    std::string listener;
    if (!is_listener_key(name, &listener)) continue;
    bool found = false;
    for (const net::ListenerConfig& l : listeners) found = found || lower(l.name) == lower(listener);
    if (!found) {
      return Status::invalid_argument(config.origin(name) + ": " + name + ": there is no listener '" + listener + "' in listeners");
    }
  }
  return Status();
}

// The settings of one listener: listener.name.<name>.<key> when set, else
// <key>.
class ListenerKeys {
 public:
  ListenerKeys(const Config& config, const std::string& listener)
      : config_(config), prefix_(kListenerPrefix + lower(listener) + ".") {}
  std::string name(const std::string& key) const {
    return config_.is_set(prefix_ + key) ? prefix_ + key : key;
  }
  std::string text(const std::string& key) const { return config_.get_string(name(key)); }
  std::vector<std::string> list(const std::string& key) const { return config_.get_list(name(key)); }
  bool any_overridden() const {
    for (const std::string& k : config_.set_keys()) {
      if (k.rfind(prefix_, 0) == 0) return true;
    }
    return false;
  }
  const std::string& prefix() const { return prefix_; }

 private:
  const Config& config_;
  std::string prefix_;
};

security::TlsSettings settings_for(const ListenerKeys& keys) {
  security::TlsSettings s;
  s.keystore_type = keys.text("ssl.keystore.type");
  s.keystore_location = keys.text("ssl.keystore.location");
  s.keystore_certificate_chain = keys.text("ssl.keystore.certificate.chain");
  s.keystore_key = keys.text("ssl.keystore.key");
  s.key_password = keys.text("ssl.key.password");
  s.truststore_type = keys.text("ssl.truststore.type");
  s.truststore_location = keys.text("ssl.truststore.location");
  s.truststore_certificates = keys.text("ssl.truststore.certificates");
  (void)security::parse_client_auth(keys.text("ssl.client.auth"), &s.client_auth);  // the schema checked it
  s.enabled_protocols = keys.list("ssl.enabled.protocols");
  s.cipher_suites = keys.list("ssl.cipher.suites");
  s.principal_mapping_rules = keys.text("ssl.principal.mapping.rules");
  if (keys.any_overridden()) s.key_prefix = keys.prefix();
  return s;
}

const char* client_auth_name(security::ClientAuth auth) {
  switch (auth) {
    case security::ClientAuth::kNone:
      return "none";
    case security::ClientAuth::kRequested:
      return "requested";
    case security::ClientAuth::kRequired:
      return "required";
  }
  return "?";
}

}  // namespace

Status tls_for_listeners(const Config& config, std::vector<net::ListenerConfig>* listeners) {
  if (Status s = check_listener_keys(config, *listeners); !s.ok()) return s;
  for (net::ListenerConfig& listener : *listeners) {
    if (!net::uses_tls(listener.security_protocol)) continue;
    ListenerKeys keys(config, listener.name);
    const security::TlsSettings settings = settings_for(keys);
    security::SslPrincipalMapper mapper;
    if (Status s = security::SslPrincipalMapper::parse(settings.principal_mapping_rules, &mapper); !s.ok()) {
      const std::string key = keys.name("ssl.principal.mapping.rules");
      return Status::invalid_argument(config.origin(key) + ": " + key + ": " + s.message());
    }
    std::shared_ptr<const security::TlsContext> tls;
    if (Status s = security::TlsContext::create_server(settings, &tls); !s.ok()) {
      const std::string where = keys.name(settings.keystore_location.empty() && !settings.keystore_key.empty()
                                              ? "ssl.keystore.certificate.chain"
                                              : "ssl.keystore.location");
      return Status::invalid_argument(config.origin(where) + ": listener " + listener.name + ": " + s.message());
    }
    EDDY_LOG_INFO("listener {}: TLS ({}), client certificates {}", listener.name, tls->description(),
                  client_auth_name(tls->client_auth()));
    listener.tls = std::move(tls);
  }
  return Status();
}

}  // namespace eddy::app
