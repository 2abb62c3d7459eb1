// PeerFetchers: one fetch of many groups at a time per peer, on its own
// thread; Done once per fetch with one answer slot per group (all empty
// after a failed call); stop() interrupts a fetch the peer holds.
#include "raft/peer_fetchers.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

namespace eddy::raft {
namespace {

// Answers each group's fetch with its partition as high watermark, except
// partition 99 (no answer), fails when told to, and blocks while held.
class FakeFetchChannel final : public FetchChannel {
 public:
  Status fetch(const std::vector<GroupFetch>& fetches, int32_t max_wait_ms,
               std::vector<std::optional<Payload>>* answers) override {
    std::unique_lock<std::mutex> lock(mutex_);
    ++calls_;
    last_max_wait_ = max_wait_ms;
    released_.wait(lock, [&] { return !hold_ || interrupted_; });
    if (interrupted_) return Status::network("interrupted");
    if (fail_) return Status::network("refused");
    answers->assign(fetches.size(), std::nullopt);
    for (size_t i = 0; i < fetches.size(); ++i) {
      if (fetches[i].group.partition == 99) continue;
      FetchResponse r;
      r.high_watermark = fetches[i].group.partition;
      (*answers)[i] = r;
    }
    return Status();
  }
  void interrupt() override {
    std::lock_guard<std::mutex> lock(mutex_);
    interrupted_ = true;
    released_.notify_all();
  }
  void hold(bool on) {
    std::lock_guard<std::mutex> lock(mutex_);
    hold_ = on;
    released_.notify_all();
  }
  void fail(bool on) {
    std::lock_guard<std::mutex> lock(mutex_);
    fail_ = on;
  }
  int calls() {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }
  int32_t last_max_wait() {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_max_wait_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable released_;
  bool hold_ = false;
  bool fail_ = false;
  bool interrupted_ = false;
  int calls_ = 0;
  int32_t last_max_wait_ = -1;
};

struct Outcome {
  NodeId peer = kNoNode;
  std::vector<GroupFetch> fetches;
  std::vector<std::optional<Payload>> answers;
};

class PeerFetchersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fetchers_ = std::make_unique<PeerFetchers>(
        std::vector<NodeId>{2, 3},
        [this](NodeId peer) {
          auto c = std::make_unique<FakeFetchChannel>();
          channels_[peer] = c.get();
          return c;
        },
        [this](NodeId peer, std::vector<GroupFetch> fetches, std::vector<std::optional<Payload>> answers) {
          std::lock_guard<std::mutex> lock(mutex_);
          outcomes_.push_back({peer, std::move(fetches), std::move(answers)});
          done_.notify_all();
        });
    fetchers_->start();
  }

  static std::vector<GroupFetch> fetches(NodeId to, std::vector<int32_t> partitions) {
    std::vector<GroupFetch> out;
    for (int32_t p : partitions) {
      GroupAddress a;
      a.topic_name = "t";
      a.partition = p;
      out.push_back({a, Message{1, to, p, FetchRequest{1, 1, 0, 0, false}}});
    }
    return out;
  }

  bool wait_for(size_t n) {
    std::unique_lock<std::mutex> lock(mutex_);
    return done_.wait_for(lock, std::chrono::seconds(5), [&] { return outcomes_.size() >= n; });
  }

  std::map<NodeId, FakeFetchChannel*> channels_;
  std::unique_ptr<PeerFetchers> fetchers_;
  std::mutex mutex_;
  std::condition_variable done_;
  std::vector<Outcome> outcomes_;
};

TEST_F(PeerFetchersTest, OneCallCarriesEveryGroupAndEachGetsItsAnswer) {
  ASSERT_TRUE(fetchers_->fetch(2, fetches(2, {0, 99, 5}), 400));
  ASSERT_TRUE(wait_for(1));
  std::lock_guard<std::mutex> lock(mutex_);
  const Outcome& o = outcomes_[0];
  EXPECT_EQ(o.peer, 2);
  ASSERT_EQ(o.answers.size(), 3u);
  EXPECT_EQ(std::get<FetchResponse>(*o.answers[0]).high_watermark, 0);
  EXPECT_FALSE(o.answers[1].has_value()) << "no answer for that group";
  EXPECT_EQ(std::get<FetchResponse>(*o.answers[2]).high_watermark, 5);
  EXPECT_EQ(o.fetches[2].request.correlation_id, 5);
  EXPECT_EQ(channels_[2]->calls(), 1);
  EXPECT_EQ(channels_[2]->last_max_wait(), 400);
  EXPECT_EQ(channels_[3]->calls(), 0);
}

TEST_F(PeerFetchersTest, AFailedCallLeavesEverySlotEmptyAndTheNextOneWorks) {
  channels_[3]->fail(true);
  ASSERT_TRUE(fetchers_->fetch(3, fetches(3, {1, 2}), 0));
  ASSERT_TRUE(wait_for(1));
  channels_[3]->fail(false);
  ASSERT_TRUE(fetchers_->fetch(3, fetches(3, {1}), 0));
  ASSERT_TRUE(wait_for(2));
  std::lock_guard<std::mutex> lock(mutex_);
  ASSERT_EQ(outcomes_[0].answers.size(), 2u);
  EXPECT_FALSE(outcomes_[0].answers[0].has_value());
  EXPECT_FALSE(outcomes_[0].answers[1].has_value());
  EXPECT_TRUE(outcomes_[1].answers[0].has_value());
}

TEST_F(PeerFetchersTest, NotAPeerOrNothingToFetchStartsNothing) {
  EXPECT_FALSE(fetchers_->fetch(7, fetches(7, {1}), 0));
  EXPECT_FALSE(fetchers_->fetch(2, {}, 0));
  EXPECT_EQ(channels_[2]->calls(), 0);
}

TEST_F(PeerFetchersTest, AFetchOnePeerHoldsDelaysNeitherTheOtherPeerNorStop) {
  channels_[2]->hold(true);
  ASSERT_TRUE(fetchers_->fetch(2, fetches(2, {1}), 400));
  ASSERT_TRUE(fetchers_->fetch(3, fetches(3, {4}), 400));
  ASSERT_TRUE(wait_for(1));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    EXPECT_EQ(outcomes_[0].peer, 3);
  }
  const auto start = std::chrono::steady_clock::now();
  fetchers_->stop();  // interrupts the held call; its Done is not given
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  std::lock_guard<std::mutex> lock(mutex_);
  EXPECT_EQ(outcomes_.size(), 1u);
  EXPECT_FALSE(fetchers_->fetch(3, fetches(3, {4}), 0)) << "after stop()";
}

}  // namespace
}  // namespace eddy::raft
