// The protocol state of one connection to a broker, independent of how bytes
// move: request frames with fresh correlation ids, and the matching of
// response frames to the requests they answer.
//
// This is the part a blocking transport (BrokerConnection, used by the
// tools) and an event-driven one (the forwarder, on the reactor) share:
// give it requests, write the frames it produces, hand it the frames read.
// Kafka brokers answer the requests of a connection in order, so pending
// requests form a FIFO; several may be in flight (pipelining).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>

#include "port/status.h"
#include "protocol/codec.h"
#include "protocol/headers.h"
#include "protocol/output_buffer.h"

namespace eddy::client {

// A request sent and not yet answered.
struct PendingRequest {
  int32_t correlation_id = 0;
  int16_t api_key = 0;
  int16_t api_version = 0;
};

class RequestCodec {
 public:
  explicit RequestCodec(std::optional<std::string> client_id) : client_id_(std::move(client_id)) {}

  // Appends the frame (size prefix, header, body) of `body` at `version` to
  // *out. When expect_response (every request except Produce with acks=0,
  // which Kafka never answers) the request joins the pending FIFO.
  // Non-ok when body holds a value `version` cannot carry (a caller bug);
  // then nothing is queued, but the well-formed frame (with that value
  // dropped) has been appended: discard *out.
  template <typename M>
  Status encode(const M& body, int16_t version, bool expect_response, protocol::OutputBuffer* out,
                PendingRequest* sent = nullptr);

  // Checks that frame (a response without its size prefix) answers the oldest
  // pending request, removes that request, and sets *request and *body_bytes
  // (the response body, viewing frame). Non-ok (kProtocol) when nothing is
  // pending, the header does not parse, or the correlation id differs: the
  // connection must then be closed.
  Status match(std::span<const uint8_t> frame, PendingRequest* request, std::span<const uint8_t>* body_bytes);

  size_t pending() const { return pending_.size(); }
  // Forgets pending requests (the connection was closed).
  void reset() { pending_.clear(); }

 private:
  std::optional<std::string> client_id_;
  int32_t next_correlation_id_ = 1;
  std::deque<PendingRequest> pending_;
};

// Decodes a response body (from RequestCodec::match) as M at the version of
// the request it answers. Records fields view body_bytes.
template <typename M>
Status decode_response(std::span<const uint8_t> body_bytes, const PendingRequest& request, M* out) {
  if (request.api_key != M::kApiKey) {
    return Status::error(Status::Code::kProtocol, std::string("expected a response to ") + M::kName +
                                                    ", the pending request is api key " +
                                                    std::to_string(request.api_key));
  }
  Status s = protocol::decode(body_bytes, request.api_version, out);
  if (!s.ok()) return Status::error(Status::Code::kProtocol, s.message());
  return Status();
}

template <typename M>
Status RequestCodec::encode(const M& body, int16_t version, bool expect_response, protocol::OutputBuffer* out,
                            PendingRequest* sent) {
  PendingRequest request{next_correlation_id_, M::kApiKey, version};
  Status s = protocol::encode_request_frame(body, version, request.correlation_id, client_id_, out);
  if (!s.ok()) return Status::error(Status::Code::kInvalidArgument, s.message());
  next_correlation_id_ = next_correlation_id_ == INT32_MAX ? 1 : next_correlation_id_ + 1;
  if (expect_response) pending_.push_back(request);
  if (sent != nullptr) *sent = request;
  return Status();
}

}  // namespace eddy::client
