// raft/peer_fetchers.h — a follower node's fetches from each leader node: one
// thread and one connection per peer (apart from PeerSenders', whose
// requests must not wait behind a fetch the leader holds), carrying one
// FetchRequest at a time for all the partition groups that follow that
// peer (Kafka's replica fetcher thread). The leader may hold the request up
// to max_wait_ms until one of its groups has something to say (long poll).
//
// Invariants:
//  - at most one fetch per peer is in flight: fetch() is called again for a
//    peer only after the previous one's Done ran;
//  - Done runs exactly once per fetch() on the peer's fetcher thread, with
//    one answer slot per fetch (empty for a group the call got no usable
//    answer for: a failed call leaves every slot empty, and the cores
//    resend on their timers); never after stop() returned.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "port/status.h"
#include "raft/kafka_wire.h"
#include "raft/messages.h"

namespace eddy::raft {

// Carries one fetch of many groups to one peer and waits for its answer
// (blocking; used by that peer's fetcher thread only).
class FetchChannel {
 public:
  virtual ~FetchChannel() = default;
  // *answers: one slot per fetch, in order; empty where that group's answer
  // was missing or unusable.
  virtual Status fetch(const std::vector<GroupFetch>& fetches, int32_t max_wait_ms,
                       std::vector<std::optional<Payload>>* answers) = 0;
  // Makes a fetch in progress, and later ones, return soon (shutdown).
  virtual void interrupt() = 0;
};

class PeerFetchers {
 public:
  using ChannelFactory = std::function<std::unique_ptr<FetchChannel>(NodeId peer)>;
  using Done = std::function<void(NodeId peer, std::vector<GroupFetch> fetches,
                                  std::vector<std::optional<Payload>> answers)>;

  PeerFetchers(const std::vector<NodeId>& peers, const ChannelFactory& channels, Done done);
  ~PeerFetchers();  // stop()s

  void start();
  // Interrupts the fetches in progress and joins every thread. Idempotent.
  void stop();
  // Starts the fetch of these groups from peer (any thread). REQUIRES: the
  // previous fetch of peer is done; fetches not empty. False (nothing
  // started, no Done) for a node that is not a peer, or after stop().
  bool fetch(NodeId peer, std::vector<GroupFetch> fetches, int32_t max_wait_ms);

 private:
  struct Fetcher {
    NodeId peer = kNoNode;
    std::unique_ptr<FetchChannel> channel;
    std::vector<GroupFetch> next;  // guarded by mutex_; the fetch to run
    int32_t max_wait_ms = 0;       // guarded by mutex_
    std::condition_variable wake;
    std::thread thread;
  };

  void run(Fetcher* fetcher);

  Done done_;
  std::mutex mutex_;
  bool stopping_ = false;  // guarded by mutex_
  std::map<NodeId, std::unique_ptr<Fetcher>> fetchers_;
  bool started_ = false;
};

}  // namespace eddy::raft
