#include "app/controller_quorum.h"

#include <algorithm>
#include <utility>

#include "app/controller_answer.h"
#include "app/partition_groups.h"

#include "port/log.h"
#include "port/port.h"
#include "protocol/errors.h"
#include "protocol/generated/api_versions.h"
#include "protocol/generated/describe_cluster.h"
#include "protocol/generated/describe_quorum.h"
#include "protocol/headers.h"
#include "raft/kafka_describe_quorum.h"
#include "raft/kafka_peer_channel.h"
#include "raft/kafka_wire.h"
#include "raft/file_snapshot_store.h"
#include "raft/segment_log.h"
#include "raft/quorum_state_store.h"

namespace eddy::app {
namespace {

using protocol::ApiKey;
using protocol::ErrorCode;
using protocol::to_int;

struct ControllerApi {
  ApiKey key;
  int16_t min_version;
  int16_t max_version;
};

// What the controller listener answers (Kafka's controller APIs that Eddy
// implements). Fetch from v13: topics by id, as KRaft fetches.
constexpr ControllerApi kControllerApis[] = {
    {ApiKey::kFetch, 13, raft::kFetchVersion},
    {ApiKey::kApiVersions, 0, 3},
    {ApiKey::kDescribeCluster, 0, 1},
    {ApiKey::kVote, 0, raft::kVoteVersion},
    {ApiKey::kBeginQuorumEpoch, 0, raft::kBeginQuorumEpochVersion},
    {ApiKey::kEndQuorumEpoch, 0, raft::kEndQuorumEpochVersion},
    {ApiKey::kDescribeQuorum, 0, 2},
    {ApiKey::kFetchSnapshot, 0, raft::kFetchSnapshotVersion},
    {ApiKey::kEnvelope, 0, 0},
    {ApiKey::kBrokerRegistration, 0, 4},
    {ApiKey::kAllocateProducerIds, 0, 0},
    {ApiKey::kWriteTxnMarkers, 1, 1},
};

const ControllerApi* find_controller_api(int16_t key) {
  for (const ControllerApi& api : kControllerApis) {
    if (static_cast<int16_t>(api.key) == key) return &api;
  }
  return nullptr;
}

// On shutdown a leader resigns (EndQuorumEpoch) and waits this long for the
// others to be told, so that they elect a successor at once.
constexpr int64_t kResignGraceMs = 500;

// Without a leader for this long, a recovering node says why it may be
// waiting forever (a new cluster started without eddy.quorum.bootstrap).
constexpr int64_t kLeaderlessHintMs = 15000;

// Kafka's DescribeCluster endpoint types (KIP-919).
constexpr int8_t kEndpointTypeController = 2;

// The controller group as its RPCs name it. The cluster id is left empty
// (every node's eddy.db holds its own until the controller log carries a
// shared one): voters accept each other by their group alone.
raft::GroupAddress controller_group() { return raft::GroupAddress{}; }


protocol::OutputBuffer api_versions_answer(const protocol::ParsedRequestHeader& h) {
  protocol::ApiVersionsResponse response;
  for (const ControllerApi& api : kControllerApis) {
    protocol::ApiVersionsResponse::ApiVersion v;
    v.api_key = static_cast<int16_t>(api.key);
    v.min_version = api.min_version;
    v.max_version = api.max_version;
    response.api_keys.push_back(v);
  }
  int16_t version = h.header.request_api_version;
  if (version > 3) {
    // KIP-511: version 0 and UNSUPPORTED_VERSION, so that the client retries with one we speak.
    response.error_code = to_int(ErrorCode::kUnsupportedVersion);
    version = 0;
  }
  protocol::OutputBuffer out;
  Status s = protocol::encode_response_frame(response, version, h.header.correlation_id, &out);
  if (!s.ok()) EDDY_LOG_ERROR("raft: cannot encode ApiVersionsResponse: {}", s.message());
  return out;
}

// The controller log's segment files: small (it holds metadata records);
// no retention: the log starts at the latest snapshot (ClusterController
// takes them), and the segments below it are recycled.
storage::LogConfig controller_log_config() {
  storage::LogConfig config;
  config.segment_bytes = 1 << 20;
  config.retention_bytes = storage::kNoLimit;
  config.retention_ms = storage::kNoLimit;
  return config;
}

// The log (dir/__cluster_metadata-0) made to start at the latest snapshot
// of *snapshots (dir/snapshots).
Status open_controller_log(const QuorumConfig& config, const std::string& dir, storage::Flusher* flusher,
                           std::unique_ptr<raft::FileSnapshotStore>* snapshots,
                           std::unique_ptr<raft::SegmentLog>* log) {
  Status s = raft::FileSnapshotStore::open(dir + "/snapshots", snapshots);
  if (!s.ok()) return s;
  const std::string log_dir = dir + "/__cluster_metadata-0";
  raft::SegmentLogOptions options;
  options.local_id = config.node_id;
  for (const raft::QuorumVoter& v : config.voters) options.voters.push_back(v.id);
  s = raft::SegmentLog::open(log_dir, controller_log_config(), flusher, options, (*snapshots)->latest(), log);
  return s.ok() ? Status() : s.with_context(log_dir);
}

}  // namespace

ControllerQuorum::ControllerQuorum(QuorumConfig config, std::string cluster_id, port::Executor* reactor)
    : config_(std::move(config)), cluster_id_(std::move(cluster_id)), reactor_(reactor) {}

Status ControllerQuorum::open(const QuorumConfig& config, const std::string& data_dir, std::string cluster_id,
                              raft::Offset committed_from, port::Executor* reactor, storage::Flusher* flusher,
                              std::unique_ptr<ControllerQuorum>* out) {
  std::unique_ptr<ControllerQuorum> q(new ControllerQuorum(config, std::move(cluster_id), reactor));
  const std::string dir = data_dir + "/controller";
  if (std::error_code ec = port::make_directories(dir); ec) return Status::from_error_code(ec, dir);
  std::unique_ptr<raft::FileSnapshotStore> snapshots;
  std::unique_ptr<raft::SegmentLog> raft_log;
  if (Status s = open_controller_log(config, dir, flusher, &snapshots, &raft_log); !s.ok()) return s;
  q->log_ = raft_log.get();
  raft::QuorumRuntimeOptions options;
  options.replica.id = config.node_id;
  for (const raft::QuorumVoter& v : config.voters) options.replica.voters.push_back(v.id);
  options.replica.election_timeout_ms = config.election_timeout_ms;
  options.replica.fetch_timeout_ms = config.fetch_timeout_ms;
  // Long poll (QuorumRuntime::hold_fetch_ms): the leader holds a
  // follower's Fetch with nothing new for at most a fifth of the fetch
  // timeout (and well within the call's deadline), so that neither side's
  // check-quorum ever sees silence; a follower asks again at once after
  // every answer. A change committed then waits for a follower's fsync and
  // a round trip, not for its next poll (50 ms before).
  options.hold_fetch_ms = std::min<int64_t>({400, config.fetch_timeout_ms / 5, config.request_timeout_ms / 4});
  options.replica.fetch_retry_ms = options.hold_fetch_ms > 0 ? 0 : 50;
  options.replica.fetch_resend_ms = options.hold_fetch_ms > 0 ? std::min<int64_t>(1000, config.fetch_timeout_ms / 2) : 0;
  options.replica.bootstrap = config.bootstrap;
  options.committed_from = committed_from;
  ControllerQuorum* raw = q.get();
  // Group thread: each committed entry goes to the reactor, in order.
  options.on_committed = [raw](raft::Offset offset, const raft::Entry& entry) {
    raw->post([raw, offset, entry] {
      if (raw->committed_handler_) raw->committed_handler_(offset, entry);
    });
  };
  options.on_snapshot = [raw](raft::SnapshotId id, std::string bytes) {
    raw->post([raw, id, bytes = std::move(bytes)] {
      if (raw->snapshot_handler_) raw->snapshot_handler_(id, bytes);
    });
  };
  auto channels = [config](raft::NodeId peer) -> std::unique_ptr<raft::PeerChannel> {
    for (const raft::QuorumVoter& v : config.voters) {
      if (v.id != peer) continue;
      raft::KafkaPeerOptions o;
      o.address = v.address;
      o.request_timeout_ms = config.request_timeout_ms;
      o.client_id = "eddy-raft-" + std::to_string(config.node_id);
      return std::make_unique<raft::KafkaPeerChannel>(o);
    }
    return nullptr;
  };
  Status s = raft::QuorumRuntime::open(options, std::move(raft_log), std::move(snapshots),
                                       std::make_unique<raft::FileQuorumStateStore>(dir), channels, &q->runtime_);
  if (!s.ok()) return s.with_context("controller quorum in " + dir);
  q->forwarder_ = std::make_unique<LeaderForwarder>(config.voters, config.request_timeout_ms,
                                                    "eddy-forward-" + std::to_string(config.node_id));
  *out = std::move(q);
  return Status();
}

ControllerQuorum::~ControllerQuorum() { stop(); }

void ControllerQuorum::start() {
  std::string voters;
  for (const raft::QuorumVoter& v : config_.voters) {
    voters += (voters.empty() ? "" : ",") + std::to_string(v.id) + "@" + v.address.to_string();
  }
  EDDY_LOG_INFO("controller quorum: node {} of {}", config_.node_id, voters);
  runtime_->start();
  forwarder_->start();
  schedule_leaderless_hint();
}

void ControllerQuorum::schedule_leaderless_hint() {
  std::shared_ptr<bool> alive = alive_;
  reactor_->schedule_after(kLeaderlessHintMs, [this, alive] {
    if (!*alive) return;
    const raft::QuorumView now = runtime_->view();
    if (now.leader_id == raft::kNoNode && now.recovering) {
      // Every voter of a new cluster started without eddy.quorum.bootstrap
      // waits for a leader that none of them may become.
      EDDY_LOG_WARN("controller quorum: no leader after {} s and this node is recovering (it found no Raft state "
                    "in its data directory): on the first start of a new cluster start every node once with "
                    "eddy.quorum.bootstrap=true; a node that lost its disk waits for the others' leader",
                    kLeaderlessHintMs / 1000);
    }
    if (now.leader_id == raft::kNoNode) schedule_leaderless_hint();
  });
}

void ControllerQuorum::stop() {
  if (stopped_) return;
  stopped_ = true;
  *alive_ = false;
  forwarder_->stop();
  for (auto& [node, channel] : node_channels_) channel->stop();
  runtime_->stop(kResignGraceMs);
  // Raft requests still waiting: their connections close (the peer retries
  // elsewhere or later).
  for (auto& [ticket, slot] : parked_) slot.close_connection();
  parked_.clear();
}

Status ControllerQuorum::close() {
  stop();
  return log_ ? log_->close() : Status();
}

void ControllerQuorum::post(std::function<void()> f) {
  std::shared_ptr<bool> alive = alive_;
  reactor_->post([alive, f = std::move(f)] {
    if (*alive) f();
  });
}

void ControllerQuorum::propose(std::string payload, std::function<void(const Status&, raft::Offset)> done) {
  runtime_->propose(std::move(payload), [this, done = std::move(done)](const Status& s, raft::Offset offset) {
    post([done, s, offset] { done(s, offset); });
  });
}

uint64_t ControllerQuorum::park(net::ResponseSlot slot) {
  const uint64_t ticket = next_ticket_++;
  parked_.emplace(ticket, std::move(slot));
  return ticket;
}

void ControllerQuorum::answer_later(uint64_t ticket, protocol::OutputBuffer response) {
  std::shared_ptr<bool> alive = alive_;
  reactor_->post([this, alive, ticket, response = std::move(response)]() mutable {
    if (!*alive) return;  // stopped: parked_ is gone with *this or cleared
    auto it = parked_.find(ticket);
    if (it == parked_.end()) return;
    net::ResponseSlot slot = std::move(it->second);
    parked_.erase(it);
    slot.respond(std::move(response));
  });
}

void ControllerQuorum::on_controller_frame(net::ConnectionContext& connection, protocol::FrameBytes frame,
                                           net::ResponseSlot slot) {
  protocol::ParsedRequestHeader h;
  if (Status s = protocol::parse_request_header(frame, &h); !s.ok()) {
    EDDY_LOG_WARN("controller listener: closing {}: {}", connection.peer(), s.message());
    slot.close_connection();
    return;
  }
  const int16_t key = h.header.request_api_key;
  const ControllerApi* api = find_controller_api(key);
  if (api != nullptr && api->key == ApiKey::kApiVersions) {
    slot.respond(api_versions_answer(h));
    return;
  }
  const int16_t version = h.header.request_api_version;
  if (api == nullptr || version < api->min_version || version > api->max_version) {
    EDDY_LOG_WARN("controller listener: closing {}: {} v{} is not a controller request (clients belong on "
                  "another listener)",
                  connection.peer(), protocol::api_name(key), version);
    slot.close_connection();
    return;
  }
  if (api->key == ApiKey::kDescribeQuorum) {
    describe_quorum_frame(connection, std::move(frame), std::move(slot), /*may_forward=*/false);
  } else if (api->key == ApiKey::kDescribeCluster) {
    answer_describe_cluster(connection, frame, h, std::move(slot));
  } else if (api->key == ApiKey::kEnvelope) {
    handle_envelope(connection, frame, h, std::move(slot));
  } else if (api->key == ApiKey::kBrokerRegistration) {
    handle_broker_registration(connection, frame, h, std::move(slot));
  } else if (api->key == ApiKey::kAllocateProducerIds) {
    handle_allocate_producer_ids(connection, frame, h, std::move(slot));
  } else if (api->key == ApiKey::kWriteTxnMarkers) {
    handle_write_txn_markers(connection, frame, h, std::move(slot));
  } else if (partition_groups_ != nullptr && !stopped_ && PartitionGroups::names_partition_group(frame, h)) {
    partition_groups_->on_frame(connection, frame, h, std::move(slot));
  } else {
    handle_raft_request(connection, frame, h, std::move(slot));
  }
}

bool ControllerQuorum::decode_raft_request(net::ConnectionContext& connection, const protocol::FrameBytes& frame,
                                           const protocol::ParsedRequestHeader& h, raft::Message* out,
                                           protocol::OutputBuffer* refusal) {
  const raft::GroupAddress group = controller_group();
  // Decodes Kafka's request, converts it; a refusal is answered with R.
  auto take = [&](auto kafka_request, auto core_request, auto response_type, auto&& sender) -> bool {
    using R = decltype(response_type);
    if (Status s = protocol::decode_request_body(frame, h, &kafka_request); !s.ok()) {
      EDDY_LOG_WARN("controller listener: closing {}: {}", connection.peer(), s.message());
      return false;
    }
    Status s;
    if constexpr (requires { raft::from_kafka(kafka_request, group, config_.node_id, &core_request); }) {
      s = raft::from_kafka(kafka_request, group, config_.node_id, &core_request);
    } else {
      s = raft::from_kafka(kafka_request, group, &core_request);
    }
    if (!s.ok()) {
      EDDY_LOG_DEBUG("controller listener: {} from {} refused: {}", protocol::api_name(h.header.request_api_key),
                     connection.peer(), s.message());
      *refusal = controller_answer(raft::refusal_response<R>(s), h);
      return true;
    }
    out->from = sender(core_request);
    out->payload = core_request;
    return true;
  };
  switch (static_cast<ApiKey>(h.header.request_api_key)) {
    case ApiKey::kVote:
      return take(protocol::VoteRequest{}, raft::VoteRequest{}, protocol::VoteResponse{},
                  [](const raft::VoteRequest& r) { return r.candidate_id; });
    case ApiKey::kBeginQuorumEpoch:
      return take(protocol::BeginQuorumEpochRequest{}, raft::BeginQuorumEpochRequest{},
                  protocol::BeginQuorumEpochResponse{}, [](const raft::BeginQuorumEpochRequest& r) { return r.leader_id; });
    case ApiKey::kEndQuorumEpoch:
      return take(protocol::EndQuorumEpochRequest{}, raft::EndQuorumEpochRequest{}, protocol::EndQuorumEpochResponse{},
                  [](const raft::EndQuorumEpochRequest& r) { return r.leader_id; });
    case ApiKey::kFetchSnapshot:
      return take(protocol::FetchSnapshotRequest{}, raft::FetchSnapshotRequest{}, protocol::FetchSnapshotResponse{},
                  [](const raft::FetchSnapshotRequest& r) { return r.replica_id; });
    default:
      return take(protocol::FetchRequest{}, raft::FetchRequest{}, protocol::FetchResponse{},
                  [](const raft::FetchRequest& r) { return r.replica_id; });
  }
}

void ControllerQuorum::handle_raft_request(net::ConnectionContext& connection, const protocol::FrameBytes& frame,
                                           const protocol::ParsedRequestHeader& h, net::ResponseSlot slot) {
  raft::Message message;
  message.to = config_.node_id;
  protocol::OutputBuffer refusal;
  if (!decode_raft_request(connection, frame, h, &message, &refusal)) {
    slot.close_connection();
    return;
  }
  if (refusal.size() > 0) {
    slot.respond(std::move(refusal));
    return;
  }
  if (stopped_) {
    slot.close_connection();
    return;
  }
  const uint64_t ticket = park(std::move(slot));
  runtime_->deliver(std::move(message), [this, ticket, h](const raft::Payload* answer) {
    answer_later(ticket, encode_raft_answer(h, answer));
  });
}

protocol::OutputBuffer ControllerQuorum::encode_raft_answer(const protocol::ParsedRequestHeader& h,
                                                            const raft::Payload* answer) const {
  // Called on the group thread: view() is the state the core just reached.
  const raft::GroupAddress group = controller_group();
  const Status no_answer = Status::invalid_argument("the core refused the request");
  switch (static_cast<ApiKey>(h.header.request_api_key)) {
    case ApiKey::kVote:
      if (answer == nullptr) return controller_answer(raft::refusal_response<protocol::VoteResponse>(no_answer), h);
      return controller_answer(raft::to_kafka(std::get<raft::VoteResponse>(*answer), group), h);
    case ApiKey::kBeginQuorumEpoch:
      if (answer == nullptr) return controller_answer(raft::refusal_response<protocol::BeginQuorumEpochResponse>(no_answer), h);
      return controller_answer(raft::to_kafka(std::get<raft::BeginQuorumEpochResponse>(*answer), group), h);
    case ApiKey::kEndQuorumEpoch: {
      const raft::QuorumView now = runtime_->view();
      return controller_answer(raft::to_kafka(raft::EndQuorumEpochAck{now.epoch, now.leader_id}, group), h);
    }
    case ApiKey::kFetchSnapshot: {
      if (answer == nullptr) return controller_answer(raft::refusal_response<protocol::FetchSnapshotResponse>(no_answer), h);
      const auto& chunk = std::get<raft::FetchSnapshotResponse>(*answer);
      return controller_answer(raft::to_kafka(chunk, group), h);  // encoded here, while chunk.bytes lives
    }
    default: {
      if (answer == nullptr) return controller_answer(raft::refusal_response<protocol::FetchResponse>(no_answer), h);
      raft::EntryEncoding encoding;
      for (const raft::QuorumVoter& v : config_.voters) encoding.voters.push_back(v.id);
      encoding.timestamp_ms = port::wall_clock_millis();
      std::vector<uint8_t> records;
      protocol::FetchResponse response;
      Status s = raft::to_kafka(std::get<raft::FetchResponse>(*answer), group, encoding, &records, &response);
      if (!s.ok()) {
        EDDY_LOG_ERROR("raft: cannot encode a fetch answer: {}", s.to_string());
        return controller_answer(raft::refusal_response<protocol::FetchResponse>(s), h);
      }
      return controller_answer(response, h);
    }
  }
}

void ControllerQuorum::answer_describe_cluster(net::ConnectionContext& connection, const protocol::FrameBytes& frame,
                                               const protocol::ParsedRequestHeader& h, net::ResponseSlot slot) {
  protocol::DescribeClusterRequest req;
  if (Status s = protocol::decode_request_body(frame, h, &req); !s.ok()) {
    EDDY_LOG_WARN("controller listener: closing {}: {}", connection.peer(), s.message());
    slot.close_connection();
    return;
  }
  protocol::DescribeClusterResponse resp;
  resp.cluster_id = cluster_id_;
  resp.endpoint_type = kEndpointTypeController;
  if (h.header.request_api_version >= 1 && req.endpoint_type != kEndpointTypeController) {
    // Kafka's controllers answer only for their own kind of endpoint.
    resp.error_code = to_int(ErrorCode::kUnsupportedEndpointType);
    resp.error_message = "this is a controller listener: ask a broker listener for brokers";
  } else {
    const raft::QuorumView now = runtime_->view();
    resp.controller_id = now.leader_id;
    for (const raft::QuorumVoter& v : config_.voters) {
      protocol::DescribeClusterResponse::DescribeClusterBroker b;
      b.broker_id = v.id;
      b.host = v.address.host;
      b.port = v.address.port;
      resp.brokers.push_back(std::move(b));
    }
  }
  slot.respond(controller_answer(resp, h));
}

void ControllerQuorum::describe_quorum_frame(net::ConnectionContext& connection, protocol::FrameBytes frame,
                                             net::ResponseSlot slot, bool may_forward) {
  protocol::ParsedRequestHeader h;
  protocol::DescribeQuorumRequest req;
  Status s = protocol::parse_request_header(frame, &h);
  if (s.ok() && h.header.request_api_version > protocol::DescribeQuorumRequest::kMaxVersion) {
    s = Status::invalid_argument("DescribeQuorum v" + std::to_string(h.header.request_api_version) +
                                 " is not supported");
  }
  if (s.ok()) s = protocol::decode_request_body(frame, h, &req);
  if (!s.ok()) {
    EDDY_LOG_WARN("closing {}: {}", connection.peer(), s.message());
    slot.close_connection();
    return;
  }
  const raft::QuorumView now = runtime_->view();
  if (may_forward && !stopped_ && now.role != raft::Role::kLeader && now.leader_id != raft::kNoNode &&
      now.leader_id != config_.node_id && raft::check_describe_quorum_request(req, controller_group()).ok()) {
    const uint64_t ticket = park(std::move(slot));
    const int16_t version = h.header.request_api_version;
    auto call = [this, ticket, h, req, version](client::BrokerConnection& leader, client::Deadline deadline) {
      protocol::DescribeQuorumResponse answer;
      Status s = leader.call(req, version, &answer, deadline);
      if (s.ok()) answer_later(ticket, controller_answer(answer, h));
      return s;
    };
    auto failed = [this, ticket, h, req](const Status&) {
      answer_later(ticket, controller_answer(raft::describe_quorum_error(req, ErrorCode::kNotLeaderOrFollower), h));
    };
    forwarder_->forward(now.leader_id, std::move(call), std::move(failed));
    return;
  }
  slot.respond(controller_answer(describe_quorum(req, h.header.request_api_version), h));
}

protocol::DescribeQuorumResponse ControllerQuorum::describe_quorum(const protocol::DescribeQuorumRequest& req,
                                                                   int16_t version) const {
  const raft::GroupAddress group = controller_group();
  if (!raft::check_describe_quorum_request(req, group).ok()) {
    return raft::describe_quorum_error(req, ErrorCode::kUnknownTopicOrPartition);
  }
  const raft::QuorumView now = runtime_->view();
  // As Kafka's controllers: only the leader knows every voter's progress.
  if (now.role != raft::Role::kLeader) return raft::describe_quorum_error(req, ErrorCode::kNotLeaderOrFollower);
  raft::QuorumDescription d;
  d.leader_id = now.leader_id;
  d.leader_epoch = now.epoch;
  d.high_watermark = now.high_watermark;
  for (const raft::QuorumView::Voter& v : now.voter_progress) {
    d.voters.push_back({v.id, v.log_end_offset, v.last_fetch_wall_ms, v.last_caught_up_wall_ms});
  }
  for (const raft::QuorumVoter& v : config_.voters) {
    d.nodes.push_back({v.id, {{config_.listener, v.address.host, v.address.port}}});
  }
  return raft::describe_quorum_response(d, group, version);
}

}  // namespace eddy::app
