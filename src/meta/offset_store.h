// Committed consumer offsets (OffsetCommit / OffsetFetch / OffsetDelete and
// offset expiry), keyed by (group, topic, partition).
//
// Durability: commit() returns only after its transaction is on stable
// storage (WAL with synchronous=FULL, see meta_store.h), so an offset
// acknowledged to a client survives a crash or power loss.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "meta/sqlite_db.h"
#include "meta/topic_partition.h"
#include "port/status.h"

namespace eddy::meta {

struct CommittedOffset {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = -1;
  int32_t leader_epoch = -1;  // -1: unknown
  std::string metadata;       // a null metadata from the wire is stored as "" (as Kafka does)
  int64_t commit_timestamp_ms = 0;

  friend bool operator==(const CommittedOffset&, const CommittedOffset&) = default;
};

struct GroupTopicPartition {
  std::string group;
  TopicPartition partition;

  friend bool operator==(const GroupTopicPartition&, const GroupTopicPartition&) = default;
};

class OffsetStore {
 public:
  explicit OffsetStore(Database* db) : db_(db) {}

  // Stores the offsets of group, replacing earlier commits of the same
  // partitions, in one transaction: all of them or none. invalid_argument for
  // a negative partition.
  Status commit(const std::string& group, const std::vector<CommittedOffset>& offsets);

  // Every committed offset of group, sorted by topic then partition.
  Status fetch_all(const std::string& group, std::vector<CommittedOffset>* out);
  // The committed offsets of the given partitions, in request order; a
  // partition without a committed offset is left out of *out.
  Status fetch(const std::string& group, const std::vector<TopicPartition>& partitions,
               std::vector<CommittedOffset>* out);

  // Deletes every offset of group (DeleteGroups). *removed (optional): rows
  // deleted.
  Status remove_group(const std::string& group, int64_t* removed = nullptr);
  // Deletes the offsets of the given partitions of group (OffsetDelete).
  Status remove(const std::string& group, const std::vector<TopicPartition>& partitions, int64_t* removed = nullptr);

  // Groups having at least one committed offset, sorted.
  Status list_groups(std::vector<std::string>* out);

  // Offset expiry (offsets.retention.minutes): deletes the offsets of the
  // given groups committed before cutoff_ms (commit_timestamp_ms < cutoff_ms).
  // REQUIRES: the caller passes only groups that are empty (Kafka never
  // expires the offsets of a group with members). *expired (optional)
  // receives what was deleted, so the caller can drop its cached copies.
  Status expire(const std::vector<std::string>& empty_groups, int64_t cutoff_ms,
                std::vector<GroupTopicPartition>* expired = nullptr);
  // What expire() would delete, deleting nothing (a cluster's coordinator
  // removes it on every node through the controller log), by group, topic,
  // partition.
  Status find_expired(const std::vector<std::string>& empty_groups, int64_t cutoff_ms,
                      std::vector<GroupTopicPartition>* out);

 private:
  Database* db_;
};

}  // namespace eddy::meta
