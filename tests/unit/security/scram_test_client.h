// A SCRAM client for the tests (RFC 5802 section 3), just enough to drive
// ScramServer and the broker's SaslAuthenticate: client-first with a given
// nonce, client-final from server-first, and the expected server-final.
#pragma once

#include <string>
#include <string_view>

#include "security/crypto.h"
#include "security/scram_credential.h"

namespace eddy::security::testing {

class ScramTestClient {
 public:
  ScramTestClient(ScramMechanism mechanism, std::string user, std::string password, std::string nonce)
      : mechanism_(mechanism), user_(std::move(user)), password_(std::move(password)), nonce_(std::move(nonce)) {}

  std::string client_first() {
    bare_ = "n=" + user_ + ",r=" + nonce_;
    return "n,," + bare_;
  }

  // Empty when server_first is not of the form r=...,s=...,i=...
  std::string client_final(std::string_view server_first) {
    const size_t s = server_first.find(",s=");
    const size_t i = server_first.find(",i=");
    if (server_first.substr(0, 2) != "r=" || s == std::string_view::npos || i == std::string_view::npos) return "";
    const std::string nonce(server_first.substr(2, s - 2));
    Bytes salt;
    if (!base64_decode(server_first.substr(s + 3, i - s - 3), &salt)) return "";
    const int iterations = std::stoi(std::string(server_first.substr(i + 3)));
    const HashAlgorithm h = scram_hash(mechanism_);
    Bytes salted;
    if (!pbkdf2(h, password_, salt, static_cast<uint32_t>(iterations), &salted).ok()) return "";
    const std::string without_proof = "c=biws,r=" + nonce;
    const std::string auth_message = bare_ + "," + std::string(server_first) + "," + without_proof;
    const Bytes client_key = hmac(h, salted, "Client Key");
    const Bytes signature = hmac(h, hash(h, client_key), auth_message);
    Bytes proof(client_key.size());
    for (size_t k = 0; k < proof.size(); ++k) proof[k] = client_key[k] ^ signature[k];
    expected_server_final_ = "v=" + base64_encode(hmac(h, hmac(h, salted, "Server Key"), auth_message));
    return without_proof + ",p=" + base64_encode(proof);
  }

  const std::string& expected_server_final() const { return expected_server_final_; }

 private:
  ScramMechanism mechanism_;
  std::string user_;
  std::string password_;
  std::string nonce_;
  std::string bare_;
  std::string expected_server_final_;
};

inline std::span<const uint8_t> bytes_of(std::string_view s) { return as_bytes(s); }

}  // namespace eddy::security::testing
