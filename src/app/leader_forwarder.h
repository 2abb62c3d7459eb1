// Carries requests that only the controller quorum's leader may answer from
// a follower to the leader's controller listener, as Kafka's brokers
// forward them to the active controller: DescribeQuorum (so that
// `kafka-metadata-quorum --bootstrap-server` works on any node), and the
// Envelope of a client's request that changes the cluster's metadata
// (CreateTopics and the like) or a node's BrokerRegistration.
//
// One worker thread with one connection to the current leader; at most
// kMaxQueued jobs wait, more fail at once (kNetwork), as does a job the
// leader does not answer within the timeout.
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
#include "raft/quorum_voters.h"

namespace eddy::app {

class LeaderForwarder {
 public:
  static constexpr size_t kMaxQueued = 64;
  // Runs on the worker thread over the open connection to the leader; a
  // non-ok Status closes the connection (the next job reconnects).
  using Call = std::function<Status(client::BrokerConnection& leader, client::Deadline deadline)>;
  // Runs instead of call when the job cannot be carried (no such leader,
  // full queue, stopped, no connection), or after call failed.
  using Failed = std::function<void(const Status& why)>;

  LeaderForwarder(std::vector<raft::QuorumVoter> voters, int64_t timeout_ms, std::string client_id);
  ~LeaderForwarder();  // stop()s

  void start();
  // Ends the worker; jobs still queued are dropped unrun. Idempotent.
  void stop();

  // Any thread. call or failed runs on the worker thread (failed on the
  // caller's, at once, when the queue is full or the forwarder stopped).
  void forward(raft::NodeId leader, Call call, Failed failed);

 private:
  struct Job {
    raft::NodeId leader = raft::kNoNode;
    Call call;
    Failed failed;
  };
  void run();
  void carry(Job& job);

  std::vector<raft::QuorumVoter> voters_;
  int64_t timeout_ms_;
  std::string client_id_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> queue_;     // guarded by mutex_
  bool stopping_ = false;     // guarded by mutex_
  client::Transport* transport_ = nullptr;  // guarded by mutex_ (interrupted by stop())
  std::thread worker_;
  // Worker thread only.
  std::unique_ptr<client::BrokerConnection> connection_;
  raft::NodeId connected_to_ = raft::kNoNode;
};

}  // namespace eddy::app
