#include "client/uplink_producer.h"

#include <algorithm>

#include "protocol/errors.h"
#include "protocol/generated/messages.h"
#include "protocol/record_batch.h"

namespace eddy::client {

using protocol::ErrorCode;
using protocol::InitProducerIdRequest;
using protocol::InitProducerIdResponse;
using protocol::ProduceRequest;
using protocol::ProduceResponse;

Status UplinkProducer::init_producer_id(int64_t* producer_id, int16_t* producer_epoch) {
  InitProducerIdResponse response;
  Status s = client_->call<InitProducerIdRequest>(
      -1,
      [](InitProducerIdRequest& r, int16_t) {
        r.transactional_id = std::nullopt;
        r.transaction_timeout_ms = -1;
      },
      &response);
  if (!s.ok()) return s.with_context("InitProducerId");
  if (response.error_code != 0) return protocol::broker_error(response.error_code, "InitProducerId");
  *producer_id = response.producer_id;
  *producer_epoch = response.producer_epoch;
  return Status();
}

Status UplinkProducer::send(int32_t node, const std::vector<UplinkBatch>& batches) {
  BrokerConnection* conn = nullptr;
  Status s = client_->connection(node, &conn);
  int16_t version = 0;
  if (s.ok()) s = conn->negotiate<ProduceRequest>(&version);
  if (!s.ok()) return s.with_context("produce to node " + std::to_string(node));
  if (version < 3) {
    return Status::error(Status::Code::kUnsupportedVersion,
                         conn->address().to_string() + " does not speak Produce v3+ (idempotent RecordBatch v2)");
  }
  ProduceRequest request;
  request.transactional_id = std::nullopt;
  request.acks = options_.acks;
  request.timeout_ms = options_.timeout_ms;
  InFlight sent{next_request_++, {}};
  sent.batches.reserve(batches.size());
  for (const UplinkBatch& b : batches) {
    // A producer's batch starts at offset 0: Kafka refuses any other base
    // offset from a client (INVALID_RECORD). Outside the CRC, so free.
    protocol::set_base_offset(b.bytes, 0);
    if (b.producer_id >= 0) {
      protocol::rewrite_producer(b.bytes, b.producer_id, b.producer_epoch, b.base_sequence);
    } else {
      protocol::rewrite_producer(b.bytes, producer_id_, producer_epoch_, b.base_sequence);
    }
    if (request.topic_data.empty() || request.topic_data.back().name != *b.topic) {
      request.topic_data.emplace_back();
      request.topic_data.back().name = *b.topic;
    }
    ProduceRequest::PartitionProduceData data;
    data.index = b.partition;
    data.records = protocol::Records{b.bytes, {}};
    request.topic_data.back().partition_data.push_back(std::move(data));
    sent.batches.push_back({*b.topic, b.partition, b.tag});
  }
  s = conn->send_request(request, version, client_->request_deadline());
  if (!s.ok()) {
    abandon();
    return s;
  }
  in_flight_[node].push_back(std::move(sent));
  return Status();
}

size_t UplinkProducer::in_flight(int32_t node) const {
  auto it = in_flight_.find(node);
  return it == in_flight_.end() ? 0 : it->second.size();
}

std::vector<int32_t> UplinkProducer::busy_nodes() const {
  std::vector<std::pair<uint64_t, int32_t>> oldest;
  for (const auto& [node, queue] : in_flight_) {
    if (!queue.empty()) oldest.emplace_back(queue.front().sequence, node);
  }
  std::sort(oldest.begin(), oldest.end());
  std::vector<int32_t> nodes;
  for (const auto& entry : oldest) nodes.push_back(entry.second);
  return nodes;
}

Status UplinkProducer::receive(int32_t node, std::vector<UplinkOutcome>* outcomes) {
  outcomes->clear();
  auto it = in_flight_.find(node);
  if (it == in_flight_.end() || it->second.empty()) {
    return Status::error(Status::Code::kInvalidArgument, "no produce request in flight to node " + std::to_string(node));
  }
  BrokerConnection* conn = nullptr;
  Status s = client_->connection(node, &conn);
  ProduceResponse response;
  if (s.ok()) s = conn->receive_response(&response, client_->request_deadline());
  if (!s.ok()) {
    abandon();
    return s;
  }
  InFlight request = std::move(it->second.front());
  it->second.pop_front();
  for (const SentBatch& b : request.batches) {
    UplinkOutcome outcome;
    outcome.tag = b.tag;
    outcome.status = Status::error(Status::Code::kProtocol, "the answer does not mention " + b.topic + "-" +
                                                              std::to_string(b.partition));
    for (const auto& topic : response.responses) {
      if (topic.name != b.topic) continue;
      for (const auto& p : topic.partition_responses) {
        if (p.index != b.partition) continue;
        const auto code = static_cast<ErrorCode>(p.error_code);
        if (code == ErrorCode::kNone || code == ErrorCode::kDuplicateSequenceNumber) {
          outcome.status = Status();
          outcome.remote_base_offset = p.base_offset;
        } else {
          outcome.status = protocol::broker_error(p.error_code, "produce to " + b.topic + "-" +
                                                                    std::to_string(b.partition),
                                                  p.error_message);
        }
      }
    }
    outcomes->push_back(std::move(outcome));
  }
  return Status();
}

void UplinkProducer::abandon() {
  in_flight_.clear();
  client_->close();
}

}  // namespace eddy::client
