// The coordinator's side of committed offsets: who may commit, which topics
// a group subscribes to, and the periodic expiry of the offsets of empty
// groups. The offsets themselves: GroupOffsets (group_offsets.h).
#include <set>

#include "group/coordinator.h"
#include "port/log.h"
#include "protocol/consumer_protocol.h"
#include "protocol/errors.h"

namespace eddy::group {

using protocol::ErrorCode;

protocol::OffsetCommitResponse Coordinator::commit_offsets(const protocol::OffsetCommitRequest& req,
                                                           int16_t version) {
  EDDY_DCHECK_ON_LOOP(executor_);
  const ErrorCode verdict = commit_verdict(req, version);
  return offsets_.commit(req, version, verdict, executor_.now_ms());
}

ErrorCode Coordinator::commit_verdict(const protocol::OffsetCommitRequest& req, int16_t version) {
  if (ErrorCode e = availability(); e != ErrorCode::kNone) return e;
  if (req.group_id.empty()) return ErrorCode::kInvalidGroupId;
  const int32_t generation = version >= 1 ? req.generation_id_or_member_epoch : -1;
  Group* g = find_group(req.group_id);
  // No live group: only a commit outside group management is accepted.
  if (g == nullptr) return generation >= 0 ? ErrorCode::kIllegalGeneration : ErrorCode::kNone;
  const std::optional<std::string> instance = version >= 7 ? req.group_instance_id : std::nullopt;
  if (is_fenced(*g, instance, req.member_id)) return ErrorCode::kFencedInstanceId;
  // An empty group also takes commits from outside group management.
  if (generation < 0 && g->state() == State::kEmpty) return ErrorCode::kNone;
  auto it = g->members.find(req.member_id);
  if (it == g->members.end()) return ErrorCode::kUnknownMemberId;
  if (generation != g->generation) return ErrorCode::kIllegalGeneration;
  if (g->state() == State::kCompletingRebalance) return ErrorCode::kRebalanceInProgress;
  // A member's commit counts as a heartbeat.
  schedule_session_timeout(*g, it->second);
  return ErrorCode::kNone;
}

protocol::TxnOffsetCommitResponse Coordinator::commit_transactional_offsets(
    const protocol::TxnOffsetCommitRequest& req, int16_t version, ErrorCode txn_verdict) {
  EDDY_DCHECK_ON_LOOP(executor_);
  const ErrorCode verdict = txn_verdict != ErrorCode::kNone ? txn_verdict : txn_commit_verdict(req, version);
  return offsets_.commit_transactional(req, version, verdict, executor_.now_ms());
}

Status Coordinator::complete_transaction(const std::string& group_id, int64_t producer_id, bool commit) {
  EDDY_DCHECK_ON_LOOP(executor_);
  return offsets_.complete_transaction(group_id, producer_id, commit);
}

// Kafka's validateTransactionalOffsetCommit: a commit naming a member (v3+)
// must come from a current member of the group's generation; one that names
// none (or a group without members) is accepted.
ErrorCode Coordinator::txn_commit_verdict(const protocol::TxnOffsetCommitRequest& req, int16_t version) {
  if (ErrorCode e = availability(); e != ErrorCode::kNone) return e;
  if (req.group_id.empty()) return ErrorCode::kInvalidGroupId;
  Group* g = find_group(req.group_id);
  if (version < 3 || g == nullptr) return ErrorCode::kNone;
  if (is_fenced(*g, req.group_instance_id, req.member_id)) return ErrorCode::kFencedInstanceId;
  if (req.generation_id < 0 && req.member_id.empty()) return ErrorCode::kNone;
  if (g->members.find(req.member_id) == g->members.end()) return ErrorCode::kUnknownMemberId;
  if (req.generation_id != g->generation) return ErrorCode::kIllegalGeneration;
  return ErrorCode::kNone;
}

protocol::OffsetFetchResponse Coordinator::fetch_offsets(const protocol::OffsetFetchRequest& req, int16_t version) {
  EDDY_DCHECK_ON_LOOP(executor_);
  return offsets_.fetch(req, version, availability());
}

protocol::OffsetDeleteResponse Coordinator::delete_offsets(const protocol::OffsetDeleteRequest& req) {
  EDDY_DCHECK_ON_LOOP(executor_);
  if (ErrorCode e = availability(); e != ErrorCode::kNone) {
    protocol::OffsetDeleteResponse refused;
    refused.error_code = to_int(e);
    return refused;
  }
  const Group* g = find_group(req.group_id);
  protocol::OffsetDeleteResponse r = offsets_.remove(req, g != nullptr, subscribed_topics(g));
  // The group outlives its last offsets until the next sweep, as in Kafka
  // (DeleteGroups right after still finds it).
  if (r.error_code == 0) get_or_create_group(req.group_id);
  return r;
}

SubscribedTopics Coordinator::subscribed_topics(const Group* g) {
  SubscribedTopics subscribed;
  if (g == nullptr || g->members.empty()) return subscribed;
  if (g->protocol_type != "consumer") subscribed.all = true;
  for (const auto& [id, m] : g->members) {
    const auto* md = m.metadata_for(g->protocol_name);
    protocol::ConsumerProtocolSubscription sub;
    int16_t v = 0;
    if (md == nullptr || !protocol::decode_consumer_subscription(*md, &sub, &v).ok()) {
      subscribed.all = true;
      continue;
    }
    subscribed.names.insert(sub.topics.begin(), sub.topics.end());
  }
  return subscribed;
}

void Coordinator::schedule_expiry() {
  if (options_.offsets_retention_check_interval_ms <= 0 || draining_) return;
  expiry_timer_ = executor_.schedule_after(options_.offsets_retention_check_interval_ms, [this] {
    expiry_timer_ = 0;
    expire_offsets();
    schedule_expiry();
  });
}

void Coordinator::expire_offsets() {
  EDDY_DCHECK_ON_LOOP(executor_);
  // Only the coordinating node knows which groups are empty.
  if (serving_ && !serving_()) return;
  std::vector<std::string> with_offsets;
  Status s = offsets_.groups_with_offsets(&with_offsets);
  if (!s.ok()) {
    EDDY_LOG_WARN("offset expiry: {}", s.message());
    return;
  }
  std::vector<std::string> empty;
  for (const auto& id : with_offsets) {
    const Group* g = find_group(id);
    if (g == nullptr || (g->members.empty() && g->pending.empty())) empty.push_back(id);
  }
  if (!empty.empty() && expired_sink_) {
    // Removed once the controller log carries it; the groups left without
    // offsets go on a later pass.
    std::vector<meta::GroupTopicPartition> expired;
    if (!offsets_.find_expired(empty, executor_.now_ms(), &expired).ok()) return;
    if (!expired.empty()) expired_sink_(std::move(expired));
  } else if (!empty.empty()) {
    if (!offsets_.expire(empty, executor_.now_ms()).ok()) return;
    if (!offsets_.groups_with_offsets(&with_offsets).ok()) return;
  }
  erase_empty_groups_without_offsets(with_offsets);
}

void Coordinator::erase_empty_groups_without_offsets(const std::vector<std::string>& with_offsets) {
  std::set<std::string> keep(with_offsets.begin(), with_offsets.end());
  std::vector<std::string> gone;
  for (const auto& [id, g] : groups_) {
    if (g->state() == State::kEmpty && g->members.empty() && g->pending.empty() && keep.count(id) == 0)
      gone.push_back(id);
  }
  for (const auto& id : gone) erase_group(id);
}

}  // namespace eddy::group
