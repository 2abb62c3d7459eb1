// The transaction coordinator against a real meta store (MetaStateStore in
// a temp dir, behind a store that can hold back or fail its answers), a
// fake clock and a fake marker sink that records every marker and decides
// when it is durable.
#include "txn/coordinator.h"

#include <gtest/gtest.h>

#include <functional>
#include <optional>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "meta/meta_store.h"
#include "tests/unit/group/coordinator_fixture.h"
#include "tests/unit/port/test_dir.h"

namespace eddy::txn {
namespace {

using protocol::ControlType;
using protocol::ErrorCode;
using S = TransactionState;

struct Marker {
  meta::TopicPartition tp;
  ControlType type;
  int64_t producer_id;
  int16_t epoch;
  int64_t offset;
};

// MetaStateStore, recording the groups a completion applies or drops, and
// able to hold its answers back (a cluster's proposals on their way) or
// fail them.
class RecordingStore final : public StateStore {
 public:
  struct GroupCompletion {
    std::string group;
    int64_t producer_id;
    bool commit;
  };
  explicit RecordingStore(meta::MetaStore* meta) : meta_(meta) {}
  Status load_all(std::vector<TransactionMetadata>* out) override { return meta_.load_all(out); }
  Status load(const std::string& id, std::optional<TransactionMetadata>* out) override { return meta_.load(id, out); }
  void save(const TransactionMetadata& m, const std::set<std::string>& completed_groups, Done done) override {
    auto run = [this, m, completed_groups, done] {
      if (fail_next) {
        fail_next = false;
        done(Status::timeout("the proposal's outcome is unknown"));
        return;
      }
      if (m.state == S::kCompleteCommit || m.state == S::kCompleteAbort) {
        for (const std::string& g : completed_groups) {
          completed.push_back({g, m.producer_id, m.state == S::kCompleteCommit});
        }
      }
      meta_.save(m, completed_groups, done);
    };
    if (hold) {
      held.push_back(run);
    } else {
      run();
    }
  }
  void remove(const std::string& id, Done done) override { meta_.remove(id, std::move(done)); }
  // Answers the saves held back, in order.
  void release() {
    auto now = std::move(held);
    held.clear();
    for (auto& run : now) run();
  }

  bool hold = false;
  bool fail_next = false;  // the next save fails without storing
  std::vector<std::function<void()>> held;
  std::vector<GroupCompletion> completed;

 private:
  MetaStateStore meta_;
};

class TxnCoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(meta::MetaStore::open(dir_.file("eddy.db"), &meta_).ok());
    options_.max_timeout_ms = 900000;
    options_.abort_timed_out_interval_ms = 1000;
    options_.remove_expired_interval_ms = 60000;
    options_.transactional_id_expiration_ms = 3600000;
    options_.marker_retry_ms = 500;
    start();
  }

  void start() {
    store_ = std::make_unique<RecordingStore>(meta_.get());
    MarkerSink sink;
    sink.write = [this](const std::vector<meta::TopicPartition>& partitions, ControlType type, int64_t pid,
                        int16_t epoch, MarkerSink::PartitionDone done) {
      for (const meta::TopicPartition& tp : partitions) {
        if (gone_.count(tp)) {
          done(tp, MarkerSink::Outcome::kPartitionGone, "");
          continue;
        }
        if (refuse_.count(tp)) {
          done(tp, MarkerSink::Outcome::kFailed, "disk budget full");
          continue;
        }
        const int64_t offset = next_offset_++;
        markers_.push_back({tp, type, pid, epoch, offset});
        unsynced_.push_back({tp, offset, done});
      }
    };
    coordinator_ = std::make_unique<Coordinator>(
        executor_, store_.get(), [this](int64_t* id) { return meta_->producer_ids().next(id); }, std::move(sink),
        options_);
    ASSERT_TRUE(coordinator_->start().ok());
  }

  // A crash: the coordinator goes without completing anything.
  void restart() {
    coordinator_.reset();
    unsynced_.clear();
    start();
  }

  // Every marker written so far becomes durable.
  void make_durable() {
    auto now = std::move(unsynced_);
    unsynced_.clear();
    for (auto& u : now) u.done(u.tp, MarkerSink::Outcome::kDurable, "");
  }

  S state(const std::string& id) const {
    const TransactionMetadata* m = coordinator_->find(id);
    return m == nullptr ? S::kDead : m->state;
  }

  // The coordinator's answers, taken at once (the store answers at once
  // unless held).
  InitResult init(const std::string& id, int32_t timeout_ms = 60000, int64_t expected_id = -1,
                  int16_t expected_epoch = -1) {
    InitResult out;
    out.error = ErrorCode::kUnknownServerError;
    coordinator_->init_producer_id(id, timeout_ms, expected_id, expected_epoch,
                                   [&out](const InitResult& r) { out = r; });
    return out;
  }
  ErrorCode add_partitions(const std::string& id, int64_t pid, int16_t epoch,
                           const std::vector<meta::TopicPartition>& partitions) {
    ErrorCode out = ErrorCode::kUnknownServerError;
    coordinator_->add_partitions(id, pid, epoch, partitions, [&out](ErrorCode c) { out = c; });
    return out;
  }
  ErrorCode add_offsets(const std::string& id, int64_t pid, int16_t epoch, const std::string& group) {
    ErrorCode out = ErrorCode::kUnknownServerError;
    coordinator_->add_offsets(id, pid, epoch, group, [&out](ErrorCode c) { out = c; });
    return out;
  }
  ErrorCode end_transaction(const std::string& id, int64_t pid, int16_t epoch, bool commit) {
    ErrorCode out = ErrorCode::kUnknownServerError;
    coordinator_->end_transaction(id, pid, epoch, commit, [&out](ErrorCode c) { out = c; });
    return out;
  }

  struct Unsynced {
    meta::TopicPartition tp;
    int64_t offset;
    MarkerSink::PartitionDone done;
  };

  testing::TempDir dir_;
  std::unique_ptr<meta::MetaStore> meta_;
  group::FakeExecutor executor_;
  CoordinatorOptions options_;
  std::unique_ptr<RecordingStore> store_;
  std::unique_ptr<Coordinator> coordinator_;
  std::vector<Marker> markers_;
  std::vector<Unsynced> unsynced_;
  std::set<meta::TopicPartition> gone_;
  std::set<meta::TopicPartition> refuse_;
  int64_t next_offset_ = 100;
};

const meta::TopicPartition kA{"a", 0};
const meta::TopicPartition kB{"a", 1};
const meta::TopicPartition kC{"b", 0};

TEST_F(TxnCoordinatorTest, InitProducerIdHandsOutIdsAndBumpsEpochs) {
  InitResult first = init("tx");
  ASSERT_EQ(first.error, ErrorCode::kNone);
  EXPECT_GE(first.producer_id, 0);
  EXPECT_EQ(first.producer_epoch, 0);
  InitResult second = init("tx");
  EXPECT_EQ(second.error, ErrorCode::kNone);
  EXPECT_EQ(second.producer_id, first.producer_id);
  EXPECT_EQ(second.producer_epoch, 1);
  InitResult other = init("other");
  EXPECT_NE(other.producer_id, first.producer_id);
  EXPECT_EQ(state("tx"), S::kEmpty);

  EXPECT_EQ(init("").error, ErrorCode::kInvalidRequest);
  EXPECT_EQ(init(std::string("\0fuzz", 5)).error, ErrorCode::kInvalidRequest) << "eddy.db cannot keep a NUL";
  EXPECT_EQ(init(std::string("tx\0id", 5)).error, ErrorCode::kInvalidRequest);
  EXPECT_EQ(init("tx", 0).error, ErrorCode::kInvalidTransactionTimeout);
  EXPECT_EQ(init("tx", 900001).error, ErrorCode::kInvalidTransactionTimeout);
  EXPECT_EQ(init("tx", 900000).error, ErrorCode::kNone);
}

TEST_F(TxnCoordinatorTest, InitWithAnExpectedEpoch) {
  InitResult r = init("tx");
  // KIP-360: the producer's own epoch bumps; a retry of that bump answers
  // the same epoch; an older one is fenced; another producer id too.
  InitResult bumped = init("tx", 60000, r.producer_id, 0);
  EXPECT_EQ(bumped.error, ErrorCode::kNone);
  EXPECT_EQ(bumped.producer_epoch, 1);
  InitResult retried = init("tx", 60000, r.producer_id, 0);
  EXPECT_EQ(retried.error, ErrorCode::kNone);
  EXPECT_EQ(retried.producer_epoch, 1);
  EXPECT_EQ(init("tx", 60000, r.producer_id + 100, 1).error, ErrorCode::kProducerFenced);
  init("tx");  // epoch 2, last epoch forgotten
  EXPECT_EQ(init("tx", 60000, r.producer_id, 0).error, ErrorCode::kProducerFenced);
}

TEST_F(TxnCoordinatorTest, CommitWritesMarkersThenCompletes) {
  InitResult p = init("tx");
  ASSERT_EQ(add_partitions("tx", p.producer_id, 0, {kA, kB}), ErrorCode::kNone);
  EXPECT_EQ(state("tx"), S::kOngoing);
  ASSERT_EQ(add_partitions("tx", p.producer_id, 0, {kC}), ErrorCode::kNone);
  ASSERT_EQ(add_offsets("tx", p.producer_id, 0, "g"), ErrorCode::kNone);
  EXPECT_EQ(coordinator_->verify_offset_commit("tx", p.producer_id, 0, "g"), ErrorCode::kNone);
  EXPECT_EQ(coordinator_->verify_produce(p.producer_id, 0, kB), ErrorCode::kNone);

  ASSERT_EQ(end_transaction("tx", p.producer_id, 0, true), ErrorCode::kNone);
  EXPECT_EQ(state("tx"), S::kPrepareCommit);
  ASSERT_EQ(markers_.size(), 3u);
  std::set<meta::TopicPartition> marked;
  for (const Marker& m : markers_) {
    EXPECT_EQ(m.type, ControlType::kCommit);
    EXPECT_EQ(m.producer_id, p.producer_id);
    EXPECT_EQ(m.epoch, 0);
    marked.insert(m.tp);
  }
  EXPECT_EQ(marked, (std::set<meta::TopicPartition>{kA, kB, kC}));
  // Until the markers are on disk: retries wait, nothing else may start.
  EXPECT_EQ(end_transaction("tx", p.producer_id, 0, true), ErrorCode::kConcurrentTransactions);
  EXPECT_EQ(end_transaction("tx", p.producer_id, 0, false), ErrorCode::kInvalidTxnState);
  EXPECT_EQ(coordinator_->verify_produce(p.producer_id, 0, kA), ErrorCode::kNotEnoughReplicas);
  EXPECT_EQ(init("tx").error, ErrorCode::kConcurrentTransactions);
  EXPECT_TRUE(store_->completed.empty()) << "offsets applied before the markers are durable";

  make_durable();
  EXPECT_EQ(state("tx"), S::kCompleteCommit);
  ASSERT_EQ(store_->completed.size(), 1u);
  EXPECT_EQ(store_->completed[0].group, "g");
  EXPECT_TRUE(store_->completed[0].commit);
  EXPECT_TRUE(coordinator_->find("tx")->partitions.empty());
  // A retried EndTxn(COMMIT) after completion succeeds; ABORT does not.
  EXPECT_EQ(end_transaction("tx", p.producer_id, 0, true), ErrorCode::kNone);
  EXPECT_EQ(end_transaction("tx", p.producer_id, 0, false), ErrorCode::kInvalidTxnState);
  EXPECT_EQ(coordinator_->verify_produce(p.producer_id, 0, kA), ErrorCode::kInvalidTxnState);
}

TEST_F(TxnCoordinatorTest, AbortDropsTheGroupsOffsets) {
  InitResult p = init("tx");
  add_partitions("tx", p.producer_id, 0, {kA});
  add_offsets("tx", p.producer_id, 0, "g");
  ASSERT_EQ(end_transaction("tx", p.producer_id, 0, false), ErrorCode::kNone);
  ASSERT_EQ(markers_.size(), 1u);
  EXPECT_EQ(markers_[0].type, ControlType::kAbort);
  make_durable();
  EXPECT_EQ(state("tx"), S::kCompleteAbort);
  ASSERT_EQ(store_->completed.size(), 1u);
  EXPECT_FALSE(store_->completed[0].commit);
}

TEST_F(TxnCoordinatorTest, BadRequestsGetKafkasErrors) {
  InitResult p = init("tx");
  // EndTxn without a transaction.
  EXPECT_EQ(end_transaction("tx", p.producer_id, 0, true), ErrorCode::kInvalidTxnState);
  EXPECT_EQ(end_transaction("tx", p.producer_id, 0, false), ErrorCode::kInvalidTxnState);
  EXPECT_EQ(end_transaction("", p.producer_id, 0, true), ErrorCode::kInvalidRequest);
  EXPECT_EQ(end_transaction("unknown", p.producer_id, 0, true), ErrorCode::kInvalidProducerIdMapping);
  // A wrong epoch or producer id.
  EXPECT_EQ(add_partitions("tx", p.producer_id, 1, {kA}), ErrorCode::kProducerFenced);
  EXPECT_EQ(add_partitions("tx", p.producer_id + 1, 0, {kA}), ErrorCode::kInvalidProducerIdMapping);
  EXPECT_EQ(add_offsets("", p.producer_id, 0, "g"), ErrorCode::kInvalidRequest);
  // TxnOffsetCommit for a group the transaction never added.
  add_partitions("tx", p.producer_id, 0, {kA});
  EXPECT_EQ(coordinator_->verify_offset_commit("tx", p.producer_id, 0, "g"), ErrorCode::kInvalidTxnState);
  EXPECT_EQ(coordinator_->verify_offset_commit("tx", p.producer_id, 1, "g"), ErrorCode::kInvalidProducerEpoch);
  EXPECT_EQ(coordinator_->verify_offset_commit("nope", p.producer_id, 0, "g"),
            ErrorCode::kInvalidProducerIdMapping);
  // Produce: a partition not added, a stale epoch, an unknown producer.
  EXPECT_EQ(coordinator_->verify_produce(p.producer_id, 0, kB), ErrorCode::kInvalidTxnState);
  EXPECT_EQ(coordinator_->verify_produce(p.producer_id, 1, kA), ErrorCode::kInvalidProducerEpoch);
  EXPECT_EQ(coordinator_->verify_produce(p.producer_id + 50, 0, kA), ErrorCode::kInvalidProducerIdMapping);
  EXPECT_TRUE(markers_.empty());
}

TEST_F(TxnCoordinatorTest, ReInitAbortsTheOpenTransactionAndFencesTheOldEpoch) {
  InitResult p = init("tx");
  add_partitions("tx", p.producer_id, 0, {kA, kB});
  EXPECT_EQ(init("tx").error, ErrorCode::kConcurrentTransactions);
  EXPECT_EQ(state("tx"), S::kPrepareAbort);
  ASSERT_EQ(markers_.size(), 2u);
  for (const Marker& m : markers_) {
    EXPECT_EQ(m.type, ControlType::kAbort);
    EXPECT_EQ(m.epoch, 1) << "the abort carries the fenced epoch";
  }
  EXPECT_EQ(init("tx").error, ErrorCode::kConcurrentTransactions) << "while the markers are written";
  make_durable();
  EXPECT_EQ(state("tx"), S::kCompleteAbort);
  InitResult again = init("tx");
  ASSERT_EQ(again.error, ErrorCode::kNone);
  EXPECT_EQ(again.producer_id, p.producer_id);
  EXPECT_EQ(again.producer_epoch, 2);
  // The zombie with epoch 0.
  EXPECT_EQ(add_partitions("tx", p.producer_id, 0, {kA}), ErrorCode::kProducerFenced);
  EXPECT_EQ(end_transaction("tx", p.producer_id, 0, true), ErrorCode::kProducerFenced);
  EXPECT_EQ(coordinator_->verify_produce(p.producer_id, 0, kA), ErrorCode::kInvalidProducerEpoch);
}

TEST_F(TxnCoordinatorTest, TimedOutTransactionIsAbortedWithTheEpochBumped) {
  InitResult p = init("tx", 5000);
  add_partitions("tx", p.producer_id, 0, {kA});
  executor_.advance(4000);
  EXPECT_EQ(state("tx"), S::kOngoing) << "not yet past its timeout";
  executor_.advance(2000);
  EXPECT_EQ(state("tx"), S::kPrepareAbort);
  ASSERT_EQ(markers_.size(), 1u);
  EXPECT_EQ(markers_[0].type, ControlType::kAbort);
  EXPECT_EQ(markers_[0].epoch, 1);
  make_durable();
  EXPECT_EQ(state("tx"), S::kCompleteAbort);
  EXPECT_EQ(coordinator_->find("tx")->producer_epoch, 1);
  EXPECT_EQ(end_transaction("tx", p.producer_id, 0, true), ErrorCode::kProducerFenced);
  executor_.advance(60000);
  EXPECT_EQ(markers_.size(), 1u) << "an ended transaction is not aborted again";
}

TEST_F(TxnCoordinatorTest, IdleTransactionalIdsExpire) {
  InitResult p = init("tx");
  executor_.advance(options_.transactional_id_expiration_ms / 2);
  EXPECT_NE(coordinator_->find("tx"), nullptr);
  executor_.advance(options_.transactional_id_expiration_ms + options_.remove_expired_interval_ms);
  EXPECT_EQ(coordinator_->find("tx"), nullptr);
  restart();
  EXPECT_EQ(coordinator_->find("tx"), nullptr) << "removed from the store too";
  InitResult fresh = init("tx");
  EXPECT_NE(fresh.producer_id, p.producer_id) << "an expired id starts over with a new producer id";
  EXPECT_EQ(fresh.producer_epoch, 0);
}

TEST_F(TxnCoordinatorTest, RestartMidCommitWritesTheMarkersAgainAndCompletes) {
  InitResult p = init("tx");
  add_partitions("tx", p.producer_id, 0, {kA, kC});
  add_offsets("tx", p.producer_id, 0, "g");
  ASSERT_EQ(end_transaction("tx", p.producer_id, 0, true), ErrorCode::kNone);
  ASSERT_EQ(markers_.size(), 2u);
  restart();  // before the markers were durable
  EXPECT_EQ(state("tx"), S::kPrepareCommit);
  ASSERT_EQ(markers_.size(), 4u) << "the markers are written again at startup";
  EXPECT_EQ(markers_[2].type, ControlType::kCommit);
  EXPECT_EQ(markers_[3].type, ControlType::kCommit);
  EXPECT_TRUE(store_->completed.empty());
  make_durable();
  EXPECT_EQ(state("tx"), S::kCompleteCommit);
  ASSERT_EQ(store_->completed.size(), 1u);
  EXPECT_TRUE(store_->completed[0].commit);
  restart();
  EXPECT_EQ(state("tx"), S::kCompleteCommit);
  EXPECT_EQ(markers_.size(), 4u) << "a completed transaction writes nothing at startup";
  EXPECT_EQ(coordinator_->find("tx")->producer_id, p.producer_id);
}

TEST_F(TxnCoordinatorTest, OngoingTransactionSurvivesARestartAndTimesOut) {
  InitResult p = init("tx", 3000);
  add_partitions("tx", p.producer_id, 0, {kA});
  restart();
  EXPECT_EQ(state("tx"), S::kOngoing);
  EXPECT_EQ(coordinator_->verify_produce(p.producer_id, 0, kA), ErrorCode::kNone);
  executor_.advance(5000);
  EXPECT_EQ(state("tx"), S::kPrepareAbort);
  make_durable();
  EXPECT_EQ(state("tx"), S::kCompleteAbort);
}

TEST_F(TxnCoordinatorTest, RefusedMarkerIsRetriedAndGonePartitionSkipped) {
  InitResult p = init("tx");
  add_partitions("tx", p.producer_id, 0, {kA, kB, kC});
  refuse_.insert(kB);
  gone_.insert(kC);
  ASSERT_EQ(end_transaction("tx", p.producer_id, 0, true), ErrorCode::kNone);
  ASSERT_EQ(markers_.size(), 1u);
  make_durable();
  EXPECT_EQ(state("tx"), S::kPrepareCommit) << "kB has no marker yet";
  executor_.advance(options_.marker_retry_ms);
  EXPECT_EQ(markers_.size(), 1u) << "still refused";
  refuse_.clear();
  executor_.advance(options_.marker_retry_ms);
  ASSERT_EQ(markers_.size(), 2u);
  EXPECT_EQ(markers_[1].tp, kB);
  make_durable();
  EXPECT_EQ(state("tx"), S::kCompleteCommit);
}

TEST_F(TxnCoordinatorTest, ExhaustedEpochRotatesTheProducerId) {
  InitResult p = init("tx");
  TransactionMetadata m = *coordinator_->find("tx");
  m.producer_epoch = 32766;
  Status saved;
  MetaStateStore(meta_.get()).save(m, {}, [&saved](const Status& s) { saved = s; });
  ASSERT_TRUE(saved.ok());
  restart();
  InitResult r = init("tx");
  ASSERT_EQ(r.error, ErrorCode::kNone);
  EXPECT_NE(r.producer_id, p.producer_id);
  EXPECT_EQ(r.producer_epoch, 0);
  EXPECT_EQ(coordinator_->verify_produce(p.producer_id, 32766, kA), ErrorCode::kInvalidProducerIdMapping);
}

// A cluster's store answers later (the controller quorum commits the
// record): meanwhile the id is busy, and nothing is answered or changed
// before the store says so.
TEST_F(TxnCoordinatorTest, AnswersWaitForTheStoreAndTheIdIsBusyMeanwhile) {
  InitResult p = init("tx");
  store_->hold = true;
  ErrorCode added = ErrorCode::kUnknownServerError;
  bool answered = false;
  coordinator_->add_partitions("tx", p.producer_id, 0, {kA}, [&](ErrorCode c) {
    added = c;
    answered = true;
  });
  EXPECT_FALSE(answered) << "answered before the state was stored";
  EXPECT_EQ(state("tx"), S::kEmpty) << "the state changes only once stored";
  EXPECT_EQ(add_offsets("tx", p.producer_id, 0, "g"), ErrorCode::kConcurrentTransactions);
  EXPECT_EQ(end_transaction("tx", p.producer_id, 0, true), ErrorCode::kConcurrentTransactions);
  EXPECT_EQ(init("tx").error, ErrorCode::kConcurrentTransactions);
  store_->release();
  EXPECT_TRUE(answered);
  EXPECT_EQ(added, ErrorCode::kNone);
  EXPECT_EQ(state("tx"), S::kOngoing);

  // EndTxn: answered once PrepareCommit is stored, before the markers.
  bool ended = false;
  coordinator_->end_transaction("tx", p.producer_id, 0, true, [&](ErrorCode c) {
    EXPECT_EQ(c, ErrorCode::kNone);
    ended = true;
  });
  EXPECT_FALSE(ended);
  EXPECT_TRUE(markers_.empty()) << "markers before the decision is stored";
  store_->release();
  EXPECT_TRUE(ended);
  ASSERT_EQ(markers_.size(), 1u);
  make_durable();
  EXPECT_EQ(state("tx"), S::kPrepareCommit) << "Complete is not stored yet";
  store_->release();
  EXPECT_EQ(state("tx"), S::kCompleteCommit);
  EXPECT_EQ(coordinator_->completing(), 0u);
}

// A save whose outcome is unknown: the client is told to retry, and the id
// is read again from the store before its next use (here the store did
// not keep it, so the old state stands).
TEST_F(TxnCoordinatorTest, FailedSaveAnswersCoordinatorNotAvailableAndRereadsTheStore) {
  InitResult p = init("tx");
  store_->fail_next = true;
  EXPECT_EQ(add_partitions("tx", p.producer_id, 0, {kA}), ErrorCode::kCoordinatorNotAvailable);
  EXPECT_EQ(state("tx"), S::kEmpty);
  EXPECT_EQ(add_partitions("tx", p.producer_id, 0, {kA}), ErrorCode::kNone);
  EXPECT_EQ(state("tx"), S::kOngoing);
  // A failed Complete is stored again after marker_retry_ms.
  ASSERT_EQ(end_transaction("tx", p.producer_id, 0, false), ErrorCode::kNone);
  store_->fail_next = true;
  make_durable();
  EXPECT_EQ(state("tx"), S::kPrepareAbort);
  executor_.advance(options_.marker_retry_ms);
  EXPECT_EQ(state("tx"), S::kCompleteAbort);
}

// A cluster node that steps down stops coordinating: requests are sent to
// the coordinator FindCoordinator names, a save on its way answers
// NOT_COORDINATOR, produce is not checked here; the next start (this node
// taking over again) goes on from the store.
TEST_F(TxnCoordinatorTest, StoppedCoordinatorAnswersNotCoordinatorAndTakesOverFromTheStore) {
  InitResult p = init("tx");
  ASSERT_EQ(add_partitions("tx", p.producer_id, 0, {kA, kB}), ErrorCode::kNone);
  store_->hold = true;
  ErrorCode ended = ErrorCode::kUnknownServerError;
  coordinator_->end_transaction("tx", p.producer_id, 0, true, [&](ErrorCode c) { ended = c; });
  coordinator_->stop();
  EXPECT_FALSE(coordinator_->active());
  store_->hold = false;
  store_->release();  // stored (a proposal that committed), answered after the step-down
  EXPECT_EQ(ended, ErrorCode::kNotCoordinator);
  EXPECT_TRUE(markers_.empty()) << "a stopped coordinator writes no markers";
  EXPECT_EQ(init("tx").error, ErrorCode::kNotCoordinator);
  EXPECT_EQ(add_partitions("tx", p.producer_id, 0, {kC}), ErrorCode::kNotCoordinator);
  EXPECT_EQ(end_transaction("tx", p.producer_id, 0, true), ErrorCode::kNotCoordinator);
  EXPECT_EQ(coordinator_->verify_offset_commit("tx", p.producer_id, 0, "g"), ErrorCode::kNotCoordinator);
  EXPECT_EQ(coordinator_->verify_produce(p.producer_id + 7, 3, kC), ErrorCode::kNone)
      << "a partition leader that does not coordinate takes the batch (pre-KIP-890)";
  // Taking over: the committed PrepareCommit is completed.
  ASSERT_TRUE(coordinator_->start().ok());
  EXPECT_EQ(state("tx"), S::kPrepareCommit);
  ASSERT_EQ(markers_.size(), 2u);
  make_durable();
  EXPECT_EQ(state("tx"), S::kCompleteCommit);
}

// The next transaction's AddPartitionsToTxn / AddOffsetsToTxn, arriving
// while the previous one's markers are written, waits for its completion
// and is then answered as if it had just arrived (not
// CONCURRENT_TRANSACTIONS, which clients retry only after a backoff); one
// that waits longer than kMaxParkMs gets CONCURRENT_TRANSACTIONS; a
// step-down answers the waiting ones NOT_COORDINATOR.
TEST_F(TxnCoordinatorTest, TheNextTransactionWaitsForThePreviousOnesCompletion) {
  InitResult p = init("tx");
  ASSERT_EQ(add_partitions("tx", p.producer_id, 0, {kA}), ErrorCode::kNone);
  ASSERT_EQ(end_transaction("tx", p.producer_id, 0, true), ErrorCode::kNone);
  std::vector<ErrorCode> answers;
  coordinator_->add_partitions("tx", p.producer_id, 0, {kB}, [&](ErrorCode c) { answers.push_back(c); });
  coordinator_->add_offsets("tx", p.producer_id, 0, "g", [&](ErrorCode c) { answers.push_back(c); });
  EXPECT_TRUE(answers.empty()) << "answered while the markers are written";
  EXPECT_EQ(add_partitions("tx", p.producer_id, 1, {kB}), ErrorCode::kProducerFenced) << "other errors at once";
  make_durable();
  EXPECT_EQ(answers, (std::vector<ErrorCode>{ErrorCode::kNone, ErrorCode::kNone}));
  const TransactionMetadata* m = coordinator_->find("tx");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->state, S::kOngoing) << "the next transaction";
  EXPECT_EQ(m->partitions, (PartitionSet{kB}));
  EXPECT_EQ(m->groups, (std::set<std::string>{"g"}));

  // A completion that takes too long: CONCURRENT_TRANSACTIONS after all.
  refuse_.insert(kB);
  ASSERT_EQ(end_transaction("tx", p.producer_id, 0, false), ErrorCode::kNone);
  answers.clear();
  coordinator_->add_partitions("tx", p.producer_id, 0, {kC}, [&](ErrorCode c) { answers.push_back(c); });
  executor_.advance(Coordinator::kMaxParkMs - 1);
  EXPECT_TRUE(answers.empty());
  executor_.advance(1);
  EXPECT_EQ(answers, (std::vector<ErrorCode>{ErrorCode::kConcurrentTransactions}));
  // And a step-down answers the waiting ones.
  answers.clear();
  coordinator_->add_partitions("tx", p.producer_id, 0, {kC}, [&](ErrorCode c) { answers.push_back(c); });
  coordinator_->stop();
  EXPECT_EQ(answers, (std::vector<ErrorCode>{ErrorCode::kNotCoordinator}));
}

}  // namespace
}  // namespace eddy::txn
