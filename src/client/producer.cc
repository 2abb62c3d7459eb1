#include "client/producer.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>
#include <utility>

#include "client/partitioner.h"
#include "protocol/errors.h"
#include "protocol/generated/produce.h"

namespace eddy::client {

using protocol::ProduceRequest;
using protocol::ProduceResponse;

Producer::Producer(Client* client, ProducerOptions options)
    : client_(client), options_(options), accumulator_({options.batch_bytes, options.compression}) {}

Status Producer::partition_count(std::string_view topic, int32_t* count) {
  auto it = partition_counts_.find(topic);
  if (it != partition_counts_.end()) {
    *count = it->second;
    return Status();
  }
  drain();  // metadata goes over connections that must have nothing pending
  const TopicInfo* info = nullptr;
  Status s = client_->topic_metadata(topic, options_.allow_auto_create, &info);
  // A topic being created answers LEADER_NOT_AVAILABLE first: ask again.
  for (int attempt = 0; attempt < options_.retries && !s.ok() && s.retriable() &&
                        protocol::kafka_error(s) != protocol::ErrorCode::kUnknownTopicOrPartition;
       ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(options_.retry_backoff_ms));
    s = client_->topic_metadata(topic, options_.allow_auto_create, &info);
  }
  if (!s.ok()) return s;
  if (info->partitions.empty()) {
    return Status::error(Status::Code::kNotFound, "topic '" + std::string(topic) + "' has no partitions");
  }
  *count = static_cast<int32_t>(info->partitions.size());
  partition_counts_.emplace(std::string(topic), *count);
  return s;
}

Status Producer::send(std::string_view topic, int32_t partition, std::optional<std::span<const uint8_t>> key,
                      std::optional<std::span<const uint8_t>> value, int64_t timestamp_ms) {
  int32_t count = 0;
  Status s = partition_count(topic, &count);
  if (!s.ok()) return s;
  if (partition >= count) {
    return Status::error(Status::Code::kNotFound, "topic '" + std::string(topic) + "' has no partition " +
                                                    std::to_string(partition) + " (it has " +
                                                    std::to_string(count) + ")");
  }
  if (partition < 0) {
    if (key) {
      partition = partition_for_key(*key, count);
    } else {
      auto sticky = sticky_partition_.find(topic);
      if (sticky == sticky_partition_.end()) {
        sticky = sticky_partition_.emplace(std::string(topic), static_cast<int32_t>(port::monotonic_nanos() % count))
                     .first;
      }
      partition = sticky->second;
    }
  }
  protocol::RecordInput record;
  record.key = key;
  record.value = value;
  record.timestamp = timestamp_ms;
  TopicPartition tp{std::string(topic), partition};
  s = accumulator_.append(tp, record);
  if (!s.ok()) return s;
  if (accumulator_.has_sealed()) {
    // A batch of this partition filled up: null-keyed records move on.
    auto sticky = sticky_partition_.find(topic);
    if (sticky != sticky_partition_.end() && sticky->second == partition) sticky->second = (partition + 1) % count;
    for (auto& b : accumulator_.take_sealed()) {
      bool again = std::any_of(ready_.begin(), ready_.end(), [&](const Queued& q) { return q.batch.tp == b.tp; });
      if (again) dispatch(std::exchange(ready_, {}));
      ready_.push_back({std::move(b), 0});
    }
  }
  return Status();
}

Status Producer::flush() {
  Status s = accumulator_.seal_all();
  std::vector<Queued> batches = std::exchange(ready_, {});
  for (auto& b : accumulator_.take_sealed()) batches.push_back({std::move(b), 0});
  dispatch(std::move(batches));
  drain();
  while (!retry_.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(options_.retry_backoff_ms));
    std::vector<std::string> topics;
    for (const auto& q : retry_) topics.push_back(q.batch.tp.topic);
    // Ignored on purpose: when it fails, the batches find no leader below and
    // are retried or failed there, with their own status.
    (void)client_->refresh_metadata(&topics, false);
    std::vector<Queued> again = std::move(retry_);
    retry_.clear();
    dispatch(std::move(again));
    drain();
  }
  return s;
}

void Producer::report(const SealedBatch& batch, int64_t base_offset, const Status& status) {
  if (status.ok()) {
    records_delivered_ += static_cast<uint64_t>(batch.record_count);
  } else {
    records_failed_ += static_cast<uint64_t>(batch.record_count);
  }
  if (on_delivery_) on_delivery_(DeliveryReport{batch.tp, batch.record_count, base_offset, status});
}

void Producer::retry_or_report(Queued queued, const Status& status) {
  if (status.retriable() && queued.attempts < options_.retries) {
    ++queued.attempts;
    retry_.push_back(std::move(queued));
  } else {
    report(queued.batch, -1, status);
  }
}

void Producer::abandon(BrokerConnection* conn, const Status& why) {
  // Whatever closed the connection, these requests were merely cut off.
  Status lost_with_connection = Status::error(Status::Code::kNetwork, "connection lost: " + why.message());
  for (auto it = in_flight_.begin(); it != in_flight_.end();) {
    if (it->conn != conn) {
      ++it;
      continue;
    }
    std::vector<Queued> lost = std::move(it->batches);
    it = in_flight_.erase(it);
    for (auto& q : lost) {
      std::string tp = q.batch.tp.to_string();
      retry_or_report(std::move(q), lost_with_connection.with_context("produce to " + tp));
    }
  }
}

void Producer::drain() {
  while (!in_flight_.empty()) complete_oldest(in_flight_.front().conn);
}

void Producer::complete_oldest(BrokerConnection* conn) {
  auto it = std::find_if(in_flight_.begin(), in_flight_.end(), [&](const InFlight& f) { return f.conn == conn; });
  if (it == in_flight_.end()) return;
  std::vector<Queued> batches = std::move(it->batches);
  in_flight_.erase(it);
  ProduceResponse response;
  Status s = conn->receive_response(&response,
                                    Deadline::after_ms(options_.broker_timeout_ms + client_->options().request_timeout_ms));
  if (!s.ok()) {
    abandon(conn, s);  // the connection is closed: later requests on it are lost too
    for (auto& q : batches) {
      std::string tp = q.batch.tp.to_string();
      retry_or_report(std::move(q), s.with_context("produce to " + tp));
    }
    return;
  }
  for (auto& q : batches) {
    const TopicPartition& tp = q.batch.tp;
    const ProduceResponse::PartitionProduceResponse* answer = nullptr;
    for (const auto& t : response.responses) {
      if (t.name != tp.topic) continue;
      for (const auto& p : t.partition_responses) {
        if (p.index == tp.partition) answer = &p;
      }
    }
    if (answer == nullptr) {
      report(q.batch, -1,
             Status::error(Status::Code::kProtocol, "the produce response does not mention " + tp.to_string()));
    } else if (answer->error_code != 0) {
      // Built before q is moved: tp refers into q, and the order in which
      // arguments are evaluated is unspecified.
      Status error = protocol::broker_error(answer->error_code, "produce to " + tp.to_string(), answer->error_message);
      retry_or_report(std::move(q), error);
    } else {
      report(q.batch, answer->base_offset, Status());
    }
  }
}

void Producer::dispatch(std::vector<Queued> batches) {
  std::map<int32_t, std::vector<Queued>> by_leader;
  for (auto& q : batches) {
    const TopicPartition& tp = q.batch.tp;
    int32_t leader = client_->metadata().leader_for(tp.topic, tp.partition);
    if (leader < 0) {
      drain();  // metadata goes over connections that must have nothing pending
      std::vector<std::string> topics{tp.topic};
      // Ignored on purpose: a failed refresh leaves no leader, answered just below.
      (void)client_->refresh_metadata(&topics, false);
      leader = client_->metadata().leader_for(tp.topic, tp.partition);
    }
    if (leader < 0) {
      // Kafka's LEADER_NOT_AVAILABLE, retriable: a replicated partition has
      // none while its replicas elect one.
      Status error = Status::kafka(Status::Code::kNotFound, protocol::to_int(protocol::ErrorCode::kLeaderNotAvailable),
                                   true, "no leader known for " + tp.to_string());
      retry_or_report(std::move(q), error);  // error first: tp refers into q
      continue;
    }
    by_leader[leader].push_back(std::move(q));
  }
  for (auto& [leader, queued] : by_leader) {
    // Kafka accepts one batch per partition per request: later batches of
    // the same partition go in later requests, in order (flush() and
    // retries may hand over several).
    while (!queued.empty()) {
      std::vector<Queued> in_request;
      std::vector<Queued> later;
      std::set<TopicPartition> used;
      for (auto& q : queued) (used.insert(q.batch.tp).second ? in_request : later).push_back(std::move(q));
      queued = std::move(later);

      BrokerConnection* conn = nullptr;
      Status s = client_->connection(leader, &conn);
      int16_t version = 0;
      if (s.ok()) s = conn->negotiate<ProduceRequest>(&version);
      if (!s.ok()) {
        for (auto& q : in_request) {
          std::string tp = q.batch.tp.to_string();
          retry_or_report(std::move(q), s.with_context("produce to " + tp));
        }
        continue;
      }
      while (options_.acks != 0 && conn->is_open() &&
             conn->pending_requests() >= static_cast<size_t>(std::max(1, options_.max_in_flight))) {
        complete_oldest(conn);
      }
      ProduceRequest request;
      request.acks = options_.acks;
      request.timeout_ms = options_.broker_timeout_ms;
      for (const auto& q : in_request) {
        const SealedBatch& b = q.batch;
        if (request.topic_data.empty() || request.topic_data.back().name != b.tp.topic) {
          request.topic_data.emplace_back();
          request.topic_data.back().name = b.tp.topic;
        }
        ProduceRequest::PartitionProduceData data;
        data.index = b.tp.partition;
        data.records = protocol::Records{b.bytes, {}};
        request.topic_data.back().partition_data.push_back(std::move(data));
      }
      Deadline deadline = client_->request_deadline();
      s = options_.acks == 0 ? conn->send_only(request, version, deadline)
                             : conn->send_request(request, version, deadline);
      if (!s.ok()) {
        abandon(conn, s);
        for (auto& q : in_request) {
          std::string tp = q.batch.tp.to_string();
          retry_or_report(std::move(q), s.with_context("produce to " + tp));
        }
        continue;
      }
      if (options_.acks == 0) {
        for (const auto& q : in_request) report(q.batch, -1, Status());  // Kafka never answers acks=0
        continue;
      }
      in_flight_.push_back({conn, std::move(in_request)});
    }
  }
}

}  // namespace eddy::client
