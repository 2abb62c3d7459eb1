// Committed offsets, group listing, description and deletion.
#include <algorithm>
#include <cctype>
#include <set>

#include "group/coordinator.h"
#include "port/log.h"
#include "protocol/consumer_protocol.h"
#include "protocol/errors.h"

namespace eddy::group {

using protocol::ErrorCode;
using protocol::to_int;

protocol::OffsetCommitResponse Coordinator::commit_offsets(const protocol::OffsetCommitRequest& req,
                                                           int16_t version) {
  protocol::OffsetCommitResponse r;
  // The group-level verdict, applied to every partition when not NONE.
  ErrorCode group_error = ErrorCode::kNone;
  Group* g = find_group(req.group_id);
  const int32_t generation = version >= 1 ? req.generation_id_or_member_epoch : -1;
  if (draining_) {
    group_error = ErrorCode::kCoordinatorNotAvailable;
  } else if (req.group_id.empty()) {
    group_error = ErrorCode::kInvalidGroupId;
  } else if (g == nullptr) {
    // No live group: only a commit outside group management is accepted.
    if (generation >= 0) group_error = ErrorCode::kIllegalGeneration;
  } else {
    const std::optional<std::string> instance = version >= 7 ? req.group_instance_id : std::nullopt;
    if (instance && !instance->empty()) {
      auto it = g->static_members.find(*instance);
      if (it != g->static_members.end() && it->second != req.member_id) group_error = ErrorCode::kFencedInstanceId;
    }
    if (group_error == ErrorCode::kNone && !(generation < 0 && g->state() == State::kEmpty)) {
      auto it = g->members.find(req.member_id);
      if (it == g->members.end()) {
        group_error = ErrorCode::kUnknownMemberId;
      } else if (generation != g->generation) {
        group_error = ErrorCode::kIllegalGeneration;
      } else if (g->state() == State::kCompletingRebalance) {
        group_error = ErrorCode::kRebalanceInProgress;
      } else {
        schedule_session_timeout(*g, it->second);
      }
    }
  }

  std::vector<meta::CommittedOffset> batch;
  const int64_t now = timers_.now_ms();
  for (const auto& topic : req.topics) {
    protocol::OffsetCommitResponse::OffsetCommitResponseTopic rt;
    rt.name = topic.name;
    for (const auto& p : topic.partitions) {
      protocol::OffsetCommitResponse::OffsetCommitResponsePartition rp;
      rp.partition_index = p.partition_index;
      ErrorCode e = group_error;
      const std::string metadata = p.committed_metadata.value_or("");
      if (e == ErrorCode::kNone) {
        if (!partition_exists_(topic.name, p.partition_index)) {
          e = ErrorCode::kUnknownTopicOrPartition;
        } else if (metadata.size() > static_cast<size_t>(options_.offset_metadata_max_bytes)) {
          e = ErrorCode::kOffsetMetadataTooLarge;
        }
      }
      if (e == ErrorCode::kNone) {
        meta::CommittedOffset c;
        c.topic = topic.name;
        c.partition = p.partition_index;
        c.offset = p.committed_offset;
        c.leader_epoch = version >= 6 ? p.committed_leader_epoch : -1;
        c.metadata = metadata;
        c.commit_timestamp_ms = now;
        batch.push_back(std::move(c));
      }
      rp.error_code = to_int(e);
      rt.partitions.push_back(rp);
    }
    r.topics.push_back(std::move(rt));
  }
  if (!batch.empty()) {
    meta::Status s = meta_->offsets().commit(req.group_id, batch);
    if (!s.ok()) {
      EDDY_LOG_WARN("group %s: committing %zu offsets: %s", req.group_id.c_str(), batch.size(), s.message().c_str());
      for (auto& t : r.topics) {
        for (auto& p : t.partitions) {
          if (p.error_code == 0) p.error_code = to_int(ErrorCode::kCoordinatorNotAvailable);
        }
      }
    }
  }
  return r;
}

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

// Offsets of one group: all of them (topics == nullopt) or the named
// partitions, -1 for those without a commit. *error on a storage failure.
template <typename Topic, typename RequestTopic>
std::vector<Topic> fetch_group(meta::MetaStore* meta, const std::string& group,
                               const std::optional<std::vector<RequestTopic>>& topics, ErrorCode* error) {
  using Partition = typename decltype(Topic::partitions)::value_type;
  std::vector<Topic> out;
  *error = ErrorCode::kNone;
  std::vector<meta::CommittedOffset> found;
  if (!topics) {
    meta::Status s = meta->offsets().fetch_all(group, &found);
    if (!s.ok()) {
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
  std::vector<meta::TopicPartition> wanted;
  for (const auto& t : *topics) {
    for (int32_t p : t.partition_indexes) wanted.push_back({t.name, p});
  }
  meta::Status s = meta->offsets().fetch(group, wanted, &found);
  if (!s.ok()) {
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

protocol::OffsetFetchResponse Coordinator::fetch_offsets(const protocol::OffsetFetchRequest& req, int16_t version) {
  protocol::OffsetFetchResponse r;
  if (version >= 8) {
    for (const auto& group : req.groups) {
      protocol::OffsetFetchResponse::OffsetFetchResponseGroup rg;
      rg.group_id = group.group_id;
      ErrorCode e = ErrorCode::kNone;
      if (group.group_id.empty()) {
        e = ErrorCode::kInvalidGroupId;
      } else {
        rg.topics = fetch_group<protocol::OffsetFetchResponse::OffsetFetchResponseTopics>(meta_, group.group_id,
                                                                                          group.topics, &e);
      }
      rg.error_code = to_int(e);
      r.groups.push_back(std::move(rg));
    }
    return r;
  }
  ErrorCode e = ErrorCode::kNone;
  if (req.group_id.empty()) {
    e = ErrorCode::kInvalidGroupId;
  } else {
    r.topics = fetch_group<protocol::OffsetFetchResponse::OffsetFetchResponseTopic>(meta_, req.group_id, req.topics, &e);
  }
  r.error_code = to_int(e);
  if (version < 2 && e != ErrorCode::kNone) {
    // No top-level error before v2: report it on every partition.
    for (auto& t : r.topics)
      for (auto& p : t.partitions) p.error_code = to_int(e);
  }
  return r;
}

protocol::OffsetDeleteResponse Coordinator::delete_offsets(const protocol::OffsetDeleteRequest& req) {
  protocol::OffsetDeleteResponse r;
  if (req.group_id.empty()) {
    r.error_code = to_int(ErrorCode::kInvalidGroupId);
    return r;
  }
  std::vector<meta::CommittedOffset> existing;
  const Group* g = find_group(req.group_id);
  meta::Status s = meta_->offsets().fetch_all(req.group_id, &existing);
  if (!s.ok()) {
    r.error_code = to_int(ErrorCode::kCoordinatorNotAvailable);
    return r;
  }
  if (g == nullptr && existing.empty()) {
    r.error_code = to_int(ErrorCode::kGroupIdNotFound);
    return r;
  }
  // Topics the live members subscribe to keep their offsets.
  std::set<std::string> subscribed;
  bool unknown_subscriptions = false;
  if (g != nullptr && !g->members.empty()) {
    if (g->protocol_type != "consumer") unknown_subscriptions = true;
    for (const auto& [id, m] : g->members) {
      const auto* md = m.metadata_for(g->protocol_name);
      protocol::ConsumerProtocolSubscription sub;
      int16_t v = 0;
      if (md == nullptr || !protocol::decode_consumer_subscription(*md, &sub, &v).ok()) {
        unknown_subscriptions = true;
        continue;
      }
      subscribed.insert(sub.topics.begin(), sub.topics.end());
    }
  }
  std::vector<meta::TopicPartition> removable;
  for (const auto& t : req.topics) {
    protocol::OffsetDeleteResponse::OffsetDeleteResponseTopic rt;
    rt.name = t.name;
    for (const auto& p : t.partitions) {
      protocol::OffsetDeleteResponse::OffsetDeleteResponsePartition rp;
      rp.partition_index = p.partition_index;
      if (unknown_subscriptions || subscribed.count(t.name)) {
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
  if (!removable.empty()) {
    s = meta_->offsets().remove(req.group_id, removable);
    if (!s.ok()) {
      r.topics.clear();
      r.error_code = to_int(ErrorCode::kCoordinatorNotAvailable);
    }
  }
  // The group outlives its last offsets until the next sweep, as in Kafka
  // (DeleteGroups right after still finds it).
  if (r.error_code == 0) get_or_create_group(req.group_id);
  return r;
}

protocol::ListGroupsResponse Coordinator::list_groups(const protocol::ListGroupsRequest& req) {
  protocol::ListGroupsResponse r;
  std::map<std::string, std::pair<std::string, std::string>> all;  // id -> (protocol type, state)
  std::vector<std::string> with_offsets;
  meta::Status s = meta_->offsets().list_groups(&with_offsets);
  if (!s.ok()) {
    r.error_code = to_int(ErrorCode::kCoordinatorNotAvailable);
    return r;
  }
  // A group known only by its committed offsets is a simple group (no
  // protocol type), as Kafka lists one created by commits or the Admin.
  for (const auto& id : with_offsets) all[id] = {"", group_state_name(State::kEmpty)};
  for (const auto& [id, g] : groups_) all[id] = {g->protocol_type, group_state_name(g->state())};
  for (const auto& [id, info] : all) {
    if (!req.states_filter.empty()) {
      bool match = false;
      for (const auto& f : req.states_filter) {
        std::string a = f, b = info.second;
        std::transform(a.begin(), a.end(), a.begin(), ::tolower);
        std::transform(b.begin(), b.end(), b.begin(), ::tolower);
        match = match || a == b;
      }
      if (!match) continue;
    }
    if (!req.types_filter.empty()) {
      bool match = false;
      for (const auto& f : req.types_filter) {
        std::string a = f;
        std::transform(a.begin(), a.end(), a.begin(), ::tolower);
        match = match || a == "classic";
      }
      if (!match) continue;
    }
    protocol::ListGroupsResponse::ListedGroup lg;
    lg.group_id = id;
    lg.protocol_type = info.first;
    lg.group_state = info.second;
    lg.group_type = "classic";
    r.groups.push_back(std::move(lg));
  }
  return r;
}

protocol::DescribeGroupsResponse Coordinator::describe_groups(const protocol::DescribeGroupsRequest& req) {
  protocol::DescribeGroupsResponse r;
  for (const auto& id : req.groups) {
    protocol::DescribeGroupsResponse::DescribedGroup dg;
    dg.group_id = id;
    const Group* g = find_group(id);
    if (id.empty()) {
      dg.error_code = to_int(ErrorCode::kInvalidGroupId);
      dg.group_state = group_state_name(State::kDead);
    } else if (g == nullptr) {
      std::vector<meta::CommittedOffset> offsets;
      meta::Status s = meta_->offsets().fetch_all(id, &offsets);
      if (!s.ok()) dg.error_code = to_int(ErrorCode::kCoordinatorNotAvailable);
      // Kafka: a group that does not exist is described as Dead.
      dg.group_state = group_state_name(s.ok() && !offsets.empty() ? State::kEmpty : State::kDead);
    } else {
      dg.group_state = group_state_name(g->state());
      dg.protocol_type = g->protocol_type;
      dg.protocol_data = g->protocol_name;
      for (const auto& [mid, m] : g->members) {
        protocol::DescribeGroupsResponse::DescribedGroupMember dm;
        dm.member_id = mid;
        dm.group_instance_id = m.instance_id;
        dm.client_id = m.client_id;
        dm.client_host = m.client_host;
        if (g->state() == State::kStable) {
          if (const auto* md = m.metadata_for(g->protocol_name)) dm.member_metadata = *md;
          dm.member_assignment = m.assignment;
        }
        dg.members.push_back(std::move(dm));
      }
    }
    r.groups.push_back(std::move(dg));
  }
  return r;
}

protocol::DeleteGroupsResponse Coordinator::delete_groups(const protocol::DeleteGroupsRequest& req) {
  protocol::DeleteGroupsResponse r;
  for (const auto& id : req.groups_names) {
    protocol::DeleteGroupsResponse::DeletableGroupResult dr;
    dr.group_id = id;
    const Group* g = find_group(id);
    std::vector<meta::CommittedOffset> offsets;
    meta::Status s = meta_->offsets().fetch_all(id, &offsets);
    if (id.empty()) {
      dr.error_code = to_int(ErrorCode::kInvalidGroupId);
    } else if (!s.ok()) {
      dr.error_code = to_int(ErrorCode::kCoordinatorNotAvailable);
    } else if (g != nullptr && (!g->members.empty() || !g->pending.empty())) {
      dr.error_code = to_int(ErrorCode::kNonEmptyGroup);
    } else if (g == nullptr && offsets.empty()) {
      dr.error_code = to_int(ErrorCode::kGroupIdNotFound);
    } else {
      s = meta_->offsets().remove_group(id);
      if (s.ok()) s = meta_->static_members().remove_group(id);
      if (!s.ok()) {
        dr.error_code = to_int(ErrorCode::kCoordinatorNotAvailable);
      } else if (g != nullptr) {
        erase_group(id);
      }
    }
    r.results.push_back(std::move(dr));
  }
  return r;
}

void Coordinator::schedule_expiry() {
  if (options_.offsets_retention_check_interval_ms <= 0 || draining_) return;
  expiry_timer_ = timers_.schedule_after(options_.offsets_retention_check_interval_ms, [this] {
    expiry_timer_ = 0;
    expire_offsets();
    schedule_expiry();
  });
}

void Coordinator::expire_offsets() {
  std::vector<std::string> with_offsets;
  meta::Status s = meta_->offsets().list_groups(&with_offsets);
  if (!s.ok()) {
    EDDY_LOG_WARN("offset expiry: %s", s.message().c_str());
    return;
  }
  std::vector<std::string> empty;
  for (const auto& id : with_offsets) {
    const Group* g = find_group(id);
    if (g == nullptr || (g->members.empty() && g->pending.empty())) empty.push_back(id);
  }
  if (!empty.empty()) {
    std::vector<meta::GroupTopicPartition> expired;
    s = meta_->offsets().expire(empty, timers_.now_ms() - options_.offsets_retention_ms, &expired);
    if (!s.ok()) {
      EDDY_LOG_WARN("offset expiry: %s", s.message().c_str());
      return;
    }
    if (!expired.empty()) EDDY_LOG_INFO("offset expiry: removed %zu committed offsets of empty groups", expired.size());
    s = meta_->offsets().list_groups(&with_offsets);
    if (!s.ok()) return;
  }
  // Empty groups without committed offsets are gone now.
  std::set<std::string> keep(with_offsets.begin(), with_offsets.end());
  std::vector<std::string> gone;
  for (const auto& [id, g] : groups_) {
    if (g->state() == State::kEmpty && g->members.empty() && g->pending.empty() && keep.count(id) == 0)
      gone.push_back(id);
  }
  for (const auto& id : gone) erase_group(id);
}

}  // namespace eddy::group
