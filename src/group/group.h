// A consumer group and its members as the coordinator holds them in memory,
// and the answers to the requests members leave parked with it.
//
// Threading: REQUIRES every call on the coordinator's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "group/group_state.h"
#include "port/executor.h"
#include "protocol/errors.h"
#include "protocol/generated/messages.h"

namespace eddy::group {

// Where a JoinGroup/SyncGroup answer goes; called exactly once per request.
using JoinDone = std::function<void(const protocol::JoinGroupResponse&)>;
using SyncDone = std::function<void(const protocol::SyncGroupResponse&)>;

// The error answers, with no other field set.
protocol::JoinGroupResponse join_error(protocol::ErrorCode error, const std::string& member_id);
protocol::SyncGroupResponse sync_error(protocol::ErrorCode error);

struct Member {
  std::string member_id;
  std::optional<std::string> instance_id;
  std::string client_id;
  std::string client_host;
  int32_t session_timeout_ms = 0;
  int32_t rebalance_timeout_ms = 0;
  std::string protocol_type;
  std::vector<std::pair<std::string, std::vector<uint8_t>>> protocols;  // in preference order
  std::vector<uint8_t> assignment;
  JoinDone join_done;  // set while a JoinGroup is parked
  int16_t join_version = 0;
  SyncDone sync_done;  // set while a SyncGroup is parked
  port::Executor::TimerId session_timer = 0;

  const std::vector<uint8_t>* metadata_for(const std::string& protocol) const;

  // The answers to parked requests. Each takes the callback out of the
  // member before calling it, so that while it runs the member has no
  // request of that kind parked (a callback reentering the coordinator
  // cannot be answered twice), and does nothing when none is parked.
  //
  // join_error(error, member_id).
  void fail_parked_join(protocol::ErrorCode error);
  void answer_parked_join(const protocol::JoinGroupResponse& response);
  void fail_parked_sync(protocol::ErrorCode error);
  // The parked SyncGroup callback, taken out of the member (empty when none
  // is parked), for a caller that answers several members only after it has
  // updated them all.
  SyncDone take_parked_sync();
};

// Called on every state transition of every group (tests and tools).
using TransitionObserver = std::function<void(const std::string& group_id, GroupState from, GroupState to)>;

// Invariants between calls into the coordinator:
//  - a member has a parked JoinGroup only while the group is
//    PreparingRebalance, and a parked SyncGroup only while it is
//    CompletingRebalance (every transition out of those states answers
//    them);
//  - in CompletingRebalance and Stable, leader and protocol_name are those
//    of the current generation and leader is a member;
//  - a member id is in at most one of members and pending.
class Group {
 public:
  // observer: may be null; REQUIRES that it outlives the group.
  Group(std::string group_id, GroupState initial, const TransitionObserver* observer)
      : id(std::move(group_id)), state_(initial), observer_(observer) {}

  GroupState state() const { return state_; }
  // The only way the state changes: logs the transition (debug level) and
  // tells the observer. REQUIRES: transition_allowed(state(), next) (see
  // group_state.h for what an illegal one does).
  void set_state(GroupState next);

  const std::string id;
  int32_t generation = 0;
  std::string protocol_type;
  std::string protocol_name;  // selected when a rebalance completes
  std::string leader;
  std::map<std::string, Member> members;              // by member id
  std::map<std::string, std::string> static_members;  // instance id -> member id
  std::map<std::string, port::Executor::TimerId> pending;          // MEMBER_ID_REQUIRED handed out, awaiting rejoin
  port::Executor::TimerId join_timer = 0;
  // While set, the join does not complete before the timer fires
  // (group.initial.rebalance.delay.ms).
  bool initial_delay = false;
  bool joined_during_delay = false;
  int64_t delay_budget_ms = 0;  // what is left of the rebalance timeout

 private:
  GroupState state_;
  const TransitionObserver* observer_;
};

}  // namespace eddy::group
