// The coordinator tests' fixture: a fake clock, a real meta store in a temp
// dir, request helpers, and a record of every group state transition that
// TearDown checks against Kafka's table.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "group/coordinator.h"
#include "tests/unit/port/test_dir.h"

namespace eddy::group {

using protocol::ErrorCode;
using State = Coordinator::State;

// A single-threaded Executor whose clock moves only when the test says so.
// Posted closures run at the next advance(), before any timer.
class FakeExecutor : public port::Executor {
 public:
  void post(std::function<void()> fn) override { posted_.push_back(std::move(fn)); }
  TimerId schedule_after(int64_t delay_ms, std::function<void()> fn) override {
    TimerId id = next_++;
    timers_[id] = {now_ + std::max<int64_t>(delay_ms, 0), std::move(fn)};
    return id;
  }
  void cancel(TimerId id) override { timers_.erase(id); }
  int64_t now_ms() override { return now_; }
  bool on_loop_thread() const override { return true; }
  // Moves the clock, running due timers in deadline order.
  void advance(int64_t ms) {
    while (!posted_.empty()) {
      auto fn = std::move(posted_.front());
      posted_.erase(posted_.begin());
      fn();
    }
    const int64_t end = now_ + ms;
    for (;;) {
      auto due = timers_.end();
      for (auto it = timers_.begin(); it != timers_.end(); ++it) {
        if (it->second.first <= end && (due == timers_.end() || it->second.first < due->second.first)) due = it;
      }
      if (due == timers_.end()) break;
      now_ = std::max(now_, due->second.first);
      auto fn = std::move(due->second.second);
      timers_.erase(due);
      fn();
    }
    now_ = end;
  }

 private:
  TimerId next_ = 1;
  int64_t now_ = 1'000'000;
  std::vector<std::function<void()>> posted_;
  std::map<TimerId, std::pair<int64_t, std::function<void()>>> timers_;
};

// A parked JoinGroup/SyncGroup answer.
template <typename R>
struct Answer {
  std::shared_ptr<std::optional<R>> slot = std::make_shared<std::optional<R>>();
  std::function<void(const R&)> callback() {
    auto s = slot;
    return [s](const R& r) { *s = r; };
  }
  bool ready() const { return slot->has_value(); }
  const R& operator*() const { return **slot; }
  const R* operator->() const { return &**slot; }
};

using Transition = std::pair<State, State>;

// Kafka's GroupMetadata transitions, written out independently of
// group_state.cc: the target state and the states it may be entered from.
inline bool kafka_allows(State from, State to) {
  static const std::set<Transition> allowed = {
      {State::kEmpty, State::kPreparingRebalance},
      {State::kStable, State::kPreparingRebalance},
      {State::kCompletingRebalance, State::kPreparingRebalance},
      {State::kPreparingRebalance, State::kCompletingRebalance},
      {State::kCompletingRebalance, State::kStable},
      {State::kPreparingRebalance, State::kEmpty},
      {State::kEmpty, State::kDead},
      {State::kPreparingRebalance, State::kDead},
      {State::kCompletingRebalance, State::kDead},
      {State::kStable, State::kDead},
      {State::kDead, State::kDead},
  };
  return allowed.count({from, to}) > 0;
}

class CoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override { open(); }

  // Whatever a test does, the coordinator never makes an illegal transition.
  void TearDown() override {
    for (const auto& [group, t] : transitions_) {
      EXPECT_TRUE(kafka_allows(t.first, t.second))
          << "group " << group << ": " << group_state_name(t.first) << " -> " << group_state_name(t.second);
    }
  }

  // The transitions group "g" made since the last call.
  std::vector<Transition> take_transitions() {
    std::vector<Transition> out;
    for (; taken_ < transitions_.size(); taken_++) {
      if (transitions_[taken_].first == "g") out.push_back(transitions_[taken_].second);
    }
    return out;
  }

  void open() {
    coordinator_.reset();
    meta_.reset();
    ASSERT_TRUE(meta::MetaStore::open(dir_.path() + "/eddy.db", &meta_).ok());
    CoordinatorOptions o;
    o.offsets_retention_ms = 60'000;
    o.offsets_retention_check_interval_ms = 10'000;
    o.initial_rebalance_delay_ms = initial_delay_ms_;
    coordinator_ = std::make_unique<Coordinator>(
        clock_, meta_.get(), [](const std::string& t, int32_t p) { return t == "t" && p >= 0 && p < 6; }, o);
    coordinator_->observe_transitions(
        [this](const std::string& group, State from, State to) { transitions_.push_back({group, {from, to}}); });
    ASSERT_TRUE(coordinator_->start().ok());
  }

  protocol::JoinGroupRequest join_request(const std::string& member, std::optional<std::string> instance = {},
                                          std::vector<uint8_t> metadata = {1, 2, 3}) {
    protocol::JoinGroupRequest r;
    r.group_id = "g";
    r.session_timeout_ms = 10'000;
    r.rebalance_timeout_ms = 30'000;
    r.member_id = member;
    r.group_instance_id = std::move(instance);
    r.protocol_type = "consumer";
    protocol::JoinGroupRequest::JoinGroupRequestProtocol p;
    p.name = "range";
    p.metadata = std::move(metadata);
    r.protocols.push_back(p);
    return r;
  }

  Answer<protocol::JoinGroupResponse> join(const protocol::JoinGroupRequest& r, int16_t version = 9) {
    Answer<protocol::JoinGroupResponse> a;
    coordinator_->join(r, {version, "client", "/127.0.0.1"}, a.callback());
    return a;
  }

  // Joins a dynamic member through the MEMBER_ID_REQUIRED round trip; the
  // answer may still be parked (rebalance in progress).
  Answer<protocol::JoinGroupResponse> join_new(std::string* member_id) {
    auto first = join(join_request(""));
    EXPECT_TRUE(first.ready());
    EXPECT_EQ(first->error_code, protocol::to_int(ErrorCode::kMemberIdRequired));
    *member_id = first->member_id;
    return join(join_request(*member_id));
  }

  Answer<protocol::SyncGroupResponse> sync(const std::string& member, int32_t generation,
                                           std::vector<std::pair<std::string, std::vector<uint8_t>>> assignments = {},
                                           std::optional<std::string> instance = {}) {
    protocol::SyncGroupRequest r;
    r.group_id = "g";
    r.generation_id = generation;
    r.member_id = member;
    r.group_instance_id = std::move(instance);
    for (auto& [m, a] : assignments) {
      protocol::SyncGroupRequest::SyncGroupRequestAssignment sa;
      sa.member_id = m;
      sa.assignment = a;
      r.assignments.push_back(sa);
    }
    Answer<protocol::SyncGroupResponse> a;
    coordinator_->sync(r, {5, "client", "/127.0.0.1"}, a.callback());
    return a;
  }

  int16_t heartbeat(const std::string& member, int32_t generation, std::optional<std::string> instance = {}) {
    protocol::HeartbeatRequest r;
    r.group_id = "g";
    r.generation_id = generation;
    r.member_id = member;
    r.group_instance_id = std::move(instance);
    return coordinator_->heartbeat(r).error_code;
  }

  int16_t commit(const std::string& member, int32_t generation, int32_t partition, int64_t offset,
                 std::optional<std::string> instance = {}, std::string metadata = "") {
    protocol::OffsetCommitRequest r;
    r.group_id = "g";
    r.generation_id_or_member_epoch = generation;
    r.member_id = member;
    r.group_instance_id = std::move(instance);
    protocol::OffsetCommitRequest::OffsetCommitRequestTopic t;
    t.name = "t";
    protocol::OffsetCommitRequest::OffsetCommitRequestPartition p;
    p.partition_index = partition;
    p.committed_offset = offset;
    p.committed_metadata = metadata;
    t.partitions.push_back(p);
    r.topics.push_back(t);
    auto resp = coordinator_->commit_offsets(r, 8);
    return resp.topics.at(0).partitions.at(0).error_code;
  }

  int64_t committed(int32_t partition) {
    protocol::OffsetFetchRequest r;
    r.group_id = "g";
    protocol::OffsetFetchRequest::OffsetFetchRequestTopic t;
    t.name = "t";
    t.partition_indexes = {partition};
    r.topics->push_back(t);
    auto resp = coordinator_->fetch_offsets(r, 7);
    return resp.topics.at(0).partitions.at(0).committed_offset;
  }

  static int16_t code(ErrorCode c) { return protocol::to_int(c); }

  int32_t initial_delay_ms_ = 0;
  std::vector<std::pair<std::string, Transition>> transitions_;  // every group's, in order
  size_t taken_ = 0;
  eddy::testing::TempDir dir_;
  FakeExecutor clock_;
  std::unique_ptr<meta::MetaStore> meta_;
  std::unique_ptr<Coordinator> coordinator_;
};

}  // namespace eddy::group
