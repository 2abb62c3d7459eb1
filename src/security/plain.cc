#include "security/plain.h"

namespace eddy::security {

bool parse_plain_message(std::string_view message, PlainMessage* out, std::string* why) {
  const size_t first = message.find('\0');
  const size_t second = first == std::string_view::npos ? first : message.find('\0', first + 1);
  if (second == std::string_view::npos || message.find('\0', second + 1) != std::string_view::npos) {
    *why = "PLAIN message is not authzid NUL user NUL password";
    return false;
  }
  out->authzid = std::string(message.substr(0, first));
  out->user = std::string(message.substr(first + 1, second - first - 1));
  out->password = std::string(message.substr(second + 1));
  if (out->user.empty()) {
    *why = "PLAIN message without a user name";
    return false;
  }
  if (out->password.empty()) {
    *why = "user '" + out->user + "': PLAIN message without a password";
    return false;
  }
  if (!out->authzid.empty() && out->authzid != out->user) {
    *why = "user '" + out->user + "' asked for another authorization id '" + out->authzid + "'";
    return false;
  }
  return true;
}

bool plain_password_matches(ScramMechanism mechanism, const ScramCredential& credential, std::string_view password) {
  const HashAlgorithm h = scram_hash(mechanism);
  Bytes salted;
  if (credential.iterations < 1 ||
      !pbkdf2(h, password, credential.salt, static_cast<uint32_t>(credential.iterations), &salted).ok()) {
    return false;
  }
  return constant_time_equal(hash(h, hmac(h, salted, "Client Key")), credential.stored_key);
}

SaslStep PlainServer::step(std::span<const uint8_t> token) {
  const std::string error = invalid_credentials_message("PLAIN");
  if (done_) return SaslStep::failure(error, "PLAIN message after the exchange ended");
  done_ = true;
  if (token.size() > kMaxSaslTokenBytes) {
    return SaslStep::failure(error, "PLAIN message of " + std::to_string(token.size()) + " bytes is too long");
  }
  PlainMessage message;
  std::string why;
  if (!parse_plain_message(std::string_view(reinterpret_cast<const char*>(token.data()), token.size()), &message,
                           &why)) {
    user_ = message.user;
    return SaslStep::failure("Authentication failed: Invalid PLAIN message", why);
  }
  user_ = message.user;
  ScramCredential credential;
  ScramMechanism mechanism = ScramMechanism::kSha512;
  bool found = lookup_ && lookup_(message.user, mechanism, &credential);
  if (!found && lookup_) {
    mechanism = ScramMechanism::kSha256;
    found = lookup_(message.user, mechanism, &credential);
  }
  if (!found) {
    mechanism = ScramMechanism::kSha512;
    credential = fake_scram_credential(mechanism, message.user, secret_);
  }
  if (!plain_password_matches(mechanism, credential, message.password) || !found) {
    return SaslStep::failure(error, "user '" + message.user + "': invalid credentials");
  }
  return SaslStep::success("");
}

}  // namespace eddy::security
