// JoinGroup: new members (with KIP-394's member id round trip), members
// rejoining, and static members (KIP-345) replacing their older instance.
#include <utility>

#include "group/coordinator.h"
#include "port/log.h"
#include "protocol/errors.h"

namespace eddy::group {

using protocol::ErrorCode;

namespace {

// The answer to a JoinGroup refused on arrival (never parked).
void refuse_join(const JoinDone& done, int16_t version, ErrorCode error, const std::string& member_id) {
  protocol::JoinGroupResponse r = join_error(error, member_id);
  if (version >= 7) r.protocol_name = std::nullopt;
  done(r);
}

bool is_static(const protocol::JoinGroupRequest& req) {
  return req.group_instance_id.has_value() && !req.group_instance_id->empty();
}

// What every JoinGroup of a member refreshes.
void update_from_request(Member& m, const protocol::JoinGroupRequest& req, const ClientContext& client) {
  m.client_id = client.client_id;
  m.client_host = client.client_host;
  m.session_timeout_ms = req.session_timeout_ms;
  m.rebalance_timeout_ms = req.rebalance_timeout_ms > 0 ? req.rebalance_timeout_ms : req.session_timeout_ms;
  m.join_version = client.version;
}

}  // namespace

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
  EDDY_DCHECK_ON_LOOP(executor_);
  const ErrorCode refused = check_join_request(req);
  if (refused != ErrorCode::kNone) return refuse_join(done, client.version, refused, req.member_id);
  if (req.member_id.empty()) return join_without_member_id(req, client, std::move(done));
  join_with_member_id(req, client, std::move(done));
}

ErrorCode Coordinator::check_join_request(const protocol::JoinGroupRequest& req) const {
  if (ErrorCode e = availability(); e != ErrorCode::kNone) return e;
  if (req.group_id.empty()) return ErrorCode::kInvalidGroupId;
  if (req.session_timeout_ms < options_.min_session_timeout_ms ||
      req.session_timeout_ms > options_.max_session_timeout_ms)
    return ErrorCode::kInvalidSessionTimeout;
  size_t metadata_bytes = 0;
  for (const auto& p : req.protocols) metadata_bytes += p.name.size() + p.metadata.size();
  if (metadata_bytes > options_.max_member_metadata_bytes) return ErrorCode::kInvalidRequest;
  return ErrorCode::kNone;
}

void Coordinator::join_without_member_id(const protocol::JoinGroupRequest& req, const ClientContext& client,
                                         JoinDone done) {
  Group& g = get_or_create_group(req.group_id);
  if (!protocols_supported(g, req)) {
    erase_group_if_unused(req.group_id);
    return refuse_join(done, client.version, ErrorCode::kInconsistentGroupProtocol, "");
  }
  if (is_static(req)) {
    auto it = g.static_members.find(*req.group_instance_id);
    if (it != g.static_members.end() && g.members.count(it->second)) {
      return join_static_replacement(g, it->second, req, client, std::move(done));
    }
  } else if (client.version >= 4) {
    // KIP-394: hand out the id first; the member joins with it.
    const std::string id = hand_out_member_id(g, client.client_id, req.session_timeout_ms);
    return refuse_join(done, client.version, ErrorCode::kMemberIdRequired, id);
  }
  join_new_member(g, req, client, std::move(done));
}

std::string Coordinator::hand_out_member_id(Group& g, const std::string& client_id, int32_t session_timeout_ms) {
  std::string id = new_member_id(client_id);
  std::string gid = g.id;
  // Not back within the session timeout: the id is forgotten.
  g.pending[id] = executor_.schedule_after(session_timeout_ms, [this, gid, id] {
    Group* pg = find_group(gid);
    if (pg == nullptr) return;
    pg->pending.erase(id);
    if (pg->state() == State::kPreparingRebalance) maybe_complete_join(*pg);
    erase_group_if_unused(gid);
  });
  return id;
}

void Coordinator::join_with_member_id(const protocol::JoinGroupRequest& req, const ClientContext& client,
                                      JoinDone done) {
  auto refuse = [&](ErrorCode error) { refuse_join(done, client.version, error, req.member_id); };
  Group* g = find_group(req.group_id);
  if (g == nullptr) return refuse(ErrorCode::kUnknownMemberId);
  if (is_fenced(*g, req.group_instance_id, req.member_id)) return refuse(ErrorCode::kFencedInstanceId);
  auto pending = g->pending.find(req.member_id);
  if (pending != g->pending.end()) {
    if (!protocols_supported(*g, req)) return refuse(ErrorCode::kInconsistentGroupProtocol);
    executor_.cancel(pending->second);
    g->pending.erase(pending);
    return join_new_member(*g, req, client, std::move(done));
  }
  auto mit = g->members.find(req.member_id);
  if (mit == g->members.end()) return refuse(ErrorCode::kUnknownMemberId);
  if (!protocols_supported(*g, req) && g->members.size() > 1) return refuse(ErrorCode::kInconsistentGroupProtocol);
  update_from_request(mit->second, req, client);
  join_existing_member(*g, mit->second, req, std::move(done));
}

void Coordinator::join_new_member(Group& g, const protocol::JoinGroupRequest& req, const ClientContext& client,
                                  JoinDone done) {
  std::string id = req.member_id.empty() ? new_member_id(client.client_id) : req.member_id;
  Member m;
  m.member_id = id;
  if (is_static(req)) m.instance_id = req.group_instance_id;
  update_from_request(m, req, client);
  set_protocols(m, req);
  m.join_done = std::move(done);
  if (g.members.empty()) g.protocol_type = req.protocol_type;
  if (m.instance_id) g.static_members[*m.instance_id] = id;
  // As Kafka: the first member to join leads until it leaves.
  if (g.members.find(g.leader) == g.members.end()) g.leader = id;
  auto [it, inserted] = g.members.emplace(id, std::move(m));
  schedule_session_timeout(g, it->second);
  if (g.initial_delay) g.joined_during_delay = true;
  start_or_continue_rebalance(g, "member joined");
}

void Coordinator::join_static_replacement(Group& g, const std::string& old_id, const protocol::JoinGroupRequest& req,
                                          const ClientContext& client, JoinDone done) {
  auto node = g.members.extract(old_id);
  Member m = std::move(node.mapped());
  executor_.cancel(m.session_timer);
  m.session_timer = 0;
  // The older instance is fenced: its parked requests learn it now.
  m.fail_parked_join(ErrorCode::kFencedInstanceId);
  m.fail_parked_sync(ErrorCode::kFencedInstanceId);
  const std::string new_id = new_member_id(client.client_id);
  EDDY_LOG_INFO("group {}: static member {} rejoined as {} (was {})", g.id, *req.group_instance_id,
                new_id, old_id);
  m.member_id = new_id;
  update_from_request(m, req, client);
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
    const bool skip = g.leader == new_id && client.version >= 9;
    protocol::JoinGroupResponse r = join_response(g, member, skip);
    r.skip_assignment = skip;
    done(r);
    return;
  }
  member.join_done = std::move(done);
  persist_static(g, member);
  start_or_continue_rebalance(g, "static member rejoined with a change to the group's protocol");
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
    case State::kDead:
      done(join_error(ErrorCode::kUnknownMemberId, m.member_id));
      return;
  }
}

}  // namespace eddy::group
