// libFuzzer target: the SASL parsers a client reaches before it has
// authenticated. The first byte picks the parser; for SCRAM the rest is a
// client-first and a client-final message separated by the first NUL (the
// server nonce is fixed, so that a corpus can hold a complete exchange).
// Any outcome is fine; crashes, sanitizer reports and a success without the
// right proof are not.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "security/crypto.h"
#include "security/plain.h"
#include "security/scram.h"

namespace {

using namespace eddy::security;

const ScramCredential& alice(ScramMechanism m) {
  static const auto make = [](ScramMechanism mech) {
    ScramCredential c;
    if (!credential_from_password(mech, "pencil", as_bytes("saltsalt"), 4096, &c).ok()) std::abort();
    return c;
  };
  static const ScramCredential sha256 = make(ScramMechanism::kSha256);
  static const ScramCredential sha512 = make(ScramMechanism::kSha512);
  return m == ScramMechanism::kSha256 ? sha256 : sha512;
}

void fuzz_scram(ScramMechanism mechanism, std::string_view input) {
  const uint8_t secret[16] = {1};
  ScramServer server(mechanism,
                     [](const std::string& user, ScramMechanism m, ScramCredential* out) {
                       if (user != "alice") return false;
                       *out = alice(m);
                       return true;
                     },
                     secret);
  server.set_server_nonce_for_test("SNONCE");
  const size_t nul = input.find('\0');
  const SaslStep first = server.step(as_bytes(input.substr(0, nul)));
  if (first.kind != SaslStep::Kind::kChallenge || nul == std::string_view::npos) return;
  (void)server.step(as_bytes(input.substr(nul + 1)));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 5) {
    case 0:
      fuzz_scram(ScramMechanism::kSha256, input);
      break;
    case 1:
      fuzz_scram(ScramMechanism::kSha512, input);
      break;
    case 2: {
      PlainMessage m;
      std::string why;
      (void)parse_plain_message(input, &m, &why);
      break;
    }
    case 3: {
      std::string out;
      (void)decode_saslname(input, &out);
      break;
    }
    default: {
      Bytes out;
      if (base64_decode(input, &out)) (void)base64_encode(out);
      break;
    }
  }
  return 0;
}
