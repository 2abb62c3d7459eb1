#include "security/crypto.h"

#include <mbedtls/base64.h>
#include <mbedtls/md.h>
#include <mbedtls/pkcs5.h>
#include <mbedtls/version.h>

namespace eddy::security {
namespace {

const mbedtls_md_info_t* md_info(HashAlgorithm algorithm) {
  return mbedtls_md_info_from_type(algorithm == HashAlgorithm::kSha256 ? MBEDTLS_MD_SHA256 : MBEDTLS_MD_SHA512);
}

bool base64_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
}

}  // namespace

size_t digest_size(HashAlgorithm algorithm) { return algorithm == HashAlgorithm::kSha256 ? 32 : 64; }

Bytes hash(HashAlgorithm algorithm, std::span<const uint8_t> data) {
  Bytes out(digest_size(algorithm));
  // Cannot fail for a valid md_info (both are compiled into Debian's build).
  (void)mbedtls_md(md_info(algorithm), data.data(), data.size(), out.data());
  return out;
}

Bytes hmac(HashAlgorithm algorithm, std::span<const uint8_t> key, std::span<const uint8_t> data) {
  Bytes out(digest_size(algorithm));
  (void)mbedtls_md_hmac(md_info(algorithm), key.data(), key.size(), data.data(), data.size(), out.data());
  return out;
}

Status pbkdf2(HashAlgorithm algorithm, std::string_view password, std::span<const uint8_t> salt,
              uint32_t iterations, Bytes* out) {
  if (iterations < 1) return Status::invalid_argument("PBKDF2 needs at least one iteration");
  out->assign(digest_size(algorithm), 0);
  const auto* pw = reinterpret_cast<const unsigned char*>(password.data());
#if MBEDTLS_VERSION_NUMBER >= 0x03030000
  const mbedtls_md_type_t type = algorithm == HashAlgorithm::kSha256 ? MBEDTLS_MD_SHA256 : MBEDTLS_MD_SHA512;
  int rc = mbedtls_pkcs5_pbkdf2_hmac_ext(type, pw, password.size(), salt.data(), salt.size(), iterations,
                                         static_cast<uint32_t>(out->size()), out->data());
#else
  mbedtls_md_context_t ctx;
  mbedtls_md_init(&ctx);
  int rc = mbedtls_md_setup(&ctx, md_info(algorithm), 1);
  if (rc == 0) {
    rc = mbedtls_pkcs5_pbkdf2_hmac(&ctx, pw, password.size(), salt.data(), salt.size(), iterations,
                                   static_cast<uint32_t>(out->size()), out->data());
  }
  mbedtls_md_free(&ctx);
#endif
  if (rc != 0) return Status::invalid_argument("PBKDF2 failed (mbedTLS error " + std::to_string(rc) + ")");
  return Status();
}

std::string base64_encode(std::span<const uint8_t> data) {
  std::string out((data.size() + 2) / 3 * 4 + 1, '\0');
  size_t written = 0;
  (void)mbedtls_base64_encode(reinterpret_cast<unsigned char*>(out.data()), out.size(), &written, data.data(),
                              data.size());
  out.resize(written);
  return out;
}

bool base64_decode(std::string_view text, Bytes* out) {
  out->clear();
  if (text.size() % 4 != 0) return false;
  size_t padding = 0;
  if (!text.empty() && text.back() == '=') padding = text.size() >= 2 && text[text.size() - 2] == '=' ? 2 : 1;
  for (size_t i = 0; i < text.size() - padding; ++i) {
    if (!base64_char(text[i])) return false;
  }
  out->resize(text.size() / 4 * 3);
  size_t written = 0;
  if (mbedtls_base64_decode(out->data(), out->size(), &written, reinterpret_cast<const unsigned char*>(text.data()),
                            text.size()) != 0) {
    return false;
  }
  out->resize(written);
  return true;
}

bool constant_time_equal(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  if (a.size() != b.size()) return false;
  // Every byte is looked at, whatever differs first (mbedtls_ct_memcmp
  // would do, but 2.28's header lacks extern "C").
  volatile uint8_t diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff = static_cast<uint8_t>(diff | (a[i] ^ b[i]));
  return diff == 0;
}

}  // namespace eddy::security
