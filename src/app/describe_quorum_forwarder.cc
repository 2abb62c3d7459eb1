#include "app/describe_quorum_forwarder.h"

#include <algorithm>

#include "client/transport.h"
#include "port/log.h"
#include "protocol/errors.h"
#include "raft/kafka_describe_quorum.h"

namespace eddy::app {

DescribeQuorumForwarder::DescribeQuorumForwarder(std::vector<raft::QuorumVoter> voters, int64_t timeout_ms,
                                                 std::string client_id)
    : voters_(std::move(voters)), timeout_ms_(timeout_ms), client_id_(std::move(client_id)) {}

DescribeQuorumForwarder::~DescribeQuorumForwarder() { stop(); }

void DescribeQuorumForwarder::start() {
  if (!worker_.joinable()) worker_ = std::thread([this] { run(); });
}

void DescribeQuorumForwarder::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    if (transport_ != nullptr) transport_->interrupt();
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void DescribeQuorumForwarder::forward(raft::NodeId leader, protocol::DescribeQuorumRequest request, int16_t version,
                                      Done done) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!stopping_ && queue_.size() < kMaxQueued && leader != raft::kNoNode) {
      queue_.push_back(Pending{leader, std::move(request), version, std::move(done)});
      wake_.notify_one();
      return;
    }
  }
  done(raft::describe_quorum_error(request, protocol::ErrorCode::kNotLeaderOrFollower));
}

void DescribeQuorumForwarder::run() {
  for (;;) {
    Pending p;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) break;
      p = std::move(queue_.front());
      queue_.pop_front();
    }
    p.done(ask(p));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  transport_ = nullptr;
}

protocol::DescribeQuorumResponse DescribeQuorumForwarder::ask(const Pending& p) {
  auto voter = std::find_if(voters_.begin(), voters_.end(), [&](const raft::QuorumVoter& v) { return v.id == p.leader; });
  if (voter == voters_.end()) return raft::describe_quorum_error(p.request, protocol::ErrorCode::kNotLeaderOrFollower);
  const client::Deadline deadline = client::Deadline::after_ms(timeout_ms_);
  Status s;
  if (!connection_ || !connection_->is_open() || connected_to_ != p.leader) {
    std::unique_ptr<client::Transport> transport = client::make_tcp_transport();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return raft::describe_quorum_error(p.request, protocol::ErrorCode::kNotLeaderOrFollower);
      transport_ = transport.get();
    }
    client::ConnectionOptions options;
    options.client_id = client_id_;
    connection_ = std::make_unique<client::BrokerConnection>(std::move(transport), options);
    connected_to_ = p.leader;
    s = connection_->open(voter->address, deadline);
  }
  protocol::DescribeQuorumResponse response;
  if (s.ok()) s = connection_->call(p.request, p.version, &response, deadline);
  if (!s.ok()) {
    connection_->close();
    EDDY_LOG_DEBUG("DescribeQuorum forwarded to node {}: {}", p.leader, s.to_string());
    return raft::describe_quorum_error(p.request, protocol::ErrorCode::kNotLeaderOrFollower);
  }
  return response;
}

}  // namespace eddy::app
