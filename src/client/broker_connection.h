// One connection to one broker, blocking: connect, negotiate versions with
// ApiVersions, then request/response calls with a deadline each.
//
// Built on RequestCodec (correlation) and ApiVersionTable (versions), with
// the bytes moved by a Transport. Any transport failure, timeout or protocol
// mismatch closes the connection (a late answer must never be matched to the
// next request); open() again to reconnect.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "client/api_versions.h"
#include "client/broker_address.h"
#include "client/deadline.h"
#include "client/request_codec.h"
#include "client/sasl_client_config.h"
#include "client/transport.h"
#include "port/status.h"
#include "protocol/errors.h"

namespace eddy::client {

struct ConnectionOptions {
  std::string client_id = "eddy";
  // Sent in ApiVersions v3+ (Kafka requires [a-zA-Z0-9.-]).
  std::string software_name = "eddy";
  std::string software_version;  // empty: this build's version
  // Larger response frames are a protocol error (the connection closes).
  int32_t max_response_bytes = 100 * 1024 * 1024;
  // Set: open() authenticates with SaslHandshake v1 + SaslAuthenticate
  // after ApiVersions (sasl_authenticate.cc); a refusal is kBrokerError
  // carrying SASL_AUTHENTICATION_FAILED (or UNSUPPORTED_SASL_MECHANISM,
  // ILLEGAL_SASL_STATE), not retriable, and closes the connection.
  std::shared_ptr<const SaslClientConfig> sasl;
};

class BrokerConnection {
 public:
  BrokerConnection(std::unique_ptr<Transport> transport, ConnectionOptions options);

  BrokerConnection(const BrokerConnection&) = delete;
  BrokerConnection& operator=(const BrokerConnection&) = delete;

  // Connects, runs the ApiVersions exchange, then SASL when configured.
  Status open(const BrokerAddress& address, Deadline deadline);
  bool is_open() const { return transport_->is_open(); }
  void close();
  // An open connection with no request pending: kNetwork when the broker
  // closed or reset it meanwhile (see Transport::check_idle).
  Status check_idle();
  const BrokerAddress& address() const { return address_; }
  const ApiVersionTable& versions() const { return versions_; }

  // The version of M's API to use with this broker.
  template <typename M>
  Status negotiate(int16_t* version) const {
    return versions_.negotiate(M::kApiKey, version);
  }

  // Sends request at version and waits for the response. Records fields of
  // *response view a buffer owned by this connection that stays valid until
  // the next response is read or take_response_frame().
  // REQUIRES: no pipelined request is pending (kInvalidArgument otherwise).
  template <typename Req, typename Resp>
  Status call(const Req& request, int16_t version, Resp* response, Deadline deadline);
  // Sends a request Kafka does not answer (Produce with acks=0).
  template <typename Req>
  Status send_only(const Req& request, int16_t version, Deadline deadline);

  // Pipelining: send_request() writes a request without waiting;
  // receive_response() reads the answer to the oldest one still pending
  // (brokers answer in order). Resp must be the response type of that
  // request (checked).
  template <typename Req>
  Status send_request(const Req& request, int16_t version, Deadline deadline);
  template <typename Resp>
  Status receive_response(Resp* response, Deadline deadline);
  size_t pending_requests() const { return codec_.pending(); }

  // Moves out the last response frame (which the last response's records
  // view), so that it outlives the next call.
  std::vector<uint8_t> take_response_frame() { return std::move(frame_); }

 private:
  Status send_frame(const protocol::OutputBuffer& out, Deadline deadline);
  // Reads one response frame into frame_ and matches it to the oldest
  // pending request.
  Status receive(PendingRequest* request, std::span<const uint8_t>* body, Deadline deadline);
  Status fail(Status status);
  // SaslHandshake + SaslAuthenticate with options_.sasl (sasl_authenticate.cc).
  Status authenticate(Deadline deadline);
  // One SaslAuthenticate round: sends token, fills *answer with the server's.
  Status sasl_round(std::string_view token, int16_t version, std::string* answer, Deadline deadline);
  // "<message name> v<version> to|from <address>"
  std::string describe(const char* api, int16_t version) const;

  std::unique_ptr<Transport> transport_;
  ConnectionOptions options_;
  RequestCodec codec_;
  ApiVersionTable versions_;
  BrokerAddress address_;
  std::vector<uint8_t> frame_;
};

template <typename Req>
Status BrokerConnection::send_request(const Req& request, int16_t version, Deadline deadline) {
  if (!is_open()) return Status::error(Status::Code::kNetwork, "not connected to " + address_.to_string());
  protocol::OutputBuffer out;
  Status s = codec_.encode(request, version, true, &out);
  if (!s.ok()) return s;
  s = send_frame(out, deadline);
  return s.ok() ? s : s.with_context(describe(Req::kName, version));
}

template <typename Resp>
Status BrokerConnection::receive_response(Resp* response, Deadline deadline) {
  if (!is_open()) return Status::error(Status::Code::kNetwork, "not connected to " + address_.to_string());
  if (codec_.pending() == 0) return Status::error(Status::Code::kInvalidArgument, "no request pending");
  PendingRequest answered;
  std::span<const uint8_t> body;
  Status s = receive(&answered, &body, deadline);
  if (!s.ok()) return s.with_context(std::string(Resp::kName) + " from " + address_.to_string());
  s = decode_response(body, answered, response);
  if (!s.ok()) return fail(s.with_context(describe(Resp::kName, answered.api_version)));
  return Status();
}

template <typename Req, typename Resp>
Status BrokerConnection::call(const Req& request, int16_t version, Resp* response, Deadline deadline) {
  if (codec_.pending() != 0) {
    return Status::error(Status::Code::kInvalidArgument, "connection to " + address_.to_string() +
                                                           " has pipelined requests pending");
  }
  Status s = send_request(request, version, deadline);
  return s.ok() ? receive_response(response, deadline) : s;
}

template <typename Req>
Status BrokerConnection::send_only(const Req& request, int16_t version, Deadline deadline) {
  if (!is_open()) return Status::error(Status::Code::kNetwork, "not connected to " + address_.to_string());
  protocol::OutputBuffer out;
  Status s = codec_.encode(request, version, false, &out);
  if (!s.ok()) return s;
  s = send_frame(out, deadline);
  return s.ok() ? s : s.with_context(describe(Req::kName, version));
}

}  // namespace eddy::client
