// raft/replica.h — one node's replica of one Raft group (KRaft's shape:
// pull-based replication through Fetch, Vote / BeginQuorumEpoch /
// EndQuorumEpoch for leadership).
//
// Deterministic: the caller passes the time into every call, supplies the
// randomness, the log and the quorum-state store, delivers incoming messages
// to handle() and sends what take_outbox() returns. Nothing here blocks,
// sleeps, reads a clock or touches a socket.
//
// Roles (KRaft's QuorumState): unattached (an epoch with no known leader,
// maybe a vote cast), follower, candidate, leader, resigned (a leader that
// gave up its epoch and will not accept appends).
//
// Invariants kept (checked by tests/unit/raft/):
//  - the quorum state (epoch, vote, leader) is durable before any message
//    that depends on it is sent; a voter votes at most once per epoch;
//  - a vote is granted only to a candidate whose (last epoch, end offset) is
//    at least this replica's;
//  - a leader appends one kLeaderChange entry at the start of its epoch and
//    advances the high watermark only past it: to the largest offset that a
//    majority of voters hold durably (its own durable end, the followers'
//    fetch offsets of this epoch: a follower fetches only once its log is
//    durable, and stands for election only then); the high watermark never goes backwards
//    within one run of a replica;
//  - a follower truncates only when the leader answers a diverging epoch,
//    and then to the end offset of that epoch, never below its high
//    watermark; its high watermark never exceeds its own durable offset;
//  - a leader that has not heard fetches from a majority within the fetch
//    timeout resigns (check-quorum), so an isolated leader stops accepting;
//  - snapshots (KRaft's): any replica may snapshot its committed state
//    (store_snapshot); the log then starts at the snapshot. A leader answers
//    a fetch whose entries are gone (below its log start, or whose epoch
//    the start already covers) with its latest snapshot's id, and the
//    follower fetches that snapshot in chunks (FetchSnapshot), stores it and
//    starts its log there; at open a log that starts before the latest
//    snapshot is made to start at it. A snapshot covers committed entries
//    only: the high watermark is never below the log start.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "port/status.h"
#include "raft/messages.h"
#include "raft/quorum_state_store.h"
#include "raft/raft_log.h"
#include "raft/snapshot_store.h"

namespace eddy::raft {

enum class Role : uint8_t { kUnattached, kFollower, kCandidate, kLeader, kResigned };
const char* role_name(Role role);

struct ReplicaOptions {
  NodeId id = kNoNode;
  // The group as log lines name it ("raft sensors-0: leader of epoch 3");
  // empty: the node id.
  std::string name;
  std::vector<NodeId> voters;  // must contain id, no duplicates
  // Election timeouts are drawn uniformly from [t, 2t).
  int64_t election_timeout_ms = 1000;
  // A follower without an answer from its leader for this long, and a leader
  // without fetches from a majority for this long, give up the epoch.
  int64_t fetch_timeout_ms = 2000;
  // A follower resends an unanswered fetch after this long, and waits this
  // long before fetching again after an answer that carried no entries (0:
  // at once, for a leader that holds fetches until it has something to
  // answer; then fetch_resend_ms must be set).
  int64_t fetch_retry_ms = 100;
  // A fetch still unanswered this long after it was sent is sent again;
  // 0: fetch_retry_ms. (A partition group polls every few ms when idle but
  // must not pile up fetches behind a slow answer.)
  int64_t fetch_resend_ms = 0;
  size_t max_fetch_entries = 64;
  // false: a leader's fetch answers carry no entries but say that they are
  // the log's own from base_offset on (FetchResponse::entries_in_log), and
  // the runtime sends the log's bytes from there itself without copying
  // them (a partition group's zero-copy read path). true: the leader reads
  // up to max_fetch_entries entries into the answer.
  bool leader_reads_entries = true;
  // FetchSnapshot: the bytes a leader answers at most per chunk, and the
  // largest snapshot a follower accepts (it holds one in memory while it
  // fetches it; a leader claiming a larger one is refused).
  size_t max_snapshot_chunk_bytes = 256 * 1024;
  int64_t max_snapshot_bytes = 64 * 1024 * 1024;
  // A start that finds no quorum state is the group's first start (true),
  // or a restart after a wiped disk (false): then the replica recovers
  // first (QuorumState::recovering).
  bool bootstrap = true;
};

// What a leader knows of one voter's replication (DescribeQuorum).
struct VoterProgressView {
  NodeId id = kNoNode;
  Offset log_end_offset = -1;       // its latest fetch offset of this epoch; -1 before any
  int64_t last_fetch_ms = -1;       // caller's clock; -1 never
  int64_t last_caught_up_ms = -1;   // last fetch that reached the leader's end; -1 never
};

class Replica {
 public:
  // Returns a uniformly random value in [0, bound). REQUIRES: bound > 0.
  using Random = std::function<uint64_t(uint64_t bound)>;

  // Reads the quorum state and starts in the role it implies; makes the log
  // start at the latest snapshot. log, snapshots and store must outlive the
  // replica. Fails on bad options or a log or store that fails.
  static Status open(ReplicaOptions options, RaftLog* log, SnapshotStore* snapshots, QuorumStateStore* store,
                     Random random, int64_t now_ms, std::unique_ptr<Replica>* out);

  // Timers: elections, fetches, check-quorum, flushing and the high
  // watermark. Call often (every few milliseconds of the caller's time).
  Status poll(int64_t now_ms);
  // One incoming message. Fails (invalid argument) for a message not
  // addressed to this replica; a store or log failure is returned too, and
  // the replica must then be discarded.
  Status handle(const Message& message, int64_t now_ms);
  // A client append on the leader of an entry covering `offsets` offsets;
  // *offset is where it starts. It is committed once high_watermark() >
  // *offset. Anything but a leader answers NOT_LEADER_OR_FOLLOWER (a Kafka
  // code in the Status).
  Status append(std::string payload, Offset* offset, int32_t offsets = 1);
  // A leader's graceful resignation (EndQuorumEpoch to the others).
  Status resign(int64_t now_ms);
  // Stores bytes, the caller's state built from every entry below
  // id.end_offset, as snapshot id, and starts the log there. Ignored (ok)
  // when the latest snapshot is not older. Fails (invalid argument) unless
  // id.end_offset <= high_watermark() and the entry before it has id.epoch;
  // a store or log failure is returned too (the log keeps its entries).
  Status store_snapshot(SnapshotId id, const std::string& bytes);

  std::vector<Message> take_outbox();

  NodeId id() const { return options_.id; }
  Role role() const { return role_; }
  Epoch epoch() const { return state_.epoch; }
  NodeId leader_id() const { return state_.leader_id; }
  NodeId voted_for() const { return state_.voted_for; }
  bool recovering() const { return state_.recovering; }
  Offset high_watermark() const { return high_watermark_; }
  // Offset of this leader's kLeaderChange entry; -1 unless leader/resigned.
  Offset epoch_start_offset() const { return epoch_start_offset_; }
  // A leader's view of every voter, itself first (its own log end, now);
  // empty unless leader.
  std::vector<VoterProgressView> voter_progress() const;

 private:
  struct VoterProgress {
    Offset fetched = -1;        // fetch offset of this epoch; -1 before any
    int64_t last_fetch_ms = 0;  // for check-quorum
    bool fetched_once = false;  // last_fetch_ms is a real fetch, not the epoch's start
    int64_t caught_up_ms = -1;  // last fetch at the leader's log end
  };

  // A follower's fetch of the leader's snapshot, held in memory until whole.
  struct SnapshotFetch {
    SnapshotId id;
    int64_t size = -1;  // -1 until the first chunk says it
    std::string bytes;
  };

  Replica(ReplicaOptions options, RaftLog* log, SnapshotStore* snapshots, QuorumStateStore* store, Random random);
  // Makes the log start at the latest snapshot (open).
  Status start_log_at_snapshot();

  Status poll_follower();
  Status poll_leader();
  Status handle_vote_request(NodeId from, const VoteRequest& req);
  Status handle_vote_response(NodeId from, const VoteResponse& resp);
  Status handle_begin_epoch(NodeId from, const BeginQuorumEpochRequest& req);
  Status handle_end_epoch(const EndQuorumEpochRequest& req);
  Status handle_fetch_request(NodeId from, int32_t correlation_id, const FetchRequest& req);
  Status handle_fetch_response(NodeId from, int32_t correlation_id, const FetchResponse& resp);
  Status handle_fetch_snapshot_request(NodeId from, int32_t correlation_id, const FetchSnapshotRequest& req);
  Status handle_fetch_snapshot_response(NodeId from, int32_t correlation_id, const FetchSnapshotResponse& resp);
  // The follower stores the snapshot it fetched and starts its log there.
  Status install_fetched_snapshot();
  // Whether a fetch at (offset, epoch) needs the snapshot (KRaft's
  // validateOffsetAndEpoch: the entries it needs are gone).
  bool needs_snapshot(Offset fetch_offset, Epoch last_fetched_epoch) const;
  // Whether an answer from `from` in `epoch` is for this follower's fetch
  // of id correlation_id; clears fetch_outstanding_ when it is.
  bool takes_answer(NodeId from, Epoch epoch, int32_t correlation_id);
  Status append_fetched(const FetchResponse& resp);
  // *read_status: the log's answer to reading the entries (the response is
  // not sent when it failed).
  FetchResponse answer_fetch(NodeId from, const FetchRequest& req, Status* read_status);
  // Adopts a higher epoch seen in a message (leader known or not).
  Status observe_epoch(Epoch epoch, NodeId leader);

  Status persist(const QuorumState& state);
  Status become_unattached(Epoch epoch);
  Status become_follower(Epoch epoch, NodeId leader);
  Status become_candidate();
  Status become_leader();
  Status update_follower_high_watermark();
  void update_leader_high_watermark();
  bool quorum_reached_recently() const;

  bool is_voter(NodeId id) const;
  size_t majority() const { return options_.voters.size() / 2 + 1; }
  int64_t random_election_timeout();
  void send(NodeId to, Payload payload, int32_t correlation_id = 0);

  ReplicaOptions options_;
  std::string log_name_;  // options_.name, or the node id
  RaftLog* log_;
  SnapshotStore* snapshots_;
  QuorumStateStore* store_;
  Random random_;
  int64_t now_ = 0;

  QuorumState state_;  // as last written to store_
  Role role_ = Role::kUnattached;
  Offset high_watermark_ = 0;

  int64_t election_deadline_ = 0;  // unattached, candidate, resigned
  std::set<NodeId> votes_;         // candidate

  int64_t last_leader_contact_ = 0;  // follower: last answer from the leader
  int64_t next_fetch_at_ = 0;        // follower
  int32_t last_fetch_id_ = 0;        // follower: correlation id of the latest fetch
  bool fetch_outstanding_ = false;   // follower: its answer not yet applied
  int64_t early_election_at_ = -1;   // follower after EndQuorumEpoch
  Offset leader_high_watermark_ = 0; // follower: the leader's last answer
  Offset validated_end_ = 0;         // follower: log matches the leader's below
  std::optional<SnapshotFetch> snapshot_fetch_;  // follower: fetching the leader's snapshot

  Offset epoch_start_offset_ = -1;           // leader, resigned
  int64_t leader_since_ = 0;                 // leader
  int64_t next_begin_epoch_resend_ = 0;      // leader
  std::map<NodeId, VoterProgress> progress_; // leader: other voters

  std::vector<Message> outbox_;
};

}  // namespace eddy::raft
