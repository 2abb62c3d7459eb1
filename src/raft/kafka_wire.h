// raft/kafka_wire.h — the Raft core's messages (raft/messages.h) as Kafka's
// KRaft RPCs: conversions both ways between the raft structs and the
// generated protocol structs (protocol/generated/{vote,begin_quorum_epoch,
// end_quorum_epoch,fetch}.h). Encoding the protocol structs into frames and
// sending them is the runtime's job.
//
// Every KRaft RPC names a cluster and one topic-partition (the group's
// GroupAddress). Decoding a request checks them as Kafka's KafkaRaftClient
// does and refuses with a Status that carries the Kafka error code to answer
// (kafka_error_code(); refusal_response() builds that answer):
//   - a ClusterId that is present and differs: INCONSISTENT_CLUSTER_ID
//     (a null ClusterId is accepted, as Kafka does);
//   - anything but exactly one topic with exactly one partition, or another
//     topic or partition: INVALID_REQUEST (Kafka: "until we support
//     multi-raft, topic partition mismatches are invalid requests");
//   - a VoterId that is set and is not the receiver: INVALID_VOTER_KEY;
//   - negative offsets or epochs Kafka refuses: INVALID_REQUEST.
// Decoding a response checks the same and answers any failure, or a Kafka
// error the core has no use for, as a non-ok Status: the runtime drops the
// answer (the core's timers resend).
//
// Versions: the newest in Kafka's definitions (Vote v1, BeginQuorumEpoch v1,
// EndQuorumEpoch v1, Fetch v17); every conversion also fills the fields of
// the older versions the client negotiates (Vote/BeginQuorumEpoch/
// EndQuorumEpoch v0, Fetch v12-16) so that any of them can be encoded.
//
// What Eddy leaves empty (KIP-853 fields): directory ids are zero (Kafka's
// "unknown directory"); LeaderEndpoints and NodeEndpoints are empty (a Kafka
// peer then uses the endpoints of its configured voter set); Vote's and
// EndQuorumEpoch's responses carry no endpoints either.
//
// Responses Eddy sends carry error NONE at both levels: the core answers a
// stale epoch with its own higher epoch (and vote_granted = false), which a
// Kafka peer handles by the epoch alone.
//
// Fetch:
//   - topic: named by TopicId in v13+ (KRaft's __cluster_metadata id is
//     Kafka's METADATA_TOPIC_ID, 0...01) and by name before; both are filled,
//     and decoding checks the id when one is present, else the name.
//   - FetchRequest.recovering has no Kafka field. It travels as an unknown
//     tagged field of the top-level FetchRequest (tag kRecoveringTag, one
//     byte 1), written only when true: a Kafka leader keeps it as an unknown
//     tag and ignores it, and a fetch from a Kafka follower decodes as not
//     recovering.
//   - entries travel in Records as one RecordBatch v2 per entry, or as the
//     batches they are in a partition group (see raft/kafka_entries.h).
//   - FetchError: kFencedLeaderEpoch = FENCED_LEADER_EPOCH, kNotLeader =
//     NOT_LEADER_OR_FOLLOWER. Any other partition error (UNKNOWN_LEADER_EPOCH,
//     INVALID_REQUEST, ...) and any top-level error decode to a non-ok Status.
//   - SnapshotId: Kafka's {-1, -1} is "none" (an empty raft::SnapshotId).
//
// FetchSnapshot (v1; v0 has the same fields but ReplicaDirectoryId): the
// snapshot's bytes travel in UnalignedRecords as they are (KRaft's snapshot
// is record batches; Eddy's is its own state machine's bytes, which only
// another Eddy reads). Errors SNAPSHOT_NOT_FOUND and POSITION_OUT_OF_RANGE
// are kSnapshotNotFound and kPositionOutOfRange; the others as for Fetch.
//   - a HighWatermark of -1 (Kafka's "unknown") decodes as 0 (nothing
//     committed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "port/status.h"
#include "protocol/errors.h"
#include "protocol/generated/begin_quorum_epoch.h"
#include "protocol/generated/end_quorum_epoch.h"
#include "protocol/generated/fetch.h"
#include "protocol/generated/fetch_snapshot.h"
#include "protocol/generated/vote.h"
#include "raft/kafka_entries.h"
#include "raft/messages.h"

namespace eddy::raft {

inline constexpr int16_t kVoteVersion = 1;
inline constexpr int16_t kBeginQuorumEpochVersion = 1;
inline constexpr int16_t kEndQuorumEpochVersion = 1;
inline constexpr int16_t kFetchVersion = 17;
inline constexpr int16_t kFetchSnapshotVersion = 1;
// The first Fetch version with LastFetchedEpoch, DivergingEpoch and
// CurrentLeader: the oldest the conversions support.
inline constexpr int16_t kMinFetchVersion = 12;

// The tag of the unknown tagged field that carries FetchRequest.recovering.
// Far above Kafka's tags (0-2 in FetchRequest).
inline constexpr uint32_t kRecoveringTag = 0x4544;  // "ED"

// Kafka's Uuid.METADATA_TOPIC_ID (0, 1): the topic id of __cluster_metadata.
inline constexpr protocol::Uuid kMetadataTopicId{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}};

// The cluster and topic-partition every RPC of one Raft group names.
struct GroupAddress {
  std::string cluster_id;
  std::string topic_name = "__cluster_metadata";
  protocol::Uuid topic_id = kMetadataTopicId;
  int32_t partition = 0;
  // How the group's entries travel in Fetch (kafka_entries.h): one record
  // per batch in the controller log, the producers' batches in a
  // partition group's.
  EntryForm entries = EntryForm::kRecord;
};

// EndQuorumEpoch's response, which the core has no struct for: the
// receiver's epoch and leader after handling the request.
struct EndQuorumEpochAck {
  Epoch leader_epoch = 0;
  NodeId leader_id = kNoNode;

  friend bool operator==(const EndQuorumEpochAck&, const EndQuorumEpochAck&) = default;
};

// Fetch request parameters the core does not choose.
struct FetchLimits {
  int32_t max_wait_ms = 500;          // Kafka's KRaft default
  int32_t max_bytes = 8 * 1024 * 1024;  // request and partition bound
};

// The answer to a request that a from_kafka() below refused: R with its
// top-level ErrorCode set to the Status' Kafka code (INVALID_REQUEST when it
// carries none). R is one of the generated *Response types.
template <typename R>
R refusal_response(const Status& refused) {
  R response;
  const int16_t code = refused.kafka_error_code();
  response.error_code = code != 0 ? code : protocol::to_int(protocol::ErrorCode::kInvalidRequest);
  return response;
}

// --- Vote ------------------------------------------------------------------

// voter_id: the replica the request goes to.
protocol::VoteRequest to_kafka(const VoteRequest& request, const GroupAddress& address, NodeId voter_id);
// local_id: this replica (checked against VoterId).
Status from_kafka(const protocol::VoteRequest& request, const GroupAddress& address, NodeId local_id,
                  VoteRequest* out);
protocol::VoteResponse to_kafka(const VoteResponse& response, const GroupAddress& address);
Status from_kafka(const protocol::VoteResponse& response, const GroupAddress& address, VoteResponse* out);

// --- BeginQuorumEpoch ----------------------------------------------------------

protocol::BeginQuorumEpochRequest to_kafka(const BeginQuorumEpochRequest& request, const GroupAddress& address,
                                           NodeId voter_id);
Status from_kafka(const protocol::BeginQuorumEpochRequest& request, const GroupAddress& address, NodeId local_id,
                  BeginQuorumEpochRequest* out);
protocol::BeginQuorumEpochResponse to_kafka(const BeginQuorumEpochResponse& response, const GroupAddress& address);
Status from_kafka(const protocol::BeginQuorumEpochResponse& response, const GroupAddress& address,
                  BeginQuorumEpochResponse* out);

// --- EndQuorumEpoch ------------------------------------------------------------

// preferred_successors travel as PreferredSuccessors (v0) and
// PreferredCandidates (v1+, zero directory ids); decoding reads whichever
// the version carried.
protocol::EndQuorumEpochRequest to_kafka(const EndQuorumEpochRequest& request, const GroupAddress& address);
Status from_kafka(const protocol::EndQuorumEpochRequest& request, const GroupAddress& address,
                  EndQuorumEpochRequest* out);
protocol::EndQuorumEpochResponse to_kafka(const EndQuorumEpochAck& ack, const GroupAddress& address);
Status from_kafka(const protocol::EndQuorumEpochResponse& response, const GroupAddress& address,
                  EndQuorumEpochAck* out);

// --- Fetch -------------------------------------------------------------------

// The request as version `version` carries it (ReplicaState from v15,
// ReplicaId before). REQUIRES: kMinFetchVersion <= version <= kFetchVersion.
protocol::FetchRequest to_kafka(const FetchRequest& request, const GroupAddress& address, const FetchLimits& limits,
                                int16_t version = kFetchVersion);
Status from_kafka(const protocol::FetchRequest& request, const GroupAddress& address, FetchRequest* out);

// *out's Records view *records_storage, which must outlive *out (and stay
// unmodified). Fails only for an entry kafka_entries cannot encode.
Status to_kafka(const FetchResponse& response, const GroupAddress& address, const EntryEncoding& encoding,
                std::vector<uint8_t>* records_storage, protocol::FetchResponse* out);
// expected_base: the fetch offset of the request this answers; the records
// must start there and *out's base_offset is set to it.
Status from_kafka(const protocol::FetchResponse& response, const GroupAddress& address, Offset expected_base,
                  FetchResponse* out);

// --- Fetches of many groups in one request ----------------------------------
// A follower node fetches for all the partition groups it follows on one
// leader node with one FetchRequest, one partition per group (as Kafka's
// replica fetcher does). Each partition stands for the single-partition
// request of its group, which from_kafka above decodes; a group's
// `recovering` travels as the partition's tagged field kRecoveringTag.

// One group's fetch (request.payload is a FetchRequest).
struct GroupFetch {
  GroupAddress group;
  Message request;
};

// REQUIRES: fetches not empty, each one a FetchRequest of the same replica.
protocol::FetchRequest to_kafka_fetches(const std::vector<GroupFetch>& fetches, const FetchLimits& limits);
// The single-partition request that partition `partition` of topic `topic`
// of request stands for (the partition's tags, its recovering, added to
// the request's own).
protocol::FetchRequest single_fetch(const protocol::FetchRequest& request, size_t topic, size_t partition);
// The single-partition response for address within a response to
// to_kafka_fetches (its records still view the response's buffer); false
// when the response has no partition for it.
bool single_fetch_response(const protocol::FetchResponse& response, const GroupAddress& address,
                           protocol::FetchResponse* out);

// --- FetchSnapshot -----------------------------------------------------------

protocol::FetchSnapshotRequest to_kafka(const FetchSnapshotRequest& request, const GroupAddress& address,
                                        int32_t max_bytes);
Status from_kafka(const protocol::FetchSnapshotRequest& request, const GroupAddress& address,
                  FetchSnapshotRequest* out);
// The response's records view response.bytes, which must outlive it.
protocol::FetchSnapshotResponse to_kafka(const FetchSnapshotResponse& response, const GroupAddress& address);
Status from_kafka(const protocol::FetchSnapshotResponse& response, const GroupAddress& address,
                  FetchSnapshotResponse* out);

}  // namespace eddy::raft
