// security/tls_error.h — mbedTLS's negative error codes as text and as
// std::error_code (category "tls"), so that net/ can report a failed
// handshake or record without mbedTLS headers.
#pragma once

#include <string>
#include <system_error>

namespace eddy::security {

// "X509 - Certificate verification failed (-0x2700)"; the code alone when
// mbedTLS was built without MBEDTLS_ERROR_C.
std::string mbedtls_reason(int code);

// The "tls" category; value() is the mbedTLS code (negative).
const std::error_category& tls_category();
inline std::error_code make_tls_error(int mbedtls_code) { return std::error_code(mbedtls_code, tls_category()); }

}  // namespace eddy::security
