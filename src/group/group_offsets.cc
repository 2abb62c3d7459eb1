#include "group/group_offsets.h"

#include <utility>

#include "port/log.h"

namespace eddy::group {

using protocol::ErrorCode;
using protocol::to_int;

GroupOffsets::GroupOffsets(meta::MetaStore* meta, PartitionExists partition_exists, int32_t metadata_max_bytes,
                           int64_t retention_ms)
    : meta_(meta),
      partition_exists_(std::move(partition_exists)),
      metadata_max_bytes_(metadata_max_bytes),
      retention_ms_(retention_ms) {}

// ---- OffsetCommit -----------------------------------------------------------

protocol::OffsetCommitResponse GroupOffsets::commit(const protocol::OffsetCommitRequest& req, int16_t version,
                                                    ErrorCode group_verdict, int64_t now_ms) {
  protocol::OffsetCommitResponse r;
  std::vector<meta::CommittedOffset> batch;
  for (const auto& topic : req.topics) {
    protocol::OffsetCommitResponse::OffsetCommitResponseTopic rt;
    rt.name = topic.name;
    for (const auto& p : topic.partitions) {
      const ErrorCode e = group_verdict != ErrorCode::kNone ? group_verdict : check_partition(topic.name, p);
      if (e == ErrorCode::kNone) {
        meta::CommittedOffset c;
        c.topic = topic.name;
        c.partition = p.partition_index;
        c.offset = p.committed_offset;
        c.leader_epoch = version >= 6 ? p.committed_leader_epoch : -1;
        c.metadata = p.committed_metadata.value_or("");
        c.commit_timestamp_ms = now_ms;
        batch.push_back(std::move(c));
      }
      protocol::OffsetCommitResponse::OffsetCommitResponsePartition rp;
      rp.partition_index = p.partition_index;
      rp.error_code = to_int(e);
      rt.partitions.push_back(rp);
    }
    r.topics.push_back(std::move(rt));
  }
  if (!batch.empty()) store(req.group_id, batch, &r);
  return r;
}

ErrorCode GroupOffsets::check_partition(const std::string& topic,
                                        const protocol::OffsetCommitRequest::OffsetCommitRequestPartition& p) const {
  if (!partition_exists_(topic, p.partition_index)) return ErrorCode::kUnknownTopicOrPartition;
  if (p.committed_metadata.value_or("").size() > static_cast<size_t>(metadata_max_bytes_))
    return ErrorCode::kOffsetMetadataTooLarge;
  return ErrorCode::kNone;
}

void GroupOffsets::store(const std::string& group, const std::vector<meta::CommittedOffset>& batch,
                         protocol::OffsetCommitResponse* response) {
  Status s = meta_->offsets().commit(group, batch);
  if (s.ok()) return;
  EDDY_LOG_WARN("group {}: committing {} offsets: {}", group, batch.size(), s.message());
  for (auto& t : response->topics) {
    for (auto& p : t.partitions) {
      if (p.error_code == 0) p.error_code = to_int(ErrorCode::kCoordinatorNotAvailable);
    }
  }
}

// ---- OffsetFetch ------------------------------------------------------------

namespace {

template <typename Partition>
Partition to_fetched(const meta::CommittedOffset* c, int32_t partition) {
  Partition p;
  p.partition_index = partition;
  p.committed_offset = c ? c->offset : -1;
  p.committed_leader_epoch = c ? c->leader_epoch : -1;
  p.metadata = c ? c->metadata : "";
  return p;
}

// Every committed offset of group, by topic. *error on a storage failure.
template <typename Topic>
std::vector<Topic> fetch_all_of_group(meta::OffsetStore& offsets, const std::string& group, ErrorCode* error) {
  using Partition = typename decltype(Topic::partitions)::value_type;
  std::vector<Topic> out;
  std::vector<meta::CommittedOffset> found;
  if (!offsets.fetch_all(group, &found).ok()) {
    *error = ErrorCode::kCoordinatorNotAvailable;
    return out;
  }
  for (const auto& c : found) {
    if (out.empty() || out.back().name != c.topic) {
      out.emplace_back();
      out.back().name = c.topic;
    }
    out.back().partitions.push_back(to_fetched<Partition>(&c, c.partition));
  }
  return out;
}

// Offsets of one group: all of them (topics == nullopt) or the named
// partitions, -1 for those without a commit. *error on a storage failure.
template <typename Topic, typename RequestTopic>
std::vector<Topic> fetch_group(meta::OffsetStore& offsets, const std::string& group,
                               const std::optional<std::vector<RequestTopic>>& topics, ErrorCode* error) {
  using Partition = typename decltype(Topic::partitions)::value_type;
  *error = ErrorCode::kNone;
  if (!topics) return fetch_all_of_group<Topic>(offsets, group, error);
  std::vector<Topic> out;
  std::vector<meta::TopicPartition> wanted;
  for (const auto& t : *topics) {
    for (int32_t p : t.partition_indexes) wanted.push_back({t.name, p});
  }
  std::vector<meta::CommittedOffset> found;
  if (!offsets.fetch(group, wanted, &found).ok()) {
    *error = ErrorCode::kCoordinatorNotAvailable;
    return out;
  }
  for (const auto& t : *topics) {
    Topic rt;
    rt.name = t.name;
    for (int32_t p : t.partition_indexes) {
      const meta::CommittedOffset* hit = nullptr;
      for (const auto& c : found) {
        if (c.topic == t.name && c.partition == p) hit = &c;
      }
      rt.partitions.push_back(to_fetched<Partition>(hit, p));
    }
    out.push_back(std::move(rt));
  }
  return out;
}

}  // namespace

protocol::OffsetFetchResponse GroupOffsets::fetch(const protocol::OffsetFetchRequest& req, int16_t version,
                                                 ErrorCode refused) {
  protocol::OffsetFetchResponse r;
  if (version >= 8) {
    for (const auto& group : req.groups) {
      protocol::OffsetFetchResponse::OffsetFetchResponseGroup rg;
      rg.group_id = group.group_id;
      ErrorCode e = refused;
      if (e != ErrorCode::kNone) {
        // refused: nothing read
      } else if (group.group_id.empty()) {
        e = ErrorCode::kInvalidGroupId;
      } else {
        rg.topics = fetch_group<protocol::OffsetFetchResponse::OffsetFetchResponseTopics>(
            meta_->offsets(), group.group_id, group.topics, &e);
        if (req.require_stable && e == ErrorCode::kNone) mark_unstable(group.group_id, &rg.topics, &e);
      }
      rg.error_code = to_int(e);
      r.groups.push_back(std::move(rg));
    }
    return r;
  }
  ErrorCode e = refused;
  if (e != ErrorCode::kNone) {
    if (version < 2 && req.topics.has_value()) {
      // The partitions asked for carry the code (no top-level error yet).
      for (const auto& t : *req.topics) {
        protocol::OffsetFetchResponse::OffsetFetchResponseTopic rt;
        rt.name = t.name;
        for (int32_t p : t.partition_indexes) {
          protocol::OffsetFetchResponse::OffsetFetchResponsePartition rp;
          rp.partition_index = p;
          rt.partitions.push_back(std::move(rp));
        }
        r.topics.push_back(std::move(rt));
      }
    }
  } else if (req.group_id.empty()) {
    e = ErrorCode::kInvalidGroupId;
  } else {
    r.topics = fetch_group<protocol::OffsetFetchResponse::OffsetFetchResponseTopic>(meta_->offsets(), req.group_id,
                                                                                     req.topics, &e);
    if (version >= 7 && req.require_stable && e == ErrorCode::kNone) mark_unstable(req.group_id, &r.topics, &e);
  }
  r.error_code = to_int(e);
  if (version < 2 && e != ErrorCode::kNone) {
    // No top-level error before v2: report it on every partition.
    for (auto& t : r.topics)
      for (auto& p : t.partitions) p.error_code = to_int(e);
  }
  return r;
}

// ---- OffsetDelete, DeleteGroups, expiry -------------------------------------

protocol::OffsetDeleteResponse GroupOffsets::remove(const protocol::OffsetDeleteRequest& req, bool group_is_live,
                                                    const SubscribedTopics& subscribed) {
  protocol::OffsetDeleteResponse r;
  if (req.group_id.empty()) {
    r.error_code = to_int(ErrorCode::kInvalidGroupId);
    return r;
  }
  bool any = false;
  if (!has_offsets(req.group_id, &any).ok()) {
    r.error_code = to_int(ErrorCode::kCoordinatorNotAvailable);
    return r;
  }
  if (!group_is_live && !any) {
    r.error_code = to_int(ErrorCode::kGroupIdNotFound);
    return r;
  }
  std::vector<meta::TopicPartition> removable;
  for (const auto& t : req.topics) {
    protocol::OffsetDeleteResponse::OffsetDeleteResponseTopic rt;
    rt.name = t.name;
    for (const auto& p : t.partitions) {
      protocol::OffsetDeleteResponse::OffsetDeleteResponsePartition rp;
      rp.partition_index = p.partition_index;
      if (subscribed.contains(t.name)) {
        rp.error_code = to_int(ErrorCode::kGroupSubscribedToTopic);
      } else if (!partition_exists_(t.name, p.partition_index)) {
        rp.error_code = to_int(ErrorCode::kUnknownTopicOrPartition);
      } else {
        removable.push_back({t.name, p.partition_index});
      }
      rt.partitions.push_back(rp);
    }
    r.topics.push_back(std::move(rt));
  }
  if (!removable.empty() && !meta_->offsets().remove(req.group_id, removable).ok()) {
    r.topics.clear();
    r.error_code = to_int(ErrorCode::kCoordinatorNotAvailable);
  }
  return r;
}

Status GroupOffsets::groups_with_offsets(std::vector<std::string>* out) {
  return meta_->offsets().list_groups(out);
}

Status GroupOffsets::has_offsets(const std::string& group, bool* out) {
  std::vector<meta::CommittedOffset> offsets;
  Status s = meta_->offsets().fetch_all(group, &offsets);
  *out = s.ok() && !offsets.empty();
  return s;
}

Status GroupOffsets::remove_group(const std::string& group) {
  Status s = meta_->offsets().remove_group(group);
  return s.ok() ? meta_->pending_offsets().remove_group(group) : s;
}

Status GroupOffsets::expire(const std::vector<std::string>& empty_groups, int64_t now_ms) {
  std::vector<meta::GroupTopicPartition> expired;
  Status s = meta_->offsets().expire(empty_groups, now_ms - retention_ms_, &expired);
  if (!s.ok()) {
    EDDY_LOG_WARN("offset expiry: {}", s.message());
    return s;
  }
  if (!expired.empty()) EDDY_LOG_INFO("offset expiry: removed {} committed offsets of empty groups", expired.size());
  return s;
}

Status GroupOffsets::find_expired(const std::vector<std::string>& empty_groups, int64_t now_ms,
                                  std::vector<meta::GroupTopicPartition>* out) {
  Status s = meta_->offsets().find_expired(empty_groups, now_ms - retention_ms_, out);
  if (!s.ok()) EDDY_LOG_WARN("offset expiry: {}", s.message());
  return s;
}

}  // namespace eddy::group
