// broker/replicated_partition.h — what the broker answers for a partition
// of a Raft group (partition_replication.h), decided from the group's
// ReplicaStatus alone. Pure functions, so that each rule is tested without a
// running broker (tests/unit/broker/replicated_partition_test.cc); the
// handlers (produce.cc, fetch.cc, offsets.cc, metadata.cc) apply them only
// where status.replicated is true: a partition without a group is answered
// as it always was.
#pragma once

#include <cstdint>
#include <string>

#include "broker/partition_replication.h"
#include "protocol/errors.h"
#include "protocol/generated/messages.h"
#include "storage/epoch_index.h"

namespace eddy::broker {

// Whether a client may be served by this replica, as Kafka's
// Partition.getLocalLog with requireLeader: the request's CurrentLeaderEpoch
// (KIP-320; -1: not given, or a version without it) older than the group's
// epoch -> FENCED_LEADER_EPOCH, newer -> UNKNOWN_LEADER_EPOCH; then a
// replica that does not lead -> NOT_LEADER_OR_FOLLOWER (a leader without
// its majority still serves reads; produce refuses it on its own). NONE:
// serve it.
// REQUIRES status.replicated.
protocol::ErrorCode leader_error(const ReplicaStatus& status, int32_t current_leader_epoch);

// KIP-951's hint for a client refused with error: the leader and epoch this
// replica knows, so that it goes there without asking Metadata first. Only
// for NOT_LEADER_OR_FOLLOWER when another node leads (leader_id >= 0, not
// self), and for FENCED_LEADER_EPOCH when any node leads (the client's
// epoch is stale, maybe for this very leader). False: no hint.
struct LeaderHint {
  int32_t leader_id = -1;
  int32_t leader_epoch = -1;
};
bool leader_hint(const ReplicaStatus& status, protocol::ErrorCode error, int32_t self, LeaderHint* hint);

// acks=all (Kafka's Partition.appendRecordsToLeader): NOT_ENOUGH_REPLICAS,
// before anything is appended, when fewer replicas than the topic's
// min.insync.replicas are in sync. REQUIRES status.replicated and
// status.leader (a leader's ISR holds at least itself).
bool enough_in_sync(const ReplicaStatus& status, int32_t min_insync_replicas);
// Kafka's message for it.
std::string not_enough_replicas_message(const std::string& topic, int32_t partition, const ReplicaStatus& status,
                                        int32_t min_insync_replicas);

// Metadata's entry of a local replicated partition: the leader and epoch as
// the group has them (no leader: LEADER_NOT_AVAILABLE with leader -1, as
// Kafka), the group's voters as replicas, and the ISR. Only the leader knows
// the ISR: a follower answers its replicas as the ISR, a known
// approximation (Kafka's followers answer the controller's ISR instead).
// No offline replicas (metadata.cc then names those on fenced nodes,
// fenced_replicas.h). partition_index is left as it is.
void describe_replicated_partition(const ReplicaStatus& status,
                                   protocol::MetadataResponse::MetadataResponsePartition* out);

// OffsetForLeaderEpoch's answer (Kafka's LeaderEpochFileCache.endOffsetFor)
// over the log's epoch index: {-1, -1} for epoch -1, an empty index or an
// epoch above every known one; {epoch, log end} for the latest epoch;
// otherwise the largest known epoch <= epoch (or epoch itself when every
// known one is larger) and the start offset of the next known epoch.
storage::EpochEndOffset kafka_end_offset_for_epoch(const storage::EpochIndex& epochs, int32_t epoch,
                                                   int64_t log_end_offset);

}  // namespace eddy::broker
