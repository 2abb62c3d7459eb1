// PeerSenders: every group's requests to a peer over one channel, one at a
// time; answers handed back with their group; a slow peer's queue drops its
// oldest requests; drain() waits for what is queued; stop() interrupts.
#include "raft/peer_senders.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <chrono>
#include <mutex>
#include <thread>

namespace eddy::raft {
namespace {

// A channel that answers every Fetch with a FetchResponse naming the
// group's partition as its high watermark, after `delay` (or blocks until
// released), and records what it carried.
class FakeChannel final : public GroupChannel {
 public:
  Status call(const GroupAddress& group, const Message& request, Payload* response, bool* answered) override {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      calls_.push_back({group.topic_name, group.partition, request.correlation_id});
      ++in_flight_;
      released_.wait(lock, [&] { return open_ || interrupted_; });
      --in_flight_;
      if (interrupted_) return Status::network("interrupted");
    }
    if (!std::holds_alternative<FetchRequest>(request.payload)) {
      *answered = false;
      return Status();
    }
    FetchResponse r;
    r.high_watermark = group.partition;
    *response = r;
    *answered = true;
    return Status();
  }
  void interrupt() override {
    std::lock_guard<std::mutex> lock(mutex_);
    interrupted_ = true;
    released_.notify_all();
  }
  void open(bool on) {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = on;
    released_.notify_all();
  }
  struct Call {
    std::string topic;
    int32_t partition;
    int32_t correlation_id;
  };
  std::vector<Call> calls() {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }
  int in_flight() {
    std::lock_guard<std::mutex> lock(mutex_);
    return in_flight_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable released_;
  bool open_ = true;
  bool interrupted_ = false;
  int in_flight_ = 0;
  std::vector<Call> calls_;
};

GroupAddress group(const std::string& topic, int32_t partition) {
  GroupAddress g;
  g.topic_name = topic;
  g.partition = partition;
  return g;
}

Message fetch_to(NodeId peer, int32_t correlation_id) {
  Message m;
  m.from = 1;
  m.to = peer;
  m.correlation_id = correlation_id;
  m.payload = FetchRequest{};
  return m;
}

struct Answer {
  std::string topic;
  int32_t partition;
  int32_t correlation_id;
  Offset high_watermark;
};

class PeerSendersTest : public ::testing::Test {
 protected:
  void make(std::vector<NodeId> peers) {
    senders_ = std::make_unique<PeerSenders>(
        peers,
        [&](NodeId peer) {
          auto c = std::make_unique<FakeChannel>();
          channels_[peer] = c.get();
          return c;
        },
        [&](const GroupAddress& g, const Message& request, Payload answer) {
          std::lock_guard<std::mutex> lock(mutex_);
          answers_.push_back({g.topic_name, g.partition, request.correlation_id,
                              std::get<FetchResponse>(answer).high_watermark});
        });
  }
  std::vector<Answer> answers() {
    std::lock_guard<std::mutex> lock(mutex_);
    return answers_;
  }
  std::map<NodeId, FakeChannel*> channels_;
  std::mutex mutex_;
  std::vector<Answer> answers_;
  std::unique_ptr<PeerSenders> senders_;
};

TEST_F(PeerSendersTest, EveryGroupsRequestsGoOverTheirPeersChannelAndAnswersComeBackWithTheirGroup) {
  make({2, 3});
  senders_->start();
  senders_->send(group("a", 0), fetch_to(2, 10));
  senders_->send(group("b", 5), fetch_to(2, 11));
  senders_->send(group("a", 1), fetch_to(3, 12));
  senders_->send(group("a", 0), fetch_to(7, 13));  // not a peer: dropped
  senders_->drain(5000);
  auto got = answers();
  ASSERT_EQ(got.size(), 3u);
  std::sort(got.begin(), got.end(), [](const Answer& x, const Answer& y) { return x.correlation_id < y.correlation_id; });
  EXPECT_EQ(got[0].topic, "a");
  EXPECT_EQ(got[0].high_watermark, 0);
  EXPECT_EQ(got[1].topic, "b");
  EXPECT_EQ(got[1].high_watermark, 5);
  EXPECT_EQ(got[2].correlation_id, 12);
  EXPECT_EQ(channels_[2]->calls().size(), 2u);
  EXPECT_EQ(channels_[3]->calls().size(), 1u);
  // EndQuorumEpoch: carried, no answer for the core.
  Message end;
  end.from = 1;
  end.to = 3;
  end.payload = EndQuorumEpochRequest{};
  senders_->send(group("a", 1), end);
  senders_->drain(5000);
  EXPECT_EQ(channels_[3]->calls().size(), 2u);
  EXPECT_EQ(answers().size(), 3u);
  senders_->stop();
}

TEST_F(PeerSendersTest, ASlowPeersQueueDropsItsOldestAndStopInterruptsTheCallInFlight) {
  make({2});
  channels_[2]->open(false);
  senders_->start();
  senders_->send(group("t", 0), fetch_to(2, 0));
  while (channels_[2]->in_flight() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const int extra = static_cast<int>(PeerSenders::kMaxQueuedPerPeer) + 10;
  for (int i = 1; i <= extra; ++i) senders_->send(group("t", 0), fetch_to(2, i));
  EXPECT_EQ(senders_->dropped(), 10u);
  channels_[2]->open(true);
  senders_->drain(5000);
  const auto calls = channels_[2]->calls();
  ASSERT_EQ(calls.size(), PeerSenders::kMaxQueuedPerPeer + 1);
  EXPECT_EQ(calls[1].correlation_id, 11) << "the oldest queued went";
  EXPECT_EQ(calls.back().correlation_id, extra);
  // A call that never ends: stop() interrupts it and returns.
  channels_[2]->open(false);
  senders_->send(group("t", 0), fetch_to(2, 999));
  while (channels_[2]->in_flight() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  senders_->stop();
  const size_t after = answers().size();
  senders_->send(group("t", 0), fetch_to(2, 1000));  // after stop: dropped
  EXPECT_EQ(answers().size(), after);
}

}  // namespace
}  // namespace eddy::raft
