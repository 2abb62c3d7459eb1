#include "group/group.h"

#include <cstdlib>

#include "port/log.h"

namespace eddy::group {

using protocol::ErrorCode;
using protocol::to_int;

const std::vector<uint8_t>* Member::metadata_for(const std::string& protocol) const {
  for (const auto& p : protocols) {
    if (p.first == protocol) return &p.second;
  }
  return nullptr;
}

protocol::JoinGroupResponse join_error(ErrorCode error, const std::string& member_id) {
  protocol::JoinGroupResponse r;
  r.error_code = to_int(error);
  r.member_id = member_id;
  return r;
}

protocol::SyncGroupResponse sync_error(ErrorCode error) {
  protocol::SyncGroupResponse r;
  r.error_code = to_int(error);
  return r;
}

void Member::fail_parked_join(ErrorCode error) {
  if (!join_done) return;
  answer_parked_join(join_error(error, member_id));
}

void Member::answer_parked_join(const protocol::JoinGroupResponse& response) {
  if (!join_done) return;
  JoinDone done = std::move(join_done);
  join_done = nullptr;
  done(response);
}

void Member::fail_parked_sync(ErrorCode error) {
  SyncDone done = take_parked_sync();
  if (done) done(sync_error(error));
}

SyncDone Member::take_parked_sync() {
  SyncDone done = std::move(sync_done);
  sync_done = nullptr;
  return done;
}

void Group::set_state(GroupState next) {
  const GroupState previous = state_;
  if (!transition_allowed(previous, next)) {
    EDDY_LOG_ERROR("group {}: illegal state transition {} -> {}", id, group_state_name(previous),
                   group_state_name(next));
    if (kAbortOnIllegalTransition) std::abort();
  }
  EDDY_LOG_DEBUG("group {}: {} -> {}", id, group_state_name(previous), group_state_name(next));
  state_ = next;
  if (observer_ != nullptr && *observer_) (*observer_)(id, previous, next);
}

}  // namespace eddy::group
