// Membership: JoinGroup and SyncGroup, rebalances, static member
// replacement, and loading static members at start.
#include "group/coordinator.h"

#include <algorithm>

#include "meta/uuid.h"
#include "port/log.h"
#include "protocol/errors.h"

namespace eddy::group {

using protocol::ErrorCode;
using protocol::to_int;

Coordinator::Coordinator(Timers& timers, meta::MetaStore* meta, PartitionExists partition_exists,
                         CoordinatorOptions options)
    : timers_(timers),
      meta_(meta),
      options_(options),
      offsets_(meta, std::move(partition_exists), options.offset_metadata_max_bytes, options.offsets_retention_ms) {}

Coordinator::~Coordinator() {
  // Parked requests are dropped unanswered: the network may be gone already.
  // drain() is the orderly way to answer them.
  timers_.cancel(expiry_timer_);
  for (auto& [id, g] : groups_) {
    timers_.cancel(g->join_timer);
    for (auto& [pid, timer] : g->pending) timers_.cancel(timer);
    for (auto& [mid, m] : g->members) timers_.cancel(m.session_timer);
  }
}

meta::Status Coordinator::start() {
  std::vector<meta::StaticMember> stored;
  meta::Status s = meta_->static_members().load_all(&stored);
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
  if (!stored.empty()) EDDY_LOG_INFO("group coordinator: reloaded %zu static members", stored.size());
  schedule_expiry();
  return meta::Status::ok_status();
}

void Coordinator::drain() {
  draining_ = true;
  timers_.cancel(expiry_timer_);
  expiry_timer_ = 0;
  for (auto& [id, g] : groups_) {
    timers_.cancel(g->join_timer);
    g->join_timer = 0;
    for (auto& [pid, timer] : g->pending) timers_.cancel(timer);
    for (auto& [mid, m] : g->members) {
      timers_.cancel(m.session_timer);
      m.session_timer = 0;
      m.fail_parked_join(ErrorCode::kCoordinatorNotAvailable);
      m.fail_parked_sync(ErrorCode::kCoordinatorNotAvailable);
    }
  }
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
  timers_.cancel(it->second->join_timer);
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

// ---- JoinGroup ----------------------------------------------------------

bool Coordinator::protocols_supported(const Group& g, const protocol::JoinGroupRequest& req) const {
  if (req.protocol_type.empty() || req.protocols.empty()) return false;
  if (g.members.empty()) return true;
  if (req.protocol_type != g.protocol_type) return false;
  // Some protocol the new member offers must be offered by every member.
  for (const auto& p : req.protocols) {
    bool everyone = true;
    for (const auto& [id, m] : g.members) {
      if (m.metadata_for(p.name) == nullptr) {
        everyone = false;
        break;
      }
    }
    if (everyone) return true;
  }
  return false;
}

bool Coordinator::same_protocols(const Member& m, const protocol::JoinGroupRequest& req) {
  if (m.protocol_type != req.protocol_type || m.protocols.size() != req.protocols.size()) return false;
  for (size_t i = 0; i < req.protocols.size(); i++) {
    if (m.protocols[i].first != req.protocols[i].name || m.protocols[i].second != req.protocols[i].metadata)
      return false;
  }
  return true;
}

void Coordinator::set_protocols(Member& m, const protocol::JoinGroupRequest& req) {
  m.protocol_type = req.protocol_type;
  m.protocols.clear();
  for (const auto& p : req.protocols) m.protocols.emplace_back(p.name, p.metadata);
}

protocol::JoinGroupResponse Coordinator::join_response(const Group& g, const Member& m, bool with_members) const {
  protocol::JoinGroupResponse r;
  r.generation_id = g.generation;
  r.protocol_type = g.protocol_type;
  r.protocol_name = g.protocol_name;
  r.leader = g.leader;
  r.member_id = m.member_id;
  if (with_members) {
    for (const auto& [id, other] : g.members) {
      protocol::JoinGroupResponse::JoinGroupResponseMember rm;
      rm.member_id = id;
      rm.group_instance_id = other.instance_id;
      if (const auto* md = other.metadata_for(g.protocol_name)) rm.metadata = *md;
      r.members.push_back(std::move(rm));
    }
  }
  return r;
}

void Coordinator::join(const protocol::JoinGroupRequest& req, const ClientContext& client, JoinDone done) {
  auto fail = [&](ErrorCode code, const std::string& member_id = "") {
    protocol::JoinGroupResponse r;
    r.error_code = to_int(code);
    r.member_id = member_id;
    r.protocol_name = std::nullopt;
    if (client.version < 7) r.protocol_name = "";
    done(r);
  };
  if (draining_) return fail(ErrorCode::kCoordinatorNotAvailable, req.member_id);
  if (req.group_id.empty()) return fail(ErrorCode::kInvalidGroupId, req.member_id);
  if (req.session_timeout_ms < options_.min_session_timeout_ms ||
      req.session_timeout_ms > options_.max_session_timeout_ms)
    return fail(ErrorCode::kInvalidSessionTimeout, req.member_id);
  size_t metadata_bytes = 0;
  for (const auto& p : req.protocols) metadata_bytes += p.name.size() + p.metadata.size();
  if (metadata_bytes > options_.max_member_metadata_bytes) return fail(ErrorCode::kInvalidRequest, req.member_id);
  const bool static_member = req.group_instance_id.has_value() && !req.group_instance_id->empty();

  Group* existing = find_group(req.group_id);
  if (req.member_id.empty()) {
    Group& g = get_or_create_group(req.group_id);
    if (!protocols_supported(g, req)) {
      erase_group_if_unused(req.group_id);
      return fail(ErrorCode::kInconsistentGroupProtocol);
    }
    if (static_member) {
      auto it = g.static_members.find(*req.group_instance_id);
      if (it != g.static_members.end() && g.members.count(it->second)) {
        return join_static_replacement(g, it->second, req, client, std::move(done));
      }
    } else if (client.version >= 4) {
      // KIP-394: hand out the id first; the member joins with it.
      std::string id = new_member_id(client.client_id);
      std::string gid = g.id;
      g.pending[id] = timers_.schedule_after(req.session_timeout_ms, [this, gid, id] {
        Group* pg = find_group(gid);
        if (pg == nullptr) return;
        pg->pending.erase(id);
        if (pg->state() == State::kPreparingRebalance) maybe_complete_join(*pg);
        erase_group_if_unused(gid);
      });
      return fail(ErrorCode::kMemberIdRequired, id);
    }
    return join_new_member(g, req, client, std::move(done));
  }

  // A member id was given.
  if (existing == nullptr) return fail(ErrorCode::kUnknownMemberId, req.member_id);
  Group& g = *existing;
  if (static_member) {
    auto it = g.static_members.find(*req.group_instance_id);
    if (it != g.static_members.end() && it->second != req.member_id)
      return fail(ErrorCode::kFencedInstanceId, req.member_id);
  }
  auto pending = g.pending.find(req.member_id);
  if (pending != g.pending.end()) {
    if (!protocols_supported(g, req)) return fail(ErrorCode::kInconsistentGroupProtocol, req.member_id);
    timers_.cancel(pending->second);
    g.pending.erase(pending);
    return join_new_member(g, req, client, std::move(done));
  }
  auto mit = g.members.find(req.member_id);
  if (mit == g.members.end()) return fail(ErrorCode::kUnknownMemberId, req.member_id);
  if (!protocols_supported(g, req) && g.members.size() > 1) {
    return fail(ErrorCode::kInconsistentGroupProtocol, req.member_id);
  }
  Member& m = mit->second;
  m.client_id = client.client_id;
  m.client_host = client.client_host;
  m.session_timeout_ms = req.session_timeout_ms;
  m.rebalance_timeout_ms = req.rebalance_timeout_ms > 0 ? req.rebalance_timeout_ms : req.session_timeout_ms;
  m.join_version = client.version;
  join_existing_member(g, m, req, std::move(done));
}

void Coordinator::join_new_member(Group& g, const protocol::JoinGroupRequest& req, const ClientContext& client,
                                  JoinDone done) {
  std::string id = req.member_id.empty() ? new_member_id(client.client_id) : req.member_id;
  Member m;
  m.member_id = id;
  if (req.group_instance_id && !req.group_instance_id->empty()) m.instance_id = req.group_instance_id;
  m.client_id = client.client_id;
  m.client_host = client.client_host;
  m.session_timeout_ms = req.session_timeout_ms;
  m.rebalance_timeout_ms = req.rebalance_timeout_ms > 0 ? req.rebalance_timeout_ms : req.session_timeout_ms;
  set_protocols(m, req);
  m.join_done = std::move(done);
  m.join_version = client.version;
  if (g.members.empty()) g.protocol_type = req.protocol_type;
  if (m.instance_id) g.static_members[*m.instance_id] = id;
  // As Kafka: the first member to join leads until it leaves.
  if (g.members.find(g.leader) == g.members.end()) g.leader = id;
  auto [it, inserted] = g.members.emplace(id, std::move(m));
  schedule_session_timeout(g, it->second);
  if (g.initial_delay) g.joined_during_delay = true;
  if (g.state() == State::kPreparingRebalance) {
    maybe_complete_join(g);
  } else {
    prepare_rebalance(g, "member joined");
  }
}

void Coordinator::join_static_replacement(Group& g, const std::string& old_id, const protocol::JoinGroupRequest& req,
                                          const ClientContext& client, JoinDone done) {
  auto node = g.members.extract(old_id);
  Member m = std::move(node.mapped());
  timers_.cancel(m.session_timer);
  m.session_timer = 0;
  // The older instance is fenced: its parked requests learn it now.
  m.fail_parked_join(ErrorCode::kFencedInstanceId);
  m.fail_parked_sync(ErrorCode::kFencedInstanceId);
  const std::string new_id = new_member_id(client.client_id);
  EDDY_LOG_INFO("group %s: static member %s rejoined as %s (was %s)", g.id.c_str(), req.group_instance_id->c_str(),
                new_id.c_str(), old_id.c_str());
  m.member_id = new_id;
  m.client_id = client.client_id;
  m.client_host = client.client_host;
  m.session_timeout_ms = req.session_timeout_ms;
  m.rebalance_timeout_ms = req.rebalance_timeout_ms > 0 ? req.rebalance_timeout_ms : req.session_timeout_ms;
  m.join_version = client.version;
  g.static_members[*req.group_instance_id] = new_id;
  if (g.leader == old_id) g.leader = new_id;
  auto [it, inserted] = g.members.emplace(new_id, std::move(m));
  Member& member = it->second;
  schedule_session_timeout(g, member);
  set_protocols(member, req);
  // As Kafka (KIP-345): a static member rejoining a stable group triggers
  // no rebalance unless the group's protocol for the next generation would
  // change; new metadata alone (a restarted Java consumer sends no owned
  // partitions and generation -1) keeps the assignment.
  const bool keeps_protocol =
      g.state() == State::kStable && req.protocol_type == g.protocol_type && select_protocol(g) == g.protocol_name;
  if (keeps_protocol) {
    // The member gets its previous assignment from SyncGroup. A leader that
    // cannot skip the assignment (v<9) gets no member list, so its assignor
    // has nothing to assign and the stored assignment stands.
    persist_static(g, member);
    const bool is_leader = g.leader == new_id;
    const bool skip = is_leader && client.version >= 9;
    protocol::JoinGroupResponse r = join_response(g, member, skip);
    r.skip_assignment = skip;
    done(r);
    return;
  }
  member.join_done = std::move(done);
  persist_static(g, member);
  if (g.state() == State::kPreparingRebalance) {
    maybe_complete_join(g);
  } else {
    prepare_rebalance(g, "static member rejoined with a change to the group's protocol");
  }
}

void Coordinator::join_existing_member(Group& g, Member& m, const protocol::JoinGroupRequest& req, JoinDone done) {
  switch (g.state()) {
    case State::kPreparingRebalance:
      set_protocols(m, req);
      // A retried join: the earlier one is superseded.
      m.fail_parked_join(ErrorCode::kRebalanceInProgress);
      m.join_done = std::move(done);
      maybe_complete_join(g);
      return;
    case State::kCompletingRebalance:
      if (same_protocols(m, req)) {
        // The JoinGroup response was lost: answer it again.
        done(join_response(g, m, g.leader == m.member_id));
        return;
      }
      set_protocols(m, req);
      m.join_done = std::move(done);
      prepare_rebalance(g, "member changed its protocols");
      return;
    case State::kStable:
      if (g.leader != m.member_id && same_protocols(m, req)) {
        done(join_response(g, m, false));
        return;
      }
      set_protocols(m, req);
      m.join_done = std::move(done);
      prepare_rebalance(g, g.leader == m.member_id ? "leader rejoined" : "member changed its protocols");
      return;
    case State::kEmpty:
    case State::kDead: {
      protocol::JoinGroupResponse r;
      r.error_code = to_int(ErrorCode::kUnknownMemberId);
      r.member_id = m.member_id;
      done(r);
      return;
    }
  }
}

void Coordinator::prepare_rebalance(Group& g, const char* reason) {
  if (g.state() == State::kCompletingRebalance) {
    for (auto& [id, m] : g.members) {
      m.assignment.clear();
      m.fail_parked_sync(ErrorCode::kRebalanceInProgress);
    }
  }
  EDDY_LOG_INFO("group %s: preparing rebalance (generation %d): %s", g.id.c_str(), g.generation, reason);
  const bool was_empty = g.state() == State::kEmpty;
  g.set_state(State::kPreparingRebalance);
  int32_t timeout = 0;
  for (const auto& [id, m] : g.members) timeout = std::max(timeout, m.rebalance_timeout_ms);
  timers_.cancel(g.join_timer);
  if (was_empty && options_.initial_rebalance_delay_ms > 0 && !g.members.empty()) {
    g.initial_delay = true;
    g.joined_during_delay = false;
    g.delay_budget_ms = timeout;
    arm_initial_delay(g, std::min<int64_t>(options_.initial_rebalance_delay_ms, timeout));
    return;
  }
  std::string gid = g.id;
  g.join_timer = timers_.schedule_after(timeout, [this, gid] {
    Group* pg = find_group(gid);
    if (pg == nullptr) return;
    pg->join_timer = 0;
    if (pg->state() == State::kPreparingRebalance) complete_join(*pg);
    erase_group_if_unused(gid);
  });
  maybe_complete_join(g);
}

void Coordinator::arm_initial_delay(Group& g, int64_t delay_ms) {
  g.delay_budget_ms -= delay_ms;
  std::string gid = g.id;
  g.join_timer = timers_.schedule_after(delay_ms, [this, gid] {
    Group* pg = find_group(gid);
    if (pg == nullptr) return;
    pg->join_timer = 0;
    if (pg->state() != State::kPreparingRebalance || !pg->initial_delay) return;
    if (pg->joined_during_delay && pg->delay_budget_ms > 0) {
      pg->joined_during_delay = false;
      arm_initial_delay(*pg, std::min<int64_t>(options_.initial_rebalance_delay_ms, pg->delay_budget_ms));
      return;
    }
    pg->initial_delay = false;
    complete_join(*pg);
    erase_group_if_unused(gid);
  });
}

void Coordinator::maybe_complete_join(Group& g) {
  if (g.state() != State::kPreparingRebalance || !g.pending.empty()) return;
  if (g.initial_delay) return;
  for (const auto& [id, m] : g.members) {
    if (!m.join_done) return;
  }
  complete_join(g);
}

std::string Coordinator::select_protocol(const Group& g) const {
  // Candidates: protocols every member supports; each member votes for its
  // most preferred candidate; most votes wins (ties: the first member's order).
  const Member& first = g.members.begin()->second;
  std::vector<std::string> candidates;
  for (const auto& p : first.protocols) {
    bool everyone = true;
    for (const auto& [id, m] : g.members) everyone = everyone && m.metadata_for(p.first) != nullptr;
    if (everyone) candidates.push_back(p.first);
  }
  if (candidates.empty()) return "";
  std::map<std::string, int> votes;
  for (const auto& [id, m] : g.members) {
    for (const auto& p : m.protocols) {
      if (std::find(candidates.begin(), candidates.end(), p.first) != candidates.end()) {
        votes[p.first]++;
        break;
      }
    }
  }
  std::string best = candidates.front();
  for (const auto& c : candidates) {
    if (votes[c] > votes[best]) best = c;
  }
  return best;
}

void Coordinator::complete_join(Group& g) {
  timers_.cancel(g.join_timer);
  g.join_timer = 0;
  g.initial_delay = false;
  // Members that did not rejoin in time are out.
  std::vector<std::string> absent;
  for (const auto& [id, m] : g.members) {
    if (!m.join_done) absent.push_back(id);
  }
  for (const auto& id : absent) {
    Member& m = g.members.at(id);
    timers_.cancel(m.session_timer);
    m.fail_parked_sync(ErrorCode::kUnknownMemberId);
    if (m.instance_id) {
      forget_static(g, *m.instance_id);
      g.static_members.erase(*m.instance_id);
    }
    EDDY_LOG_INFO("group %s: member %s did not rejoin in time", g.id.c_str(), id.c_str());
    g.members.erase(id);
  }
  g.generation++;
  if (g.members.empty()) {
    g.set_state(State::kEmpty);
    g.protocol_name.clear();
    g.leader.clear();
    EDDY_LOG_INFO("group %s: empty at generation %d", g.id.c_str(), g.generation);
    return;
  }
  g.protocol_name = select_protocol(g);
  if (g.members.find(g.leader) == g.members.end()) g.leader = g.members.begin()->first;
  g.set_state(State::kCompletingRebalance);
  EDDY_LOG_INFO("group %s: generation %d with %zu members, protocol %s, leader %s", g.id.c_str(), g.generation,
                g.members.size(), g.protocol_name.c_str(), g.leader.c_str());
  const int32_t generation = g.generation;
  const std::string gid = g.id;
  std::vector<std::string> ids;
  for (auto& [id, m] : g.members) {
    ids.push_back(id);
    m.assignment.clear();
    if (m.instance_id) persist_static(g, m);
  }
  for (const auto& id : ids) {
    // A callback may not reenter the coordinator synchronously with this
    // group (the broker only sends), but look the member up each time anyway.
    Group* pg = find_group(gid);
    if (pg == nullptr || pg->generation != generation) return;
    auto it = pg->members.find(id);
    if (it == pg->members.end() || !it->second.join_done) continue;
    Member& m = it->second;
    protocol::JoinGroupResponse r = join_response(*pg, m, pg->leader == id);
    schedule_session_timeout(*pg, m);
    m.answer_parked_join(r);
  }
}

// ---- SyncGroup ----------------------------------------------------------

ErrorCode Coordinator::check_member(const Group& g, const std::string& member_id,
                                    const std::optional<std::string>& instance_id) const {
  if (instance_id && !instance_id->empty()) {
    auto it = g.static_members.find(*instance_id);
    if (it != g.static_members.end() && it->second != member_id) return ErrorCode::kFencedInstanceId;
  }
  if (g.members.find(member_id) == g.members.end()) return ErrorCode::kUnknownMemberId;
  return ErrorCode::kNone;
}

void Coordinator::sync(const protocol::SyncGroupRequest& req, const ClientContext& /*client*/, SyncDone done) {
  auto fail = [&](ErrorCode code) {
    protocol::SyncGroupResponse r;
    r.error_code = to_int(code);
    done(r);
  };
  if (draining_) return fail(ErrorCode::kCoordinatorNotAvailable);
  if (req.group_id.empty()) return fail(ErrorCode::kInvalidGroupId);
  Group* g = find_group(req.group_id);
  if (g == nullptr) return fail(ErrorCode::kUnknownMemberId);
  ErrorCode e = check_member(*g, req.member_id, req.group_instance_id);
  if (e != ErrorCode::kNone) return fail(e);
  if (req.generation_id != g->generation) return fail(ErrorCode::kIllegalGeneration);
  if ((req.protocol_type && *req.protocol_type != g->protocol_type) ||
      (req.protocol_name && *req.protocol_name != g->protocol_name))
    return fail(ErrorCode::kInconsistentGroupProtocol);
  Member& m = g->members.at(req.member_id);
  switch (g->state()) {
    case State::kPreparingRebalance: return fail(ErrorCode::kRebalanceInProgress);
    case State::kEmpty:
    case State::kDead: return fail(ErrorCode::kUnknownMemberId);
    case State::kStable:
      schedule_session_timeout(*g, m);
      done(sync_assignment(*g, m));
      return;
    case State::kCompletingRebalance:
      // A retried sync: the earlier one is superseded.
      m.fail_parked_sync(ErrorCode::kRebalanceInProgress);
      m.sync_done = std::move(done);
      schedule_session_timeout(*g, m);
      if (req.member_id == g->leader) {
        for (auto& [id, member] : g->members) member.assignment.clear();
        for (const auto& a : req.assignments) {
          auto it = g->members.find(a.member_id);
          if (it != g->members.end()) it->second.assignment = a.assignment;
        }
        complete_sync(*g);
      }
      return;
  }
}

protocol::SyncGroupResponse Coordinator::sync_assignment(const Group& g, const Member& m) {
  protocol::SyncGroupResponse r;
  r.protocol_type = g.protocol_type;
  r.protocol_name = g.protocol_name;
  r.assignment = m.assignment;
  return r;
}

void Coordinator::complete_sync(Group& g) {
  g.set_state(State::kStable);
  EDDY_LOG_INFO("group %s: stable at generation %d", g.id.c_str(), g.generation);
  std::vector<std::pair<SyncDone, protocol::SyncGroupResponse>> answers;
  for (auto& [id, m] : g.members) {
    if (m.instance_id) persist_static(g, m);
    if (!m.sync_done) continue;
    answers.emplace_back(m.take_parked_sync(), sync_assignment(g, m));
  }
  for (auto& [d, r] : answers) d(r);
}

}  // namespace eddy::group
