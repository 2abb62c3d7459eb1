// PartitionGroups: the Raft requests of partition groups that arrive on the
// controller listener (Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch and
// FetchSnapshot naming topic-partitions other than __cluster_metadata-0).
// Each is handed to its group's replica on the reactor and answered at once
// from what the core answers, as kafka_wire.h converts both ways; Fetch,
// which may name many groups and may be held, is partition_group_fetches.cc's.
#include <type_traits>

#include "app/controller_answer.h"
#include "app/partition_groups.h"
#include "port/log.h"
#include "port/port.h"
#include "protocol/generated/apis.h"
#include "protocol/errors.h"
#include "raft/kafka_wire.h"

namespace eddy::app {

namespace {

using protocol::ApiKey;
using protocol::ErrorCode;

// The topic (name, and id where the request names one) and partition a
// Raft request names; false when it names not exactly one.
struct Named {
  std::string topic;
  protocol::Uuid topic_id;
  int32_t partition = -1;
};

template <typename R>
bool named_by(const R& request, Named* out) {
  if (request.topics.size() != 1 || request.topics[0].partitions.size() != 1) return false;
  const auto& t = request.topics[0];
  const auto& p = t.partitions[0];
  if constexpr (requires { t.topic_name; }) {
    out->topic = t.topic_name;
  } else if constexpr (requires { t.topic_id; }) {
    out->topic = t.topic;
    out->topic_id = t.topic_id;
  } else {
    out->topic = t.name;
  }
  if constexpr (requires { p.partition_index; }) {
    out->partition = p.partition_index;
  } else {
    out->partition = p.partition;
  }
  return true;
}

// Decodes the request body of h into its Kafka struct and what it names.
template <typename R>
Status decode_named(const protocol::FrameBytes& frame, const protocol::ParsedRequestHeader& h, R* request, Named* named) {
  if (Status s = protocol::decode_request_body(frame, h, request); !s.ok()) return s;
  if (!named_by(*request, named)) return Status::invalid_argument("a Raft request names not one topic-partition");
  return Status();
}


bool is_metadata_partition(const Named& n) {
  const raft::GroupAddress metadata;
  return n.topic_id == raft::kMetadataTopicId || (n.topic_id == protocol::Uuid{} && n.topic == metadata.topic_name);
}

}  // namespace

bool PartitionGroups::names_partition_group(const protocol::FrameBytes& frame, const protocol::ParsedRequestHeader& h) {
  Named named;
  Status s;
  switch (static_cast<ApiKey>(h.header.request_api_key)) {
    case ApiKey::kVote: {
      protocol::VoteRequest r;
      s = decode_named(frame, h, &r, &named);
      break;
    }
    case ApiKey::kBeginQuorumEpoch: {
      protocol::BeginQuorumEpochRequest r;
      s = decode_named(frame, h, &r, &named);
      break;
    }
    case ApiKey::kEndQuorumEpoch: {
      protocol::EndQuorumEpochRequest r;
      s = decode_named(frame, h, &r, &named);
      break;
    }
    case ApiKey::kFetch: {
      // A follower node's Fetch names one partition per group it follows;
      // never __cluster_metadata among them.
      protocol::FetchRequest r;
      s = protocol::decode_request_body(frame, h, &r);
      if (!s.ok() || r.topics.empty()) return false;
      for (const auto& t : r.topics) {
        for (const auto& p : t.partitions) {
          if (is_metadata_partition(Named{t.topic, t.topic_id, p.partition})) return false;
        }
      }
      return true;
    }
    case ApiKey::kFetchSnapshot: {
      protocol::FetchSnapshotRequest r;
      s = decode_named(frame, h, &r, &named);
      break;
    }
    default: return false;
  }
  // A request that does not decode stays with the controller, which closes
  // the connection as it always did.
  return s.ok() && !is_metadata_partition(named);
}

void PartitionGroups::on_frame(net::ConnectionContext& connection, const protocol::FrameBytes& frame,
                               const protocol::ParsedRequestHeader& h, net::ResponseSlot slot) {
  // Decodes Kafka's request, finds its group, converts it for the core,
  // hands it over and answers with the core's answer (R: the response type).
  auto serve = [&](auto kafka_request, auto core_request, auto response_type, auto&& sender) {
    using R = decltype(response_type);
    Named named;
    if (Status s = decode_named(frame, h, &kafka_request, &named); !s.ok()) {
      EDDY_LOG_WARN("controller listener: closing {}: {}", connection.peer(), s.message());
      slot.close_connection();
      return;
    }
    Group* g = find_named(named.topic, named.topic_id, named.partition);
    if (g == nullptr || g->failed || stopped_) {
      // Not here (yet: the topic's record may still be on its way), or
      // stopped: the sender drops the answer and its core asks again.
      const Status absent = Status::kafka(Status::Code::kNotFound, protocol::to_int(ErrorCode::kUnknownTopicOrPartition),
                                          true, "no replica of " + named.topic + "-" + std::to_string(named.partition));
      slot.respond(controller_answer(raft::refusal_response<R>(absent), h));
      return;
    }
    Status s;
    if constexpr (requires { raft::from_kafka(kafka_request, g->address, options_.node_id, &core_request); }) {
      s = raft::from_kafka(kafka_request, g->address, options_.node_id, &core_request);
    } else {
      s = raft::from_kafka(kafka_request, g->address, &core_request);
    }
    if (!s.ok()) {
      EDDY_LOG_DEBUG("controller listener: {} from {} refused: {}", protocol::api_name(h.header.request_api_key),
                     connection.peer(), s.message());
      slot.respond(controller_answer(raft::refusal_response<R>(s), h));
      return;
    }
    raft::Message request;
    request.from = sender(core_request);
    request.to = options_.node_id;
    request.payload = core_request;
    raft::Payload answer;
    bool answered = false;
    after_step(*g, g->replica->handle(request, port::monotonic_millis()), &request, &answer, &answered);
    if constexpr (std::is_same_v<R, protocol::EndQuorumEpochResponse>) {
      const raft::Replica& r = *g->replica;
      slot.respond(controller_answer(raft::to_kafka(raft::EndQuorumEpochAck{r.epoch(), r.leader_id()}, g->address), h));
    } else if (!answered || g->failed) {
      const Status none = Status::invalid_argument("the replica gave no answer");
      slot.respond(controller_answer(raft::refusal_response<R>(none), h));
    } else if constexpr (std::is_same_v<R, protocol::VoteResponse>) {
      slot.respond(controller_answer(raft::to_kafka(std::get<raft::VoteResponse>(answer), g->address), h));
    } else if constexpr (std::is_same_v<R, protocol::BeginQuorumEpochResponse>) {
      slot.respond(controller_answer(raft::to_kafka(std::get<raft::BeginQuorumEpochResponse>(answer), g->address), h));
    } else {
      slot.respond(controller_answer(raft::to_kafka(std::get<raft::FetchSnapshotResponse>(answer), g->address), h));
    }
  };
  switch (static_cast<ApiKey>(h.header.request_api_key)) {
    case ApiKey::kVote:
      return serve(protocol::VoteRequest{}, raft::VoteRequest{}, protocol::VoteResponse{},
                   [](const raft::VoteRequest& r) { return r.candidate_id; });
    case ApiKey::kBeginQuorumEpoch:
      return serve(protocol::BeginQuorumEpochRequest{}, raft::BeginQuorumEpochRequest{},
                   protocol::BeginQuorumEpochResponse{}, [](const raft::BeginQuorumEpochRequest& r) { return r.leader_id; });
    case ApiKey::kEndQuorumEpoch:
      return serve(protocol::EndQuorumEpochRequest{}, raft::EndQuorumEpochRequest{}, protocol::EndQuorumEpochResponse{},
                   [](const raft::EndQuorumEpochRequest& r) { return r.leader_id; });
    case ApiKey::kFetchSnapshot:
      return serve(protocol::FetchSnapshotRequest{}, raft::FetchSnapshotRequest{}, protocol::FetchSnapshotResponse{},
                   [](const raft::FetchSnapshotRequest& r) { return r.replica_id; });
    case ApiKey::kFetch:
      return on_fetch(connection, frame, h, std::move(slot));
    default:
      EDDY_LOG_WARN("controller listener: closing {}: {} is not a partition group's request", connection.peer(),
                    protocol::api_name(h.header.request_api_key));
      slot.close_connection();
  }
}

}  // namespace eddy::app
