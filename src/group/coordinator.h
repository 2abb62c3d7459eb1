// The consumer group coordinator (Kafka's "classic" group protocol):
// JoinGroup / SyncGroup / Heartbeat / LeaveGroup membership with
// generations, session and rebalance timeouts, static members (KIP-345),
// and the group side of committed offsets (who may commit; the offsets
// themselves are GroupOffsets', group_offsets.h).
//
// The coordinator is protocol-agnostic: it picks the protocol (assignor) all
// members support and hands the members' metadata to the leader, which
// computes the assignment; it never looks inside assignments except to tell
// which topics an empty group was subscribed to (OffsetDelete).
//
// States: Kafka's (group_state.h); a group changes state only through
// Group::set_state, which checks the transition.
//
// Durability: committed offsets and static members go through meta (one
// transaction per request). Dynamic members live in memory only: after a
// restart they get UNKNOWN_MEMBER_ID and rejoin. Static members are reloaded
// with their assignment, so a restarted member keeps its partitions.
//
// Threading: REQUIRES every call (and every timer callback) on the
// executor's loop thread (checked in checked builds).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "group/group.h"
#include "group/group_offsets.h"
#include "meta/meta_store.h"
#include "port/executor.h"
#include "protocol/errors.h"
#include "protocol/generated/messages.h"

namespace eddy::group {

struct CoordinatorOptions {
  int32_t min_session_timeout_ms = 6000;      // group.min.session.timeout.ms
  int32_t max_session_timeout_ms = 1800000;   // group.max.session.timeout.ms
  // group.initial.rebalance.delay.ms: the first rebalance of an empty group
  // waits this long for more members (again while more keep coming, up to
  // the rebalance timeout), so that consumers starting together settle in
  // one rebalance instead of one each.
  int32_t initial_rebalance_delay_ms = 3000;
  int32_t offset_metadata_max_bytes = 4096;   // offset.metadata.max.bytes
  int64_t offsets_retention_ms = 7LL * 24 * 3600 * 1000;     // offsets.retention.minutes
  int64_t offsets_retention_check_interval_ms = 600000;      // offsets.retention.check.interval.ms
  // A member's protocol metadata (all protocols together) above this is
  // refused with INVALID_REQUEST: a gateway keeps every member's metadata in
  // memory. Kafka's consumers send a few hundred bytes.
  size_t max_member_metadata_bytes = 256 * 1024;
};

// Who sent a request.
struct ClientContext {
  int16_t version = 0;
  std::string client_id;
  std::string client_host;
};

class Coordinator {
 public:
  using JoinDone = group::JoinDone;
  using SyncDone = group::SyncDone;
  using State = GroupState;

  // REQUIRES: executor and meta outlive the coordinator.
  Coordinator(port::Executor& executor, meta::MetaStore* meta, PartitionExists partition_exists, CoordinatorOptions options);
  ~Coordinator();
  // A cluster node coordinates groups only while serving() says so (it is
  // the controller quorum's leader); otherwise every group request is
  // answered NOT_COORDINATOR, and clients ask FindCoordinator again.
  void set_serving(std::function<bool()> serving) { serving_ = std::move(serving); }
  // A cluster node: offsets expire only while serving, and what expires is
  // handed to expired (which removes it on every node through the
  // controller log) instead of being deleted here, so that no node drops
  // the offsets of a group another node coordinates.
  using ExpiredOffsets = std::function<void(std::vector<meta::GroupTopicPartition> expired)>;
  void set_expired_offsets_sink(ExpiredOffsets expired) { expired_sink_ = std::move(expired); }
  // A cluster node: a static member's state is handed to saved / removed
  // (which store it on every node through the controller log) instead of
  // being stored here, so that the next leader knows the member.
  struct StaticMembersSink {
    std::function<void(const meta::StaticMember& member)> saved;
    std::function<void(const std::string& group_id, const std::string& instance_id)> removed;
  };
  void set_static_members_sink(StaticMembersSink sink) { static_sink_ = std::move(sink); }
  // A cluster node that became the coordinator (the controller leader, once
  // it has applied the log up to its own term): the groups it held from an
  // earlier term are dropped (their parked requests answered
  // NOT_COORDINATOR) and the static members the log stored are reloaded, as
  // start() does. step_down(): the groups dropped, nothing reloaded.
  void take_over();
  void step_down();
  // What a group request gets now instead of an answer: COORDINATOR_NOT_AVAILABLE
  // while draining, NOT_COORDINATOR when not serving; NONE otherwise.
  protocol::ErrorCode availability() const;
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  // Reloads static members (their groups come back Stable with the stored
  // generation and assignments) and starts the offset expiry timer.
  Status start();

  // JoinGroup and SyncGroup may complete later (when the rebalance does);
  // done is called exactly once, possibly before join()/sync() returns.
  void join(const protocol::JoinGroupRequest& request, const ClientContext& client, JoinDone done);
  void sync(const protocol::SyncGroupRequest& request, const ClientContext& client, SyncDone done);
  protocol::HeartbeatResponse heartbeat(const protocol::HeartbeatRequest& request);
  protocol::LeaveGroupResponse leave(const protocol::LeaveGroupRequest& request, int16_t version);

  protocol::OffsetCommitResponse commit_offsets(const protocol::OffsetCommitRequest& request, int16_t version);
  protocol::OffsetFetchResponse fetch_offsets(const protocol::OffsetFetchRequest& request, int16_t version);
  protocol::OffsetDeleteResponse delete_offsets(const protocol::OffsetDeleteRequest& request);
  // TxnOffsetCommit: txn_verdict is the transaction coordinator's answer
  // for the producer; the group's (v3+: member and generation, as
  // OffsetCommit) comes after it. Offsets are staged until
  // complete_transaction.
  protocol::TxnOffsetCommitResponse commit_transactional_offsets(const protocol::TxnOffsetCommitRequest& request,
                                                                 int16_t version, protocol::ErrorCode txn_verdict);
  Status complete_transaction(const std::string& group_id, int64_t producer_id, bool commit);

  protocol::ListGroupsResponse list_groups(const protocol::ListGroupsRequest& request);
  protocol::DescribeGroupsResponse describe_groups(const protocol::DescribeGroupsRequest& request);
  protocol::DeleteGroupsResponse delete_groups(const protocol::DeleteGroupsRequest& request);

  // Expires the offsets of empty groups older than the retention (the
  // periodic timer calls this; public for tests).
  void expire_offsets();

  // Answers every parked JoinGroup/SyncGroup with COORDINATOR_NOT_AVAILABLE
  // and cancels all timers (broker shutdown).
  void drain();

  // For tests and tools.
  State group_state(const std::string& group_id) const;
  int32_t group_generation(const std::string& group_id) const;
  // Called on every state transition of every group from now on.
  void observe_transitions(TransitionObserver observer);

 private:
  // Groups (coordinator.cc).
  Group* find_group(const std::string& id);
  const Group* find_group(const std::string& id) const;
  Group& get_or_create_group(const std::string& id, State initial = State::kEmpty);
  // Moves the group to Dead and forgets it.
  void erase_group(const std::string& id);
  // Every group's timers cancelled and parked requests answered parked.
  void stop_groups(protocol::ErrorCode parked);
  // Every group, its timers cancelled and parked requests answered
  // NOT_COORDINATOR (take_over, step_down).
  void drop_groups();
  // The static members eddy.db holds, as Stable groups (start, take_over).
  Status load_static_members();
  void erase_group_if_unused(const std::string& id);
  std::string new_member_id(const std::string& client_id);
  // instance_id (when given) belongs to another member than member_id.
  static bool is_fenced(const Group& g, const std::optional<std::string>& instance_id, const std::string& member_id);
  // Member checks (known, not fenced) used by check_generation.
  protocol::ErrorCode check_member(const Group& g, const std::string& member_id,
                                   const std::optional<std::string>& instance_id) const;

  // JoinGroup (coordinator_join.cc).
  // What refuses a JoinGroup before any group is looked at (NONE: nothing).
  protocol::ErrorCode check_join_request(const protocol::JoinGroupRequest& req) const;
  void join_without_member_id(const protocol::JoinGroupRequest& req, const ClientContext& client, JoinDone done);
  void join_with_member_id(const protocol::JoinGroupRequest& req, const ClientContext& client, JoinDone done);
  // KIP-394: a new member id, pending until the member joins with it.
  std::string hand_out_member_id(Group& g, const std::string& client_id, int32_t session_timeout_ms);
  void join_new_member(Group& g, const protocol::JoinGroupRequest& req, const ClientContext& client, JoinDone done);
  void join_static_replacement(Group& g, const std::string& old_id, const protocol::JoinGroupRequest& req,
                               const ClientContext& client, JoinDone done);
  void join_existing_member(Group& g, Member& m, const protocol::JoinGroupRequest& req, JoinDone done);
  bool protocols_supported(const Group& g, const protocol::JoinGroupRequest& req) const;
  static bool same_protocols(const Member& m, const protocol::JoinGroupRequest& req);
  static void set_protocols(Member& m, const protocol::JoinGroupRequest& req);
  // with_members: the leader's response, carrying every member's metadata.
  protocol::JoinGroupResponse join_response(const Group& g, const Member& m, bool with_members) const;

  // Rebalances and SyncGroup (coordinator_rebalance.cc).
  // A member joined or changed: a rebalance in progress may now complete,
  // otherwise one starts.
  void start_or_continue_rebalance(Group& g, const char* reason);
  void prepare_rebalance(Group& g, const char* reason);
  void maybe_complete_join(Group& g);
  void arm_initial_delay(Group& g, int64_t delay_ms);
  // REQUIRES: g is PreparingRebalance. Leaves it CompletingRebalance at the
  // next generation, or Empty when no member rejoined.
  void complete_join(Group& g);
  void remove_members_that_did_not_rejoin(Group& g);
  void answer_parked_joins(Group& g);
  std::string select_protocol(const Group& g) const;
  // What refuses a SyncGroup whatever the group's state; else *group is set.
  // The checks SyncGroup and Heartbeat share: coordinator up, group known,
  // member known and not fenced, generation current. Sets *group when kNone.
  protocol::ErrorCode check_generation(const std::string& group_id, const std::string& member_id,
                                       const std::optional<std::string>& instance_id, int32_t generation,
                                       Group** group);
  protocol::ErrorCode check_sync_request(const protocol::SyncGroupRequest& req, Group** group);
  // REQUIRES: g is CompletingRebalance and req is the leader's.
  void take_leader_assignment(Group& g, const protocol::SyncGroupRequest& req);
  // The SyncGroup answer carrying m's assignment.
  static protocol::SyncGroupResponse sync_assignment(const Group& g, const Member& m);
  void complete_sync(Group& g);

  // Sessions, LeaveGroup, static member persistence (coordinator_sessions.cc).
  void schedule_session_timeout(Group& g, Member& m);
  void on_session_timeout(const std::string& group_id, const std::string& member_id);
  // Removes a member (answering its parked requests with error) and moves
  // the group on. May erase nothing else; g stays valid.
  void remove_member(Group& g, const std::string& member_id, protocol::ErrorCode parked_error, const char* reason);
  // One member of a LeaveGroup: its answer.
  protocol::ErrorCode leave_one(Group& g, const protocol::LeaveGroupRequest::MemberIdentity& who);
  // Static member persistence; failures are logged (the group still works
  // in memory; the member then loses its assignment on a restart).
  void persist_static(const Group& g, const Member& m);
  void forget_static(const Group& g, const std::string& instance_id);

  // Committed offsets (coordinator_offsets.cc).
  // OffsetCommit's group-level answer for the sender (NONE: it may commit);
  // a member's commit restarts its session timeout.
  protocol::ErrorCode commit_verdict(const protocol::OffsetCommitRequest& req, int16_t version);
  protocol::ErrorCode txn_commit_verdict(const protocol::TxnOffsetCommitRequest& req, int16_t version);
  static SubscribedTopics subscribed_topics(const Group* g);
  void schedule_expiry();
  // The offsets sweep: empty groups without committed offsets go.
  void erase_empty_groups_without_offsets(const std::vector<std::string>& with_offsets);

  port::Executor& executor_;
  meta::MetaStore* meta_;
  CoordinatorOptions options_;
  TransitionObserver transition_observer_;  // every group points at it: declared before groups_
  std::map<std::string, std::unique_ptr<Group>> groups_;
  GroupOffsets offsets_;
  port::Executor::TimerId expiry_timer_ = 0;
  bool draining_ = false;
  std::function<bool()> serving_;  // empty: always (a single node)
  ExpiredOffsets expired_sink_;    // empty: expiry deletes here (a single node)
  StaticMembersSink static_sink_;  // empty: static members stored here (a single node)
};

}  // namespace eddy::group
