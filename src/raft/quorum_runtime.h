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
//  - deliver() and view() may be called from any thread (the broker's
//    reactor calls them for requests that arrive on the controller listener).
//
// Invariants:
//  - the core is touched only on the group thread;
//  - every deliver() gets exactly one answer callback, on the group thread,
//    unless stop() runs first (then it gets none: the caller owns the
//    request's fate on shutdown);
//  - a sender queue holds at most kMaxQueuedPerPeer requests: when a peer is
//    slow or down the oldest are dropped (Raft resends on its own timers),
//    so a dead peer costs neither memory nor time on the group thread;
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

struct QuorumRuntimeOptions {
  ReplicaOptions replica;
  int64_t poll_interval_ms = 10;
  // Name in log lines ("controller").
  std::string name = "controller";
};

class QuorumRuntime {
 public:
  static constexpr size_t kMaxQueuedPerPeer = 8;
  using ChannelFactory = std::function<std::unique_ptr<PeerChannel>(NodeId peer)>;
  // Called on the group thread with the core's answer to a delivered request,
  // or nullptr when the core gave none (the caller answers with an error).
  using Answer = std::function<void(const Payload* answer)>;

  // Opens the replica over log and store (see Replica::open). Threads start
  // in start().
  static Status open(QuorumRuntimeOptions options, std::unique_ptr<RaftLog> log,
                     std::unique_ptr<QuorumStateStore> store, ChannelFactory channels,
                     std::unique_ptr<QuorumRuntime>* out);
  ~QuorumRuntime();  // stop()s

  void start();
  // A leader resigns first (EndQuorumEpoch to the others, so that they elect
  // a successor at once rather than after the election timeout) and waits up
  // to grace_ms for those to be sent. Then stops and joins every thread;
  // pending answers are dropped. Idempotent.
  void stop(int64_t grace_ms = 0);

  // A request that arrived from a peer (request.to is this node; any thread).
  void deliver(Message request, Answer answer);
  // The latest view (updated by the group thread after each step).
  QuorumView view() const;

 private:
  struct Arrival {
    Message message;
    Answer answer;  // empty for answers from peers
  };
  struct Sender {
    NodeId peer = kNoNode;
    std::unique_ptr<PeerChannel> channel;
    std::deque<Message> queue;  // guarded by mutex_
    bool calling = false;       // guarded by mutex_
    std::condition_variable wake;
    std::thread thread;
  };

  QuorumRuntime(QuorumRuntimeOptions options, std::unique_ptr<RaftLog> log, std::unique_ptr<QuorumStateStore> store);

  void run_group();
  void run_sender(Sender* sender);
  // One arrival through the core, its answer to the caller, the rest routed.
  void step(Arrival arrival, int64_t now_ms);
  void poll(int64_t now_ms);
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

  QuorumRuntimeOptions options_;
  std::unique_ptr<RaftLog> log_;
  std::unique_ptr<QuorumStateStore> store_;
  std::unique_ptr<Replica> replica_;  // group thread only (after start)
  bool failed_ = false;                 // group thread

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Arrival> inbox_;  // guarded by mutex_
  bool stopping_ = false;      // guarded by mutex_
  bool resign_requested_ = false;  // guarded by mutex_
  bool resign_done_ = false;       // guarded by mutex_
  std::condition_variable resigned_;
  QuorumView view_;            // guarded by mutex_
  std::map<NodeId, std::unique_ptr<Sender>> senders_;
  std::thread group_thread_;
  bool started_ = false;
};

}  // namespace eddy::raft
