#include "security/random.h"

#include <cstdio>
#include <string>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>

#include "port/mutex.h"

namespace eddy::security {
namespace {

// Seeded on first use; a failed seed is remembered and reported on every
// draw (the entropy source does not come back by retrying in a loop).
class Generator {
 public:
  Generator() {
    mbedtls_entropy_init(&entropy_);
    mbedtls_ctr_drbg_init(&drbg_);
    static const unsigned char kPersonalisation[] = "eddy";
    seed_result_ = mbedtls_ctr_drbg_seed(&drbg_, mbedtls_entropy_func, &entropy_, kPersonalisation,
                                         sizeof(kPersonalisation) - 1);
  }
  ~Generator() {
    mbedtls_ctr_drbg_free(&drbg_);
    mbedtls_entropy_free(&entropy_);
  }

  int fill(unsigned char* out, size_t size) EXCLUDES(mu_) {
    port::MutexLock lock(mu_);
    if (seed_result_ != 0) return seed_result_;
    // mbedtls_ctr_drbg_random draws at most MBEDTLS_CTR_DRBG_MAX_REQUEST
    // (1024) bytes per call.
    while (size > 0) {
      size_t chunk = size < MBEDTLS_CTR_DRBG_MAX_REQUEST ? size : MBEDTLS_CTR_DRBG_MAX_REQUEST;
      int rc = mbedtls_ctr_drbg_random(&drbg_, out, chunk);
      if (rc != 0) return rc;
      out += chunk;
      size -= chunk;
    }
    return 0;
  }

 private:
  port::Mutex mu_;
  mbedtls_entropy_context entropy_;
  mbedtls_ctr_drbg_context drbg_ GUARDED_BY(mu_);
  int seed_result_ = 0;
};

Generator& generator() {
  static Generator instance;
  return instance;
}

}  // namespace

Status random_bytes(uint8_t* out, size_t size) {
  int rc = generator().fill(out, size);
  if (rc != 0) {
    char code[16];
    std::snprintf(code, sizeof(code), "-0x%04X", static_cast<unsigned>(-rc));
    return Status::io_error(std::string("the random generator could not draw from the system's entropy (mbedTLS ") +
                            code + ")");
  }
  return Status();
}

int mbedtls_random(void* /*p_rng*/, unsigned char* out, size_t size) { return generator().fill(out, size); }

}  // namespace eddy::security
