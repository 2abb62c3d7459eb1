#include "security/scram_credential.h"

#include "security/random.h"

namespace eddy::security {

const char* scram_mechanism_name(ScramMechanism mechanism) {
  return mechanism == ScramMechanism::kSha256 ? "SCRAM-SHA-256" : "SCRAM-SHA-512";
}

std::optional<ScramMechanism> parse_scram_mechanism(std::string_view name) {
  if (name == "SCRAM-SHA-256") return ScramMechanism::kSha256;
  if (name == "SCRAM-SHA-512") return ScramMechanism::kSha512;
  return std::nullopt;
}

std::optional<ScramMechanism> scram_mechanism_from_id(int8_t id) {
  if (id == 1) return ScramMechanism::kSha256;
  if (id == 2) return ScramMechanism::kSha512;
  return std::nullopt;
}

HashAlgorithm scram_hash(ScramMechanism mechanism) {
  return mechanism == ScramMechanism::kSha256 ? HashAlgorithm::kSha256 : HashAlgorithm::kSha512;
}

Status credential_from_salted_password(ScramMechanism mechanism, std::span<const uint8_t> salt,
                                       std::span<const uint8_t> salted_password, int32_t iterations,
                                       ScramCredential* out) {
  const HashAlgorithm h = scram_hash(mechanism);
  if (salted_password.size() != digest_size(h)) {
    return Status::invalid_argument("the salted password of " + std::string(scram_mechanism_name(mechanism)) +
                                    " must be " + std::to_string(digest_size(h)) + " bytes, not " +
                                    std::to_string(salted_password.size()));
  }
  if (salt.empty()) return Status::invalid_argument("the salt must not be empty");
  out->salt.assign(salt.begin(), salt.end());
  out->stored_key = hash(h, hmac(h, salted_password, "Client Key"));
  out->server_key = hmac(h, salted_password, "Server Key");
  out->iterations = iterations;
  return Status();
}

Status credential_from_password(ScramMechanism mechanism, std::string_view password, std::span<const uint8_t> salt,
                                int32_t iterations, ScramCredential* out) {
  if (iterations < kMinScramIterations || iterations > kMaxScramIterations) {
    return Status::invalid_argument("iterations must be between " + std::to_string(kMinScramIterations) + " and " +
                                    std::to_string(kMaxScramIterations));
  }
  Bytes own_salt(salt.begin(), salt.end());
  if (own_salt.empty()) {
    own_salt.resize(kScramSaltBytes);
    if (Status s = random_bytes(own_salt.data(), own_salt.size()); !s.ok()) return s;
  }
  Bytes salted;
  if (Status s = pbkdf2(scram_hash(mechanism), password, own_salt, static_cast<uint32_t>(iterations), &salted);
      !s.ok()) {
    return s;
  }
  return credential_from_salted_password(mechanism, own_salt, salted, iterations, out);
}

ScramCredential fake_scram_credential(ScramMechanism mechanism, std::string_view user,
                                      std::span<const uint8_t> secret) {
  const HashAlgorithm h = scram_hash(mechanism);
  // Domain-separated inputs: the mechanism and the purpose are part of what
  // is MACed, so no two derived values coincide.
  std::string base = std::string(scram_mechanism_name(mechanism)) + '\0';
  base.append(user.data(), user.size());
  ScramCredential c;
  c.salt = hmac(HashAlgorithm::kSha256, secret, std::string("eddy fake salt:") + base);
  c.stored_key = hmac(h, secret, std::string("eddy fake stored key:") + base);
  c.server_key = hmac(h, secret, std::string("eddy fake server key:") + base);
  c.iterations = kMinScramIterations;
  return c;
}

}  // namespace eddy::security
