// An in-memory broker behind the client's Transport interface: request
// frames written by the client are decoded with the protocol room and
// answered by per-API handlers; a request without a handler gets no answer
// (the client then times out at once, since nothing more will arrive).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "client/transport.h"
#include "protocol/generated/api_versions.h"
#include "protocol/headers.h"

namespace eddy::client::testing {

struct ReceivedRequest {
  int16_t api_key;
  int16_t api_version;
  int32_t correlation_id;
};

class FakeBroker {
 public:
  using RawHandler = std::function<void(const protocol::ParsedRequestHeader&, std::span<const uint8_t> frame,
                                        protocol::OutputBuffer* out)>;

  FakeBroker();

  // The ranges answered to ApiVersions (default: the codec's full ranges).
  std::vector<protocol::ApiVersionsResponse::ApiVersion> apis;

  void on_raw(int16_t api_key, RawHandler handler) { handlers_[api_key] = std::move(handler); }
  template <typename Req, typename Resp>
  void on(std::function<Resp(const Req&, int16_t version)> handler);

  // A transport connected to this broker (for ClientOptions::transport_factory).
  std::unique_ptr<Transport> transport();
  TransportFactory factory() {
    return [this] { return transport(); };
  }

  std::vector<ReceivedRequest> requests;
  std::vector<BrokerAddress> connects;
  bool refuse_connections = false;
  // The most answers written but not yet fully read by the client at once
  // (above 1: the client pipelined requests).
  size_t max_unread_answers = 0;

  // Called by the transport with one request frame (without size prefix).
  void handle(std::span<const uint8_t> frame, protocol::OutputBuffer* out);

  // Sets the ApiVersions range of one API.
  void set_range(int16_t api_key, int16_t min, int16_t max);
  void remove_api(int16_t api_key);

 private:
  std::map<int16_t, RawHandler> handlers_;
};

template <typename Req, typename Resp>
void FakeBroker::on(std::function<Resp(const Req&, int16_t version)> handler) {
  handlers_[Req::kApiKey] = [handler](const protocol::ParsedRequestHeader& h, std::span<const uint8_t> frame,
                                      protocol::OutputBuffer* out) {
    Req request;
    Status s = protocol::decode_request_body(frame, h, &request);
    if (!s.ok()) return;  // no answer: the test sees a timeout
    Resp response = handler(request, h.header.request_api_version);
    s = protocol::encode_response_frame(response, h.header.request_api_version, h.header.correlation_id, out);
    if (!s.ok()) out->clear();  // no answer: the test sees a timeout
  };
}

}  // namespace eddy::client::testing
