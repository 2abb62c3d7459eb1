#include "raft/peer_fetchers.h"

#include <utility>

namespace eddy::raft {

PeerFetchers::PeerFetchers(const std::vector<NodeId>& peers, const ChannelFactory& channels, Done done)
    : done_(std::move(done)) {
  for (NodeId peer : peers) {
    auto fetcher = std::make_unique<Fetcher>();
    fetcher->peer = peer;
    fetcher->channel = channels(peer);
    fetchers_[peer] = std::move(fetcher);
  }
}

PeerFetchers::~PeerFetchers() { stop(); }

void PeerFetchers::start() {
  if (started_) return;
  started_ = true;
  for (auto& [peer, fetcher] : fetchers_) {
    Fetcher* f = fetcher.get();
    f->thread = std::thread([this, f] { run(f); });
  }
}

void PeerFetchers::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  for (auto& [peer, fetcher] : fetchers_) {
    fetcher->channel->interrupt();
    fetcher->wake.notify_all();
  }
  for (auto& [peer, fetcher] : fetchers_) {
    if (fetcher->thread.joinable()) fetcher->thread.join();
  }
}

bool PeerFetchers::fetch(NodeId peer, std::vector<GroupFetch> fetches, int32_t max_wait_ms) {
  auto it = fetchers_.find(peer);
  if (it == fetchers_.end() || fetches.empty()) return false;
  Fetcher* fetcher = it->second.get();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return false;
    fetcher->next = std::move(fetches);
    fetcher->max_wait_ms = max_wait_ms;
  }
  fetcher->wake.notify_one();
  return true;
}

void PeerFetchers::run(Fetcher* fetcher) {
  for (;;) {
    std::vector<GroupFetch> fetches;
    int32_t max_wait_ms = 0;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      fetcher->wake.wait(lock, [&] { return stopping_ || !fetcher->next.empty(); });
      if (stopping_) return;
      fetches = std::move(fetcher->next);
      fetcher->next.clear();
      max_wait_ms = fetcher->max_wait_ms;
    }
    std::vector<std::optional<Payload>> answers;
    Status s = fetcher->channel->fetch(fetches, max_wait_ms, &answers);
    if (!s.ok() || answers.size() != fetches.size()) answers.assign(fetches.size(), std::nullopt);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
    }
    done_(fetcher->peer, std::move(fetches), std::move(answers));
  }
}

}  // namespace eddy::raft
