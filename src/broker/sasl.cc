// SASL authentication on the listeners that need it (Kafka's
// SaslServerAuthenticator): SaslHandshake v0-1 picks the mechanism, then
// the exchange runs in SaslAuthenticate v0-2 requests (after handshake v1)
// or as bare size-prefixed tokens without request headers (after handshake
// v0, as kafka-python 2.0 does). A failed exchange answers
// SASL_AUTHENTICATION_FAILED (v1 handshake) or nothing (v0), then closes
// the connection.
//
// Re-authentication (KIP-368), with connections.max.reauth.ms > 0: every
// login's session ends after that long (SaslAuthenticate v1+ tells the
// client session_lifetime_ms); a request after its end closes the
// connection, as Kafka's SocketServer does. A client that logged in with
// SaslAuthenticate v1+ may run SaslHandshake + SaslAuthenticate again on
// the same connection at any time; it must keep its mechanism and its
// principal, or it is refused and closed.
#include <algorithm>

#include "broker/broker.h"
#include "port/log.h"
#include "port/port.h"
#include "protocol/big_endian.h"
#include "protocol/errors.h"
#include "security/random.h"

namespace eddy::broker {

using protocol::ApiKey;
using protocol::ErrorCode;
using State = SaslSession::State;

namespace {

// What the exchange's servers read: the meta store's credentials. A store
// that cannot be read counts as no credential (and is logged).
security::ScramCredentialLookup credential_lookup(meta::MetaStore* meta) {
  return [meta](const std::string& user, security::ScramMechanism mechanism, security::ScramCredential* out) {
    if (meta == nullptr) return false;
    meta::ScramCredentialRow row;
    bool found = false;
    Status s = meta->scram_credentials().get(user, static_cast<int8_t>(mechanism), &row, &found);
    if (!s.ok()) {
      EDDY_LOG_ERROR("SASL: reading the credential of '{}': {}", user, s.message());
      return false;
    }
    if (!found) return false;
    out->salt = std::move(row.salt);
    out->stored_key = std::move(row.stored_key);
    out->server_key = std::move(row.server_key);
    out->iterations = row.iterations;
    return true;
  };
}

const char* state_name(State state) {
  switch (state) {
    case State::kStart:
      return "before SaslHandshake";
    case State::kAuthenticate:
      return "after SaslHandshake, before SaslAuthenticate";
    case State::kRawTokens:
      return "after SaslHandshake v0";
    case State::kAuthenticated:
      return "authenticated";
  }
  return "?";
}

template <typename M>
protocol::OutputBuffer encode(const Request& request, const M& body) {
  protocol::OutputBuffer out;
  // Every field of these responses fits every version.
  (void)protocol::encode_response_frame(body, request.version(), request.correlation_id(), &out);
  return out;
}

}  // namespace

const SaslListener* Broker::sasl_listener(const std::string& listener) const {
  for (const SaslListener& l : options_.sasl_listeners) {
    if (l.name == listener) return &l;
  }
  return nullptr;
}

Status Broker::load_sasl_secret() {
  if (options_.sasl_listeners.empty() || meta_ == nullptr) return Status();
  std::vector<uint8_t> fresh(32);
  if (Status s = security::random_bytes(fresh.data(), fresh.size()); !s.ok()) return s;
  return meta_->scram_credentials().secret("sasl.unknown.user.key", fresh, &sasl_secret_);
}

bool Broker::sasl_gate(RequestPtr& request, bool header_parsed) {
  if (options_.sasl_listeners.empty() || sasl_listener(request->client.listener) == nullptr) return false;
  SaslSession& session = sasl_sessions_[request->client.connection_id];
  if (session.state == State::kAuthenticated) return !header_parsed ? false : session_expired(request, session);
  if (!header_parsed) {
    if (session.state != State::kRawTokens) return false;
    handle_raw_sasl_token(std::move(request), session);
    return true;
  }
  const auto key = static_cast<ApiKey>(request->api_key());
  const bool allowed = (session.state == State::kStart && (key == ApiKey::kApiVersions || key == ApiKey::kSaslHandshake)) ||
                       (session.state == State::kAuthenticate && key == ApiKey::kSaslAuthenticate);
  if (allowed) return false;
  close_bad_request(*request, std::string("listener ") + request->client.listener +
                                  " needs SASL authentication first (connection is " + state_name(session.state) +
                                  ")");
  return true;
}

bool Broker::session_expired(RequestPtr& request, SaslSession& session) {
  if (session.may_reauthenticate && static_cast<ApiKey>(request->api_key()) == ApiKey::kSaslHandshake) return false;
  if (session.expires_ms < 0 || port::monotonic_millis() < session.expires_ms) return false;
  EDDY_LOG_INFO("SASL: the session of {} (listener {}, {}) ended without re-authentication; closing",
                request->client.peer, request->client.listener, session.principal);
  request->reply->close_connection();
  return true;
}

void Broker::handle_sasl_handshake(RequestPtr request) {
  protocol::SaslHandshakeRequest body;
  if (!decode(*request, &body)) return;
  protocol::SaslHandshakeResponse response;
  const SaslListener* listener = sasl_listener(request->client.listener);
  auto it = sasl_sessions_.find(request->client.connection_id);
  const bool reauthenticating = it != sasl_sessions_.end() && it->second.state == State::kAuthenticated &&
                                it->second.may_reauthenticate && request->version() >= 1;
  if (listener == nullptr || it == sasl_sessions_.end() || (it->second.state != State::kStart && !reauthenticating)) {
    // As Kafka's KafkaApis: a listener without SASL, or a connection
    // already authenticated that may not re-authenticate.
    response.error_code = protocol::to_int(ErrorCode::kIllegalSaslState);
    respond(*request, response);
    return;
  }
  SaslSession& session = it->second;
  response.mechanisms = listener->mechanisms;
  if (reauthenticating && body.mechanism != session.mechanism) {
    // Kafka refuses this at the following SaslAuthenticate; Eddy at once.
    ++sasl_failed_;
    EDDY_LOG_WARN("SASL: {} (listener {}) asked to re-authenticate {} with '{}', not its mechanism {}; closing",
                  request->client.peer, request->client.listener, session.principal, body.mechanism.substr(0, 64),
                  session.mechanism);
    response.error_code = protocol::to_int(ErrorCode::kUnsupportedSaslMechanism);
    note_errors(*request, response);
    request->reply->send_and_close(encode(*request, response));
    return;
  }
  if (std::find(listener->mechanisms.begin(), listener->mechanisms.end(), body.mechanism) ==
      listener->mechanisms.end()) {
    ++sasl_failed_;
    EDDY_LOG_WARN("SASL: {} (listener {}, client id '{}') asked for mechanism '{}', which is not enabled; closing",
                  request->client.peer, request->client.listener, request->client_id(),
                  body.mechanism.substr(0, 64));
    response.error_code = protocol::to_int(ErrorCode::kUnsupportedSaslMechanism);
    note_errors(*request, response);
    request->reply->send_and_close(encode(*request, response));
    return;
  }
  session.server = security::make_sasl_server(body.mechanism, credential_lookup(meta_), sasl_secret_);
  session.state = request->version() == 0 ? State::kRawTokens : State::kAuthenticate;
  session.reauthenticating = reauthenticating;
  respond(*request, response);
}

security::SaslStep Broker::sasl_step(const Request& request, SaslSession& session, std::span<const uint8_t> token) {
  security::SaslStep step = session.server->step(token);
  if (step.kind == security::SaslStep::Kind::kChallenge) return step;
  const std::string mechanism = session.server->mechanism();
  const std::string principal = "User:" + session.server->user();
  if (step.kind == security::SaslStep::Kind::kSuccess && session.reauthenticating && principal != session.principal) {
    step = security::SaslStep::failure("Cannot change principals during re-authentication from " +
                                           session.principal + ": " + principal,
                                       "re-authentication as " + principal + " on a connection of " +
                                           session.principal);
  }
  if (step.kind == security::SaslStep::Kind::kSuccess) {
    ++sasl_succeeded_;
    EDDY_LOG_INFO("SASL: {} (listener {}) {} as {} with {}", request.client.peer, request.client.listener,
                  session.reauthenticating ? "re-authenticated" : "authenticated", principal, mechanism);
    if (!session.reauthenticating) request.reply->authenticated(principal);
    session.state = State::kAuthenticated;
    session.principal = principal;
    session.mechanism = mechanism;
    session.reauthenticating = false;
    const SaslListener* listener = sasl_listener(request.client.listener);
    const int64_t lifetime = listener != nullptr ? listener->max_reauth_ms : 0;
    session.expires_ms = lifetime > 0 ? port::monotonic_millis() + lifetime : -1;
  } else {
    ++sasl_failed_;
    EDDY_LOG_WARN("SASL: authentication of {} (listener {}) with {} failed: {}; closing", request.client.peer,
                  request.client.listener, mechanism, step.reason);
    session.state = State::kStart;  // the connection closes; nothing follows
  }
  session.server.reset();
  return step;
}

void Broker::handle_sasl_authenticate(RequestPtr request) {
  protocol::SaslAuthenticateRequest body;
  if (!decode(*request, &body)) return;
  protocol::SaslAuthenticateResponse response;
  auto it = sasl_sessions_.find(request->client.connection_id);
  if (it == sasl_sessions_.end() || it->second.state != State::kAuthenticate) {
    response.error_code = protocol::to_int(ErrorCode::kIllegalSaslState);
    response.error_message = it == sasl_sessions_.end() ? "SaslAuthenticate on a listener without SASL"
                                                        : "SaslAuthenticate request received after successful "
                                                          "authentication";
    respond(*request, response);
    return;
  }
  const security::SaslStep step = sasl_step(*request, it->second, body.auth_bytes);
  response.auth_bytes.assign(step.response.begin(), step.response.end());
  if (step.kind == security::SaslStep::Kind::kSuccess && request->version() >= 1) {
    // A client of v1+ can be told the session's end and can re-authenticate.
    SaslSession& session = it->second;
    session.may_reauthenticate = true;
    if (session.expires_ms >= 0) response.session_lifetime_ms = sasl_listener(request->client.listener)->max_reauth_ms;
  }
  if (step.kind == security::SaslStep::Kind::kFailure) {
    response.error_code = protocol::to_int(ErrorCode::kSaslAuthenticationFailed);
    response.error_message = step.error;
    note_errors(*request, response);
    request->reply->send_and_close(encode(*request, response));
    return;
  }
  respond(*request, response);
}

void Broker::handle_raw_sasl_token(RequestPtr request, SaslSession& session) {
  const security::SaslStep step = sasl_step(*request, session, request->frame);
  if (step.kind == security::SaslStep::Kind::kFailure) {
    // SaslHandshake v0 has no way to say why: Kafka closes too.
    request->reply->close_connection();
    return;
  }
  protocol::OutputBuffer out;
  uint8_t size[4];
  protocol::store_be32(size, static_cast<uint32_t>(step.response.size()));
  out.append(size, sizeof(size));
  out.append(step.response.data(), step.response.size());
  request->reply->send(std::move(out));
}

}  // namespace eddy::broker
