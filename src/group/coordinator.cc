// The coordinator's life (loading static members at start, draining at
// shutdown) and its groups: lookup, creation, erasure, member checks. The
// requests: coordinator_join.cc, coordinator_rebalance.cc (SyncGroup too),
// coordinator_sessions.cc, coordinator_offsets.cc, coordinator_admin.cc.
#include "group/coordinator.h"

#include <algorithm>

#include "meta/uuid.h"
#include "port/log.h"
#include "protocol/errors.h"

namespace eddy::group {

using protocol::ErrorCode;

Coordinator::Coordinator(port::Executor& executor, meta::MetaStore* meta, PartitionExists partition_exists,
                         CoordinatorOptions options)
    : executor_(executor),
      meta_(meta),
      options_(options),
      offsets_(meta, std::move(partition_exists), options.offset_metadata_max_bytes, options.offsets_retention_ms) {}

Coordinator::~Coordinator() {
  // Parked requests are dropped unanswered: the network may be gone already.
  // drain() is the orderly way to answer them.
  executor_.cancel(expiry_timer_);
  for (auto& [id, g] : groups_) {
    executor_.cancel(g->join_timer);
    for (auto& [pid, timer] : g->pending) executor_.cancel(timer);
    for (auto& [mid, m] : g->members) executor_.cancel(m.session_timer);
  }
}

Status Coordinator::start() {
  EDDY_DCHECK_ON_LOOP(executor_);
  Status s = load_static_members();
  if (!s.ok()) return s;
  schedule_expiry();
  return Status::ok_status();
}

void Coordinator::take_over() {
  EDDY_DCHECK_ON_LOOP(executor_);
  if (draining_) return;  // shutting down: nothing is served again
  drop_groups();
  Status s = load_static_members();
  if (!s.ok()) EDDY_LOG_WARN("group coordinator: reloading static members: {}", s.message());
}

void Coordinator::step_down() {
  EDDY_DCHECK_ON_LOOP(executor_);
  drop_groups();
}

void Coordinator::drop_groups() {
  stop_groups(ErrorCode::kNotCoordinator);
  std::vector<std::string> ids;
  for (const auto& [id, g] : groups_) ids.push_back(id);
  for (const auto& id : ids) erase_group(id);
}

Status Coordinator::load_static_members() {
  std::vector<meta::StaticMember> stored;
  Status s = meta_->static_members().load_all(&stored);
  if (!s.ok()) return s;
  for (const auto& sm : stored) {
    // A reloaded group is created Stable (no transition).
    Group& g = get_or_create_group(sm.group_id, State::kStable);
    Member m;
    m.member_id = sm.member_id;
    m.instance_id = sm.group_instance_id;
    m.client_id = sm.client_id;
    m.client_host = sm.client_host;
    m.session_timeout_ms = sm.session_timeout_ms;
    m.rebalance_timeout_ms = sm.rebalance_timeout_ms;
    m.protocol_type = sm.protocol_type;
    m.protocols.emplace_back(sm.protocol_name, sm.subscription);
    m.assignment = sm.assignment;
    g.generation = std::max(g.generation, sm.generation_id);
    g.protocol_type = sm.protocol_type;
    g.protocol_name = sm.protocol_name;
    if (g.leader.empty()) g.leader = sm.member_id;
    g.static_members[sm.group_instance_id] = sm.member_id;
    auto [it, inserted] = g.members.emplace(sm.member_id, std::move(m));
    // A stored member not back within its session timeout is removed, as if
    // it had stopped heartbeating.
    schedule_session_timeout(g, it->second);
  }
  if (!stored.empty()) EDDY_LOG_INFO("group coordinator: reloaded {} static members", stored.size());
  return Status::ok_status();
}

void Coordinator::drain() {
  EDDY_DCHECK_ON_LOOP(executor_);
  draining_ = true;
  executor_.cancel(expiry_timer_);
  expiry_timer_ = 0;
  stop_groups(ErrorCode::kCoordinatorNotAvailable);
}

void Coordinator::stop_groups(ErrorCode parked) {
  for (auto& [id, g] : groups_) {
    executor_.cancel(g->join_timer);
    g->join_timer = 0;
    for (auto& [pid, timer] : g->pending) executor_.cancel(timer);
    for (auto& [mid, m] : g->members) {
      executor_.cancel(m.session_timer);
      m.session_timer = 0;
      m.fail_parked_join(parked);
      m.fail_parked_sync(parked);
    }
  }
}

ErrorCode Coordinator::availability() const {
  if (draining_) return ErrorCode::kCoordinatorNotAvailable;
  if (serving_ && !serving_()) return ErrorCode::kNotCoordinator;
  return ErrorCode::kNone;
}

Group* Coordinator::find_group(const std::string& id) {
  auto it = groups_.find(id);
  return it == groups_.end() ? nullptr : it->second.get();
}

const Group* Coordinator::find_group(const std::string& id) const {
  auto it = groups_.find(id);
  return it == groups_.end() ? nullptr : it->second.get();
}

Group& Coordinator::get_or_create_group(const std::string& id, State initial) {
  auto& slot = groups_[id];
  if (!slot) slot = std::make_unique<Group>(id, initial, &transition_observer_);
  return *slot;
}

void Coordinator::erase_group(const std::string& id) {
  auto it = groups_.find(id);
  if (it == groups_.end()) return;
  it->second->set_state(State::kDead);
  executor_.cancel(it->second->join_timer);
  groups_.erase(it);
}

void Coordinator::observe_transitions(TransitionObserver observer) { transition_observer_ = std::move(observer); }

void Coordinator::erase_group_if_unused(const std::string& id) {
  Group* g = find_group(id);
  // A group that has had members stays, Empty, until the offsets sweep
  // finds it without committed offsets (as Kafka's group metadata cleanup);
  // one that never had a member (a join handshake nobody finished) goes, and
  // so does any empty group while more than kMaxGroupsInMemory are held (a
  // client looping over new group ids must not grow memory until the sweep).
  constexpr size_t kMaxGroupsInMemory = 1024;
  if (g != nullptr && g->state() == State::kEmpty && g->members.empty() && g->pending.empty() &&
      (g->protocol_type.empty() || groups_.size() > kMaxGroupsInMemory)) {
    erase_group(id);
  }
}

Coordinator::State Coordinator::group_state(const std::string& group_id) const {
  const Group* g = find_group(group_id);
  return g == nullptr ? State::kDead : g->state();
}

int32_t Coordinator::group_generation(const std::string& group_id) const {
  const Group* g = find_group(group_id);
  return g == nullptr ? -1 : g->generation;
}

std::string Coordinator::new_member_id(const std::string& client_id) {
  return client_id + "-" + meta::Uuid::random().to_string();
}

bool Coordinator::is_fenced(const Group& g, const std::optional<std::string>& instance_id,
                            const std::string& member_id) {
  if (!instance_id || instance_id->empty()) return false;
  auto it = g.static_members.find(*instance_id);
  return it != g.static_members.end() && it->second != member_id;
}

ErrorCode Coordinator::check_member(const Group& g, const std::string& member_id,
                                    const std::optional<std::string>& instance_id) const {
  if (is_fenced(g, instance_id, member_id)) return ErrorCode::kFencedInstanceId;
  if (g.members.find(member_id) == g.members.end()) return ErrorCode::kUnknownMemberId;
  return ErrorCode::kNone;
}

}  // namespace eddy::group
