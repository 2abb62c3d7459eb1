// What a cluster's controller leader answers for the other nodes on its
// controller listener: Envelope (a client request a follower's broker
// forwarded), BrokerRegistration (a node's client endpoints) and
// AllocateProducerIds (a node's next block of producer ids).
#include <algorithm>
#include <cstdio>
#include <memory>

#include "app/controller_answer.h"
#include "app/controller_quorum.h"
#include "broker/controller_records.h"
#include "port/log.h"
#include "protocol/errors.h"
#include "protocol/generated/allocate_producer_ids.h"
#include "protocol/generated/broker_registration.h"
#include "protocol/generated/envelope.h"

namespace eddy::app {
namespace {

using protocol::ApiKey;
using protocol::ErrorCode;
using protocol::to_int;


protocol::OutputBuffer envelope_error(const protocol::ParsedRequestHeader& h, ErrorCode code) {
  protocol::EnvelopeResponse response;
  response.error_code = to_int(code);
  response.response_data.reset();
  return controller_answer(response, h);
}

// The requests a follower's broker forwards (controller_client.h).
bool forwardable(int16_t api_key) {
  switch (static_cast<ApiKey>(api_key)) {
    case ApiKey::kCreateTopics:
    case ApiKey::kDeleteTopics:
    case ApiKey::kCreatePartitions:
    case ApiKey::kIncrementalAlterConfigs:
    case ApiKey::kAlterConfigs:
      return true;
    default:
      return false;
  }
}

// ClientHostAddress: 4 or 16 address bytes, as Kafka's brokers send.
std::string host_of(const std::vector<uint8_t>& address) {
  char text[64] = "unknown";
  if (address.size() == 4) {
    std::snprintf(text, sizeof(text), "%u.%u.%u.%u", address[0], address[1], address[2], address[3]);
  } else if (address.size() == 16) {
    std::string v6;
    for (size_t i = 0; i < 16; i += 2) {
      char group[8];
      std::snprintf(group, sizeof(group), "%s%x", i == 0 ? "" : ":", (address[i] << 8) | address[i + 1]);
      v6 += group;
    }
    return v6;
  }
  return text;
}

// Answers the forwarded request inside an EnvelopeResponse.
class EnvelopeReply final : public broker::Reply {
 public:
  EnvelopeReply(net::ResponseSlot slot, protocol::ParsedRequestHeader h) : slot_(std::move(slot)), h_(std::move(h)) {}
  void send(protocol::OutputBuffer response) override {
    if (response.has_file_regions() || response.size() < 4) {
      slot_.respond(envelope_error(h_, ErrorCode::kUnknownServerError));
      return;
    }
    protocol::EnvelopeResponse envelope;
    envelope.response_data.emplace(response.memory() + 4, response.memory() + response.memory_size());
    slot_.respond(controller_answer(envelope, h_));
  }
  void send_nothing() override { slot_.respond(envelope_error(h_, ErrorCode::kInvalidRequest)); }
  void close_connection() override { slot_.respond(envelope_error(h_, ErrorCode::kInvalidRequest)); }
  void send_and_close(protocol::OutputBuffer response) override { send(std::move(response)); }
  void authenticated(const std::string&) override {}
  bool connection_closed() const override { return !slot_.pending() || slot_.connection().closed(); }

 private:
  net::ResponseSlot slot_;
  protocol::ParsedRequestHeader h_;
};

}  // namespace

void ControllerQuorum::handle_envelope(net::ConnectionContext& connection, const protocol::FrameBytes& frame,
                                       const protocol::ParsedRequestHeader& h, net::ResponseSlot slot) {
  protocol::EnvelopeRequest req;
  if (Status s = protocol::decode_request_body(frame, h, &req); !s.ok()) {
    EDDY_LOG_WARN("controller listener: closing {}: {}", connection.peer(), s.message());
    slot.close_connection();
    return;
  }
  if (!runtime_->leadership().is_leader || !envelope_handler_ || stopped_) {
    slot.respond(envelope_error(h, ErrorCode::kNotController));
    return;
  }
  const std::string_view magic = kNodeRecordsMagic;
  if (req.request_data.size() >= magic.size() &&
      std::equal(magic.begin(), magic.end(), req.request_data.begin(),
                 [](char a, uint8_t b) { return static_cast<uint8_t>(a) == b; })) {
    if (!node_record_handler_) {
      slot.respond(envelope_error(h, ErrorCode::kInvalidRequest));
      return;
    }
    const uint64_t ticket = park(std::move(slot));
    std::shared_ptr<bool> alive = alive_;
    node_record_handler_(std::string(req.request_data.begin() + static_cast<std::ptrdiff_t>(magic.size()),
                                     req.request_data.end()),
                         [this, alive, ticket, h](ErrorCode code) {
                           if (!*alive) return;
                           auto it = parked_.find(ticket);
                           if (it == parked_.end()) return;
                           net::ResponseSlot parked = std::move(it->second);
                           parked_.erase(it);
                           parked.respond(envelope_error(h, code));
                         });
    return;
  }
  protocol::FrameBytes inner(req.request_data.begin(), req.request_data.end());
  protocol::ParsedRequestHeader inner_header;
  if (Status s = protocol::parse_request_header(inner, &inner_header);
      !s.ok() || !forwardable(inner_header.header.request_api_key)) {
    EDDY_LOG_WARN("controller listener: Envelope from {} refused: {}", connection.peer(),
                  s.ok() ? std::string(protocol::api_name(inner_header.header.request_api_key)) + " is not forwarded"
                         : s.message());
    slot.respond(envelope_error(h, ErrorCode::kInvalidRequest));
    return;
  }
  broker::ClientInfo client;
  client.connection_id = (uint64_t{1} << 63) | next_envelope_connection_++;  // never a real connection's id
  client.peer = host_of(req.client_host_address) + " (via " + connection.peer() + ")";
  client.listener = config_.listener;
  if (req.request_principal.has_value() && !req.request_principal->empty()) {
    client.principal.assign(req.request_principal->begin(), req.request_principal->end());
  }
  envelope_handler_(client, std::move(inner), std::make_unique<EnvelopeReply>(std::move(slot), h));
}

void ControllerQuorum::handle_broker_registration(net::ConnectionContext& connection, const protocol::FrameBytes& frame,
                                                  const protocol::ParsedRequestHeader& h, net::ResponseSlot slot) {
  protocol::BrokerRegistrationRequest req;
  if (Status s = protocol::decode_request_body(frame, h, &req); !s.ok()) {
    EDDY_LOG_WARN("controller listener: closing {}: {}", connection.peer(), s.message());
    slot.close_connection();
    return;
  }
  protocol::BrokerRegistrationResponse refusal;
  const bool voter = std::any_of(config_.voters.begin(), config_.voters.end(),
                                 [&](const raft::QuorumVoter& v) { return v.id == req.broker_id; });
  if (!runtime_->leadership().is_leader || stopped_) {
    refusal.error_code = to_int(ErrorCode::kNotController);
  } else if (!voter) {
    // Every node of an Eddy cluster is a voter: there are no broker-only nodes.
    refusal.error_code = to_int(ErrorCode::kInvalidRegistration);
  }
  if (refusal.error_code != 0) {
    slot.respond(controller_answer(refusal, h));
    return;
  }
  protocol::RegisterBrokerRecord record;
  record.node_id = req.broker_id;
  record.rack = req.rack;
  for (const auto& l : req.listeners) record.endpoints.push_back({l.name, l.host, l.port, l.security_protocol, {}});
  const uint64_t ticket = park(std::move(slot));
  propose(broker::encode_controller_record(record), [this, ticket, h](const Status& s, raft::Offset offset) {
    protocol::BrokerRegistrationResponse response;
    if (s.ok()) {
      response.broker_epoch = offset;
    } else {
      response.error_code = to_int(s.code() == Status::Code::kTimeout ? ErrorCode::kRequestTimedOut
                                                                      : ErrorCode::kNotController);
    }
    auto it = parked_.find(ticket);
    if (it == parked_.end()) return;
    net::ResponseSlot parked = std::move(it->second);
    parked_.erase(it);
    parked.respond(controller_answer(response, h));
  });
}

}  // namespace eddy::app

namespace eddy::app {

void ControllerQuorum::handle_allocate_producer_ids(net::ConnectionContext& connection,
                                                    const protocol::FrameBytes& frame,
                                                    const protocol::ParsedRequestHeader& h, net::ResponseSlot slot) {
  protocol::AllocateProducerIdsRequest req;
  if (Status s = protocol::decode_request_body(frame, h, &req); !s.ok()) {
    EDDY_LOG_WARN("controller listener: closing {}: {}", connection.peer(), s.message());
    slot.close_connection();
    return;
  }
  protocol::AllocateProducerIdsResponse refusal;
  const bool voter = std::any_of(config_.voters.begin(), config_.voters.end(),
                                 [&](const raft::QuorumVoter& v) { return v.id == req.broker_id; });
  if (!runtime_->leadership().is_leader || stopped_ || !producer_ids_handler_) {
    refusal.error_code = to_int(ErrorCode::kNotController);
  } else if (!voter) {
    refusal.error_code = to_int(ErrorCode::kBrokerIdNotRegistered);
  }
  if (refusal.error_code != 0) {
    refusal.producer_id_start = -1;
    slot.respond(controller_answer(refusal, h));
    return;
  }
  const uint64_t ticket = park(std::move(slot));
  std::shared_ptr<bool> alive = alive_;
  producer_ids_handler_(req.broker_id, [this, alive, ticket, h](ErrorCode code, int64_t start, int32_t len) {
    if (!*alive) return;
    auto it = parked_.find(ticket);
    if (it == parked_.end()) return;
    net::ResponseSlot parked = std::move(it->second);
    parked_.erase(it);
    protocol::AllocateProducerIdsResponse response;
    response.error_code = to_int(code);
    response.producer_id_start = code == ErrorCode::kNone ? start : -1;
    response.producer_id_len = code == ErrorCode::kNone ? len : 0;
    parked.respond(controller_answer(response, h));
  });
}

}  // namespace eddy::app
