// broker/partition_replication.h — what the broker asks of the Raft groups of
// its replicated partitions (issue #16; src/raft/README.md, "Partition
// groups"). A cluster node's app implements it (app/partition_groups.*);
// a single node has none, and every partition behaves as before.
//
// A partition with replication factor > 1 is a Raft group over the nodes
// its Topic record names. Its log is the partition's PartitionLog itself
// (raft::BatchLog over it): the group's leader appends the producers'
// batches through append() below, followers append what they fetch from
// the leader, and the group's commit index is the partition's high
// watermark (PartitionLog::set_replicated_high_watermark). The broker:
//  - takes Produce only where status().leader (NOT_LEADER_OR_FOLLOWER
//    elsewhere), appends through append(), and answers acks=all once the
//    partition's high watermark passed the batch (NOT_ENOUGH_REPLICAS up
//    front when fewer than min.insync.replicas replicas are in sync);
//  - serves consumers' Fetch, ListOffsets and OffsetForLeaderEpoch only on
//    the leader, up to the high watermark, checking their leader epochs
//    (KIP-320: FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH);
//  - answers Metadata with each partition's leader, leader epoch, replicas
//    and in-sync replicas as status() says;
//  - is told (reactor thread) when a group's high watermark moved, and when
//    a follower's log grew or was cut by replication, so that waiting
//    produce and fetch requests complete and producer state follows the
//    log (a new leader keeps idempotence).
//
// Contract: the group sets the partition's replicated high watermark (its
// commit index, or the log start) before it reports leader = true, and calls
// the broker's on_replicated_high_watermark when the high watermark, the
// leader or the epoch changed. closing() may come for a log whose group is
// already gone (after the runtime stopped); status() then reports no group.
//
// Threading: every call on the reactor thread (the partitions' owner).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "port/status.h"
#include "storage/partition_log.h"

namespace eddy::broker {

// One partition as its group stands on this node now.
struct ReplicaStatus {
  // false: no group (replication factor 1, or a single node): the broker
  // acts as it always did, and the other fields mean nothing.
  bool replicated = false;
  // This node leads the group's current epoch and takes appends.
  bool leader = false;
  // The leader this node knows of (itself when leader); -1: none now.
  int32_t leader_id = -1;
  // The group's epoch: Metadata's and Fetch's leader epoch.
  int32_t leader_epoch = -1;
  // The group's voters (the Topic record's replicas of the partition).
  std::vector<int32_t> replicas;
  // The leader's view: itself and the followers that reached its log end
  // within replica.lag.time.max.ms. Empty on a follower (only the leader
  // knows).
  std::vector<int32_t> isr;
  // This node led the latest epoch it knows of and lost its majority: no
  // leader can be elected (no majority to elect one). It goes on naming
  // itself leader of that epoch with itself alone in sync (leader false,
  // leader_id itself, isr {itself}), as Kafka's last in-sync replica does:
  // it serves reads up to the high watermark and answers produce
  // NOT_ENOUGH_REPLICAS, since nothing can be committed; clients see an
  // error, not a partition without a leader that they wait on.
  bool without_majority = false;
};

class PartitionReplication {
 public:
  virtual ~PartitionReplication() = default;
  // The group of the partition whose log this is (replicated = false when
  // it has none).
  virtual ReplicaStatus status(const storage::PartitionLog* log) const = 0;
  // The leader's append of a batch the broker validated (sequence checks
  // done, LogAppendTime stamped: the group keeps the batch's bytes as they
  // are, on every replica). *result as PartitionLog::append fills it (no
  // log_append_time_ms). NOT_LEADER_OR_FOLLOWER (a Kafka code in the
  // Status) where this node does not lead, or no longer. The batch is
  // committed once log->high_watermark() > result->last_offset.
  virtual Status append(storage::PartitionLog* log, std::span<const uint8_t> batch,
                        storage::AppendResult* result) = 0;
  // The log is about to be closed or removed (its topic deleted): its
  // group, if any, lets go of it first.
  virtual void closing(storage::PartitionLog* log) = 0;
  // The log's durable offset moved (its sync completed): a leader may
  // advance the high watermark, a follower report what it holds, now
  // rather than at its next poll.
  virtual void durable(storage::PartitionLog* log) = 0;
};

}  // namespace eddy::broker
