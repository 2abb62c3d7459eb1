#include "raft/kafka_peer_channel.h"

#include <type_traits>

#include "client/transport.h"
#include "port/port.h"
#include "protocol/errors.h"

namespace eddy::raft {
namespace {

// After a refused or timed-out connect, calls fail at once for this long
// (the core resends on its own timers; a dead peer must not cost a
// connect attempt per message).
constexpr int64_t kReconnectBackoffMs = 200;

}  // namespace

KafkaPeerChannel::KafkaPeerChannel(KafkaPeerOptions options) : options_(std::move(options)) {}

void KafkaPeerChannel::interrupt() {
  interrupted_ = true;
  std::lock_guard<std::mutex> lock(mutex_);
  if (transport_ != nullptr) transport_->interrupt();
}

Status KafkaPeerChannel::ensure_open(client::Deadline deadline) {
  if (connection_ && connection_->is_open()) return Status();
  if (port::monotonic_millis() < next_connect_ms_) {
    return Status::network("node at " + options_.address.to_string() + " was unreachable moments ago");
  }
  std::unique_ptr<client::Transport> transport = client::make_tcp_transport();
  client::ConnectionOptions copts;
  copts.client_id = options_.client_id;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (interrupted_) return Status::network("stopping");
    transport_ = transport.get();
    connection_ = std::make_unique<client::BrokerConnection>(std::move(transport), copts);
  }
  Status s = connection_->open(options_.address, deadline);
  if (!s.ok()) next_connect_ms_ = port::monotonic_millis() + kReconnectBackoffMs;
  return s;
}

template <typename Req, typename Resp>
Status KafkaPeerChannel::exchange(const Req& request, int16_t version, Resp* response, client::Deadline deadline) {
  if (Status s = ensure_open(deadline); !s.ok()) return s;
  Status s = connection_->call(request, version, response, deadline);
  if (!s.ok()) connection_->close();
  return s;
}

Status KafkaPeerChannel::call(const GroupAddress& group, const Message& request, Payload* response, bool* answered) {
  *answered = false;
  if (interrupted_) return Status::network("stopping");
  const client::Deadline deadline = client::Deadline::after_ms(options_.request_timeout_ms);
  // Kafka's request, its answer, the core's answer: one RPC per request type.
  auto rpc = [&](const auto& kafka_request, int16_t version, auto* kafka_response, auto* core_response,
                 auto&& convert) -> Status {
    Status s = exchange(kafka_request, version, kafka_response, deadline);
    if (s.ok()) s = convert(*kafka_response, core_response);
    if (s.ok()) *answered = true;
    return s;
  };
  return std::visit(
      [&](const auto& req) -> Status {
        using T = std::decay_t<decltype(req)>;
        if constexpr (std::is_same_v<T, VoteRequest>) {
          protocol::VoteResponse kafka;
          VoteResponse core;
          Status s = rpc(to_kafka(req, group, request.to), kVoteVersion, &kafka, &core,
                         [&](const auto& k, auto* c) { return from_kafka(k, group, c); });
          if (s.ok()) *response = core;
          return s;
        } else if constexpr (std::is_same_v<T, BeginQuorumEpochRequest>) {
          protocol::BeginQuorumEpochResponse kafka;
          BeginQuorumEpochResponse core;
          Status s = rpc(to_kafka(req, group, request.to), kBeginQuorumEpochVersion, &kafka, &core,
                         [&](const auto& k, auto* c) { return from_kafka(k, group, c); });
          if (s.ok()) *response = core;
          return s;
        } else if constexpr (std::is_same_v<T, EndQuorumEpochRequest>) {
          protocol::EndQuorumEpochResponse kafka;
          EndQuorumEpochAck ack;
          Status s = rpc(to_kafka(req, group), kEndQuorumEpochVersion, &kafka, &ack,
                         [&](const auto& k, auto* c) { return from_kafka(k, group, c); });
          *answered = false;  // the core has no answer to an EndQuorumEpoch
          return s;
        } else if constexpr (std::is_same_v<T, FetchRequest>) {
          protocol::FetchResponse kafka;
          FetchResponse core;
          FetchLimits limits;
          limits.max_wait_ms = 0;  // the core polls on its own timer (fetch_retry_ms)
          limits.max_bytes = options_.fetch_max_bytes;
          Status s = rpc(to_kafka(req, group, limits), kFetchVersion, &kafka, &core,
                         [&](const auto& k, auto* c) { return from_kafka(k, group, req.fetch_offset, c); });
          if (s.ok()) *response = std::move(core);
          return s;
        } else if constexpr (std::is_same_v<T, FetchSnapshotRequest>) {
          protocol::FetchSnapshotResponse kafka;
          FetchSnapshotResponse core;
          Status s = rpc(to_kafka(req, group, options_.fetch_max_bytes), kFetchSnapshotVersion, &kafka, &core,
                         [&](const auto& k, auto* c) { return from_kafka(k, group, c); });
          if (s.ok()) *response = std::move(core);
          return s;
        } else {
          return Status::invalid_argument("raft: not a request");
        }
      },
      request.payload);
}

Status KafkaPeerChannel::fetch(const std::vector<GroupFetch>& fetches, int32_t max_wait_ms,
                               std::vector<std::optional<Payload>>* answers) {
  answers->assign(fetches.size(), std::nullopt);
  if (interrupted_) return Status::network("stopping");
  if (fetches.empty()) return Status();
  const client::Deadline deadline = client::Deadline::after_ms(options_.request_timeout_ms + max_wait_ms);
  FetchLimits limits;
  limits.max_wait_ms = max_wait_ms;
  limits.max_bytes = options_.fetch_max_bytes;
  protocol::FetchRequest request = to_kafka_fetches(fetches, limits);
  request.max_bytes = options_.fetch_max_bytes;  // the whole answer's bound, not each partition's only
  protocol::FetchResponse response;
  Status s = exchange(request, kFetchVersion, &response, deadline);
  if (!s.ok()) return s;
  if (response.error_code != 0) return protocol::broker_error(response.error_code, "raft: FetchResponse");
  for (size_t i = 0; i < fetches.size(); ++i) {
    const GroupFetch& f = fetches[i];
    protocol::FetchResponse one;
    if (!single_fetch_response(response, f.group, &one)) continue;
    FetchResponse core;
    const Offset base = std::get<FetchRequest>(f.request.payload).fetch_offset;
    // A group's unusable answer is dropped alone: its core resends.
    if (from_kafka(one, f.group, base, &core).ok()) (*answers)[i] = std::move(core);
  }
  return Status();
}

}  // namespace eddy::raft
