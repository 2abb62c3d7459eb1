// The broker behind the network layer: frames from connections go to
// Broker::handle, each with a Reply that answers through the request's
// ResponseSlot and times the request (RequestMetrics). eddy serve uses it,
// and so does the live-broker fuzz target (tests/fuzz/fuzz_live_broker.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "net/frame_handler.h"

namespace eddy::broker {
class Broker;
}

namespace eddy::app {

class ControllerQuorum;

class BrokerFrameHandler final : public net::FrameHandler {
 public:
  // *broker: the broker; REQUIRES it is set before the first frame (eddy
  // serve sets it before the reactor runs; opening and closing connections
  // tolerate nullptr). sasl_max_receive_bytes: the frame bound of a
  // connection that has not authenticated yet on a listener that needs SASL
  // (sasl.server.max.receive.size).
  BrokerFrameHandler(broker::Broker** broker, int32_t sasl_max_receive_bytes)
      : broker_(broker), sasl_max_receive_bytes_(sasl_max_receive_bytes) {}

  void on_connection_opened(net::ConnectionContext& connection) override;
  void on_frame(net::ConnectionContext& connection, protocol::FrameBytes frame, net::ResponseSlot slot) override;
  void on_connection_closed(net::ConnectionContext& connection) override;

  // A cluster node: frames of the controller listener go to quorum, and so
  // does DescribeQuorum on any listener. REQUIRES: quorum outlives the
  // handler's use (set before the reactor runs).
  void set_controller_quorum(ControllerQuorum* quorum, std::string controller_listener) {
    quorum_ = quorum;
    controller_listener_ = std::move(controller_listener);
  }

 private:
  broker::Broker** broker_;
  ControllerQuorum* quorum_ = nullptr;
  std::string controller_listener_;
  int32_t sasl_max_receive_bytes_;
};

}  // namespace eddy::app
