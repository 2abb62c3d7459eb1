#include "client/consumer.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "protocol/generated/fetch.h"
#include "protocol/generated/list_offsets.h"

namespace eddy::client {

using protocol::ErrorCode;
using protocol::FetchRequest;
using protocol::FetchResponse;
using protocol::ListOffsetsRequest;
using protocol::ListOffsetsResponse;

Consumer::Consumer(Client* client, ConsumerOptions options)
    : client_(client), options_(options), decoder_(options.max_decompressed_bytes) {}

int64_t Consumer::position(int32_t partition) const {
  auto it = positions_.find(partition);
  return it == positions_.end() ? -1 : it->second;
}

Status Consumer::list_offsets(const std::string& topic, const std::vector<int32_t>& partitions, int64_t timestamp,
                              std::map<int32_t, int64_t>* offsets) {
  std::map<int32_t, std::vector<int32_t>> by_leader;
  for (int32_t p : partitions) {
    int32_t leader = client_->metadata().leader_for(topic, p);
    if (leader < 0) {
      std::vector<std::string> topics{topic};
      Status s = client_->refresh_metadata(&topics, false);
      if (!s.ok()) return s;
      leader = client_->metadata().leader_for(topic, p);
      if (leader < 0) {
        return Status::error(Status::Code::kNotFound,
                             "no leader known for " + topic + "-" + std::to_string(p));
      }
    }
    by_leader[leader].push_back(p);
  }
  for (const auto& [leader, leader_parts] : by_leader) {
    // Not the binding itself: the lambda below captures it, which clang 14
    // (make thread-safety) cannot do with a structured binding.
    const std::vector<int32_t>& parts = leader_parts;
    ListOffsetsResponse response;
    Status s = client_->call<ListOffsetsRequest>(
        leader,
        [&](ListOffsetsRequest& request, int16_t) {
          request.replica_id = -1;  // a consumer, not a follower
          ListOffsetsRequest::ListOffsetsTopic t;
          t.name = topic;
          for (int32_t p : parts) {
            ListOffsetsRequest::ListOffsetsPartition lp;
            lp.partition_index = p;
            lp.timestamp = timestamp;
            t.partitions.push_back(lp);
          }
          request.topics.push_back(std::move(t));
        },
        &response);
    if (!s.ok()) return s;
    for (int32_t p : parts) {
      const ListOffsetsResponse::ListOffsetsPartitionResponse* answer = nullptr;
      for (const auto& t : response.topics) {
        if (t.name != topic) continue;
        for (const auto& rp : t.partitions) {
          if (rp.partition_index == p) answer = &rp;
        }
      }
      std::string tp = topic + "-" + std::to_string(p);
      if (answer == nullptr) {
        return Status::error(Status::Code::kProtocol, "the ListOffsets response does not mention " + tp);
      }
      if (answer->error_code != 0) return protocol::broker_error(answer->error_code, "ListOffsets for " + tp);
      (*offsets)[p] = answer->offset;
    }
  }
  return Status();
}

Status Consumer::assign(const std::string& topic, const std::vector<std::pair<int32_t, int64_t>>& starts) {
  const TopicInfo* info = nullptr;
  Status s = client_->topic_metadata(topic, false, &info);
  if (!s.ok()) return s;
  topic_ = topic;
  positions_.clear();
  std::vector<int32_t> earliest;
  std::vector<int32_t> latest;
  for (const auto& [partition, start] : starts) {
    if (info->partition(partition) == nullptr) {
      return Status::error(Status::Code::kNotFound, "topic '" + topic + "' has no partition " +
                                                      std::to_string(partition) + " (it has " +
                                                      std::to_string(info->partitions.size()) + ")");
    }
    if (start == kEarliestOffset) {
      earliest.push_back(partition);
    } else if (start == kLatestOffset) {
      latest.push_back(partition);
    } else if (start < 0) {
      return Status::error(Status::Code::kInvalidArgument, "invalid start offset " + std::to_string(start));
    }
    positions_[partition] = start;
  }
  std::map<int32_t, int64_t> resolved;
  if (!earliest.empty()) s = list_offsets(topic, earliest, kEarliestOffset, &resolved);
  if (s.ok() && !latest.empty()) s = list_offsets(topic, latest, kLatestOffset, &resolved);
  if (!s.ok()) return s;
  for (const auto& [partition, offset] : resolved) positions_[partition] = offset;
  return s;
}

Status Consumer::reset_position(int32_t partition, OffsetReset how) {
  if (how == OffsetReset::kNone) {
    return protocol::broker_error(protocol::to_int(ErrorCode::kOffsetOutOfRange),
                                  topic_ + "-" + std::to_string(partition) + " at offset " +
                                      std::to_string(position(partition)));
  }
  std::map<int32_t, int64_t> resolved;
  Status s = list_offsets(topic_, {partition}, how == OffsetReset::kEarliest ? kEarliestOffset : kLatestOffset,
                          &resolved);
  if (s.ok()) positions_[partition] = resolved[partition];
  return s;
}

// One poll: the retriable failures met (the first is returned when
// nothing else failed) and whether the callback asked to stop.
struct Consumer::PollRound {
  bool refresh = false;  // some leader is unknown or failed: refresh metadata
  bool stopped = false;
  Status retry_error;
  void note_retriable(const Status& e) {
    if (retry_error.ok()) retry_error = e;
    refresh = true;
  }
};

Status Consumer::poll(Deadline deadline, const ConsumerCallback& on_record, size_t* delivered) {
  *delivered = 0;
  if (positions_.empty()) return Status::error(Status::Code::kInvalidArgument, "no partitions assigned");
  PollRound round;
  std::map<int32_t, std::vector<int32_t>> by_leader;
  for (const auto& [partition, offset] : positions_) {
    int32_t leader = client_->metadata().leader_for(topic_, partition);
    if (leader < 0) {
      round.refresh = true;
    } else {
      by_leader[leader].push_back(partition);
    }
  }
  for (const auto& [leader, partitions] : by_leader) {
    if (round.stopped) break;
    int64_t wait =
        std::min<int64_t>(options_.max_wait_ms, deadline.remaining_ms() / static_cast<int64_t>(by_leader.size()));
    FetchResponse response;
    // The records view this frame: owned here, since resetting a position
    // makes another request (which may reuse the connection's buffer).
    std::vector<uint8_t> frame;
    Status s = fetch_from(leader, partitions, wait, &response, &frame);
    if (s.ok() && response.error_code != 0) {
      s = protocol::broker_error(response.error_code, "Fetch from broker " + std::to_string(leader));
    }
    if (!s.ok()) {
      if (!s.retriable()) return s;
      round.note_retriable(s);
      continue;
    }
    s = deliver(response, on_record, delivered, &round);
    if (!s.ok()) return s;
  }
  if (!round.refresh) return Status();
  return refresh_after(deadline, std::move(round.retry_error));
}

Status Consumer::fetch_from(int32_t leader, const std::vector<int32_t>& partitions, int64_t wait_ms,
                            FetchResponse* response, std::vector<uint8_t>* frame) {
  BrokerConnection* conn = nullptr;
  Status s = client_->connection(leader, &conn);
  int16_t version = 0;
  if (s.ok()) s = conn->negotiate<FetchRequest>(&version);
  if (!s.ok()) return s;
  FetchRequest request;
  request.replica_id = -1;
  request.max_wait_ms = static_cast<int32_t>(wait_ms);
  request.min_bytes = options_.min_bytes;
  request.max_bytes = options_.max_bytes;
  request.isolation_level = 0;  // read uncommitted
  request.session_id = 0;
  request.session_epoch = -1;  // a full fetch, no session
  FetchRequest::FetchTopic t;
  t.topic = topic_;
  for (int32_t p : partitions) {
    FetchRequest::FetchPartition fp;
    fp.partition = p;
    fp.fetch_offset = positions_[p];
    fp.partition_max_bytes = options_.partition_max_bytes;
    t.partitions.push_back(fp);
  }
  request.topics.push_back(std::move(t));
  s = conn->call(request, version, response, Deadline::after_ms(wait_ms + client_->options().request_timeout_ms));
  if (s.ok()) *frame = conn->take_response_frame();
  return s;
}

Status Consumer::deliver(const FetchResponse& response, const ConsumerCallback& on_record, size_t* delivered,
                         PollRound* round) {
  for (const auto& topic_response : response.responses) {
    if (topic_response.topic != topic_) continue;
    for (const auto& p : topic_response.partitions) {
      auto pos = positions_.find(p.partition_index);
      if (pos == positions_.end()) continue;
      if (p.error_code == protocol::to_int(ErrorCode::kOffsetOutOfRange)) {
        Status r = reset_position(p.partition_index, options_.reset);
        if (!r.ok()) return r;
        continue;
      }
      if (p.error_code != 0) {
        Status e = protocol::broker_error(p.error_code, "Fetch " + topic_ + "-" + std::to_string(p.partition_index));
        if (!e.retriable()) return e;
        round->note_retriable(e);
        continue;
      }
      if (round->stopped || !p.records || p.records->bytes.empty()) continue;
      int64_t next = pos->second;
      Status d = decoder_.decode(
          p.records->bytes, pos->second,
          [&](const DecodedRecord& r) {
            ++*delivered;
            bool more = on_record(ConsumerRecord{topic_, p.partition_index, r});
            if (!more) round->stopped = true;
            return more;
          },
          &next);
      pos->second = next;
      if (!d.ok()) return d.with_context(topic_ + "-" + std::to_string(p.partition_index));
    }
  }
  return Status();
}

Status Consumer::refresh_after(Deadline deadline, Status retry_error) {
  if (retry_error.ok()) {
    retry_error = Status::error(Status::Code::kNotFound, "no leader known for some partitions of '" + topic_ + "'");
  }
  std::vector<std::string> topics{topic_};
  Status s = client_->refresh_metadata(&topics, false);
  if (!s.ok() && !s.retriable()) return s;
  const TopicInfo* info = client_->metadata().topic(topic_);
  if (s.ok() && info != nullptr && info->error_code == protocol::to_int(ErrorCode::kUnknownTopicOrPartition)) {
    // Deleted while being read: not worth retrying.
    return Status::error(Status::Code::kNotFound, "topic '" + topic_ + "' no longer exists");
  }
  // Do not spin against a broker that is away.
  std::this_thread::sleep_for(std::chrono::milliseconds(std::min<int64_t>(100, deadline.remaining_ms())));
  return retry_error;
}

}  // namespace eddy::client
