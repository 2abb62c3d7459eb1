// A cluster's consumer groups through the controller log: the leader
// coordinates them from its takeover (Coordinator::take_over) until it
// steps down, and what another node must know to take over after it goes
// through the log: committed offsets (GroupOffsets, not logged again when
// unchanged), their expiry (OffsetsDeleted) and static members
// (StaticMember, StaticMemberRemoved), and the offsets transactions stage
// (TxnOffsetsStaged). The transaction coordinator takes over and steps
// down with the groups (its state goes through the log as
// TransactionStateRecords, broker/controller_txn_state_store.h). Every
// node applies them in controller_apply.cc.
#include <memory>
#include <optional>

#include "broker/broker.h"
#include "broker/static_member_records.h"
#include "port/log.h"

namespace eddy::broker {

using protocol::ErrorCode;

void Broker::take_over_groups() {
  coordinating_groups_ = true;
  if (coordinator_) coordinator_->take_over();
  EDDY_LOG_INFO("group coordinator: this node coordinates the cluster's consumer groups");
  if (!txn_) return;
  // Everything committed before this leader's term is applied to eddy.db:
  // the coordinator goes on from there.
  if (Status s = txn_->start(); !s.ok()) {
    EDDY_LOG_ERROR("transaction coordinator: not taking over: {}", s.to_string());
    return;
  }
  EDDY_LOG_INFO("transaction coordinator: this node coordinates the cluster's transactions");
}

void Broker::step_down_groups() {
  coordinating_groups_ = false;
  if (coordinator_) coordinator_->step_down();
  EDDY_LOG_INFO("group coordinator: another node coordinates the cluster's consumer groups now");
  if (txn_ && txn_->active()) {
    txn_->stop();
    EDDY_LOG_INFO("transaction coordinator: another node coordinates the cluster's transactions now");
  }
}

namespace {

// The static member eddy.db holds for (group, instance), if any.
std::optional<meta::StaticMember> stored_static_member(meta::MetaStore* meta, const std::string& group,
                                                       const std::string& instance) {
  std::vector<meta::StaticMember> members;
  if (!meta->static_members().load(group, &members).ok()) return std::nullopt;
  for (meta::StaticMember& m : members) {
    if (m.group_instance_id == instance) return std::move(m);
  }
  return std::nullopt;
}

void warn_unless_replicated(const char* what, const std::string& instance, const Status& s) {
  // The member goes on here; another node knows its previous state until the
  // next rebalance stores it again.
  if (!s.ok()) EDDY_LOG_WARN("static member {}: {} not stored through the controller log: {}", instance, what, s.to_string());
}

}  // namespace

void Broker::replicate_static_member(const meta::StaticMember& member) {
  // Between losing leadership and the next tick's step-down, a session
  // timer may still fire here: only the leader proposes.
  if (!coordinating_groups_ || !controller_->is_leader()) return;
  if (stored_static_member(meta_, member.group_id, member.group_instance_id) == member) return;
  controller_->propose(to_static_member_record(member), [instance = member.group_instance_id](const Status& s) {
    warn_unless_replicated("its state", instance, s);
  });
}

void Broker::replicate_static_member_removed(const std::string& group_id, const std::string& instance_id) {
  if (!coordinating_groups_ || !controller_->is_leader()) return;
  // Always logged, even when eddy.db does not hold the member yet: its own
  // record may still be on its way, and must not outlive the removal.
  controller_->propose(protocol::StaticMemberRemovedRecord{group_id, instance_id, {}},
                       [instance_id](const Status& s) { warn_unless_replicated("its removal", instance_id, s); });
}

void Broker::replicate_expiry(std::vector<meta::GroupTopicPartition> expired) {
  // One OffsetsDeletedRecord per group (expired is sorted by group); every
  // node, this one included, removes the offsets when it applies it.
  Proposals proposals;
  for (const meta::GroupTopicPartition& e : expired) {
    if (proposals.records.empty() ||
        std::get<protocol::OffsetsDeletedRecord>(proposals.records.back()).group_id != e.group) {
      protocol::OffsetsDeletedRecord record;
      record.group_id = e.group;
      proposals.records.push_back(std::move(record));
      proposals.entries.push_back(proposals.entries.size());
    }
    std::get<protocol::OffsetsDeletedRecord>(proposals.records.back())
        .partitions.push_back({e.partition.topic, e.partition.partition, {}});
    // A commit that lands while the removal is in flight is logged after it
    // (even one of the same offset), so the removal never outlives it.
    logged_offsets_.forget(e.group, e.partition.topic, e.partition.partition);
  }
  const size_t count = expired.size();
  propose_all(
      std::move(proposals),
      [](size_t, const Status& s) {
        if (!s.ok()) EDDY_LOG_WARN("offset expiry: not removed through the controller log: {}", s.to_string());
      },
      [count] { EDDY_LOG_INFO("offset expiry: removing {} committed offsets of empty groups on every node", count); });
}

uint64_t Broker::LoggedOffsets::digest(const meta::CommittedOffset& o) {
  const uint64_t h = std::hash<std::string>()(o.metadata);
  return h ^ (static_cast<uint64_t>(o.offset) * 0x9E3779B97F4A7C15ull) ^ (static_cast<uint64_t>(o.leader_epoch) << 1);
}

bool Broker::LoggedOffsets::same(const std::string& group, const meta::CommittedOffset& o, int64_t refresh_ms) const {
  auto it = last.find({group, o.topic, o.partition});
  return it != last.end() && it->second.digest == digest(o) && o.commit_timestamp_ms - it->second.commit_ms < refresh_ms;
}

void Broker::LoggedOffsets::note(const std::string& group, const meta::CommittedOffset& o) {
  if (last.size() >= kMaxEntries) last.clear();  // forgetting only makes the next commits logged again
  last[{group, o.topic, o.partition}] = Logged{digest(o), o.commit_timestamp_ms};
}

void Broker::LoggedOffsets::forget(const std::string& group, const std::string& topic, int32_t partition) {
  for (auto it = last.begin(); it != last.end();) {
    const auto& [g, t, p] = it->first;
    const bool match = g == group && (topic.empty() || (t == topic && p == partition));
    it = match ? last.erase(it) : std::next(it);
  }
}

template <typename Response>
void Broker::respond_once_logged(const ControllerRecord& record, RequestPtr request, Response response) {
  auto state = std::make_shared<std::pair<RequestPtr, Response>>(std::move(request), std::move(response));
  controller_->propose(record, [this, state](const Status& s) {
    if (!s.ok()) {
      // Not committed by the cluster: the client sends them again to the
      // coordinator FindCoordinator names now.
      for (auto& t : state->second.topics) {
        for (auto& p : t.partitions) {
          if (p.error_code == 0) p.error_code = protocol::to_int(ErrorCode::kNotCoordinator);
        }
      }
    }
    respond(*state->first, state->second);
  });
}

void Broker::replicate_commit(RequestPtr request, const std::string& group, protocol::OffsetCommitResponse response) {
  // The offsets as this node stored them go to every node through the
  // controller log; the client hears back once they are committed there.
  // A commit of what the controller log already holds for the partition,
  // but for a time less than a tenth of the retention later, is not logged:
  // consumers commit the same positions every few seconds while idle.
  std::vector<meta::TopicPartition> committed;
  for (const auto& t : response.topics) {
    for (const auto& p : t.partitions) {
      if (p.error_code == 0) committed.push_back({t.name, p.partition_index});
    }
  }
  std::vector<meta::CommittedOffset> stored;
  if (committed.empty() || !meta_->offsets().fetch(group, committed, &stored).ok()) stored.clear();
  protocol::GroupOffsetsRecord record;
  record.group_id = group;
  for (const meta::CommittedOffset& o : stored) {
    // The controller log has this value already, and a recent enough time.
    if (logged_offsets_.same(group, o, options_.offsets_retention_ms / 10)) continue;
    record.offsets.push_back({o.topic, o.partition, o.offset, o.leader_epoch, o.metadata, o.commit_timestamp_ms, {}});
  }
  if (record.offsets.empty()) {
    respond(*request, response);
    return;
  }
  respond_once_logged(record, std::move(request), std::move(response));
}

void Broker::replicate_txn_offsets(RequestPtr request, const std::string& group, int64_t producer_id,
                                   protocol::TxnOffsetCommitResponse response) {
  // What the producer has staged in the group, as this node stored it, goes
  // to every node through the controller log (the next coordinator must
  // apply it if the transaction commits); the client hears back once it is
  // committed there.
  bool staged_any = false;
  for (const auto& t : response.topics) {
    for (const auto& p : t.partitions) staged_any = staged_any || p.error_code == 0;
  }
  std::vector<meta::CommittedOffset> staged;
  if (staged_any && !meta_->pending_offsets().staged(group, producer_id, &staged).ok()) staged.clear();
  if (staged.empty()) {
    respond(*request, response);
    return;
  }
  protocol::TxnOffsetsStagedRecord record;
  record.group_id = group;
  record.producer_id = producer_id;
  for (const meta::CommittedOffset& o : staged) {
    record.offsets.push_back({o.topic, o.partition, o.offset, o.leader_epoch, o.metadata, o.commit_timestamp_ms, {}});
  }
  respond_once_logged(record, std::move(request), std::move(response));
}

}  // namespace eddy::broker
