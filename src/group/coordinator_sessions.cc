// Heartbeats and session expiry, LeaveGroup, and the persistence of static
// members.
#include "group/coordinator.h"
#include "port/log.h"
#include "protocol/errors.h"

namespace eddy::group {

using protocol::ErrorCode;
using protocol::to_int;

// ---- Heartbeat, sessions, LeaveGroup -------------------------------------

protocol::HeartbeatResponse Coordinator::heartbeat(const protocol::HeartbeatRequest& req) {
  EDDY_DCHECK_ON_LOOP(executor_);
  protocol::HeartbeatResponse r;
  auto code = [&]() -> ErrorCode {
    Group* g = nullptr;
    ErrorCode e = check_generation(req.group_id, req.member_id, req.group_instance_id, req.generation_id, &g);
    if (e != ErrorCode::kNone) return e;
    Member& m = g->members.at(req.member_id);
    switch (g->state()) {
      case State::kEmpty:
      case State::kDead: return ErrorCode::kUnknownMemberId;
      case State::kPreparingRebalance:
        schedule_session_timeout(*g, m);
        return ErrorCode::kRebalanceInProgress;
      case State::kCompletingRebalance:
      case State::kStable:
        schedule_session_timeout(*g, m);
        return ErrorCode::kNone;
    }
    return ErrorCode::kNone;
  }();
  r.error_code = to_int(code);
  return r;
}

void Coordinator::schedule_session_timeout(Group& g, Member& m) {
  executor_.cancel(m.session_timer);
  std::string gid = g.id;
  std::string mid = m.member_id;
  m.session_timer = executor_.schedule_after(m.session_timeout_ms, [this, gid, mid] { on_session_timeout(gid, mid); });
}

void Coordinator::on_session_timeout(const std::string& group_id, const std::string& member_id) {
  Group* g = find_group(group_id);
  if (g == nullptr) return;
  auto it = g->members.find(member_id);
  if (it == g->members.end()) return;
  Member& m = it->second;
  m.session_timer = 0;
  if (m.join_done || m.sync_done) {
    // Waiting on the coordinator counts as alive.
    schedule_session_timeout(*g, m);
    return;
  }
  remove_member(*g, member_id, ErrorCode::kUnknownMemberId, "session timeout");
  erase_group_if_unused(group_id);
}

void Coordinator::remove_member(Group& g, const std::string& member_id, ErrorCode parked_error, const char* reason) {
  auto it = g.members.find(member_id);
  if (it == g.members.end()) return;
  Member m = std::move(it->second);
  g.members.erase(it);
  executor_.cancel(m.session_timer);
  if (m.instance_id) {
    g.static_members.erase(*m.instance_id);
    forget_static(g, *m.instance_id);
  }
  EDDY_LOG_INFO("group {}: member {} removed: {}", g.id, member_id, reason);
  m.fail_parked_join(parked_error);
  m.fail_parked_sync(parked_error);
  switch (g.state()) {
    case State::kStable:
    case State::kCompletingRebalance:
      // With nobody left this completes at once and the group is Empty.
      prepare_rebalance(g, reason);
      break;
    case State::kPreparingRebalance: maybe_complete_join(g); break;
    case State::kEmpty:
    case State::kDead: break;
  }
}

protocol::LeaveGroupResponse Coordinator::leave(const protocol::LeaveGroupRequest& req, int16_t version) {
  EDDY_DCHECK_ON_LOOP(executor_);
  protocol::LeaveGroupResponse r;
  if (ErrorCode e = availability(); e != ErrorCode::kNone) {
    r.error_code = to_int(e);
    return r;
  }
  if (req.group_id.empty()) {
    r.error_code = to_int(ErrorCode::kInvalidGroupId);
    return r;
  }
  // Before v3 one member leaves, named at the top level.
  std::vector<protocol::LeaveGroupRequest::MemberIdentity> leaving = req.members;
  if (version < 3) {
    protocol::LeaveGroupRequest::MemberIdentity only;
    only.member_id = req.member_id;
    leaving = {only};
  }
  Group* g = find_group(req.group_id);
  for (const auto& who : leaving) {
    protocol::LeaveGroupResponse::MemberResponse mr;
    mr.member_id = who.member_id;
    mr.group_instance_id = who.group_instance_id;
    mr.error_code = to_int(g == nullptr ? ErrorCode::kUnknownMemberId : leave_one(*g, who));
    if (version < 3) r.error_code = mr.error_code;
    r.members.push_back(std::move(mr));
  }
  if (g != nullptr) {
    if (g->state() == State::kPreparingRebalance) maybe_complete_join(*g);
    erase_group_if_unused(req.group_id);
  }
  return r;
}

ErrorCode Coordinator::leave_one(Group& g, const protocol::LeaveGroupRequest::MemberIdentity& who) {
  std::string target = who.member_id;
  if (who.group_instance_id && !who.group_instance_id->empty()) {
    // A static member leaves by its instance id; a member id, if given, must be the instance's.
    auto it = g.static_members.find(*who.group_instance_id);
    if (it == g.static_members.end()) return ErrorCode::kUnknownMemberId;
    if (!who.member_id.empty() && it->second != who.member_id) return ErrorCode::kFencedInstanceId;
    target = it->second;
  } else if (auto pending = g.pending.find(who.member_id); pending != g.pending.end()) {
    // A member id handed out but not joined with yet.
    executor_.cancel(pending->second);
    g.pending.erase(pending);
    return ErrorCode::kNone;
  } else if (g.members.find(who.member_id) == g.members.end()) {
    return ErrorCode::kUnknownMemberId;
  }
  remove_member(g, target, ErrorCode::kUnknownMemberId, "left");
  return ErrorCode::kNone;
}

// ---- Static member persistence ------------------------------------------

void Coordinator::persist_static(const Group& g, const Member& m) {
  if (!m.instance_id) return;
  meta::StaticMember sm;
  sm.group_id = g.id;
  sm.group_instance_id = *m.instance_id;
  sm.member_id = m.member_id;
  sm.client_id = m.client_id;
  sm.client_host = m.client_host;
  sm.protocol_type = g.protocol_type;
  sm.protocol_name = g.protocol_name;
  sm.generation_id = g.generation;
  sm.session_timeout_ms = m.session_timeout_ms;
  sm.rebalance_timeout_ms = m.rebalance_timeout_ms;
  if (const auto* md = m.metadata_for(g.protocol_name)) sm.subscription = *md;
  sm.assignment = m.assignment;
  if (static_sink_.saved) {
    static_sink_.saved(sm);
    return;
  }
  Status s = meta_->static_members().save(sm);
  if (!s.ok()) EDDY_LOG_WARN("group {}: saving static member {}: {}", g.id, *m.instance_id,
                             s.message());
}

void Coordinator::forget_static(const Group& g, const std::string& instance_id) {
  if (static_sink_.removed) {
    static_sink_.removed(g.id, instance_id);
    return;
  }
  Status s = meta_->static_members().remove(g.id, instance_id);
  if (!s.ok()) EDDY_LOG_WARN("group {}: removing static member {}: {}", g.id, instance_id,
                             s.message());
}

}  // namespace eddy::group
