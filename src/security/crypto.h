// security/crypto.h — the hash functions SASL needs, on mbedTLS's md and
// pkcs5 modules: SHA-256/512, HMAC, PBKDF2 (SCRAM's Hi()), base64 and a
// constant-time comparison. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "port/status.h"

namespace eddy::security {

using Bytes = std::vector<uint8_t>;

enum class HashAlgorithm { kSha256, kSha512 };

// 32 or 64.
size_t digest_size(HashAlgorithm algorithm);

// H(data).
Bytes hash(HashAlgorithm algorithm, std::span<const uint8_t> data);
// HMAC(key, data); digest_size(algorithm) bytes.
Bytes hmac(HashAlgorithm algorithm, std::span<const uint8_t> key, std::span<const uint8_t> data);
inline Bytes hmac(HashAlgorithm algorithm, std::span<const uint8_t> key, std::string_view data) {
  return hmac(algorithm, key, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(data.data()), data.size()));
}
// PBKDF2-HMAC (RFC 8018) with a digest-sized output: SCRAM's
// Hi(password, salt, iterations). invalid_argument for iterations < 1.
[[nodiscard]] Status pbkdf2(HashAlgorithm algorithm, std::string_view password, std::span<const uint8_t> salt,
                            uint32_t iterations, Bytes* out);

// Standard base64 (RFC 4648 section 4) with padding.
std::string base64_encode(std::span<const uint8_t> data);
// Strict: only the alphabet, length a multiple of 4, padding only at the end
// (no whitespace). False, with *out unspecified, otherwise.
bool base64_decode(std::string_view text, Bytes* out);

// a == b, in time that depends only on the sizes.
bool constant_time_equal(std::span<const uint8_t> a, std::span<const uint8_t> b);

inline std::span<const uint8_t> as_bytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace eddy::security
