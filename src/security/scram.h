// security/scram.h — SCRAM-SHA-256 / SCRAM-SHA-512 server (RFC 5802, RFC
// 7677), as Kafka's SaslAuthenticate carries it: client-first, then
// server-first, client-final, server-final.
//
//   client-first  n,,n=user,r=CNONCE          (gs2 header "n,," or "y,,"; an
//                                              a=authzid must name the user)
//   server-first  r=CNONCE+SNONCE,s=SALT,i=ITERATIONS
//   client-final  c=biws,r=CNONCE+SNONCE,p=PROOF
//   server-final  v=SERVER_SIGNATURE
//
// Refused: channel binding (p=...: Eddy offers none, so SCRAM-...-PLUS is
// not a mechanism either), any extension (m=... and Kafka's tokenauth:
// there are no delegation tokens), a saslname with '=' other than =2C/=3D,
// c= other than the base64 of the very gs2 header sent, r= other than the
// exact combined nonce (Kafka checks only that r= ends with it,
// CVE-2024-56128) -- with one exception, r= = client nonce + combined
// nonce, which librdkafka up to 2.1 (Debian 12's 2.0.2) sends -- a proof of
// the wrong size or that does not verify.
//
// An unknown user takes the same path as a wrong password: the server
// answers server-first with fake_scram_credential()'s salt and iterations
// and fails at the proof, with the same message.
#pragma once

#include <span>
#include <string>

#include "security/sasl_server.h"
#include "security/scram_credential.h"

namespace eddy::security {

class ScramServer final : public SaslServer {
 public:
  // REQUIRES: lookup valid for the server's life; secret as for
  // make_sasl_server (copied).
  ScramServer(ScramMechanism mechanism, ScramCredentialLookup lookup, std::span<const uint8_t> secret);

  const char* mechanism() const override { return scram_mechanism_name(mechanism_); }
  SaslStep step(std::span<const uint8_t> token) override;
  const std::string& user() const override { return user_; }

  // Test seam: the server nonce part of the next server-first (otherwise 24
  // base64 characters of random_bytes). REQUIRES: printable, no ','.
  void set_server_nonce_for_test(std::string nonce) { server_nonce_ = std::move(nonce); }

 private:
  enum class State { kClientFirst, kClientFinal, kDone };
  SaslStep client_first(std::string_view message);
  SaslStep client_final(std::string_view message);
  SaslStep fail(std::string rfc_error, std::string reason);

  ScramMechanism mechanism_;
  ScramCredentialLookup lookup_;
  Bytes secret_;
  State state_ = State::kClientFirst;
  std::string user_;
  std::string gs2_header_;         // "n,," or "n,a=user,"
  std::string client_first_bare_;  // for AuthMessage
  std::string server_first_;
  std::string nonce_;              // client + server nonce
  size_t client_nonce_size_ = 0;
  std::string server_nonce_;
  ScramCredential credential_;
};

// Parsing pieces, exposed for the tests and the fuzzer.
// saslname (RFC 5802 section 5.1): "=2C" -> ',', "=3D" -> '='; false for
// any other '=', a raw ',', or an empty name.
bool decode_saslname(std::string_view text, std::string* out);

}  // namespace eddy::security
