#include "raft/peer_senders.h"

#include <chrono>
#include <utility>

namespace eddy::raft {

PeerSenders::PeerSenders(const std::vector<NodeId>& peers, const ChannelFactory& channels, Answered answered)
    : answered_(std::move(answered)) {
  for (NodeId peer : peers) {
    auto sender = std::make_unique<Sender>();
    sender->peer = peer;
    sender->channel = channels(peer);
    senders_[peer] = std::move(sender);
  }
}

PeerSenders::~PeerSenders() { stop(); }

void PeerSenders::start() {
  if (started_) return;
  started_ = true;
  for (auto& [peer, sender] : senders_) {
    Sender* s = sender.get();
    s->thread = std::thread([this, s] { run(s); });
  }
}

void PeerSenders::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  for (auto& [peer, sender] : senders_) {
    sender->channel->interrupt();
    sender->wake.notify_all();
  }
  for (auto& [peer, sender] : senders_) {
    if (sender->thread.joinable()) sender->thread.join();
  }
}

void PeerSenders::send(const GroupAddress& group, Message request) {
  auto it = senders_.find(request.to);
  if (it == senders_.end()) return;
  Sender* sender = it->second.get();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    if (sender->queue.size() >= kMaxQueuedPerPeer) {
      sender->queue.pop_front();
      ++dropped_;
    }
    sender->queue.push_back(Queued{group, std::move(request)});
  }
  sender->wake.notify_one();
}

void PeerSenders::drain(int64_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] {
    if (stopping_) return true;
    for (const auto& [peer, sender] : senders_) {
      if (sender->calling || !sender->queue.empty()) return false;
    }
    return true;
  });
}

uint64_t PeerSenders::dropped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dropped_;
}

void PeerSenders::run(Sender* sender) {
  for (;;) {
    Queued next;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      sender->wake.wait(lock, [&] { return stopping_ || !sender->queue.empty(); });
      if (stopping_) return;
      next = std::move(sender->queue.front());
      sender->queue.pop_front();
      sender->calling = true;
    }
    Payload response;
    bool answered = false;
    Status s = sender->channel->call(next.group, next.request, &response, &answered);
    bool stopping = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping = stopping_;
    }
    // A failed call or one without an answer: the core resends on its timers.
    // The call counts as in progress until its answer was handed over, so
    // that drain() returns only after it.
    if (!stopping && s.ok() && answered) answered_(next.group, next.request, std::move(response));
    {
      std::lock_guard<std::mutex> lock(mutex_);
      sender->calling = false;
    }
    idle_.notify_all();
    if (stopping) return;
  }
}

}  // namespace eddy::raft
