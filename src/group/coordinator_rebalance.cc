// Rebalances: PreparingRebalance until every member has rejoined (or the
// rebalance timeout), the initial rebalance delay, CompletingRebalance until
// the leader's SyncGroup brings the assignment, then Stable.
#include <algorithm>
#include <map>
#include <utility>

#include "group/coordinator.h"
#include "port/log.h"
#include "protocol/errors.h"

namespace eddy::group {

using protocol::ErrorCode;

void Coordinator::start_or_continue_rebalance(Group& g, const char* reason) {
  if (g.state() == State::kPreparingRebalance) {
    maybe_complete_join(g);
  } else {
    prepare_rebalance(g, reason);
  }
}

void Coordinator::prepare_rebalance(Group& g, const char* reason) {
  if (g.state() == State::kCompletingRebalance) {
    for (auto& [id, m] : g.members) {
      m.assignment.clear();
      m.fail_parked_sync(ErrorCode::kRebalanceInProgress);
    }
  }
  EDDY_LOG_INFO("group {}: preparing rebalance (generation {}): {}", g.id, g.generation, reason);
  const bool was_empty = g.state() == State::kEmpty;
  g.set_state(State::kPreparingRebalance);
  int32_t timeout = 0;
  for (const auto& [id, m] : g.members) timeout = std::max(timeout, m.rebalance_timeout_ms);
  executor_.cancel(g.join_timer);
  if (was_empty && options_.initial_rebalance_delay_ms > 0 && !g.members.empty()) {
    g.initial_delay = true;
    g.joined_during_delay = false;
    g.delay_budget_ms = timeout;
    arm_initial_delay(g, std::min<int64_t>(options_.initial_rebalance_delay_ms, timeout));
    return;
  }
  std::string gid = g.id;
  g.join_timer = executor_.schedule_after(timeout, [this, gid] {
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
  g.join_timer = executor_.schedule_after(delay_ms, [this, gid] {
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
  executor_.cancel(g.join_timer);
  g.join_timer = 0;
  g.initial_delay = false;
  remove_members_that_did_not_rejoin(g);
  g.generation++;
  if (g.members.empty()) {
    g.set_state(State::kEmpty);
    g.protocol_name.clear();
    g.leader.clear();
    EDDY_LOG_INFO("group {}: empty at generation {}", g.id, g.generation);
    return;
  }
  g.protocol_name = select_protocol(g);
  if (g.members.find(g.leader) == g.members.end()) g.leader = g.members.begin()->first;
  g.set_state(State::kCompletingRebalance);
  EDDY_LOG_INFO("group {}: generation {} with {} members, protocol {}, leader {}", g.id, g.generation,
                g.members.size(), g.protocol_name, g.leader);
  for (auto& [id, m] : g.members) {
    m.assignment.clear();
    if (m.instance_id) persist_static(g, m);
  }
  answer_parked_joins(g);
}

void Coordinator::remove_members_that_did_not_rejoin(Group& g) {
  std::vector<std::string> absent;
  for (const auto& [id, m] : g.members) {
    if (!m.join_done) absent.push_back(id);
  }
  for (const auto& id : absent) {
    Member& m = g.members.at(id);
    executor_.cancel(m.session_timer);
    m.fail_parked_sync(ErrorCode::kUnknownMemberId);
    if (m.instance_id) {
      forget_static(g, *m.instance_id);
      g.static_members.erase(*m.instance_id);
    }
    EDDY_LOG_INFO("group {}: member {} did not rejoin in time", g.id, id);
    g.members.erase(id);
  }
}

void Coordinator::answer_parked_joins(Group& g) {
  const int32_t generation = g.generation;
  const std::string gid = g.id;
  std::vector<std::string> ids;
  for (const auto& [id, m] : g.members) ids.push_back(id);
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

void Coordinator::sync(const protocol::SyncGroupRequest& req, const ClientContext& /*client*/, SyncDone done) {
  EDDY_DCHECK_ON_LOOP(executor_);
  Group* g = nullptr;
  const ErrorCode refused = check_sync_request(req, &g);
  if (refused != ErrorCode::kNone) return done(sync_error(refused));
  Member& m = g->members.at(req.member_id);
  switch (g->state()) {
    case State::kPreparingRebalance: return done(sync_error(ErrorCode::kRebalanceInProgress));
    case State::kEmpty:
    case State::kDead: return done(sync_error(ErrorCode::kUnknownMemberId));
    case State::kStable:
      schedule_session_timeout(*g, m);
      done(sync_assignment(*g, m));
      return;
    case State::kCompletingRebalance:
      // A retried sync: the earlier one is superseded.
      m.fail_parked_sync(ErrorCode::kRebalanceInProgress);
      m.sync_done = std::move(done);
      schedule_session_timeout(*g, m);
      if (req.member_id == g->leader) take_leader_assignment(*g, req);
      return;
  }
}

ErrorCode Coordinator::check_generation(const std::string& group_id, const std::string& member_id,
                                        const std::optional<std::string>& instance_id, int32_t generation,
                                        Group** group) {
  if (ErrorCode e = availability(); e != ErrorCode::kNone) return e;
  if (group_id.empty()) return ErrorCode::kInvalidGroupId;
  Group* g = find_group(group_id);
  if (g == nullptr) return ErrorCode::kUnknownMemberId;
  ErrorCode e = check_member(*g, member_id, instance_id);
  if (e != ErrorCode::kNone) return e;
  if (generation != g->generation) return ErrorCode::kIllegalGeneration;
  *group = g;
  return ErrorCode::kNone;
}

ErrorCode Coordinator::check_sync_request(const protocol::SyncGroupRequest& req, Group** group) {
  Group* g = nullptr;
  ErrorCode e = check_generation(req.group_id, req.member_id, req.group_instance_id, req.generation_id, &g);
  if (e != ErrorCode::kNone) return e;
  if ((req.protocol_type && *req.protocol_type != g->protocol_type) ||
      (req.protocol_name && *req.protocol_name != g->protocol_name))
    return ErrorCode::kInconsistentGroupProtocol;
  *group = g;
  return ErrorCode::kNone;
}

void Coordinator::take_leader_assignment(Group& g, const protocol::SyncGroupRequest& req) {
  for (auto& [id, member] : g.members) member.assignment.clear();
  for (const auto& a : req.assignments) {
    auto it = g.members.find(a.member_id);
    if (it != g.members.end()) it->second.assignment = a.assignment;
  }
  complete_sync(g);
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
  EDDY_LOG_INFO("group {}: stable at generation {}", g.id, g.generation);
  std::vector<std::pair<SyncDone, protocol::SyncGroupResponse>> answers;
  for (auto& [id, m] : g.members) {
    if (m.instance_id) persist_static(g, m);
    if (!m.sync_done) continue;
    answers.emplace_back(m.take_parked_sync(), sync_assignment(g, m));
  }
  for (auto& [d, r] : answers) d(r);
}

}  // namespace eddy::group
