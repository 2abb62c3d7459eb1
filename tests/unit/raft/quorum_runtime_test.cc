// QuorumRuntime on real threads and real time: three groups in one process
// joined by an in-process network that can take a node down.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "raft/memory_log.h"
#include "raft/memory_snapshot_store.h"
#include "raft/quorum_runtime.h"
#include "raft/quorum_state_store.h"

namespace eddy::raft {
namespace {

// Routes calls to the runtimes of other nodes; a node in `down` neither
// receives nor answers.
class Network {
 public:
  void attach(NodeId id, QuorumRuntime* runtime) {
    std::lock_guard<std::mutex> lock(mutex_);
    nodes_[id] = runtime;
  }
  void detach(NodeId id) {
    std::lock_guard<std::mutex> lock(mutex_);
    nodes_.erase(id);
  }
  // Hands request to node id's runtime under the lock that detach() takes,
  // so that a runtime being destroyed is never reached. False: node down.
  bool deliver(NodeId id, Message request, QuorumRuntime::Answer answer) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = nodes_.find(id);
    if (it == nodes_.end()) return false;
    if (std::holds_alternative<FetchRequest>(request.payload)) ++fetches_[{request.from, id}];
    it->second->deliver(std::move(request), std::move(answer));
    return true;
  }

  // Fetch requests from one node to another so far.
  int fetches(NodeId from, NodeId to) {
    std::lock_guard<std::mutex> lock(mutex_);
    return fetches_[{from, to}];
  }

 private:
  std::mutex mutex_;
  std::map<NodeId, QuorumRuntime*> nodes_;
  std::map<std::pair<NodeId, NodeId>, int> fetches_;
};

class LocalChannel final : public PeerChannel {
 public:
  LocalChannel(Network* network, NodeId to) : network_(network), to_(to) {}
  Status call(const Message& request, Payload* response, bool* answered) override {
    *answered = false;
    auto down = [] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a refused connection takes time too
      return Status::network("node down");
    };
    if (interrupted_) return down();
    if (std::holds_alternative<EndQuorumEpochRequest>(request.payload)) {
      return network_->deliver(to_, request, [](const Payload*) {}) ? Status() : down();
    }
    auto promise = std::make_shared<std::promise<std::optional<Payload>>>();
    auto future = promise->get_future();
    const bool delivered = network_->deliver(to_, request, [promise](const Payload* answer) {
      promise->set_value(answer == nullptr ? std::nullopt : std::optional<Payload>(*answer));
    });
    if (!delivered) return down();
    if (future.wait_for(std::chrono::milliseconds(call_timeout_ms)) != std::future_status::ready) {
      return Status::timeout("no answer");
    }
    std::optional<Payload> got = future.get();
    if (!got) return Status::network("refused");
    *response = std::move(*got);
    *answered = true;
    return Status();
  }
  void interrupt() override { interrupted_ = true; }

  int64_t call_timeout_ms = 500;

 private:
  Network* network_;
  NodeId to_;
  std::atomic<bool> interrupted_{false};
};

// What on_committed gave one node, in order (written on its group thread).
struct Committed {
  std::mutex mutex;
  std::vector<std::pair<Offset, std::string>> data;  // data entries only
  Offset last = -1;                                   // any entry

  std::vector<std::pair<Offset, std::string>> snapshot() {
    std::lock_guard<std::mutex> lock(mutex);
    return data;
  }
};

struct Cluster {
  Network network;
  std::map<NodeId, std::unique_ptr<QuorumRuntime>> nodes;
  std::map<NodeId, std::shared_ptr<Committed>> committed;
  std::atomic<int> order_violations{0};

  // Every runtime leaves the network before any is destroyed: a sender thread
  // of one must never reach another that is being freed.
  ~Cluster() {
    for (auto& [id, rt] : nodes) network.detach(id);
    nodes.clear();
  }

  // hold_fetch_ms > 0: long poll, as the controller quorum runs (the
  // timeouts scaled to it).
  void start(NodeId id, bool bootstrap = true, Offset committed_from = 0, int64_t hold_fetch_ms = 0) {
    QuorumRuntimeOptions o;
    o.replica.id = id;
    o.replica.voters = {1, 2, 3};
    o.replica.election_timeout_ms = 150;
    o.replica.fetch_timeout_ms = 300;
    o.replica.fetch_retry_ms = 20;
    if (hold_fetch_ms > 0) {
      o.hold_fetch_ms = hold_fetch_ms;
      o.replica.fetch_timeout_ms = 5 * hold_fetch_ms;
      o.replica.fetch_retry_ms = 0;
      o.replica.fetch_resend_ms = 2 * hold_fetch_ms;
    }
    o.replica.bootstrap = bootstrap;
    o.poll_interval_ms = 5;
    o.committed_from = committed_from;
    auto sink = std::make_shared<Committed>();
    committed[id] = sink;
    o.on_committed = [this, sink](Offset offset, const Entry& entry) {
      std::lock_guard<std::mutex> lock(sink->mutex);
      if (offset != sink->last + 1 && sink->last != -1) ++order_violations;
      sink->last = offset;
      if (entry.kind == EntryKind::kData) sink->data.emplace_back(offset, entry.payload);
    };
    o.on_snapshot = [](SnapshotId, std::string) { ADD_FAILURE() << "no snapshot is taken here"; };
    std::unique_ptr<QuorumRuntime> rt;
    Status s = QuorumRuntime::open(
        o, std::make_unique<MemoryLog>(), std::make_unique<MemorySnapshotStore>(),
        std::make_unique<MemoryQuorumStateStore>(),
        [this, hold_fetch_ms](NodeId peer) {
          auto channel = std::make_unique<LocalChannel>(&network, peer);
          channel->call_timeout_ms = std::max<int64_t>(500, 4 * hold_fetch_ms);
          return channel;
        },
        &rt);
    ASSERT_TRUE(s.ok()) << s.to_string();
    network.attach(id, rt.get());
    rt->start();
    nodes[id] = std::move(rt);
  }
  void kill(NodeId id) {
    network.detach(id);
    nodes.erase(id);  // stops its threads
  }
  // The one leader all running nodes agree on, or kNoNode.
  NodeId agreed_leader() {
    NodeId leader = kNoNode;
    Epoch epoch = -1;
    for (auto& [id, rt] : nodes) {
      QuorumView v = rt->view();
      if (v.leader_id == kNoNode || v.recovering) return kNoNode;
      if (epoch != -1 && (v.epoch != epoch || v.leader_id != leader)) return kNoNode;
      epoch = v.epoch;
      leader = v.leader_id;
    }
    if (leader == kNoNode || nodes.count(leader) == 0) return kNoNode;
    QuorumView lv = nodes[leader]->view();
    return lv.role == Role::kLeader && lv.high_watermark > 0 ? leader : kNoNode;
  }
  NodeId wait_for_leader(int64_t timeout_ms) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
      NodeId l = agreed_leader();
      if (l != kNoNode) return l;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return kNoNode;
  }
};

TEST(QuorumRuntime, ElectsOneLeaderAndFailsOverWhenItDies) {
  Cluster c;
  for (NodeId id : {1, 2, 3}) c.start(id);
  NodeId first = c.wait_for_leader(10000);
  ASSERT_NE(first, kNoNode);
  const Epoch first_epoch = c.nodes[first]->view().epoch;
  QuorumView lv = c.nodes[first]->view();
  ASSERT_EQ(lv.voter_progress.size(), 3u);
  EXPECT_EQ(lv.voter_progress[0].id, first);

  c.kill(first);
  NodeId second = c.wait_for_leader(10000);
  ASSERT_NE(second, kNoNode);
  EXPECT_NE(second, first);
  EXPECT_GT(c.nodes[second]->view().epoch, first_epoch);
}

TEST(QuorumRuntime, WipedNodeRecoversFromTheLeaderBeforeItVotes) {
  Cluster c;
  for (NodeId id : {1, 2, 3}) c.start(id);
  NodeId leader = c.wait_for_leader(10000);
  ASSERT_NE(leader, kNoNode);
  NodeId follower = leader == 1 ? 2 : 1;
  c.kill(follower);
  c.start(follower, /*bootstrap=*/false);  // empty log, no quorum state: a wiped disk
  EXPECT_TRUE(c.nodes[follower]->view().recovering);
  // agreed_leader() counts only nodes that finished recovering.
  NodeId again = c.wait_for_leader(10000);
  ASSERT_NE(again, kNoNode);
  QuorumView v = c.nodes[follower]->view();
  EXPECT_FALSE(v.recovering);
  EXPECT_EQ(v.log_end_offset, c.nodes[again]->view().log_end_offset);
}

TEST(QuorumRuntime, DeliveredRequestsAreAnsweredAndStopDropsTheRest) {
  Cluster c;
  c.start(1);
  std::promise<bool> got;
  auto future = got.get_future();
  // A vote request from a voter that is not running: the core answers it.
  c.nodes[1]->deliver(Message{2, 1, 7, VoteRequest{5, 2, 0, 0}}, [&got](const Payload* answer) {
    got.set_value(answer != nullptr && std::holds_alternative<VoteResponse>(*answer) &&
                  std::get<VoteResponse>(*answer).vote_granted);
  });
  ASSERT_EQ(future.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_TRUE(future.get());
  // The view is published after the answer: wait for it.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (c.nodes[1]->view().voted_for != 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(c.nodes[1]->view().voted_for, 2);
  // Malformed (candidate id differs from the sender): no answer from the core.
  std::promise<bool> refused;
  auto refused_future = refused.get_future();
  c.nodes[1]->deliver(Message{3, 1, 8, VoteRequest{6, 2, 0, 0}},
                      [&refused](const Payload* answer) { refused.set_value(answer == nullptr); });
  ASSERT_EQ(refused_future.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_TRUE(refused_future.get());
  c.kill(1);
}

// Proposes payload on node id and waits for its outcome.
Status propose_and_wait(QuorumRuntime* rt, std::string payload, Offset* offset) {
  auto promise = std::make_shared<std::promise<std::pair<Status, Offset>>>();
  auto future = promise->get_future();
  rt->propose(std::move(payload), [promise](const Status& s, Offset o) { promise->set_value({s, o}); });
  if (future.wait_for(std::chrono::seconds(10)) != std::future_status::ready) return Status::timeout("no outcome");
  auto [s, o] = future.get();
  *offset = o;
  return s;
}

bool wait_until(const std::function<bool()>& done, int64_t timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

TEST(QuorumRuntime, ProposalsAreCommittedOnEveryNodeInOrder) {
  Cluster c;
  for (NodeId id : {1, 2, 3}) c.start(id);
  NodeId leader = c.wait_for_leader(10000);
  ASSERT_NE(leader, kNoNode);
  std::vector<std::pair<Offset, std::string>> expected;
  for (int i = 0; i < 20; ++i) {
    Offset offset = -1;
    Status s = propose_and_wait(c.nodes[leader].get(), "change-" + std::to_string(i), &offset);
    ASSERT_TRUE(s.ok()) << s.to_string();
    if (!expected.empty()) {
      EXPECT_GT(offset, expected.back().first);
    }
    expected.emplace_back(offset, "change-" + std::to_string(i));
    // Committed: the leader's sink already has it.
    EXPECT_EQ(c.committed[leader]->snapshot().back(), expected.back());
  }
  for (NodeId id : {1, 2, 3}) {
    EXPECT_TRUE(wait_until([&] { return c.committed[id]->snapshot() == expected; }, 10000)) << "node " << id;
  }
  EXPECT_EQ(c.order_violations.load(), 0);
}

// Long poll: an idle leader holds each follower's Fetch up to
// hold_fetch_ms (a follower asks again at once after every answer, so
// without the hold it would spin), and answers it as soon as a proposal is
// appended, so that a change commits long before the held fetches'
// deadline; the answer that tells a follower the new high watermark is not
// held either, so every node applies the change.
TEST(QuorumRuntime, HeldFetchesAnswerOnAppendAndIdleFollowersFetchOncePerHold) {
  constexpr int64_t kHoldMs = 1000;
  Cluster c;
  for (NodeId id : {1, 2, 3}) c.start(id, true, 0, kHoldMs);
  NodeId leader = c.wait_for_leader(20000);
  ASSERT_NE(leader, kNoNode);
  std::vector<NodeId> followers;
  for (NodeId id : {1, 2, 3}) {
    if (id != leader) followers.push_back(id);
  }
  // Idle: at most one fetch per hold and follower (and a few around the
  // election); a follower spinning without the hold would send thousands.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::map<NodeId, int> before;
  for (NodeId f : followers) before[f] = c.network.fetches(f, leader);
  std::this_thread::sleep_for(std::chrono::milliseconds(3 * kHoldMs));
  for (NodeId f : followers) {
    const int idle = c.network.fetches(f, leader) - before[f];
    EXPECT_GE(idle, 1) << "node " << f << " stopped fetching";
    EXPECT_LE(idle, 6) << "node " << f << " fetched " << idle << " times in " << 3 * kHoldMs << " ms of idleness";
  }
  std::vector<std::pair<Offset, std::string>> expected;
  for (int i = 0; i < 5; ++i) {
    const auto started = std::chrono::steady_clock::now();
    Offset offset = -1;
    Status s = propose_and_wait(c.nodes[leader].get(), "held-" + std::to_string(i), &offset);
    ASSERT_TRUE(s.ok()) << s.to_string();
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    // Waiting for a held fetch's deadline would take up to kHoldMs.
    EXPECT_LT(took.count(), kHoldMs / 2) << "change " << i << " waited for a held fetch's deadline";
    expected.emplace_back(offset, "held-" + std::to_string(i));
    std::this_thread::sleep_for(std::chrono::milliseconds(kHoldMs / 4));  // the followers' fetches are held again
  }
  for (NodeId id : {1, 2, 3}) {
    EXPECT_TRUE(wait_until([&] { return c.committed[id]->snapshot() == expected; }, 3 * kHoldMs)) << "node " << id;
  }
  EXPECT_EQ(c.order_violations.load(), 0);
}

// A Fetch from a replica id that is not a voter (anyone can reach the
// controller listener) is answered at once, never held: what the leader
// keeps per fetcher stays bounded by the voters.
TEST(QuorumRuntime, AFetchFromANonVoterIsNeverHeld) {
  constexpr int64_t kHoldMs = 1000;
  Cluster c;
  for (NodeId id : {1, 2, 3}) c.start(id, true, 0, kHoldMs);
  NodeId leader = c.wait_for_leader(20000);
  ASSERT_NE(leader, kNoNode);
  const QuorumView view = c.nodes[leader]->view();
  for (int i = 0; i < 3; ++i) {
    Message m;
    m.from = 99;
    m.to = leader;
    m.correlation_id = 100 + i;
    FetchRequest f;
    f.current_leader_epoch = view.epoch;
    f.replica_id = 99;
    f.fetch_offset = view.log_end_offset;
    f.last_fetched_epoch = view.epoch;
    m.payload = f;
    auto promise = std::make_shared<std::promise<bool>>();
    auto future = promise->get_future();
    ASSERT_TRUE(c.network.deliver(leader, m, [promise](const Payload* answer) { promise->set_value(answer != nullptr); }));
    ASSERT_EQ(future.wait_for(std::chrono::milliseconds(kHoldMs / 2)), std::future_status::ready)
        << "fetch " << i << " of a non-voter was held";
    EXPECT_TRUE(future.get());
  }
}

TEST(QuorumRuntime, AFollowerRefusesProposalsAndCommittedFromSkipsWhatWasApplied) {
  Cluster c;
  for (NodeId id : {1, 2, 3}) c.start(id);
  NodeId leader = c.wait_for_leader(10000);
  ASSERT_NE(leader, kNoNode);
  NodeId follower = leader == 1 ? 2 : 1;
  Offset offset = -1;
  Status s = propose_and_wait(c.nodes[follower].get(), "nope", &offset);
  EXPECT_EQ(s.kafka_error_code(), kNotLeaderOrFollower) << s.to_string();
  Offset last = -1;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(propose_and_wait(c.nodes[leader].get(), std::to_string(i), &last).ok());
  // A restarted follower that had applied everything up to `last` is given
  // only what comes after it (its MemoryLog is refilled from the leader).
  c.kill(follower);
  c.start(follower, /*bootstrap=*/false, /*committed_from=*/last + 1);
  Offset next = -1;
  ASSERT_TRUE(propose_and_wait(c.nodes[c.wait_for_leader(10000)].get(), "after", &next).ok());
  EXPECT_TRUE(wait_until([&] { return !c.committed[follower]->snapshot().empty(); }, 10000));
  std::vector<std::pair<Offset, std::string>> want = {{next, "after"}};
  EXPECT_EQ(c.committed[follower]->snapshot(), want);
}

TEST(QuorumRuntime, ProposalsPendingWhenTheLeaderLosesItsQuorumTimeOutOrFail) {
  Cluster c;
  for (NodeId id : {1, 2, 3}) c.start(id);
  NodeId leader = c.wait_for_leader(10000);
  ASSERT_NE(leader, kNoNode);
  for (NodeId id : {1, 2, 3}) {
    if (id != leader) c.kill(id);
  }
  Offset offset = -1;
  Status s = propose_and_wait(c.nodes[leader].get(), "alone", &offset);
  // Never committed: either the leader resigned first (not the leader) or the
  // proposal timed out; never ok.
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(s.kafka_error_code() == kNotLeaderOrFollower || s.code() == Status::Code::kTimeout) << s.to_string();
}

}  // namespace
}  // namespace eddy::raft
