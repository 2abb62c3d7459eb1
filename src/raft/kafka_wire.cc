#include "raft/kafka_wire.h"

#include <optional>
#include <string>

namespace eddy::raft {

namespace {

using protocol::ErrorCode;

// A request refused with the Kafka error to answer.
Status refuse(ErrorCode code, const char* message_name, const std::string& why) {
  return protocol::broker_error(protocol::to_int(code), std::string("raft: ") + message_name + ": " + why);
}

// A response the core cannot use.
Status unusable(const char* message_name, const std::string& why) {
  return Status::protocol_error(std::string("raft: ") + message_name + ": " + why);
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

Status check_cluster_id(const std::optional<std::string>& cluster_id, const GroupAddress& address,
                        const char* message_name) {
  if (!cluster_id || *cluster_id == address.cluster_id) return Status();
  return refuse(ErrorCode::kInconsistentClusterId, message_name,
                "cluster id " + quoted(*cluster_id) + " is not " + quoted(address.cluster_id));
}

// The one partition of a KRaft message whose topics name the topic by
// topic_name and whose partitions carry partition_index; nullptr (and *s set
// to a refusal with `code`) for any other shape or address.
template <typename Message>
const auto* only_partition(const Message& m, const GroupAddress& address, ErrorCode code, Status* s) {
  using Partition = typename decltype(m.topics[0].partitions)::value_type;
  const Partition* found = nullptr;
  if (m.topics.size() != 1 || m.topics[0].partitions.size() != 1) {
    *s = refuse(code, Message::kName,
                std::to_string(m.topics.size()) + " topics (exactly one topic with one partition expected)");
  } else if (m.topics[0].topic_name != address.topic_name ||
             m.topics[0].partitions[0].partition_index != address.partition) {
    *s = refuse(code, Message::kName,
                "partition " + m.topics[0].topic_name + "-" +
                    std::to_string(m.topics[0].partitions[0].partition_index) + " is not " + address.topic_name +
                    "-" + std::to_string(address.partition));
  } else {
    found = &m.topics[0].partitions[0];
  }
  return found;
}

template <typename Message>
Message single_partition_message(const GroupAddress& address, typename Message::PartitionData partition) {
  Message m;
  partition.partition_index = address.partition;
  m.topics.push_back({address.topic_name, {std::move(partition)}, {}});
  return m;
}

// A response's top-level check: error NONE, the group's partition.
template <typename Response>
const auto* response_partition(const Response& r, const GroupAddress& address, Status* s) {
  using Partition = typename decltype(r.topics[0].partitions)::value_type;
  if (r.error_code != 0) {
    *s = protocol::broker_error(r.error_code, std::string("raft: ") + Response::kName);
    return static_cast<const Partition*>(nullptr);
  }
  return only_partition(r, address, ErrorCode::kInvalidRequest, s);
}

// Partition errors the core handles through the epoch and leader the
// partition carries; any other is the responder refusing.
Status check_partition_error(int16_t code, const char* message_name) {
  if (code == 0 || code == protocol::to_int(ErrorCode::kFencedLeaderEpoch) ||
      code == protocol::to_int(ErrorCode::kNotLeaderOrFollower)) {
    return Status();
  }
  return protocol::broker_error(code, std::string("raft: ") + message_name);
}

Status check_voter_key(int32_t voter_id, NodeId local_id, const char* message_name) {
  if (voter_id == -1 || voter_id == local_id) return Status();
  return refuse(ErrorCode::kInvalidVoterKey, message_name,
                "addressed to voter " + std::to_string(voter_id) + ", this is " + std::to_string(local_id));
}

Status check_epoch(Epoch epoch, const char* message_name) {
  if (epoch >= 0) return Status();
  return unusable(message_name, "leader epoch " + std::to_string(epoch));
}

// Fetch names its topic by id from v13 and by name before; a decoded message
// holds the one its version carried.
bool is_group_topic(const std::string& name, const protocol::Uuid& id, const GroupAddress& address) {
  return id.is_zero() ? name == address.topic_name : id == address.topic_id;
}

template <typename Topics>
Status check_fetch_partition(const Topics& topics, const GroupAddress& address, ErrorCode code,
                             const char* message_name) {
  if (topics.size() != 1 || topics[0].partitions.size() != 1) {
    return refuse(code, message_name,
                  std::to_string(topics.size()) + " topics (exactly one topic with one partition expected)");
  }
  const auto& topic = topics[0];
  int32_t partition = 0;
  if constexpr (requires { topic.partitions[0].partition; }) {
    partition = topic.partitions[0].partition;
  } else {
    partition = topic.partitions[0].partition_index;
  }
  if (!is_group_topic(topic.topic, topic.topic_id, address) || partition != address.partition) {
    return refuse(code, message_name,
                  "partition " + (topic.topic_id.is_zero() ? topic.topic : std::string("(by topic id)")) + "-" +
                      std::to_string(partition) + " is not " + address.topic_name + "-" +
                      std::to_string(address.partition));
  }
  return Status();
}

// FetchRequest.recovering from its unknown tagged field (absent: false).
Status read_recovering(const std::vector<protocol::TaggedField>& tags, bool* recovering) {
  *recovering = false;
  for (const auto& tag : tags) {
    if (tag.tag != kRecoveringTag) continue;
    if (tag.data.size() != 1 || tag.data[0] > 1) {
      return refuse(ErrorCode::kInvalidRequest, protocol::FetchRequest::kName,
                    "tagged field " + std::to_string(kRecoveringTag) + " (recovering) is not one byte 0 or 1");
    }
    *recovering = tag.data[0] == 1;
  }
  return Status();
}

int16_t fetch_error_code(FetchError error) {
  switch (error) {
    case FetchError::kNone: return 0;
    case FetchError::kFencedLeaderEpoch: return protocol::to_int(ErrorCode::kFencedLeaderEpoch);
    case FetchError::kNotLeader: return protocol::to_int(ErrorCode::kNotLeaderOrFollower);
    case FetchError::kSnapshotNotFound: return protocol::to_int(ErrorCode::kSnapshotNotFound);
    case FetchError::kPositionOutOfRange: return protocol::to_int(ErrorCode::kPositionOutOfRange);
  }
  return protocol::to_int(ErrorCode::kUnknownServerError);
}

Status fetch_error_from_code(int16_t code, FetchError* error, bool snapshot = false) {
  if (snapshot && code == protocol::to_int(ErrorCode::kSnapshotNotFound)) {
    *error = FetchError::kSnapshotNotFound;
  } else if (snapshot && code == protocol::to_int(ErrorCode::kPositionOutOfRange)) {
    *error = FetchError::kPositionOutOfRange;
  } else if (code == 0) {
    *error = FetchError::kNone;
  } else if (code == protocol::to_int(ErrorCode::kFencedLeaderEpoch)) {
    *error = FetchError::kFencedLeaderEpoch;
  } else if (code == protocol::to_int(ErrorCode::kNotLeaderOrFollower)) {
    *error = FetchError::kNotLeader;
  } else {
    return protocol::broker_error(code, snapshot ? "raft: FetchSnapshotResponse partition"
                                                 : "raft: FetchResponse partition");
  }
  return Status();
}

// DivergingEpoch, HighWatermark and SnapshotId of a fetched partition.
Status read_fetch_positions(const protocol::FetchResponse::PartitionData& p, FetchResponse* out) {
  const char* name = protocol::FetchResponse::kName;
  if (p.snapshot_id.epoch != -1 || p.snapshot_id.end_offset != -1) {
    if (p.snapshot_id.epoch < 1 || p.snapshot_id.end_offset < 1) {
      return unusable(name, "snapshot id " + std::to_string(p.snapshot_id.end_offset) + "-" +
                                std::to_string(p.snapshot_id.epoch));
    }
    out->snapshot_id = {p.snapshot_id.end_offset, p.snapshot_id.epoch};
  }
  if (p.high_watermark < -1) return unusable(name, "high watermark " + std::to_string(p.high_watermark));
  out->high_watermark = p.high_watermark == -1 ? 0 : p.high_watermark;
  const auto& diverging = p.diverging_epoch;
  if (diverging.epoch >= 0) {
    if (diverging.end_offset < 0) {
      return unusable(name, "diverging epoch " + std::to_string(diverging.epoch) + " with end offset " +
                                std::to_string(diverging.end_offset));
    }
    out->diverging = true;
    out->diverging_epoch = {diverging.epoch, diverging.end_offset};
  } else if (diverging.epoch != -1 || diverging.end_offset != -1) {
    return unusable(name, "diverging epoch " + std::to_string(diverging.epoch));
  }
  return Status();
}

}  // namespace

// --- Vote ------------------------------------------------------------------

protocol::VoteRequest to_kafka(const VoteRequest& request, const GroupAddress& address, NodeId voter_id) {
  protocol::VoteRequest::PartitionData p;
  p.candidate_epoch = request.candidate_epoch;
  p.candidate_id = request.candidate_id;
  p.last_offset_epoch = request.last_offset_epoch;
  p.last_offset = request.last_offset;
  auto m = single_partition_message<protocol::VoteRequest>(address, std::move(p));
  m.cluster_id = address.cluster_id;
  m.voter_id = voter_id;
  return m;
}

Status from_kafka(const protocol::VoteRequest& request, const GroupAddress& address, NodeId local_id,
                  VoteRequest* out) {
  const char* name = protocol::VoteRequest::kName;
  Status s = check_cluster_id(request.cluster_id, address, name);
  if (!s.ok()) return s;
  const auto* p = only_partition(request, address, ErrorCode::kInvalidRequest, &s);
  if (p == nullptr) return s;
  if (s = check_voter_key(request.voter_id, local_id, name); !s.ok()) return s;
  if (p->candidate_epoch < 0 || p->last_offset_epoch < 0 || p->last_offset < 0) {
    return refuse(ErrorCode::kInvalidRequest, name, "negative epoch or offset");
  }
  *out = VoteRequest{p->candidate_epoch, p->candidate_id, p->last_offset_epoch, p->last_offset};
  return Status();
}

protocol::VoteResponse to_kafka(const VoteResponse& response, const GroupAddress& address) {
  protocol::VoteResponse::PartitionData p;
  p.leader_id = response.leader_id;
  p.leader_epoch = response.leader_epoch;
  p.vote_granted = response.vote_granted;
  return single_partition_message<protocol::VoteResponse>(address, std::move(p));
}

Status from_kafka(const protocol::VoteResponse& response, const GroupAddress& address, VoteResponse* out) {
  const char* name = protocol::VoteResponse::kName;
  Status s;
  const auto* p = response_partition(response, address, &s);
  if (p == nullptr) return s;
  if (s = check_partition_error(p->error_code, name); !s.ok()) return s;
  if (s = check_epoch(p->leader_epoch, name); !s.ok()) return s;
  *out = VoteResponse{p->leader_epoch, p->leader_id, p->error_code == 0 && p->vote_granted};
  return Status();
}

// --- BeginQuorumEpoch ----------------------------------------------------------

protocol::BeginQuorumEpochRequest to_kafka(const BeginQuorumEpochRequest& request, const GroupAddress& address,
                                           NodeId voter_id) {
  protocol::BeginQuorumEpochRequest::PartitionData p;
  p.leader_id = request.leader_id;
  p.leader_epoch = request.leader_epoch;
  auto m = single_partition_message<protocol::BeginQuorumEpochRequest>(address, std::move(p));
  m.cluster_id = address.cluster_id;
  m.voter_id = voter_id;
  return m;
}

Status from_kafka(const protocol::BeginQuorumEpochRequest& request, const GroupAddress& address, NodeId local_id,
                  BeginQuorumEpochRequest* out) {
  const char* name = protocol::BeginQuorumEpochRequest::kName;
  Status s = check_cluster_id(request.cluster_id, address, name);
  if (!s.ok()) return s;
  const auto* p = only_partition(request, address, ErrorCode::kInvalidRequest, &s);
  if (p == nullptr) return s;
  if (s = check_voter_key(request.voter_id, local_id, name); !s.ok()) return s;
  if (p->leader_epoch < 0) return refuse(ErrorCode::kInvalidRequest, name, "negative epoch");
  *out = BeginQuorumEpochRequest{p->leader_epoch, p->leader_id};
  return Status();
}

protocol::BeginQuorumEpochResponse to_kafka(const BeginQuorumEpochResponse& response, const GroupAddress& address) {
  protocol::BeginQuorumEpochResponse::PartitionData p;
  p.leader_id = response.leader_id;
  p.leader_epoch = response.leader_epoch;
  return single_partition_message<protocol::BeginQuorumEpochResponse>(address, std::move(p));
}

Status from_kafka(const protocol::BeginQuorumEpochResponse& response, const GroupAddress& address,
                  BeginQuorumEpochResponse* out) {
  const char* name = protocol::BeginQuorumEpochResponse::kName;
  Status s;
  const auto* p = response_partition(response, address, &s);
  if (p == nullptr) return s;
  if (s = check_partition_error(p->error_code, name); !s.ok()) return s;
  if (s = check_epoch(p->leader_epoch, name); !s.ok()) return s;
  *out = BeginQuorumEpochResponse{p->leader_epoch, p->leader_id};
  return Status();
}

// --- EndQuorumEpoch ------------------------------------------------------------

protocol::EndQuorumEpochRequest to_kafka(const EndQuorumEpochRequest& request, const GroupAddress& address) {
  protocol::EndQuorumEpochRequest::PartitionData p;
  p.leader_id = request.leader_id;
  p.leader_epoch = request.leader_epoch;
  for (NodeId successor : request.preferred_successors) {
    p.preferred_successors.push_back(successor);
    p.preferred_candidates.push_back({successor, {}, {}});
  }
  auto m = single_partition_message<protocol::EndQuorumEpochRequest>(address, std::move(p));
  m.cluster_id = address.cluster_id;
  return m;
}

Status from_kafka(const protocol::EndQuorumEpochRequest& request, const GroupAddress& address,
                  EndQuorumEpochRequest* out) {
  const char* name = protocol::EndQuorumEpochRequest::kName;
  Status s = check_cluster_id(request.cluster_id, address, name);
  if (!s.ok()) return s;
  const auto* p = only_partition(request, address, ErrorCode::kInvalidRequest, &s);
  if (p == nullptr) return s;
  if (p->leader_epoch < 0) return refuse(ErrorCode::kInvalidRequest, name, "negative epoch");
  *out = EndQuorumEpochRequest{p->leader_epoch, p->leader_id, {}};
  if (!p->preferred_candidates.empty()) {
    for (const auto& candidate : p->preferred_candidates) out->preferred_successors.push_back(candidate.candidate_id);
  } else {
    out->preferred_successors.assign(p->preferred_successors.begin(), p->preferred_successors.end());
  }
  return Status();
}

protocol::EndQuorumEpochResponse to_kafka(const EndQuorumEpochAck& ack, const GroupAddress& address) {
  protocol::EndQuorumEpochResponse::PartitionData p;
  p.leader_id = ack.leader_id;
  p.leader_epoch = ack.leader_epoch;
  return single_partition_message<protocol::EndQuorumEpochResponse>(address, std::move(p));
}

Status from_kafka(const protocol::EndQuorumEpochResponse& response, const GroupAddress& address,
                  EndQuorumEpochAck* out) {
  const char* name = protocol::EndQuorumEpochResponse::kName;
  Status s;
  const auto* p = response_partition(response, address, &s);
  if (p == nullptr) return s;
  if (s = check_partition_error(p->error_code, name); !s.ok()) return s;
  if (s = check_epoch(p->leader_epoch, name); !s.ok()) return s;
  *out = EndQuorumEpochAck{p->leader_epoch, p->leader_id};
  return Status();
}

// --- Fetch -------------------------------------------------------------------

protocol::FetchRequest to_kafka(const FetchRequest& request, const GroupAddress& address, const FetchLimits& limits,
                                int16_t version) {
  protocol::FetchRequest m;
  m.cluster_id = address.cluster_id;
  if (version >= 15) {
    m.replica_state.replica_id = request.replica_id;
  } else {
    m.replica_id = request.replica_id;
  }
  m.max_wait_ms = limits.max_wait_ms;
  m.min_bytes = 0;
  m.max_bytes = limits.max_bytes;
  protocol::FetchRequest::FetchPartition p;
  p.partition = address.partition;
  p.current_leader_epoch = request.current_leader_epoch;
  p.fetch_offset = request.fetch_offset;
  p.last_fetched_epoch = request.last_fetched_epoch;
  p.partition_max_bytes = limits.max_bytes;
  m.topics.push_back({address.topic_name, address.topic_id, {std::move(p)}, {}});
  if (request.recovering) m.unknown_tagged_fields.push_back({kRecoveringTag, {1}});
  return m;
}

Status from_kafka(const protocol::FetchRequest& request, const GroupAddress& address, FetchRequest* out) {
  const char* name = protocol::FetchRequest::kName;
  Status s = check_cluster_id(request.cluster_id, address, name);
  if (!s.ok()) return s;
  if (s = check_fetch_partition(request.topics, address, ErrorCode::kInvalidRequest, name); !s.ok()) return s;
  const auto& p = request.topics[0].partitions[0];
  // Kafka's KafkaRaftClient refuses these as INVALID_REQUEST too.
  if (request.max_wait_ms < 0 || p.fetch_offset < 0 || p.last_fetched_epoch < 0 ||
      p.last_fetched_epoch > p.current_leader_epoch) {
    return refuse(ErrorCode::kInvalidRequest, name,
                  "fetch offset " + std::to_string(p.fetch_offset) + ", last fetched epoch " +
                      std::to_string(p.last_fetched_epoch) + ", current leader epoch " +
                      std::to_string(p.current_leader_epoch) + ", max wait " + std::to_string(request.max_wait_ms));
  }
  bool recovering = false;
  if (s = read_recovering(request.unknown_tagged_fields, &recovering); !s.ok()) return s;
  const NodeId replica_id = request.replica_state.replica_id != -1 ? request.replica_state.replica_id
                                                                    : request.replica_id;
  *out = FetchRequest{p.current_leader_epoch, replica_id, p.fetch_offset, p.last_fetched_epoch, recovering};
  return Status();
}

Status to_kafka(const FetchResponse& response, const GroupAddress& address, const EntryEncoding& encoding,
                std::vector<uint8_t>* records_storage, protocol::FetchResponse* out) {
  records_storage->clear();
  Status s = encode_entries(response.base_offset, response.entries, response.leader_epoch, response.leader_id,
                            encoding, records_storage, address.entries);
  *out = protocol::FetchResponse{};
  protocol::FetchResponse::PartitionData p;
  p.partition_index = address.partition;
  p.error_code = fetch_error_code(response.error);
  p.high_watermark = response.high_watermark;
  if (response.diverging) p.diverging_epoch = {response.diverging_epoch.epoch, response.diverging_epoch.end_offset, {}};
  if (!response.snapshot_id.empty()) p.snapshot_id = {response.snapshot_id.end_offset, response.snapshot_id.epoch, {}};
  p.current_leader = {response.leader_id, response.leader_epoch, {}};
  p.records = protocol::Records{std::span<const uint8_t>(*records_storage), {}};
  out->responses.push_back({address.topic_name, address.topic_id, {std::move(p)}, {}});
  return s;
}

Status from_kafka(const protocol::FetchResponse& response, const GroupAddress& address, Offset expected_base,
                  FetchResponse* out) {
  const char* name = protocol::FetchResponse::kName;
  if (response.error_code != 0) return protocol::broker_error(response.error_code, "raft: FetchResponse");
  Status s = check_fetch_partition(response.responses, address, ErrorCode::kInvalidRequest, name);
  if (!s.ok()) return s.with_message(std::string("raft: FetchResponse for another partition: ") + s.message());
  const auto& p = response.responses[0].partitions[0];
  FetchResponse decoded;
  if (s = fetch_error_from_code(p.error_code, &decoded.error); !s.ok()) return s;
  if (s = check_epoch(p.current_leader.leader_epoch, name); !s.ok()) return s;
  decoded.leader_epoch = p.current_leader.leader_epoch;
  decoded.leader_id = p.current_leader.leader_id;
  if (s = read_fetch_positions(p, &decoded); !s.ok()) return s;
  decoded.base_offset = expected_base;
  if (p.records) {
    if (!p.records->file_regions.empty()) return unusable(name, "records in file regions (not decoded bytes)");
    if (s = decode_entries(p.records->bytes, expected_base, &decoded.entries, address.entries); !s.ok()) return s;
  }
  *out = std::move(decoded);
  return Status();
}

// --- Fetches of many groups in one request ----------------------------------

protocol::FetchRequest to_kafka_fetches(const std::vector<GroupFetch>& fetches, const FetchLimits& limits) {
  protocol::FetchRequest combined;
  for (const GroupFetch& f : fetches) {
    protocol::FetchRequest one = to_kafka(std::get<FetchRequest>(f.request.payload), f.group, limits);
    protocol::FetchRequest::FetchPartition& p = one.topics[0].partitions[0];
    p.unknown_tagged_fields = std::move(one.unknown_tagged_fields);  // recovering, when set
    if (combined.topics.empty()) {
      one.unknown_tagged_fields.clear();
      combined = std::move(one);
    } else {
      combined.topics.push_back(std::move(one.topics[0]));
    }
  }
  return combined;
}

protocol::FetchRequest single_fetch(const protocol::FetchRequest& request, size_t topic, size_t partition) {
  protocol::FetchRequest one;
  one.cluster_id = request.cluster_id;
  one.replica_id = request.replica_id;
  one.replica_state = request.replica_state;
  one.max_wait_ms = request.max_wait_ms;
  one.min_bytes = request.min_bytes;
  one.max_bytes = request.max_bytes;
  one.isolation_level = request.isolation_level;
  const protocol::FetchRequest::FetchTopic& t = request.topics[topic];
  protocol::FetchRequest::FetchPartition p = t.partitions[partition];
  // The request's own tags (a single fetch's recovering) and the
  // partition's (a many-group fetch's).
  one.unknown_tagged_fields = request.unknown_tagged_fields;
  for (auto& tag : p.unknown_tagged_fields) one.unknown_tagged_fields.push_back(std::move(tag));
  p.unknown_tagged_fields.clear();
  one.topics.push_back({t.topic, t.topic_id, {std::move(p)}, {}});
  return one;
}

bool single_fetch_response(const protocol::FetchResponse& response, const GroupAddress& address,
                           protocol::FetchResponse* out) {
  for (const auto& t : response.responses) {
    if (!is_group_topic(t.topic, t.topic_id, address)) continue;
    for (const auto& p : t.partitions) {
      if (p.partition_index != address.partition) continue;
      *out = protocol::FetchResponse{};
      out->throttle_time_ms = response.throttle_time_ms;
      out->error_code = response.error_code;
      out->responses.push_back({t.topic, t.topic_id, {p}, {}});
      return true;
    }
  }
  return false;
}

// --- FetchSnapshot -----------------------------------------------------------

namespace {

template <typename Topics>
Status check_snapshot_partition(const Topics& topics, const GroupAddress& address, const char* message_name) {
  if (topics.size() != 1 || topics[0].partitions.size() != 1) {
    return refuse(ErrorCode::kInvalidRequest, message_name,
                  std::to_string(topics.size()) + " topics (exactly one topic with one partition expected)");
  }
  int32_t partition = 0;
  if constexpr (requires { topics[0].partitions[0].partition; }) {
    partition = topics[0].partitions[0].partition;
  } else {
    partition = topics[0].partitions[0].index;
  }
  if (topics[0].name != address.topic_name || partition != address.partition) {
    return refuse(ErrorCode::kInvalidRequest, message_name,
                  "partition " + topics[0].name + "-" + std::to_string(partition) + " is not " +
                      address.topic_name + "-" + std::to_string(address.partition));
  }
  return Status();
}

}  // namespace

protocol::FetchSnapshotRequest to_kafka(const FetchSnapshotRequest& request, const GroupAddress& address,
                                        int32_t max_bytes) {
  protocol::FetchSnapshotRequest m;
  m.cluster_id = address.cluster_id;
  m.replica_id = request.replica_id;
  m.max_bytes = max_bytes;
  protocol::FetchSnapshotRequest::PartitionSnapshot p;
  p.partition = address.partition;
  p.current_leader_epoch = request.current_leader_epoch;
  p.snapshot_id = {request.snapshot_id.end_offset, request.snapshot_id.epoch, {}};
  p.position = request.position;
  m.topics.push_back({address.topic_name, {std::move(p)}, {}});
  return m;
}

Status from_kafka(const protocol::FetchSnapshotRequest& request, const GroupAddress& address,
                  FetchSnapshotRequest* out) {
  const char* name = protocol::FetchSnapshotRequest::kName;
  Status s = check_cluster_id(request.cluster_id, address, name);
  if (!s.ok()) return s;
  if (s = check_snapshot_partition(request.topics, address, name); !s.ok()) return s;
  const auto& p = request.topics[0].partitions[0];
  if (p.position < 0 || p.current_leader_epoch < 0 || p.snapshot_id.end_offset < 0 || p.snapshot_id.epoch < 0 ||
      request.max_bytes <= 0) {
    return refuse(ErrorCode::kInvalidRequest, name,
                  "position " + std::to_string(p.position) + ", snapshot " + std::to_string(p.snapshot_id.end_offset) +
                      "-" + std::to_string(p.snapshot_id.epoch) + ", current leader epoch " +
                      std::to_string(p.current_leader_epoch) + ", max bytes " + std::to_string(request.max_bytes));
  }
  *out = FetchSnapshotRequest{p.current_leader_epoch, request.replica_id,
                              SnapshotId{p.snapshot_id.end_offset, p.snapshot_id.epoch}, p.position,
                              request.max_bytes};
  return Status();
}

protocol::FetchSnapshotResponse to_kafka(const FetchSnapshotResponse& response, const GroupAddress& address) {
  protocol::FetchSnapshotResponse m;
  protocol::FetchSnapshotResponse::PartitionSnapshot p;
  p.index = address.partition;
  p.error_code = fetch_error_code(response.error);
  p.snapshot_id = {response.snapshot_id.end_offset, response.snapshot_id.epoch, {}};
  p.current_leader = {response.leader_id, response.leader_epoch, {}};
  p.size = response.size;
  p.position = response.position;
  p.unaligned_records = protocol::Records{
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(response.bytes.data()), response.bytes.size()), {}};
  m.topics.push_back({address.topic_name, {std::move(p)}, {}});
  return m;
}

Status from_kafka(const protocol::FetchSnapshotResponse& response, const GroupAddress& address,
                  FetchSnapshotResponse* out) {
  const char* name = protocol::FetchSnapshotResponse::kName;
  if (response.error_code != 0) return protocol::broker_error(response.error_code, "raft: FetchSnapshotResponse");
  Status s = check_snapshot_partition(response.topics, address, name);
  if (!s.ok()) return s.with_message(std::string("raft: FetchSnapshotResponse for another partition: ") + s.message());
  const auto& p = response.topics[0].partitions[0];
  FetchSnapshotResponse decoded;
  if (s = fetch_error_from_code(p.error_code, &decoded.error, /*snapshot=*/true); !s.ok()) return s;
  if (s = check_epoch(p.current_leader.leader_epoch, name); !s.ok()) return s;
  if (p.size < 0 || p.position < 0) {
    return unusable(name, "size " + std::to_string(p.size) + ", position " + std::to_string(p.position));
  }
  if (!p.unaligned_records.file_regions.empty()) return unusable(name, "records in file regions (not bytes)");
  decoded.leader_epoch = p.current_leader.leader_epoch;
  decoded.leader_id = p.current_leader.leader_id;
  decoded.snapshot_id = {p.snapshot_id.end_offset, p.snapshot_id.epoch};
  decoded.size = p.size;
  decoded.position = p.position;
  decoded.bytes.assign(reinterpret_cast<const char*>(p.unaligned_records.bytes.data()),
                       p.unaligned_records.bytes.size());
  *out = std::move(decoded);
  return Status();
}

}  // namespace eddy::raft
