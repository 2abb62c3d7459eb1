#include "security/scram.h"

#include <vector>

#include "security/random.h"
#include "security/scram_syntax.h"

namespace eddy::security {
namespace {

// Random bytes of the server nonce: 18 give 24 base64 characters, no '='.
constexpr size_t kServerNonceBytes = 18;

}  // namespace

bool decode_saslname(std::string_view text, std::string* out) {
  out->clear();
  if (text.empty()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ',' || c == '\0') return false;
    if (c != '=') {
      out->push_back(c);
      continue;
    }
    const std::string_view escape = text.substr(i, 3);
    if (escape == "=2C") {
      out->push_back(',');
    } else if (escape == "=3D") {
      out->push_back('=');
    } else {
      return false;
    }
    i += 2;
  }
  return true;
}

ScramServer::ScramServer(ScramMechanism mechanism, ScramCredentialLookup lookup, std::span<const uint8_t> secret)
    : mechanism_(mechanism), lookup_(std::move(lookup)), secret_(secret.begin(), secret.end()) {}

SaslStep ScramServer::fail(std::string rfc_error, std::string reason) {
  state_ = State::kDone;
  std::string error = rfc_error == "invalid-proof"
                          ? invalid_credentials_message(mechanism())
                          : "Authentication failed: " + std::string(mechanism()) + " error " + rfc_error;
  return SaslStep::failure(std::move(error), std::move(reason) + " (e=" + rfc_error + ")");
}

SaslStep ScramServer::step(std::span<const uint8_t> token) {
  if (token.size() > kMaxSaslTokenBytes) {
    return fail("other-error", "SCRAM message of " + std::to_string(token.size()) + " bytes is too long");
  }
  const std::string_view message(reinterpret_cast<const char*>(token.data()), token.size());
  switch (state_) {
    case State::kClientFirst:
      return client_first(message);
    case State::kClientFinal:
      return client_final(message);
    case State::kDone:
      break;
  }
  return fail("other-error", "SCRAM message after the exchange ended");
}

SaslStep ScramServer::client_first(std::string_view message) {
  // gs2-header: cbind-flag "," [authzid] ","
  if (message.starts_with("p=")) return fail("channel-binding-not-supported", "client asked for channel binding");
  if (!(message.starts_with("n,") || message.starts_with("y,"))) {
    return fail("invalid-encoding", "client-first does not start with a gs2 header (n,, or y,,)");
  }
  const size_t authzid_end = message.find(',', 2);
  if (authzid_end == std::string_view::npos) return fail("invalid-encoding", "client-first: gs2 header not ended");
  const std::string_view authzid_field = message.substr(2, authzid_end - 2);
  std::string authzid;
  if (!authzid_field.empty() && (!authzid_field.starts_with("a=") || !decode_saslname(authzid_field.substr(2), &authzid))) {
    return fail("invalid-username-encoding", "client-first: malformed authzid");
  }
  gs2_header_ = std::string(message.substr(0, authzid_end + 1));
  client_first_bare_ = std::string(message.substr(authzid_end + 1));
  const std::vector<std::string_view> attrs = scram_attributes(client_first_bare_);
  if (attrs[0].starts_with("m=")) return fail("extensions-not-supported", "client-first: mandatory extension");
  if (attrs.size() < 2 || !attrs[0].starts_with("n=") || !attrs[1].starts_with("r=")) {
    return fail("invalid-encoding", "client-first: expected n=USER,r=NONCE");
  }
  if (!decode_saslname(attrs[0].substr(2), &user_)) {
    user_.clear();
    return fail("invalid-username-encoding", "client-first: malformed user name");
  }
  if (attrs.size() > 2) return fail("extensions-not-supported", "user '" + user_ + "': client-first has extensions");
  const std::string_view client_nonce = attrs[1].substr(2);
  if (!valid_scram_nonce(client_nonce)) return fail("invalid-encoding", "user '" + user_ + "': malformed client nonce");
  if (!authzid.empty() && authzid != user_) {
    return fail("other-error", "user '" + user_ + "' asked for another authorization id '" + authzid + "'");
  }
  if (!lookup_ || !lookup_(user_, mechanism_, &credential_)) {
    credential_ = fake_scram_credential(mechanism_, user_, secret_);
  }
  if (server_nonce_.empty()) {
    Bytes random(kServerNonceBytes);
    if (Status s = random_bytes(random.data(), random.size()); !s.ok()) return fail("other-error", s.message());
    server_nonce_ = base64_encode(random);
  }
  nonce_ = std::string(client_nonce) + server_nonce_;
  client_nonce_size_ = client_nonce.size();
  server_first_ = "r=" + nonce_ + ",s=" + base64_encode(credential_.salt) + ",i=" +
                  std::to_string(credential_.iterations);
  state_ = State::kClientFinal;
  return SaslStep::challenge(server_first_);
}

SaslStep ScramServer::client_final(std::string_view message) {
  const std::vector<std::string_view> attrs = scram_attributes(message);
  const std::string who = "user '" + user_ + "': ";
  if (attrs.size() < 3 || !attrs[0].starts_with("c=") || !attrs[1].starts_with("r=") ||
      !attrs.back().starts_with("p=")) {
    return fail("invalid-encoding", who + "client-final: expected c=...,r=...,p=...");
  }
  Bytes binding;
  if (!base64_decode(attrs[0].substr(2), &binding)) return fail("invalid-encoding", who + "client-final: bad c=");
  if (!constant_time_equal(binding, as_bytes(gs2_header_))) {
    return fail("channel-bindings-dont-match", who + "client-final: c= is not the gs2 header of client-first");
  }
  // Exactly the combined nonce, or (librdkafka before 2.2 prepends its own
  // nonce once more, which Kafka's endsWith check lets through) exactly the
  // client nonce followed by the combined nonce. Either holds the fresh
  // server nonce whole, and the proof covers the text as sent.
  const std::string_view nonce = attrs[1].substr(2);
  const bool exact = nonce == nonce_;
  const bool librdkafka_doubled = nonce.size() == client_nonce_size_ + nonce_.size() &&
                                  nonce.substr(0, client_nonce_size_) == nonce_.substr(0, client_nonce_size_) &&
                                  nonce.substr(client_nonce_size_) == nonce_;
  if (!exact && !librdkafka_doubled) {
    return fail("other-error", who + "client-final: nonce is not the combined nonce");
  }
  if (attrs.size() > 3) return fail("extensions-not-supported", who + "client-final has extensions");
  Bytes proof;
  const HashAlgorithm h = scram_hash(mechanism_);
  if (!base64_decode(attrs.back().substr(2), &proof) || proof.size() != digest_size(h)) {
    return fail("invalid-proof", who + "malformed proof");
  }
  const std::string_view without_proof = message.substr(0, message.size() - attrs.back().size() - 1);
  std::string auth_message = client_first_bare_;
  auth_message += ',';
  auth_message += server_first_;
  auth_message += ',';
  auth_message += without_proof;
  const Bytes signature = hmac(h, credential_.stored_key, auth_message);
  Bytes client_key(proof.size());
  for (size_t i = 0; i < proof.size(); ++i) client_key[i] = static_cast<uint8_t>(proof[i] ^ signature[i]);
  if (!constant_time_equal(hash(h, client_key), credential_.stored_key)) {
    return fail("invalid-proof", who + "invalid credentials");
  }
  state_ = State::kDone;
  return SaslStep::success("v=" + base64_encode(hmac(h, credential_.server_key, auth_message)));
}

}  // namespace eddy::security
