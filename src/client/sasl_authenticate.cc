// BrokerConnection's SASL exchange (KIP-152): SaslHandshake v1 names the
// mechanism, then SaslAuthenticate frames carry the mechanism's tokens --
// one for PLAIN, client-first and client-final for SCRAM -- at the highest
// version both sides support. Any refusal closes the connection.
#include <string>

#include "client/broker_connection.h"
#include "protocol/generated/sasl_authenticate.h"
#include "protocol/generated/sasl_handshake.h"
#include "security/crypto.h"
#include "security/scram_client.h"
#include "security/scram_credential.h"

namespace eddy::client {
namespace {

constexpr int16_t kSaslFailed = static_cast<int16_t>(protocol::ErrorCode::kSaslAuthenticationFailed);

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace

Status BrokerConnection::sasl_round(std::string_view token, int16_t version, std::string* answer,
                                    Deadline deadline) {
  protocol::SaslAuthenticateRequest request;
  request.auth_bytes.assign(token.begin(), token.end());
  protocol::SaslAuthenticateResponse response;
  Status s = call(request, version, &response, deadline);
  if (!s.ok()) return s;
  if (response.error_code != 0) {
    return fail(protocol::broker_error(response.error_code, "SASL " + options_.sasl->mechanism + " as user '" +
                                                                options_.sasl->username + "' at " +
                                                                address_.to_string(),
                                       response.error_message));
  }
  answer->assign(response.auth_bytes.begin(), response.auth_bytes.end());
  return Status();
}

Status BrokerConnection::authenticate(Deadline deadline) {
  const SaslClientConfig& sasl = *options_.sasl;
  const std::string who = "SASL " + sasl.mechanism + " as user '" + sasl.username + "' at " + address_.to_string();
  int16_t handshake_version = 0, authenticate_version = 0;
  if (Status s = negotiate<protocol::SaslHandshakeRequest>(&handshake_version); !s.ok()) {
    return fail(s.with_context(who + ": the broker has no SaslHandshake v1 (is its listener SASL?)"));
  }
  if (Status s = negotiate<protocol::SaslAuthenticateRequest>(&authenticate_version); !s.ok()) {
    return fail(s.with_context(who));
  }
  protocol::SaslHandshakeRequest handshake;
  handshake.mechanism = sasl.mechanism;
  protocol::SaslHandshakeResponse handshake_response;
  if (Status s = call(handshake, handshake_version, &handshake_response, deadline); !s.ok()) return s;
  if (handshake_response.error_code != 0) {
    return fail(protocol::broker_error(handshake_response.error_code, who,
                                       "the broker offers " + join(handshake_response.mechanisms)));
  }
  std::string answer;
  if (sasl.mechanism == "PLAIN") {
    // RFC 4616: authzid NUL authcid NUL passwd, no authzid.
    std::string token;
    token.push_back('\0');
    token += sasl.username;
    token.push_back('\0');
    token += sasl.password;
    return sasl_round(token, authenticate_version, &answer, deadline);
  }
  std::optional<security::ScramMechanism> mechanism = security::parse_scram_mechanism(sasl.mechanism);
  if (!mechanism) return fail(Status::invalid_argument(who + ": unknown mechanism"));
  security::ScramClient scram(*mechanism, sasl.username, sasl.password);
  std::string token;
  if (Status s = scram.client_first(&token); !s.ok()) return fail(s.with_context(who));
  if (Status s = sasl_round(token, authenticate_version, &answer, deadline); !s.ok()) return s;
  if (Status s = scram.client_final(answer, &token); !s.ok()) {
    return fail(protocol::broker_error(kSaslFailed, who, s.message()));
  }
  if (Status s = sasl_round(token, authenticate_version, &answer, deadline); !s.ok()) return s;
  if (Status s = scram.verify_server_final(answer); !s.ok()) {
    return fail(protocol::broker_error(kSaslFailed, who, s.message()));
  }
  return Status();
}

}  // namespace eddy::client
