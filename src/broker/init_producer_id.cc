// InitProducerId (v0-4). For idempotent producers: a new producer id from
// the meta store's durable allocator (never reused, even after a crash),
// or, v3+ with a producer id and epoch the broker knows (KIP-360), the same
// id with the epoch bumped. With a transactional id: the transaction
// coordinator's answer (txn/coordinator.h), after WRITE on the
// transactional id.
#include <limits>

#include "broker/broker.h"
#include "port/log.h"
#include "port/port.h"
#include "protocol/errors.h"

namespace eddy::broker {

using protocol::ErrorCode;

namespace {

// Kafka allocates a new producer id instead of bumping past this epoch.
constexpr int16_t kMaxBumpableEpoch = std::numeric_limits<int16_t>::max() - 1;

}  // namespace

void Broker::handle_init_producer_id(RequestPtr request) {
  protocol::InitProducerIdRequest body;
  if (!decode(*request, &body)) return;
  auto answer = [this](Request& request, ErrorCode code, int64_t producer_id, int16_t epoch) {
    protocol::InitProducerIdResponse response;
    response.error_code = protocol::to_int(code);
    response.producer_id = code == ErrorCode::kNone ? producer_id : -1;
    response.producer_epoch = code == ErrorCode::kNone ? epoch : int16_t{-1};
    respond(request, response);
  };
  if (body.transactional_id.has_value()) {
    // The coordinator answers when the transition is stored (in a cluster,
    // committed by the controller quorum).
    const ErrorCode refusal = check_transactional_init(*request, body);
    if (refusal != ErrorCode::kNone) return answer(*request, refusal, -1, -1);
    const bool given = request->version() >= 3 && (body.producer_id >= 0 || body.producer_epoch >= 0);
    std::shared_ptr<Request> parked(std::move(request));
    txn_->init_producer_id(*body.transactional_id, body.transaction_timeout_ms, given ? body.producer_id : -1,
                           given ? body.producer_epoch : int16_t{-1}, [parked, answer](const txn::InitResult& r) {
                             ErrorCode code = r.error;
                             if (code == ErrorCode::kProducerFenced && parked->version() < 4) {
                               code = ErrorCode::kInvalidProducerEpoch;
                             }
                             answer(*parked, code, r.producer_id, r.producer_epoch);
                           });
    return;
  }
  protocol::InitProducerIdResponse response;
  response.producer_id = -1;
  response.producer_epoch = -1;
  const ErrorCode code = init_producer_id(*request, body, &response);
  answer(*request, code, response.producer_id, response.producer_epoch);
}

ErrorCode Broker::check_transactional_init(const Request& request, const protocol::InitProducerIdRequest& body) {
  if (!authorized(request, security::AclOperation::kWrite, security::ResourceType::kTransactionalId,
                  *body.transactional_id)) {
    return ErrorCode::kTransactionalIdAuthorizationFailed;
  }
  const bool given = request.version() >= 3 && (body.producer_id >= 0 || body.producer_epoch >= 0);
  if (given && (body.producer_id < 0 || body.producer_epoch < 0)) return ErrorCode::kInvalidRequest;
  return ErrorCode::kNone;
}

ErrorCode Broker::init_producer_id(const Request& request, const protocol::InitProducerIdRequest& body,
                                   protocol::InitProducerIdResponse* response) {
  const int64_t now = port::wall_clock_millis();
  auto fresh_id = [&] { return allocate_producer_id(request, now, response); };
  // Kafka's rule for an idempotent producer: IDEMPOTENT_WRITE on the
  // cluster, or WRITE on some topic (KIP-679).
  if (!authorized_on_cluster(request, security::AclOperation::kIdempotentWrite, true) &&
      !authorized_on_any(request, security::AclOperation::kWrite, security::ResourceType::kTopic)) {
    note_authorization_refusal(request, security::AclOperation::kIdempotentWrite, security::ResourceType::kCluster,
                               security::kClusterResourceName);
    return ErrorCode::kClusterAuthorizationFailed;
  }
  const bool resume = request.version() >= 3 && (body.producer_id >= 0 || body.producer_epoch >= 0);
  if (!resume) return fresh_id();
  if (body.producer_id < 0 || body.producer_epoch < 0) return ErrorCode::kInvalidRequest;  // Kafka: both or neither
  int16_t bumped_from = -1;
  const int16_t current = producer_state_.current_epoch(body.producer_id, &bumped_from);
  // Not an id this broker knows (never handed out, or expired): a fresh
  // one, as Kafka does for a producer without a transactional id.
  if (current < 0) return fresh_id();
  if (body.producer_epoch == bumped_from) {
    // A retry of the bump already made.
    response->producer_id = body.producer_id;
    response->producer_epoch = current;
    return ErrorCode::kNone;
  }
  if (body.producer_epoch < current) {
    return request.version() >= 4 ? ErrorCode::kProducerFenced : ErrorCode::kInvalidProducerEpoch;
  }
  // body.producer_epoch >= current: current is a lower bound after a restart.
  if (body.producer_epoch >= kMaxBumpableEpoch) return fresh_id();
  const int16_t bumped = static_cast<int16_t>(body.producer_epoch + 1);
  producer_state_.set_epoch(body.producer_id, bumped, body.producer_epoch, now);
  response->producer_id = body.producer_id;
  response->producer_epoch = bumped;
  return ErrorCode::kNone;
}

Status Broker::next_producer_id(int64_t* id) {
  if (controller_ == nullptr) return meta_->producer_ids().next(id);
  if (controller_->next_producer_id(id)) return Status();
  return Status::kafka(Status::Code::kBrokerError, protocol::to_int(ErrorCode::kCoordinatorLoadInProgress), true,
                       "no producer id left until the controller gives this node its next block");
}

ErrorCode Broker::allocate_producer_id(const Request& request, int64_t now, protocol::InitProducerIdResponse* response) {
  int64_t id = -1;
  Status s = next_producer_id(&id);
  if (s.code() == Status::Code::kBrokerError) {
    EDDY_LOG_DEBUG("InitProducerId from {}: {}", request.client.peer, s.message());
    return static_cast<ErrorCode>(s.kafka_error_code());
  }
  if (!s.ok()) {
    EDDY_LOG_ERROR("InitProducerId from {}: allocating a producer id: {}", request.client.peer, s.message());
    return ErrorCode::kCoordinatorNotAvailable;
  }
  response->producer_id = id;
  response->producer_epoch = 0;
  producer_state_.set_epoch(id, 0, -1, now);
  return ErrorCode::kNone;
}

}  // namespace eddy::broker
