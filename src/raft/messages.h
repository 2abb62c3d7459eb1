// raft/messages.h — the messages replicas exchange, as plain structs. They
// carry the fields of Kafka's KRaft RPCs (VoteRequest.json,
// BeginQuorumEpochRequest.json, EndQuorumEpochRequest.json,
// FetchSnapshotRequest.json, FetchRequest's
// KRaft fields: lastFetchedEpoch, divergingEpoch, highWatermark,
// snapshotId); raft/kafka_wire.h converts them to and from Kafka's.
#pragma once

#include <limits>
#include <string>
#include <variant>
#include <vector>

#include "raft/types.h"

namespace eddy::raft {

struct VoteRequest {
  Epoch candidate_epoch = 0;
  NodeId candidate_id = kNoNode;
  Epoch last_offset_epoch = 0;  // epoch of the candidate's last entry
  Offset last_offset = 0;       // the candidate's log end offset
};

struct VoteResponse {
  Epoch leader_epoch = 0;  // the voter's epoch
  NodeId leader_id = kNoNode;
  bool vote_granted = false;
};

struct BeginQuorumEpochRequest {
  Epoch leader_epoch = 0;
  NodeId leader_id = kNoNode;
};

struct BeginQuorumEpochResponse {
  Epoch leader_epoch = 0;
  NodeId leader_id = kNoNode;
};

struct EndQuorumEpochRequest {
  Epoch leader_epoch = 0;
  NodeId leader_id = kNoNode;
  std::vector<NodeId> preferred_successors;  // most up to date first
};

struct FetchRequest {
  Epoch current_leader_epoch = 0;  // the follower's epoch
  NodeId replica_id = kNoNode;
  Offset fetch_offset = 0;        // the follower's durable log end
  Epoch last_fetched_epoch = 0;   // epoch of the entry before fetch_offset
  // The fetcher lost its disk and has not caught up yet: the leader counts
  // it neither for the high watermark nor for check-quorum. (Kafka tells a
  // wiped voter apart by its ReplicaDirectoryId, KIP-853.)
  bool recovering = false;
};

enum class FetchError : uint8_t {
  kNone = 0,
  kFencedLeaderEpoch,   // the fetcher's epoch is older than the receiver's
  kNotLeader,           // the receiver is not the leader of that epoch
  kSnapshotNotFound,    // FetchSnapshot: not the leader's latest snapshot
  kPositionOutOfRange,  // FetchSnapshot: a position past the snapshot's end
};

struct FetchResponse {
  FetchError error = FetchError::kNone;
  Epoch leader_epoch = 0;
  NodeId leader_id = kNoNode;
  Offset high_watermark = 0;
  // Set when the follower's log diverged: truncate to the smaller of this
  // end offset and the follower's end offset for this epoch, fetch again.
  bool diverging = false;
  EpochEndOffset diverging_epoch;
  // Set (not empty) when the entries the follower needs are gone from the
  // leader's log: it fetches this snapshot (FetchSnapshot), then the log
  // after it.
  SnapshotId snapshot_id;
  Offset base_offset = 0;  // offset of entries[0]
  std::vector<Entry> entries;
  // Set by a leader that does not read its entries into the answer
  // (ReplicaOptions::leader_reads_entries false): entries is empty and the
  // entries to send are the leader's log's from base_offset on, as many as
  // the transport's byte bound takes. The receiver's decoded answer never
  // has it set.
  bool entries_in_log = false;
};

// KRaft's FetchSnapshot: a chunk of the leader's latest snapshot.
struct FetchSnapshotRequest {
  Epoch current_leader_epoch = 0;
  NodeId replica_id = kNoNode;
  SnapshotId snapshot_id;
  int64_t position = 0;  // bytes the fetcher already holds
  int32_t max_bytes = std::numeric_limits<int32_t>::max();  // of the answer's chunk (Kafka's MaxBytes)
};

struct FetchSnapshotResponse {
  FetchError error = FetchError::kNone;
  Epoch leader_epoch = 0;
  NodeId leader_id = kNoNode;
  SnapshotId snapshot_id;
  int64_t size = 0;      // of the whole snapshot
  int64_t position = 0;  // of bytes[0]
  std::string bytes;
};

using Payload = std::variant<VoteRequest, VoteResponse, BeginQuorumEpochRequest, BeginQuorumEpochResponse,
                             EndQuorumEpochRequest, FetchRequest, FetchResponse, FetchSnapshotRequest,
                             FetchSnapshotResponse>;

struct Message {
  NodeId from = kNoNode;
  NodeId to = kNoNode;
  // As in Kafka's request header: a response carries its request's id. A
  // follower applies only the answer to its latest fetch, so a duplicated
  // or late answer to an older one cannot truncate its log again.
  int32_t correlation_id = 0;
  Payload payload;
};

// Whether answer is the core's answer to request (to its sender, of the
// matching type). EndQuorumEpoch has no answer in the core.
inline bool answers(const Message& answer, const Message& request) {
  if (answer.to != request.from) return false;
  const Payload& a = answer.payload;
  const Payload& r = request.payload;
  if (std::holds_alternative<VoteRequest>(r)) return std::holds_alternative<VoteResponse>(a);
  if (std::holds_alternative<BeginQuorumEpochRequest>(r)) return std::holds_alternative<BeginQuorumEpochResponse>(a);
  if (std::holds_alternative<FetchRequest>(r)) return std::holds_alternative<FetchResponse>(a);
  if (std::holds_alternative<FetchSnapshotRequest>(r)) return std::holds_alternative<FetchSnapshotResponse>(a);
  return false;
}

inline bool is_request(const Payload& p) {
  return std::holds_alternative<VoteRequest>(p) || std::holds_alternative<BeginQuorumEpochRequest>(p) ||
         std::holds_alternative<EndQuorumEpochRequest>(p) || std::holds_alternative<FetchRequest>(p) ||
         std::holds_alternative<FetchSnapshotRequest>(p);
}

}  // namespace eddy::raft
