// security/plain.h — SASL PLAIN (RFC 4616) server: one message,
// [authzid] NUL authcid NUL password, verified against the user's SCRAM
// credential (the broker keeps no passwords): Hi(password, salt,
// iterations) with the stored salt and iteration count, then StoredKey
// compared in constant time. SCRAM-SHA-512 is tried when the user has it,
// else SCRAM-SHA-256; a user with neither is checked against
// fake_scram_credential() so that the work, and the answer, are the same.
//
// PLAIN sends the password itself: use it on a TLS listener, or on a
// network the gateway trusts.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "security/sasl_server.h"
#include "security/scram_credential.h"

namespace eddy::security {

struct PlainMessage {
  std::string authzid;  // empty, or equal to user
  std::string user;     // authcid, not empty
  std::string password; // not empty
};

// Parses a PLAIN message. False, with *why, when it is not exactly three
// NUL-separated fields, the user or the password is empty, or the authzid
// is neither empty nor the user (as Kafka's PlainSaslServer refuses it).
bool parse_plain_message(std::string_view message, PlainMessage* out, std::string* why);

// Whether password is the one credential was made from.
bool plain_password_matches(ScramMechanism mechanism, const ScramCredential& credential, std::string_view password);

class PlainServer final : public SaslServer {
 public:
  PlainServer(ScramCredentialLookup lookup, std::span<const uint8_t> secret)
      : lookup_(std::move(lookup)), secret_(secret.begin(), secret.end()) {}

  const char* mechanism() const override { return "PLAIN"; }
  SaslStep step(std::span<const uint8_t> token) override;
  const std::string& user() const override { return user_; }

 private:
  ScramCredentialLookup lookup_;
  Bytes secret_;
  std::string user_;
  bool done_ = false;
};

}  // namespace eddy::security
