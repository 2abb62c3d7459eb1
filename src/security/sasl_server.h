// security/sasl_server.h — the server side of one SASL exchange, whatever
// the mechanism: the broker feeds it the client's tokens one by one (the
// auth_bytes of each SaslAuthenticate) and sends back what it answers. Pure
// code: no I/O, no clock, no logging.
//
// Invariants: once a step returned kSuccess or kFailure, every later step
// is kFailure (an exchange is never resumed); user() names an authenticated
// user only after kSuccess. Tokens are bounded by the caller
// (kMaxSaslTokenBytes); what a server keeps grows only with what it was
// sent in the one token it is reading, never with what a client claims.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "security/scram_credential.h"

namespace eddy::security {

// Largest SASL token a server accepts; a longer one fails the exchange
// (Kafka bounds the frames of an unauthenticated connection with
// sasl.server.max.receive.size, 512 KiB; no PLAIN or SCRAM message needs
// more than a few hundred bytes).
inline constexpr size_t kMaxSaslTokenBytes = 64 * 1024;

struct SaslStep {
  enum class Kind { kChallenge, kSuccess, kFailure };
  Kind kind = Kind::kFailure;
  // kChallenge: the next message for the client; kSuccess: the final one
  // (SCRAM's server-final v=..., empty for PLAIN).
  std::string response;
  // kFailure: what the client is told (never says whether the user exists).
  std::string error;
  // kFailure: what the broker's log says (never a password or a proof).
  std::string reason;

  static SaslStep challenge(std::string message) { return {Kind::kChallenge, std::move(message), {}, {}}; }
  static SaslStep success(std::string message) { return {Kind::kSuccess, std::move(message), {}, {}}; }
  static SaslStep failure(std::string error, std::string reason) {
    return {Kind::kFailure, {}, std::move(error), std::move(reason)};
  }
};

class SaslServer {
 public:
  virtual ~SaslServer() = default;
  // "PLAIN", "SCRAM-SHA-256", ...
  virtual const char* mechanism() const = 0;
  // Takes the client's next token and answers it.
  virtual SaslStep step(std::span<const uint8_t> token) = 0;
  // The authenticated user (after kSuccess); before that, the name the
  // client claimed if it got that far (for the log), or empty.
  virtual const std::string& user() const = 0;
};

// The mechanisms Eddy implements, in its default order of preference
// (sasl.enabled.mechanisms): SCRAM-SHA-512, SCRAM-SHA-256, PLAIN.
const std::vector<std::string>& implemented_sasl_mechanisms();
bool is_implemented_sasl_mechanism(std::string_view name);

// A server for one exchange of mechanism (REQUIRES: implemented); lookup
// finds credentials, secret derives the fake ones of unknown users
// (fake_scram_credential). lookup must stay valid for the server's life.
std::unique_ptr<SaslServer> make_sasl_server(std::string_view mechanism, ScramCredentialLookup lookup,
                                             std::span<const uint8_t> secret);

// What the client is told when its credentials do not verify (Kafka's
// words, which clients show their users).
std::string invalid_credentials_message(std::string_view mechanism);

}  // namespace eddy::security
