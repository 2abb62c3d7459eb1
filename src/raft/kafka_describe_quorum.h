// raft/kafka_describe_quorum.h — Kafka's DescribeQuorum answer (what
// `kafka-metadata-quorum describe --status / --replication` shows) from a
// plain description of the group that the runtime fills on the leader.
//
// Versions 0-2: v1 adds the replicas' LastFetchTimestamp and
// LastCaughtUpTimestamp, v2 (KIP-853) the replicas' directory ids (zero:
// Eddy has none) and the Nodes with their listeners; what a version lacks
// is left out. As Kafka's KafkaRaftClient answers: a request for another
// topic-partition gets UNKNOWN_TOPIC_OR_PARTITION for each partition it
// named, and a replica that is not the leader NOT_LEADER_OR_FOLLOWER
// (describe_quorum_error).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "port/status.h"
#include "protocol/errors.h"
#include "protocol/generated/describe_quorum.h"
#include "raft/kafka_wire.h"
#include "raft/types.h"

namespace eddy::raft {

inline constexpr int16_t kDescribeQuorumVersion = 2;

struct QuorumReplicaState {
  NodeId id = kNoNode;
  Offset log_end_offset = -1;               // -1: not known yet
  int64_t last_fetch_timestamp_ms = -1;     // v1+; -1: never
  int64_t last_caught_up_timestamp_ms = -1; // v1+; -1: never
};

struct QuorumListener {
  std::string name;  // listener name, e.g. CONTROLLER
  std::string host;
  uint16_t port = 0;
};

struct QuorumNode {
  NodeId id = kNoNode;
  std::vector<QuorumListener> listeners;
};

struct QuorumDescription {
  NodeId leader_id = kNoNode;
  Epoch leader_epoch = 0;
  Offset high_watermark = -1;  // -1: not known yet (Kafka's answer too)
  std::vector<QuorumReplicaState> voters;    // the leader included
  std::vector<QuorumReplicaState> observers; // Eddy has none yet
  std::vector<QuorumNode> nodes;             // v2+: the voters' endpoints
};

// Succeeds for a request that names exactly the group's topic-partition;
// else a Status carrying UNKNOWN_TOPIC_OR_PARTITION, to be answered with
// describe_quorum_error.
Status check_describe_quorum_request(const protocol::DescribeQuorumRequest& request, const GroupAddress& address);

// The answer at `version` (0-2). REQUIRES: 0 <= version <= 2.
protocol::DescribeQuorumResponse describe_quorum_response(const QuorumDescription& quorum,
                                                          const GroupAddress& address, int16_t version);

// Every partition the request named, with `error` (UNKNOWN_TOPIC_OR_PARTITION,
// NOT_LEADER_OR_FOLLOWER).
protocol::DescribeQuorumResponse describe_quorum_error(const protocol::DescribeQuorumRequest& request,
                                                       protocol::ErrorCode error);

}  // namespace eddy::raft
