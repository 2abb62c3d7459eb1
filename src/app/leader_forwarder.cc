#include "app/leader_forwarder.h"

#include <algorithm>

#include "client/transport.h"
#include "port/log.h"

namespace eddy::app {

LeaderForwarder::LeaderForwarder(std::vector<raft::QuorumVoter> voters, int64_t timeout_ms, std::string client_id)
    : voters_(std::move(voters)), timeout_ms_(timeout_ms), client_id_(std::move(client_id)) {}

LeaderForwarder::~LeaderForwarder() { stop(); }

void LeaderForwarder::start() {
  if (!worker_.joinable()) worker_ = std::thread([this] { run(); });
}

void LeaderForwarder::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    if (transport_ != nullptr) transport_->interrupt();
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void LeaderForwarder::forward(raft::NodeId leader, Call call, Failed failed) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!stopping_ && queue_.size() < kMaxQueued && leader != raft::kNoNode) {
      queue_.push_back(Job{leader, std::move(call), std::move(failed)});
      wake_.notify_one();
      return;
    }
  }
  failed(Status::network(leader == raft::kNoNode ? "no controller leader" : "too many requests for the leader"));
}

void LeaderForwarder::run() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) break;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    carry(job);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  transport_ = nullptr;
}

void LeaderForwarder::carry(Job& job) {
  auto voter = std::find_if(voters_.begin(), voters_.end(), [&](const raft::QuorumVoter& v) { return v.id == job.leader; });
  if (voter == voters_.end()) {
    job.failed(Status::invalid_argument("node " + std::to_string(job.leader) + " is not a voter"));
    return;
  }
  const client::Deadline deadline = client::Deadline::after_ms(timeout_ms_);
  Status s;
  if (!connection_ || !connection_->is_open() || connected_to_ != job.leader) {
    std::unique_ptr<client::Transport> transport = client::make_tcp_transport();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
      transport_ = transport.get();
    }
    client::ConnectionOptions options;
    options.client_id = client_id_;
    connection_ = std::make_unique<client::BrokerConnection>(std::move(transport), options);
    connected_to_ = job.leader;
    s = connection_->open(voter->address, deadline);
  }
  if (s.ok()) s = job.call(*connection_, deadline);
  if (!s.ok()) {
    connection_->close();
    EDDY_LOG_DEBUG("forwarded to node {}: {}", job.leader, s.to_string());
    job.failed(s);
  }
}

}  // namespace eddy::app
