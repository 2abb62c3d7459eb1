// The committed offsets of every group: OffsetCommit, OffsetFetch,
// OffsetDelete, group deletion and offset expiry.
//
// Durability: the meta store holds the only copy (nothing is cached here),
// so a fetch returns what the last acknowledged commit stored, across
// restarts. One transaction per request.
//
// GroupOffsets knows nothing of membership: the coordinator decides whether
// the sender may commit (the group verdict) and which topics the group's
// members subscribe to, and passes that in.
//
// Threading: REQUIRES every call on one thread (the coordinator's).
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "meta/meta_store.h"
#include "protocol/errors.h"
#include "protocol/generated/messages.h"

namespace eddy::group {

// Where the committed-offset checks look up topics: false for a topic or
// partition that does not exist.
using PartitionExists = std::function<bool(const std::string& topic, int32_t partition)>;

// The topics a group's members subscribe to: OffsetDelete keeps their
// offsets.
struct SubscribedTopics {
  // Some member's subscription is unknown (another protocol type, metadata
  // that does not decode): every topic counts as subscribed.
  bool all = false;
  std::set<std::string> names;

  bool contains(const std::string& topic) const { return all || names.count(topic) > 0; }
};

class GroupOffsets {
 public:
  // REQUIRES: meta outlives this. metadata_max_bytes: offset.metadata.max.bytes;
  // retention_ms: offsets.retention.minutes.
  GroupOffsets(meta::MetaStore* meta, PartitionExists partition_exists, int32_t metadata_max_bytes,
               int64_t retention_ms);

  // OffsetCommit. group_verdict: the coordinator's answer for the sender;
  // when not NONE it is every partition's answer and nothing is stored.
  // now_ms: the commit timestamp (what expiry measures from).
  protocol::OffsetCommitResponse commit(const protocol::OffsetCommitRequest& request, int16_t version,
                                        protocol::ErrorCode group_verdict, int64_t now_ms);
  // OffsetFetch. With require_stable (v7+) a partition with offsets staged
  // by an open transaction answers UNSTABLE_OFFSET_COMMIT (offset -1).
  // refused (not NONE): every group (v8+) or the request (its partitions
  // before v2) answered with that code instead, nothing read.
  protocol::OffsetFetchResponse fetch(const protocol::OffsetFetchRequest& request, int16_t version,
                                      protocol::ErrorCode refused = protocol::ErrorCode::kNone);

  // TxnOffsetCommit (group_txn_offsets.cc): stages the offsets for the
  // transaction of request.producer_id (applied or dropped by
  // complete_transaction). txn_verdict: the transaction coordinator's and
  // the group's answer for the sender; when not NONE it is every
  // partition's answer and nothing is staged.
  protocol::TxnOffsetCommitResponse commit_transactional(const protocol::TxnOffsetCommitRequest& request,
                                                         int16_t version, protocol::ErrorCode txn_verdict,
                                                         int64_t now_ms);
  // The transaction of producer_id ended: its staged offsets in group
  // become the committed ones (commit) or are dropped.
  Status complete_transaction(const std::string& group, int64_t producer_id, bool commit);
  // OffsetDelete. group_is_live: the coordinator holds the group (a group
  // with neither members nor offsets is GROUP_ID_NOT_FOUND). Partitions of
  // subscribed topics are refused with GROUP_SUBSCRIBED_TO_TOPIC.
  protocol::OffsetDeleteResponse remove(const protocol::OffsetDeleteRequest& request, bool group_is_live,
                                        const SubscribedTopics& subscribed);

  // Groups with at least one committed offset, sorted.
  Status groups_with_offsets(std::vector<std::string>* out);
  Status has_offsets(const std::string& group, bool* out);
  // Every offset of group, committed or staged by a transaction
  // (DeleteGroups).
  Status remove_group(const std::string& group);
  // Deletes the offsets of empty_groups committed retention_ms or more
  // before now_ms, and logs how many went (a failure as a warning).
  // REQUIRES: empty_groups have no members (Kafka never expires the offsets
  // of a group with members).
  Status expire(const std::vector<std::string>& empty_groups, int64_t now_ms);
  // What expire() would delete, deleting nothing.
  Status find_expired(const std::vector<std::string>& empty_groups, int64_t now_ms,
                      std::vector<meta::GroupTopicPartition>* out);

 private:
  // The answer to one partition of a commit the group verdict allows.
  protocol::ErrorCode check_partition(const std::string& topic,
                                      const protocol::OffsetCommitRequest::OffsetCommitRequestPartition& p) const;
  // require_stable: marks the partitions of one group's answer that have
  // staged offsets (UNSTABLE_OFFSET_COMMIT). *error on a storage failure.
  template <typename Topic>
  void mark_unstable(const std::string& group, std::vector<Topic>* topics, protocol::ErrorCode* error);
  // Stores batch; on failure every partition answered NONE in *response
  // becomes COORDINATOR_NOT_AVAILABLE.
  void store(const std::string& group, const std::vector<meta::CommittedOffset>& batch,
             protocol::OffsetCommitResponse* response);

  meta::MetaStore* meta_;
  PartitionExists partition_exists_;
  int32_t metadata_max_bytes_;
  int64_t retention_ms_;
};

}  // namespace eddy::group
