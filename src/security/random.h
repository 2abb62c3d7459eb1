// security/random.h — the process's cryptographic random generator: mbedTLS's
// CTR_DRBG seeded once from the system's entropy (getrandom / /dev/urandom
// through mbedtls_entropy). TLS sessions, SCRAM nonces and salts all draw
// from it.
//
// Thread-safe: the reactor and the forwarder's link threads share the one
// generator behind a mutex (a draw is microseconds; nothing holds the lock
// across I/O).
#pragma once

#include <cstddef>
#include <cstdint>

#include "port/status.h"

namespace eddy::security {

// Fills out[0, size) with random bytes. kIOError when the system's entropy
// source could not seed the generator (then nothing secure can start).
[[nodiscard]] Status random_bytes(uint8_t* out, size_t size);

// The mbedTLS callback form (f_rng, p_rng) for mbedtls_ssl_conf_rng,
// mbedtls_pk_parse_key and friends: p_rng is ignored (pass nullptr).
int mbedtls_random(void* p_rng, unsigned char* out, size_t size);

}  // namespace eddy::security
