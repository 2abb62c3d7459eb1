// security/scram_client.h — the client side of SCRAM-SHA-256 / SCRAM-SHA-512
// (RFC 5802, RFC 7677), as the forwarder's uplink speaks it inside Kafka's
// SaslAuthenticate: client-first, then client-final from server-first, then
// the check of server-final. Pure code: no I/O, no clock, no logging.
//
//   ScramClient c(ScramMechanism::kSha512, "gateway-7", password);
//   std::string first;   c.client_first(&first);            -> SaslAuthenticate
//   std::string final_;  c.client_final(server_first, &final_);  -> SaslAuthenticate
//   c.verify_server_final(server_final);                     // ok: authenticated
//
// Refused with kInvalidArgument and the reason: a combined
// nonce that does not start with our nonce or adds nothing to it, an
// iteration count below kMinScramIterations (Kafka's ScramSaslClient does
// the same) or above kMaxScramIterations (a gateway must not be made to
// spend seconds of CPU per login), a mandatory extension (m=), a bad salt,
// an e= error from the server, and a server signature that differs from the
// expected one (compared in constant time). Each call in the wrong order is
// refused too.
//
// Invariants: the password is kept only until client_final has salted it;
// the salted password never leaves the object.
#pragma once

#include <string>
#include <string_view>

#include "port/status.h"
#include "security/crypto.h"
#include "security/scram_credential.h"

namespace eddy::security {

class ScramClient {
 public:
  ScramClient(ScramMechanism mechanism, std::string user, std::string password);

  const char* mechanism() const { return scram_mechanism_name(mechanism_); }

  // "n,,n=USER,r=NONCE" with a fresh nonce of 24 base64 characters from
  // random_bytes (kIOError when the generator could not seed).
  [[nodiscard]] Status client_first(std::string* out);
  // "c=biws,r=NONCE,p=PROOF" for server-first "r=NONCE,s=SALT,i=N[,ext]".
  [[nodiscard]] Status client_final(std::string_view server_first, std::string* out);
  // Ok when server_final is "v=" the server signature we expect.
  [[nodiscard]] Status verify_server_final(std::string_view server_final);

  // Test seam: the nonce of the next client_first (RFC 7677's vector).
  // REQUIRES: printable, no ','.
  void set_client_nonce_for_test(std::string nonce) { nonce_ = std::move(nonce); }

 private:
  enum class State { kStart, kSentFirst, kSentFinal, kDone };
  Status fail(std::string reason);

  ScramMechanism mechanism_;
  std::string user_;
  std::string password_;
  std::string nonce_;
  std::string client_first_bare_;
  Bytes expected_server_signature_;
  State state_ = State::kStart;
};

// saslname (RFC 5802 section 5.1): ',' -> "=2C", '=' -> "=3D".
std::string encode_saslname(std::string_view name);

}  // namespace eddy::security
