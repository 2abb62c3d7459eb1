#include "client/request_codec.h"

namespace eddy::client {

Status RequestCodec::match(std::span<const uint8_t> frame, PendingRequest* request,
                           std::span<const uint8_t>* body_bytes) {
  if (pending_.empty()) {
    return Status::error(Status::Code::kProtocol, "a response arrived while no request was pending");
  }
  const PendingRequest& expected = pending_.front();
  int32_t correlation_id = 0;
  size_t body_offset = 0;
  Status s =
      protocol::parse_response_header(frame, expected.api_key, expected.api_version, &correlation_id, &body_offset);
  if (!s.ok()) return Status::error(Status::Code::kProtocol, "response header: " + s.message());
  if (correlation_id != expected.correlation_id) {
    return Status::error(Status::Code::kProtocol, "response correlation id " + std::to_string(correlation_id) +
                                                    " does not match the oldest pending request's " +
                                                    std::to_string(expected.correlation_id));
  }
  *request = expected;
  pending_.pop_front();
  *body_bytes = frame.subspan(body_offset);
  return Status();
}

}  // namespace eddy::client
