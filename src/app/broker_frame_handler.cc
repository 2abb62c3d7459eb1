#include "app/broker_frame_handler.h"

#include <memory>
#include <string>
#include <utility>

#include "app/controller_quorum.h"
#include "broker/broker.h"
#include "broker/reply.h"
#include "broker/request_metrics.h"
#include "port/port.h"

namespace eddy::app {
namespace {

// Adapts the network layer's response slots to the broker's Reply, and
// times the request from its frame to its answer (RequestMetrics slot).
class SlotReply final : public broker::Reply {
 public:
  SlotReply(net::ResponseSlot slot, broker::RequestMetrics* metrics, uint8_t metrics_slot)
      : slot_(std::move(slot)), metrics_(metrics), metrics_slot_(metrics_slot), started_ns_(port::monotonic_nanos()) {}
  void send(protocol::OutputBuffer response) override {
    answered();
    slot_.respond(std::move(response));
  }
  void send_nothing() override {
    answered();
    slot_.respond_nothing();
  }
  void close_connection() override { slot_.close_connection(); }
  void send_and_close(protocol::OutputBuffer response) override {
    answered();
    slot_.respond_and_close(std::move(response));
  }
  void authenticated(const std::string& principal) override { slot_.authenticated(principal); }
  void frame_released() override {
    if (slot_.pending()) slot_.frame_released();
  }
  bool connection_closed() const override { return !slot_.pending() || slot_.connection().closed(); }

 private:
  void answered() { metrics_->note_answered(metrics_slot_, port::monotonic_nanos() - started_ns_); }

  net::ResponseSlot slot_;
  broker::RequestMetrics* metrics_;
  uint8_t metrics_slot_;
  int64_t started_ns_;
};

}  // namespace

void BrokerFrameHandler::on_connection_opened(net::ConnectionContext& connection) {
  if (*broker_ != nullptr && (*broker_)->sasl_listener(connection.listener()) != nullptr) {
    connection.set_max_frame_bytes(sasl_max_receive_bytes_);
  }
}

void BrokerFrameHandler::on_frame(net::ConnectionContext& connection, protocol::FrameBytes frame,
                                  net::ResponseSlot slot) {
  if (quorum_ != nullptr) {
    if (connection.listener() == controller_listener_) {
      quorum_->on_controller_frame(connection, std::move(frame), std::move(slot));
      return;
    }
    const int16_t key = frame.size() >= 2 ? static_cast<int16_t>((frame[0] << 8) | frame[1]) : -1;
    if (key == static_cast<int16_t>(protocol::ApiKey::kDescribeQuorum)) {
      quorum_->on_describe_quorum(connection, std::move(frame), std::move(slot));
      return;
    }
  }
  broker::ClientInfo client{connection.id(), connection.peer(), connection.listener(), connection.principal()};
  broker::RequestMetrics& metrics = (*broker_)->request_metrics();
  // The request header starts with the API key (int16, big-endian).
  const uint8_t metrics_slot =
      frame.size() >= 2 ? metrics.slot_for(static_cast<int16_t>((frame[0] << 8) | frame[1])) : metrics.other_slot();
  metrics.note_request(metrics_slot);
  (*broker_)->handle(client, std::move(frame), std::make_unique<SlotReply>(std::move(slot), &metrics, metrics_slot));
}

void BrokerFrameHandler::on_connection_closed(net::ConnectionContext& connection) {
  if (*broker_ != nullptr) (*broker_)->on_connection_closed(connection.id());
}

}  // namespace eddy::app
