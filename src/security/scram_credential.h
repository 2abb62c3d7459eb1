// security/scram_credential.h — what a broker keeps of a SCRAM user (RFC
// 5802 section 3): the salt, the iteration count, StoredKey = H(ClientKey)
// and ServerKey, where ClientKey = HMAC(SaltedPassword, "Client Key"),
// ServerKey = HMAC(SaltedPassword, "Server Key") and SaltedPassword =
// Hi(password, salt, iterations). Never the password, never the salted
// password: StoredKey verifies a client's proof, ServerKey signs the
// broker's answer, and neither lets anyone log in.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "port/status.h"
#include "security/crypto.h"

namespace eddy::security {

// Kafka's ids (org.apache.kafka.clients.admin.ScramMechanism), as carried by
// AlterUserScramCredentials and DescribeUserScramCredentials.
enum class ScramMechanism : int8_t { kSha256 = 1, kSha512 = 2 };

// Kafka's bounds on the iteration count (ScramMechanism.minIterations() and
// the broker's AlterUserScramCredentials check): fewer is too cheap to
// guess, more costs a gateway too much per login.
inline constexpr int32_t kMinScramIterations = 4096;
inline constexpr int32_t kMaxScramIterations = 16384;
// Salt length of credentials Eddy makes itself (`eddy users --add`).
inline constexpr size_t kScramSaltBytes = 32;

// "SCRAM-SHA-256", "SCRAM-SHA-512".
const char* scram_mechanism_name(ScramMechanism mechanism);
// The exact (upper-case) SASL names above; nullopt otherwise.
std::optional<ScramMechanism> parse_scram_mechanism(std::string_view name);
// Kafka's id (1, 2); nullopt for 0 (UNKNOWN) and anything else.
std::optional<ScramMechanism> scram_mechanism_from_id(int8_t id);
HashAlgorithm scram_hash(ScramMechanism mechanism);

struct ScramCredential {
  Bytes salt;
  Bytes stored_key;  // digest-sized
  Bytes server_key;  // digest-sized
  int32_t iterations = 0;
};

// The credential of a salted password, as AlterUserScramCredentials carries
// it (the client salted the password). invalid_argument when the salted
// password is not digest-sized or the salt is empty.
[[nodiscard]] Status credential_from_salted_password(ScramMechanism mechanism, std::span<const uint8_t> salt,
                                                     std::span<const uint8_t> salted_password, int32_t iterations,
                                                     ScramCredential* out);
// The credential of a password: Hi() with the given salt, or with
// kScramSaltBytes from random_bytes when salt is empty. invalid_argument
// for iterations outside [kMinScramIterations, kMaxScramIterations].
[[nodiscard]] Status credential_from_password(ScramMechanism mechanism, std::string_view password,
                                              std::span<const uint8_t> salt, int32_t iterations,
                                              ScramCredential* out);

// What a user without a credential answers to: a salt and keys derived
// from secret and the user name, so that the same name always gets the
// same salt and iteration count (an attacker cannot tell an unknown user
// from a known one by asking twice, or across restarts when the secret is
// kept), and no proof ever matches the keys (finding one means inverting
// HMAC). REQUIRES: secret is random and kept from clients.
ScramCredential fake_scram_credential(ScramMechanism mechanism, std::string_view user,
                                      std::span<const uint8_t> secret);

// The broker's credential store as the authenticators see it: fills *out
// and returns true when user has a credential for mechanism.
using ScramCredentialLookup =
    std::function<bool(const std::string& user, ScramMechanism mechanism, ScramCredential* out)>;

}  // namespace eddy::security
