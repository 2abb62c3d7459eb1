#include "security/sasl_server.h"

#include "security/plain.h"
#include "security/scram.h"

namespace eddy::security {

const std::vector<std::string>& implemented_sasl_mechanisms() {
  static const std::vector<std::string> kMechanisms = {"SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"};
  return kMechanisms;
}

bool is_implemented_sasl_mechanism(std::string_view name) {
  for (const std::string& m : implemented_sasl_mechanisms()) {
    if (m == name) return true;
  }
  return false;
}

std::unique_ptr<SaslServer> make_sasl_server(std::string_view mechanism, ScramCredentialLookup lookup,
                                             std::span<const uint8_t> secret) {
  if (mechanism == "PLAIN") return std::make_unique<PlainServer>(std::move(lookup), secret);
  if (auto scram = parse_scram_mechanism(mechanism)) {
    return std::make_unique<ScramServer>(*scram, std::move(lookup), secret);
  }
  return nullptr;
}

std::string invalid_credentials_message(std::string_view mechanism) {
  return "Authentication failed during authentication due to invalid credentials with SASL mechanism " +
         std::string(mechanism);
}

}  // namespace eddy::security
