// raft/peer_senders.h — the requests of many Raft groups (a node's partition
// groups) to the other nodes: one sender thread per peer node, carrying
// every group's requests to that node one at a time over one connection
// (a GroupChannel), and each answer handed back to the caller.
//
// Invariants:
//  - one connection per peer node, whatever the number of groups (a
//    gateway's few sockets and threads);
//  - a peer's queue holds at most kMaxQueuedPerPeer requests: when a peer is
//    slow or down the oldest are dropped (Raft resends on its own timers),
//    so a dead peer costs neither memory nor the caller's time;
//  - answered() runs on the peer's sender thread, once per request that got
//    an answer the core uses (not for EndQuorumEpoch, not after a failed
//    call); never after stop() returned.
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
#include "raft/kafka_wire.h"
#include "raft/messages.h"

namespace eddy::raft {

// Carries one request of any group to one peer and waits for its answer
// (blocking; used by that peer's sender thread only).
class GroupChannel {
 public:
  virtual ~GroupChannel() = default;
  // *answered: whether *response holds an answer for the core.
  virtual Status call(const GroupAddress& group, const Message& request, Payload* response, bool* answered) = 0;
  // Makes a call in progress, and later ones, return soon (shutdown).
  virtual void interrupt() = 0;
};

class PeerSenders {
 public:
  static constexpr size_t kMaxQueuedPerPeer = 256;
  using ChannelFactory = std::function<std::unique_ptr<GroupChannel>(NodeId peer)>;
  using Answered = std::function<void(const GroupAddress& group, const Message& request, Payload answer)>;

  PeerSenders(const std::vector<NodeId>& peers, const ChannelFactory& channels, Answered answered);
  ~PeerSenders();  // stop()s

  void start();
  // Interrupts the calls in progress and joins every thread; queued requests
  // are dropped. Idempotent.
  void stop();
  // Queues request (request.to names the peer; any thread). A request to a
  // node that is not a peer is dropped.
  void send(const GroupAddress& group, Message request);
  // Waits up to timeout_ms until every queue is empty and no call is in
  // flight, answers handed to answered() included (a leader's resignations
  // sent before stop()).
  void drain(int64_t timeout_ms);

  // Requests dropped because a queue was full (for tests and metrics).
  uint64_t dropped() const;

 private:
  struct Queued {
    GroupAddress group;
    Message request;
  };
  struct Sender {
    NodeId peer = kNoNode;
    std::unique_ptr<GroupChannel> channel;
    std::deque<Queued> queue;  // guarded by mutex_
    bool calling = false;      // guarded by mutex_
    std::condition_variable wake;
    std::thread thread;
  };

  void run(Sender* sender);

  Answered answered_;
  mutable std::mutex mutex_;
  std::condition_variable idle_;  // a call ended
  bool stopping_ = false;  // guarded by mutex_
  uint64_t dropped_ = 0;   // guarded by mutex_
  std::map<NodeId, std::unique_ptr<Sender>> senders_;
  bool started_ = false;
};

}  // namespace eddy::raft
