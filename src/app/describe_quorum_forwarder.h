// Asks the leader of the controller quorum for DescribeQuorum on behalf of
// a client that asked a follower (Kafka's brokers forward it to the active
// controller the same way), so that `kafka-metadata-quorum
// --bootstrap-server` works whichever node it is pointed at.
//
// One worker thread with one connection to the current leader's controller
// listener; at most kMaxQueued requests wait, more are answered at once with
// NOT_LEADER_OR_FOLLOWER, as is any request the leader does not answer
// within the timeout.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "client/broker_connection.h"
#include "protocol/generated/describe_quorum.h"
#include "raft/quorum_voters.h"

namespace eddy::app {

class DescribeQuorumForwarder {
 public:
  static constexpr size_t kMaxQueued = 16;
  using Done = std::function<void(protocol::DescribeQuorumResponse)>;

  DescribeQuorumForwarder(std::vector<raft::QuorumVoter> voters, int64_t timeout_ms, std::string client_id);
  ~DescribeQuorumForwarder();  // stop()s

  void start();
  // Ends the worker; requests still queued get no answer. Idempotent.
  void stop();

  // Any thread. done runs on the worker thread (or on the caller's, at once,
  // when the queue is full or the forwarder stopped).
  void forward(raft::NodeId leader, protocol::DescribeQuorumRequest request, int16_t version, Done done);

 private:
  struct Pending {
    raft::NodeId leader;
    protocol::DescribeQuorumRequest request;
    int16_t version;
    Done done;
  };
  void run();
  // The leader's answer, or the NOT_LEADER_OR_FOLLOWER refusal.
  protocol::DescribeQuorumResponse ask(const Pending& p);

  std::vector<raft::QuorumVoter> voters_;
  int64_t timeout_ms_;
  std::string client_id_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Pending> queue_;  // guarded by mutex_
  bool stopping_ = false;      // guarded by mutex_
  client::Transport* transport_ = nullptr;  // guarded by mutex_ (interrupted by stop())
  std::thread worker_;
  // Worker thread only.
  std::unique_ptr<client::BrokerConnection> connection_;
  raft::NodeId connected_to_ = raft::kNoNode;
};

}  // namespace eddy::app
