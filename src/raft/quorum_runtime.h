// raft/quorum_runtime.h — one Raft group running on real time and real
// sockets: the deterministic core (replica.h) on a thread of its own, one
// sender thread per other voter, and an inbox for what arrives from them.
//
// Threads:
//  - the group thread owns the Replica, its log and its quorum-state store:
//    it polls the core every poll_interval_ms, hands it each arrival, and
//    routes what the core sends: requests to the peer's sender, answers to
//    the inbound request they answer;
//  - one sender thread per other voter calls PeerChannel::call for each
//    request, one at a time, and posts the answer back to the inbox;
//  - deliver(), propose() and view() may be called from any thread (the
//    broker's reactor calls them for requests that arrive on the controller
//    listener and for changes of the cluster's metadata).
//
// Invariants:
//  - the core is touched only on the group thread;
//  - every deliver() gets exactly one answer callback, on the group thread,
//    unless stop() runs first (then it gets none: the caller owns the
//    request's fate on shutdown);
//  - a sender queue holds at most kMaxQueuedPerPeer requests: when a peer is
//    slow or down the oldest are dropped (Raft resends on its own timers),
//    so a dead peer costs neither memory nor time on the group thread;
//  - committed entries reach on_committed in log order, each exactly once
//    per runtime, from options.committed_from on, on the group thread; when
//    the entries from there are gone (the log starts at a snapshot past
//    them) on_snapshot gets that snapshot first, and the entries after it
//    follow;
//  - every propose() gets exactly one outcome, on the group thread (or at
//    once on the caller's when refused), unless stop() runs first; an entry
//    reaches on_committed before its proposal's outcome is given;
//  - a failure of the log or the quorum-state store stops the group (the
//    replica must then be discarded): the node stops voting and answering,
//    which the others see as a dead node; it is logged once.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "port/status.h"
#include "raft/messages.h"
#include "raft/quorum_state_store.h"
#include "raft/raft_log.h"
#include "raft/replica.h"
#include "raft/snapshot_store.h"

namespace eddy::raft {

// Carries one request to one peer and waits for its answer (blocking). Used
// by that peer's sender thread only. An implementation reconnects as needed.
class PeerChannel {
 public:
  virtual ~PeerChannel() = default;
  // *response: the answer's payload (a request without an answer in the core,
  // EndQuorumEpoch, returns ok with *response untouched and *answered false).
  virtual Status call(const Message& request, Payload* response, bool* answered) = 0;
  // Makes a call() in progress, and later ones, return soon (shutdown).
  virtual void interrupt() = 0;
};

// What the group looks like now, for DescribeQuorum and status pages.
struct QuorumView {
  NodeId id = kNoNode;
  Role role = Role::kUnattached;
  Epoch epoch = 0;
  NodeId leader_id = kNoNode;
  NodeId voted_for = kNoNode;
  bool recovering = false;
  bool failed = false;  // the log or the store failed: the group stopped here
  Offset high_watermark = 0;
  Offset log_end_offset = 0;
  std::vector<NodeId> voters;
  // Leader only: every voter's replication, times in wall-clock ms.
  struct Voter {
    NodeId id = kNoNode;
    Offset log_end_offset = -1;
    int64_t last_fetch_wall_ms = -1;
    int64_t last_caught_up_wall_ms = -1;
  };
  std::vector<Voter> voter_progress;
};

// Who leads, as the latest view says: what the broker asks per request
// (a copy without the view's vectors).
struct Leadership {
  NodeId leader_id = kNoNode;
  bool is_leader = false;  // this node leads, and its group has not failed
};

// Called on the group thread for each committed entry (leader-change
// entries included: the caller skips what it does not apply).
using CommittedSink = std::function<void(Offset offset, const Entry& entry)>;
// Called on the group thread with a snapshot the caller must load in place
// of its state: the state built by every entry below id.end_offset.
using SnapshotSink = std::function<void(SnapshotId id, std::string bytes)>;

struct QuorumRuntimeOptions {
  ReplicaOptions replica;
  int64_t poll_interval_ms = 10;
  // The first offset given to on_committed (what the caller applied before
  // it restarted is not given again); on_committed empty: none are given.
  Offset committed_from = 0;
  CommittedSink on_committed;
  // Required with on_committed.
  SnapshotSink on_snapshot;
  // A proposal whose entry is neither committed nor lost this long after
  // its append gets a timeout (its outcome is then unknown to the caller).
  int64_t proposal_timeout_ms = 5000;
  // Long poll: a leader holds a follower's Fetch that has nothing the
  // follower does not know yet (no entries past its offset, no newer high
  // watermark than the last answer told it, no error, divergence or
  // snapshot) for up to this long, and answers it as soon as the log grows,
  // the high watermark moves or the epoch or role changes (Kafka's
  // fetch.max.wait.ms for replica fetches). 0: answered at once. With it,
  // followers set replica.fetch_retry_ms 0 (ask again at once) and a
  // fetch_resend_ms above it; it must stay well below fetch_timeout_ms.
  int64_t hold_fetch_ms = 0;
  // Name in log lines ("controller").
  std::string name = "controller";
};

class QuorumRuntime {
 public:
  static constexpr size_t kMaxQueuedPerPeer = 8;
  // Proposals queued or appended but not yet committed; more are refused.
  static constexpr size_t kMaxPendingProposals = 256;
  using ChannelFactory = std::function<std::unique_ptr<PeerChannel>(NodeId peer)>;
  // Called on the group thread with the core's answer to a delivered request,
  // or nullptr when the core gave none (the caller answers with an error).
  using Answer = std::function<void(const Payload* answer)>;
  // The outcome of a proposal: ok with the entry's offset once it is
  // committed; NOT_LEADER_OR_FOLLOWER (a Kafka code in the Status) when this
  // node is not the leader or the entry was replaced by another leader's;
  // a timeout when its fate is unknown after proposal_timeout_ms.
  using Proposed = std::function<void(const Status& status, Offset offset)>;

  // Opens the replica over log, snapshots and store (see Replica::open).
  // Threads start in start().
  static Status open(QuorumRuntimeOptions options, std::unique_ptr<RaftLog> log,
                     std::unique_ptr<SnapshotStore> snapshots, std::unique_ptr<QuorumStateStore> store,
                     ChannelFactory channels, std::unique_ptr<QuorumRuntime>* out);
  ~QuorumRuntime();  // stop()s

  void start();
  // A leader resigns first (EndQuorumEpoch to the others, so that they elect
  // a successor at once rather than after the election timeout) and waits up
  // to grace_ms for those to be sent. Then stops and joins every thread;
  // pending answers are dropped. Idempotent.
  void stop(int64_t grace_ms = 0);

  // A request that arrived from a peer (request.to is this node; any thread).
  void deliver(Message request, Answer answer);
  // Appends payload as a data entry when this node is the leader (any
  // thread); done gets its outcome (see Proposed).
  void propose(std::string payload, Proposed done);
  // Stores bytes as a snapshot of the state built by the committed entries
  // below end_offset (any thread; see Replica::store_snapshot; its epoch is
  // the log's at end_offset - 1): the log then starts there. Ignored when
  // the log starts at or after end_offset already; a refusal or failure is
  // logged (the log keeps its entries).
  void take_snapshot(Offset end_offset, std::string bytes);
  // The latest view (updated by the group thread after each step).
  QuorumView view() const;
  Leadership leadership() const;

 private:
  struct Arrival {
    Message message;
    Answer answer;  // empty for answers from peers
  };
  struct Proposal {
    std::string payload;
    Proposed done;
  };
  struct SnapshotRequest {
    Offset end_offset = 0;
    std::string bytes;
  };
  // An appended entry waiting for the high watermark to pass it.
  struct Appended {
    Offset offset = 0;
    Epoch epoch = 0;
    int64_t deadline_ms = 0;
    Proposed done;
  };
  struct Sender {
    NodeId peer = kNoNode;
    std::unique_ptr<PeerChannel> channel;
    std::deque<Message> queue;  // guarded by mutex_
    bool calling = false;       // guarded by mutex_
    std::condition_variable wake;
    std::thread thread;
  };

  QuorumRuntime(QuorumRuntimeOptions options, std::unique_ptr<RaftLog> log, std::unique_ptr<SnapshotStore> snapshots,
                std::unique_ptr<QuorumStateStore> store);

  void run_group();
  void run_sender(Sender* sender);
  // One arrival through the core, its answer to the caller, the rest routed.
  void step(Arrival arrival, int64_t now_ms);
  void poll(int64_t now_ms);
  // Appends the proposals that arrived (group thread).
  void append_proposals(std::deque<Proposal> proposals, int64_t now_ms);
  // Gives on_committed what the high watermark passed, then the outcomes of
  // appended proposals that are committed, lost or timed out.
  void publish_commits(int64_t now_ms);
  // Gives on_snapshot the snapshot the log starts at when the caller needs
  // entries below it.
  void publish_snapshot();
  void store_snapshot(const SnapshotRequest& request);
  // Routes the core's outbox; answered_by: the arrival the core was answering
  // (its answer goes to its callback), or nullptr.
  void route(std::vector<Message> outbox, Arrival* answered_by);
  void enqueue(Message request);
  void fail(const Status& status);
  void publish_view();
  // Group thread: resigns when leader (resign_requested_).
  void resign_if_asked(int64_t now_ms);
  // Whether every sender's queue is empty and no call is in flight.
  bool senders_idle() const;
  // Long poll (hold_fetch_ms). A follower's Fetch the core answered with
  // nothing new is held (true) instead of answered; outbox keeps the rest.
  bool hold_if_nothing_new(Arrival& arrival, std::vector<Message>& outbox, int64_t now_ms);
  // Whether outbox answers request with nothing the follower lacks.
  bool nothing_new(const Message& answer) const;
  // The held Fetches whose deadline passed or whose group changed since
  // they were held (all: every one) go to the core again and are answered.
  void answer_held_fetches(int64_t now_ms, bool all);
  // Notes the high watermark a Fetch answer in outbox tells its follower.
  void note_fetch_answers(const std::vector<Message>& outbox);

  QuorumRuntimeOptions options_;
  std::unique_ptr<RaftLog> log_;
  std::unique_ptr<SnapshotStore> snapshots_;
  std::unique_ptr<QuorumStateStore> store_;
  std::unique_ptr<Replica> replica_;  // group thread only (after start)
  bool failed_ = false;                 // group thread
  Offset next_committed_ = 0;           // group thread: the next offset for on_committed
  std::deque<Appended> appended_;       // group thread, by offset
  // Long poll, group thread: at most one held Fetch per follower (a newer
  // one from the same follower answers the older first, with the answer it
  // had), and the high watermark last told each follower.
  struct HeldFetch {
    Arrival arrival;
    Payload answer;  // the core's answer when it was held
    int64_t deadline_ms = 0;
    Offset log_end = 0;
    Offset high_watermark = 0;
    Epoch epoch = 0;
  };
  std::map<NodeId, HeldFetch> held_fetches_;
  std::map<NodeId, Offset> high_watermark_told_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Arrival> inbox_;  // guarded by mutex_
  std::deque<Proposal> proposals_;  // guarded by mutex_
  std::deque<SnapshotRequest> snapshot_requests_;  // guarded by mutex_: at most one
  size_t pending_proposals_ = 0;    // guarded by mutex_: proposals_ + appended_
  bool stopping_ = false;      // guarded by mutex_
  bool resign_requested_ = false;  // guarded by mutex_
  bool resign_done_ = false;       // guarded by mutex_
  std::condition_variable resigned_;
  QuorumView view_;            // guarded by mutex_
  Leadership leadership_;      // guarded by mutex_: from view_
  std::map<NodeId, std::unique_ptr<Sender>> senders_;
  std::thread group_thread_;
  bool started_ = false;
};

}  // namespace eddy::raft
