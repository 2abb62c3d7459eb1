#include "app/client_security.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <iterator>

#include "app/jaas_config.h"
#include "client/sasl_client_config.h"
#include "security/tls_config.h"

namespace eddy::app {
namespace {

const char* const kSaslKeys[] = {"sasl.mechanism", "sasl.jaas.config", "sasl.username", "sasl.password",
                                 "sasl.password.file"};
const char* const kSslKeys[] = {"ssl.truststore.location", "ssl.endpoint.identification.algorithm",
                                "ssl.keystore.location", "ssl.keystore.certificate.chain", "ssl.keystore.key",
                                "ssl.key.password"};

std::string where(const Config& config, const std::string& key) { return config.origin(key) + ": " + key; }

// Every key of `keys` under k is unset, else an error saying protocol does
// not use it.
template <size_t N>
Status unused_keys_unset(const Config& config, const std::string& k, const char* const (&keys)[N],
                         const std::string& protocol, const char* needs) {
  for (const char* key : keys) {
    if (config.is_set(k + key)) {
      return Status::invalid_argument(where(config, k + key) + ": only used with security.protocol " + needs +
                                      " (this one is " + protocol + ")");
    }
  }
  return Status();
}

// A password file larger than this is not a password file.
constexpr size_t kMaxPasswordFileBytes = 4096;

// The password in a file: its whole content without the trailing newline.
Status read_password_file(const Config& config, const std::string& key, std::string* password) {
  const std::string path = config.get_string(key);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::invalid_argument(where(config, key) + " " + path + ": cannot open: " + std::strerror(errno));
  }
  password->assign(kMaxPasswordFileBytes + 1, '\0');
  in.read(password->data(), static_cast<std::streamsize>(password->size()));
  if (in.bad()) return Status::invalid_argument(where(config, key) + " " + path + ": cannot read");
  password->resize(static_cast<size_t>(in.gcount()));
  if (password->size() > kMaxPasswordFileBytes) {
    password->clear();
    return Status::invalid_argument(where(config, key) + " " + path + ": larger than " +
                                    std::to_string(kMaxPasswordFileBytes) + " bytes: not a password file");
  }
  while (!password->empty() && (password->back() == '\n' || password->back() == '\r')) password->pop_back();
  if (password->empty()) return Status::invalid_argument(where(config, key) + " " + path + ": the file is empty");
  return Status();
}

// Username and password from sasl.jaas.config.
Status credentials_from_jaas(const Config& config, const std::string& k, client::SaslClientConfig* sasl) {
  const std::string key = k + "sasl.jaas.config";
  for (const char* other : {"sasl.username", "sasl.password", "sasl.password.file"}) {
    if (config.is_set(k + other)) {
      return Status::invalid_argument(where(config, k + other) + ": set together with " + key + "; use one of them");
    }
  }
  JaasLoginModule jaas;
  if (Status s = parse_jaas_config(config.get_string(key), &jaas); !s.ok()) {
    return Status::invalid_argument(where(config, key) + ": " + s.message());
  }
  const std::string expected = jaas_module_for(sasl->mechanism);
  if (jaas.module_class != expected) {
    return Status::invalid_argument(where(config, key) + ": " + sasl->mechanism + " takes " + expected + ", not " +
                                    jaas.module_class);
  }
  auto user = jaas.options.find("username");
  auto password = jaas.options.find("password");
  if (user == jaas.options.end() || user->second.empty() || password == jaas.options.end() ||
      password->second.empty()) {
    return Status::invalid_argument(where(config, key) + ": needs username=\"...\" and password=\"...\"");
  }
  sasl->username = user->second;
  sasl->password = password->second;
  return Status();
}

// Username and password from sasl.username + sasl.password[.file].
Status credentials_from_keys(const Config& config, const std::string& k, client::SaslClientConfig* sasl) {
  sasl->username = config.get_string(k + "sasl.username");
  if (sasl->username.empty()) {
    return Status::invalid_argument(where(config, k + "security.protocol") + ": a SASL client needs " + k +
                                    "sasl.jaas.config or " + k + "sasl.username with " + k + "sasl.password[.file]");
  }
  const bool inline_password = config.is_set(k + "sasl.password");
  const bool file_password = config.is_set(k + "sasl.password.file");
  if (inline_password && file_password) {
    return Status::invalid_argument(where(config, k + "sasl.password.file") + ": set together with " + k +
                                    "sasl.password; use one of them");
  }
  if (file_password) return read_password_file(config, k + "sasl.password.file", &sasl->password);
  sasl->password = config.get_string(k + "sasl.password");
  if (sasl->password.empty()) {
    return Status::invalid_argument(where(config, k + "sasl.username") + ": no password (" + k + "sasl.password or " +
                                    k + "sasl.password.file)");
  }
  return Status();
}

Status sasl_for(const Config& config, const std::string& k, ClientSecurity* o) {
  auto sasl = std::make_shared<client::SaslClientConfig>();
  sasl->mechanism = config.get_string(k + "sasl.mechanism");  // the schema checked it
  Status s = config.is_set(k + "sasl.jaas.config") ? credentials_from_jaas(config, k, sasl.get())
                                                   : credentials_from_keys(config, k, sasl.get());
  if (!s.ok()) return s;
  o->sasl = std::move(sasl);
  return Status();
}

Status tls_for(const Config& config, const std::string& k, const std::string& owner, ClientSecurity* o) {
  security::TlsSettings settings;
  settings.truststore_location = config.get_string(k + "ssl.truststore.location");
  if (settings.truststore_location.empty()) {
    return Status::invalid_argument(where(config, k + "security.protocol") + ": a TLS client needs " + k +
                                    "ssl.truststore.location (the CA bundle that verifies the brokers)");
  }
  settings.endpoint_identification_algorithm = config.get_string(k + "ssl.endpoint.identification.algorithm");
  settings.keystore_location = config.get_string(k + "ssl.keystore.location");
  settings.keystore_certificate_chain = config.get_string(k + "ssl.keystore.certificate.chain");
  settings.keystore_key = config.get_string(k + "ssl.keystore.key");
  settings.key_password = config.get_string(k + "ssl.key.password");
  settings.key_prefix = k;
  std::shared_ptr<const security::TlsContext> tls;
  if (Status s = security::TlsContext::create_client(settings, &tls); !s.ok()) {
    // The message names the key and the file; the origin says where the client is configured.
    return Status::invalid_argument(config.origin(k + "security.protocol") + ": " + owner + ": " +
                                    s.message());
  }
  o->tls = std::move(tls);
  return Status();
}

}  // namespace

const std::vector<std::string>& client_security_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> all = {"security.protocol"};
    all.insert(all.end(), std::begin(kSaslKeys), std::end(kSaslKeys));
    all.insert(all.end(), std::begin(kSslKeys), std::end(kSslKeys));
    return all;
  }();
  return keys;
}

Status client_security(const Config& config, const std::string& k, const std::string& owner, ClientSecurity* o) {
  const std::string protocol = config.get_string(k + "security.protocol");  // the schema checked it
  const bool uses_tls = protocol == "SSL" || protocol == "SASL_SSL";
  const bool uses_sasl = protocol == "SASL_PLAINTEXT" || protocol == "SASL_SSL";
  o->protocol = protocol;
  if (!uses_sasl) {
    if (Status s = unused_keys_unset(config, k, kSaslKeys, protocol, "SASL_PLAINTEXT or SASL_SSL"); !s.ok()) return s;
  }
  if (!uses_tls) {
    if (Status s = unused_keys_unset(config, k, kSslKeys, protocol, "SSL or SASL_SSL"); !s.ok()) return s;
  }
  if (uses_sasl) {
    if (Status s = sasl_for(config, k, o); !s.ok()) return s;
  }
  if (uses_tls) {
    if (Status s = tls_for(config, k, owner, o); !s.ok()) return s;
  }
  return Status();
}

}  // namespace eddy::app
