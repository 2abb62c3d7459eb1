#include "security/tls_config.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <mbedtls/pkcs5.h>
#include <mbedtls/ssl.h>
#include <mbedtls/ssl_ciphersuites.h>
#include <mbedtls/version.h>
#include <mbedtls/x509_crt.h>
#if MBEDTLS_VERSION_NUMBER >= 0x03000000
#include <psa/crypto.h>
#endif

#include "port/log.h"
#include "security/random.h"
#include "security/ssl_principal_mapper.h"
#include "security/tls_error.h"

namespace eddy::security {

// Invariant: once create_* returned it, nothing here changes; the
// mbedtls_ssl_config points into own_chain, key, ca and suites, which live
// exactly as long as it.
struct TlsContext::Impl {
  Impl() {
    mbedtls_ssl_config_init(&conf);
    mbedtls_x509_crt_init(&own_chain);
    mbedtls_x509_crt_init(&ca);
    mbedtls_pk_init(&key);
  }
  ~Impl() {
    mbedtls_ssl_config_free(&conf);
    mbedtls_x509_crt_free(&own_chain);
    mbedtls_x509_crt_free(&ca);
    mbedtls_pk_free(&key);
  }
  mbedtls_ssl_config conf;
  mbedtls_x509_crt own_chain;
  mbedtls_x509_crt ca;
  mbedtls_pk_context key;
  std::vector<int> suites;  // 0-terminated, for mbedtls_ssl_conf_ciphersuites
  ClientAuth client_auth = ClientAuth::kNone;
  SslPrincipalMapper principal_mapper;
  bool verify_hostname = true;
  std::string description;
};

namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

// The whole file, with a terminating NUL counted in its size (mbedTLS's PEM
// parsers want the NUL inside the length).
Status read_pem_file(const std::string& key_name, const std::string& path, std::string* out) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return Status::io_error(key_name + " " + path + ": cannot open: " + std::strerror(errno));
  }
  out->clear();
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), f)) > 0) out->append(buffer, n);
  const bool failed = std::ferror(f) != 0;
  const int read_errno = errno;
  std::fclose(f);
  if (failed) return Status::io_error(key_name + " " + path + ": cannot read: " + std::strerror(read_errno));
  if (out->find("-----BEGIN ") == std::string::npos) {
    return Status::invalid_argument(key_name + " " + path + ": not a PEM file (no -----BEGIN line)");
  }
  out->push_back('\0');
  return Status();
}

bool is_base64_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Inline PEM text (ssl.keystore.key, ...) often arrives on one line: a
// properties continuation joins the lines. Rebuilds every
// -----BEGIN X----- ... -----END X----- block with the line breaks mbedTLS's
// parser needs. Returned with a terminating NUL counted in its size.
std::string normalize_inline_pem(const std::string& text) {
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t begin = text.find("-----BEGIN ", pos);
    if (begin == std::string::npos) break;
    size_t header_end = text.find("-----", begin + 11);
    if (header_end == std::string::npos) break;
    header_end += 5;
    size_t footer = text.find("-----END ", header_end);
    if (footer == std::string::npos) break;
    size_t footer_end = text.find("-----", footer + 9);
    if (footer_end == std::string::npos) break;
    footer_end += 5;
    out.append(text, begin, header_end - begin).push_back('\n');
    std::string body;
    for (size_t i = header_end; i < footer; ++i) {
      if (!is_base64_space(text[i])) body.push_back(text[i]);
    }
    for (size_t i = 0; i < body.size(); i += 64) out.append(body, i, 64).push_back('\n');
    out.append(text, footer, footer_end - footer).push_back('\n');
    pos = footer_end;
  }
  out.push_back('\0');
  return out;
}

// The PEM text of a setting given as a file or inline (exactly one of the
// two keys may be set).
Status pem_source(const std::string& prefix, const char* file_key, const std::string& file, const char* inline_key,
                  const std::string& inline_text, std::string* out, std::string* what) {
  if (!file.empty() && !inline_text.empty()) {
    return Status::invalid_argument(prefix + file_key + " and " + prefix + inline_key +
                                    " are both set: give one of them");
  }
  if (!file.empty()) {
    *what = prefix + file_key + " " + file;
    return read_pem_file(prefix + file_key, file, out);
  }
  *what = prefix + inline_key;
  if (inline_text.find("-----BEGIN ") == std::string::npos) {
    return Status::invalid_argument(*what + ": not PEM text (no -----BEGIN line)");
  }
  *out = normalize_inline_pem(inline_text);
  return Status();
}

Status parse_certificates(const std::string& what, const std::string& pem, mbedtls_x509_crt* chain) {
  int rc = mbedtls_x509_crt_parse(chain, reinterpret_cast<const unsigned char*>(pem.data()), pem.size());
  if (rc < 0) return Status::invalid_argument(what + ": bad certificate: " + mbedtls_reason(rc));
  if (rc > 0) return Status::invalid_argument(what + ": " + std::to_string(rc) + " certificate(s) could not be parsed");
  return Status();
}

Status parse_private_key(const std::string& what, const std::string& pem, const std::string& password,
                         const std::string& password_key, mbedtls_pk_context* key) {
  const auto* data = reinterpret_cast<const unsigned char*>(pem.data());
  const auto* pwd = reinterpret_cast<const unsigned char*>(password.data());
#if MBEDTLS_VERSION_NUMBER >= 0x03000000
  int rc = mbedtls_pk_parse_key(key, data, pem.size(), password.empty() ? nullptr : pwd, password.size(),
                                mbedtls_random, nullptr);
#else
  int rc = mbedtls_pk_parse_key(key, data, pem.size(), password.empty() ? nullptr : pwd, password.size());
#endif
  if (rc == MBEDTLS_ERR_PK_PASSWORD_REQUIRED) {
    return Status::invalid_argument(what + ": the private key is encrypted and " + password_key + " is not set");
  }
  if (rc == MBEDTLS_ERR_PK_PASSWORD_MISMATCH) {
    return Status::invalid_argument(what + ": " + password_key + " does not decrypt the private key");
  }
#if defined(MBEDTLS_ERR_PKCS5_FEATURE_UNAVAILABLE) && MBEDTLS_VERSION_NUMBER < 0x03000000
  if (rc == MBEDTLS_ERR_PKCS5_FEATURE_UNAVAILABLE) {
    // OpenSSL 3 encrypts PKCS#8 keys with AES and PBKDF2-HMAC-SHA256 by
    // default; mbedTLS 2.28's PBES2 reads (3)DES with HMAC-SHA1 only.
    return Status::invalid_argument(what + ": the private key's encryption is not supported by mbedTLS " +
                                    MBEDTLS_VERSION_STRING + " (" + mbedtls_reason(rc) +
                                    "); re-encrypt it with `openssl pkcs8 -topk8 -v2 des3 "
                                    "-v2prf hmacWithSHA1`, or keep it unencrypted with restrictive permissions");
  }
#endif
  if (rc != 0) return Status::invalid_argument(what + ": bad private key: " + mbedtls_reason(rc));
  return Status();
}

Status load_keystore(const TlsSettings& s, TlsContext::Impl* impl) {
  const std::string& p = s.key_prefix;
  if (!iequals(s.keystore_type, "PEM")) {
    return Status::invalid_argument(p + "ssl.keystore.type=" + s.keystore_type +
                                    ": only PEM is supported (convert a JKS or PKCS12 store with keytool/openssl)");
  }
  if (s.keystore_location.empty() && s.keystore_certificate_chain.empty()) {
    return Status::invalid_argument(p + "ssl.keystore.location (or " + p +
                                    "ssl.keystore.certificate.chain and ssl.keystore.key) must be set");
  }
  std::string chain_pem, chain_what;
  if (Status st = pem_source(p, "ssl.keystore.location", s.keystore_location, "ssl.keystore.certificate.chain",
                             s.keystore_certificate_chain, &chain_pem, &chain_what);
      !st.ok()) {
    return st;
  }
  if (Status st = parse_certificates(chain_what, chain_pem, &impl->own_chain); !st.ok()) return st;
  // The key sits in the keystore file next to the chain, or inline.
  std::string key_pem = chain_pem, key_what = chain_what;
  if (s.keystore_location.empty()) {
    if (s.keystore_key.empty()) {
      return Status::invalid_argument(p + "ssl.keystore.certificate.chain is set but " + p +
                                      "ssl.keystore.key is not");
    }
    key_what = p + "ssl.keystore.key";
    key_pem = normalize_inline_pem(s.keystore_key);
  } else if (!s.keystore_key.empty()) {
    return Status::invalid_argument(p + "ssl.keystore.key is set with " + p +
                                    "ssl.keystore.location: the key belongs in that file");
  }
  if (Status st = parse_private_key(key_what, key_pem, s.key_password, p + "ssl.key.password", &impl->key); !st.ok()) {
    return st;
  }
#if MBEDTLS_VERSION_NUMBER >= 0x03000000
  int rc = mbedtls_pk_check_pair(&impl->own_chain.pk, &impl->key, mbedtls_random, nullptr);
#else
  int rc = mbedtls_pk_check_pair(&impl->own_chain.pk, &impl->key);
#endif
  if (rc != 0) {
    return Status::invalid_argument(key_what + ": the private key does not match the certificate (" +
                                    mbedtls_reason(rc) + ")");
  }
  return Status();
}

Status load_truststore(const TlsSettings& s, TlsContext::Impl* impl, bool* have_ca) {
  const std::string& p = s.key_prefix;
  *have_ca = !s.truststore_location.empty() || !s.truststore_certificates.empty();
  if (!*have_ca) return Status();
  if (!iequals(s.truststore_type, "PEM")) {
    return Status::invalid_argument(p + "ssl.truststore.type=" + s.truststore_type + ": only PEM is supported");
  }
  std::string pem, what;
  if (Status st = pem_source(p, "ssl.truststore.location", s.truststore_location, "ssl.truststore.certificates",
                             s.truststore_certificates, &pem, &what);
      !st.ok()) {
    return st;
  }
  return parse_certificates(what, pem, &impl->ca);
}

// mbedTLS's wire version numbers: TLS 1.2 is 3.3, TLS 1.3 is 3.4.
Status apply_protocols(const TlsSettings& s, TlsContext::Impl* impl) {
  bool want12 = false, want13 = false;
  for (const std::string& name : s.enabled_protocols) {
    if (iequals(name, "TLSv1.2")) {
      want12 = true;
    } else if (iequals(name, "TLSv1.3")) {
      want13 = true;
    } else if (iequals(name, "TLSv1.1") || iequals(name, "TLSv1") || iequals(name, "SSLv3")) {
      EDDY_LOG_WARN("{}ssl.enabled.protocols: {} is not offered (obsolete); TLSv1.2 and later only", s.key_prefix,
                    name);
    } else {
      return Status::invalid_argument(s.key_prefix + "ssl.enabled.protocols: unknown protocol '" + name +
                                      "' (TLSv1.2, TLSv1.3)");
    }
  }
  if (want13 && !tls13_available()) {
    if (!want12) {
      return Status::invalid_argument(s.key_prefix + "ssl.enabled.protocols asks only for TLSv1.3, which this "
                                      "build's mbedTLS (" MBEDTLS_VERSION_STRING ") does not have; add TLSv1.2");
    }
    want13 = false;
  }
  if (!want12 && !want13) {
    return Status::invalid_argument(s.key_prefix + "ssl.enabled.protocols enables no protocol (TLSv1.2, TLSv1.3)");
  }
  impl->description = want12 && want13 ? "TLSv1.2, TLSv1.3" : want12 ? "TLSv1.2" : "TLSv1.3";
#if MBEDTLS_VERSION_NUMBER >= 0x03020000
  mbedtls_ssl_conf_min_tls_version(&impl->conf, want12 ? MBEDTLS_SSL_VERSION_TLS1_2 : MBEDTLS_SSL_VERSION_TLS1_3);
  mbedtls_ssl_conf_max_tls_version(&impl->conf, want13 ? MBEDTLS_SSL_VERSION_TLS1_3 : MBEDTLS_SSL_VERSION_TLS1_2);
#else
  mbedtls_ssl_conf_min_version(&impl->conf, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
  mbedtls_ssl_conf_max_version(&impl->conf, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
#endif
  return Status();
}

Status apply_cipher_suites(const TlsSettings& s, TlsContext::Impl* impl) {
  if (s.cipher_suites.empty()) return Status();
  for (const std::string& name : s.cipher_suites) {
    int id = cipher_suite_id(name);
    if (id == 0 && is_tls13_cipher_suite(name) && !tls13_available()) continue;  // TLS 1.3 is off anyway
    if (id == 0) {
      return Status::invalid_argument(s.key_prefix + "ssl.cipher.suites: unknown or unavailable cipher suite '" +
                                      name + "' (this mbedTLS is " MBEDTLS_VERSION_STRING ")");
    }
    impl->suites.push_back(id);
  }
  if (impl->suites.empty()) {
    return Status::invalid_argument(s.key_prefix + "ssl.cipher.suites names no suite this mbedTLS offers");
  }
  impl->suites.push_back(0);
  mbedtls_ssl_conf_ciphersuites(&impl->conf, impl->suites.data());
  return Status();
}

int authmode_for(ClientAuth auth) {
  switch (auth) {
    case ClientAuth::kNone:
      return MBEDTLS_SSL_VERIFY_NONE;
    case ClientAuth::kRequested:
      // A certificate is asked for; one that is presented must verify,
      // which the session checks after the handshake (tls_session.cc).
      return MBEDTLS_SSL_VERIFY_OPTIONAL;
    case ClientAuth::kRequired:
      return MBEDTLS_SSL_VERIFY_REQUIRED;
  }
  return MBEDTLS_SSL_VERIFY_NONE;
}

}  // namespace

bool parse_client_auth(std::string_view text, ClientAuth* out) {
  if (iequals(text, "none")) {
    *out = ClientAuth::kNone;
  } else if (iequals(text, "requested")) {
    *out = ClientAuth::kRequested;
  } else if (iequals(text, "required")) {
    *out = ClientAuth::kRequired;
  } else {
    return false;
  }
  return true;
}

bool tls13_available() {
#if defined(MBEDTLS_SSL_PROTO_TLS1_3)
  return true;
#else
  return false;
#endif
}

bool is_tls13_cipher_suite(std::string_view name) {
  for (const char* suite : {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256",
                            "TLS_AES_128_CCM_SHA256", "TLS_AES_128_CCM_8_SHA256"}) {
    if (iequals(name, suite)) return true;
  }
  return false;
}

int cipher_suite_id(std::string_view kafka_name) {
  // JSSE's names are IANA's (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, older
  // ones SSL_...); mbedTLS spells them with dashes (TLS-ECDHE-RSA-...) and
  // its TLS 1.3 suites TLS1-3-AES-128-GCM-SHA256.
  std::string name(kafka_name);
  for (char& c : name) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (c == '_') c = '-';
  }
  if (name.rfind("SSL-", 0) == 0) name.replace(0, 3, "TLS");
  if (is_tls13_cipher_suite(kafka_name)) name.replace(0, 3, "TLS1-3");
  if (name.rfind("TLS", 0) != 0) return 0;
  return mbedtls_ssl_get_ciphersuite_id(name.c_str());
}

Status TlsContext::create_server(const TlsSettings& settings, std::shared_ptr<const TlsContext>* out) {
  auto impl = std::make_unique<Impl>();
#if MBEDTLS_VERSION_NUMBER >= 0x03000000
  if (psa_crypto_init() != PSA_SUCCESS) return Status::io_error("TLS: PSA crypto could not be initialised");
#endif
  if (Status st = load_keystore(settings, impl.get()); !st.ok()) return st;
  bool have_ca = false;
  if (Status st = load_truststore(settings, impl.get(), &have_ca); !st.ok()) return st;
  if (settings.client_auth != ClientAuth::kNone && !have_ca) {
    return Status::invalid_argument(settings.key_prefix + "ssl.client.auth asks for client certificates but " +
                                    settings.key_prefix + "ssl.truststore.location is not set");
  }
  int rc = mbedtls_ssl_config_defaults(&impl->conf, MBEDTLS_SSL_IS_SERVER, MBEDTLS_SSL_TRANSPORT_STREAM,
                                       MBEDTLS_SSL_PRESET_DEFAULT);
  if (rc != 0) return Status::invalid_argument("TLS: mbedtls_ssl_config_defaults: " + mbedtls_reason(rc));
  mbedtls_ssl_conf_rng(&impl->conf, mbedtls_random, nullptr);
  if (Status st = apply_protocols(settings, impl.get()); !st.ok()) return st;
  if (Status st = apply_cipher_suites(settings, impl.get()); !st.ok()) return st;
  rc = mbedtls_ssl_conf_own_cert(&impl->conf, &impl->own_chain, &impl->key);
  if (rc != 0) return Status::invalid_argument("TLS: mbedtls_ssl_conf_own_cert: " + mbedtls_reason(rc));
  if (have_ca) mbedtls_ssl_conf_ca_chain(&impl->conf, &impl->ca, nullptr);
  mbedtls_ssl_conf_authmode(&impl->conf, authmode_for(settings.client_auth));
  impl->client_auth = settings.client_auth;
  if (Status st = SslPrincipalMapper::parse(settings.principal_mapping_rules, &impl->principal_mapper); !st.ok()) {
    return Status::invalid_argument(settings.key_prefix + "ssl.principal.mapping.rules: " + st.message());
  }
  // No session cache and no tickets (their structs hold time_t; see the
  // header): every connection makes a full handshake. Renegotiation stays
  // off (mbedTLS's default).
  out->reset(new TlsContext(std::move(impl)));
  return Status();
}

namespace {

// Certificate verification callback of a client context: with hostname
// verification off, a name mismatch of the server's own certificate (depth
// 0) is forgiven; every other flag (untrusted, expired, ...) stays.
int forgive_name_mismatch(void* /*context*/, mbedtls_x509_crt* /*cert*/, int depth, uint32_t* flags) {
  if (depth == 0) *flags &= ~static_cast<uint32_t>(MBEDTLS_X509_BADCERT_CN_MISMATCH);
  return 0;
}

}  // namespace

Status TlsContext::create_client(const TlsSettings& settings, std::shared_ptr<const TlsContext>* out) {
  auto impl = std::make_unique<Impl>();
  const std::string& p = settings.key_prefix;
#if MBEDTLS_VERSION_NUMBER >= 0x03000000
  if (psa_crypto_init() != PSA_SUCCESS) return Status::io_error("TLS: PSA crypto could not be initialised");
#endif
  if (settings.endpoint_identification_algorithm == "") {
    impl->verify_hostname = false;
  } else if (!iequals(settings.endpoint_identification_algorithm, "https")) {
    return Status::invalid_argument(p + "ssl.endpoint.identification.algorithm=" +
                                    settings.endpoint_identification_algorithm +
                                    ": expected https (verify the server's name) or empty (do not)");
  }
  const bool have_own = !settings.keystore_location.empty() || !settings.keystore_certificate_chain.empty() ||
                        !settings.keystore_key.empty();
  if (have_own) {
    if (Status st = load_keystore(settings, impl.get()); !st.ok()) return st;
  }
  bool have_ca = false;
  if (Status st = load_truststore(settings, impl.get(), &have_ca); !st.ok()) return st;
  if (!have_ca) {
    return Status::invalid_argument(p + "ssl.truststore.location must be set: a PEM bundle of the CAs that sign the "
                                        "server's certificate (Eddy has no default CA list)");
  }
  int rc = mbedtls_ssl_config_defaults(&impl->conf, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                       MBEDTLS_SSL_PRESET_DEFAULT);
  if (rc != 0) return Status::invalid_argument("TLS: mbedtls_ssl_config_defaults: " + mbedtls_reason(rc));
  mbedtls_ssl_conf_rng(&impl->conf, mbedtls_random, nullptr);
  if (Status st = apply_protocols(settings, impl.get()); !st.ok()) return st;
  if (Status st = apply_cipher_suites(settings, impl.get()); !st.ok()) return st;
  if (have_own) {
    rc = mbedtls_ssl_conf_own_cert(&impl->conf, &impl->own_chain, &impl->key);
    if (rc != 0) return Status::invalid_argument("TLS: mbedtls_ssl_conf_own_cert: " + mbedtls_reason(rc));
  }
  mbedtls_ssl_conf_ca_chain(&impl->conf, &impl->ca, nullptr);
  mbedtls_ssl_conf_authmode(&impl->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
  if (!impl->verify_hostname) mbedtls_ssl_conf_verify(&impl->conf, forgive_name_mismatch, nullptr);
  out->reset(new TlsContext(std::move(impl)));
  return Status();
}

TlsContext::TlsContext(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TlsContext::~TlsContext() = default;

const mbedtls_ssl_config* TlsContext::ssl_config() const { return &impl_->conf; }
ClientAuth TlsContext::client_auth() const { return impl_->client_auth; }
bool TlsContext::verifies_hostname() const { return impl_->verify_hostname; }
const SslPrincipalMapper& TlsContext::principal_mapper() const { return impl_->principal_mapper; }
const std::string& TlsContext::description() const { return impl_->description; }

}  // namespace eddy::security
