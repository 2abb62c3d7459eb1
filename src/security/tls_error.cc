#include "security/tls_error.h"

#include <cstdio>

#include <mbedtls/error.h>

namespace eddy::security {

std::string mbedtls_reason(int code) {
  char text[200] = "";
#if defined(MBEDTLS_ERROR_C)
  mbedtls_strerror(code, text, sizeof(text));
#endif
  char number[24];
  std::snprintf(number, sizeof(number), "-0x%04X", static_cast<unsigned>(code < 0 ? -code : code));
  if (text[0] == '\0') return number;
  return std::string(text) + " (" + number + ")";
}

namespace {

class TlsCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "tls"; }
  std::string message(int code) const override { return mbedtls_reason(code); }
};

}  // namespace

const std::error_category& tls_category() {
  static const TlsCategory category;
  return category;
}

}  // namespace eddy::security
