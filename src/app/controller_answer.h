// The answer to a request on the controller listener, framed for its
// connection: the response in the request's version with its correlation
// id. A body the version cannot carry is logged (the frame is still sent:
// encode_response_frame keeps it well-formed).
#pragma once

#include "port/log.h"
#include "port/status.h"
#include "protocol/headers.h"
#include "protocol/output_buffer.h"

namespace eddy::app {

template <typename Resp>
protocol::OutputBuffer controller_answer(const Resp& response, const protocol::ParsedRequestHeader& h) {
  protocol::OutputBuffer out;
  Status s = protocol::encode_response_frame(response, h.header.request_api_version, h.header.correlation_id, &out);
  if (!s.ok()) EDDY_LOG_ERROR("controller listener: cannot encode {}: {}", Resp::kName, s.message());
  return out;
}

}  // namespace eddy::app
