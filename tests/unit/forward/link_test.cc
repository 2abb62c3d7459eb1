// A whole Link between a real local broker (LocalSide: meta store, logs,
// LocalStore, forward.db) and the in-memory central cluster (FakeCentral),
// injected through LinkOptions::transport_factory.
#include "forward/link.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <thread>

#include "fake_central.h"
#include "local_side.h"
#include "port/port.h"
#include "protocol/control_batch.h"
#include "protocol/record_batch.h"

namespace eddy::forward {
namespace {

using testing::FakeCentral;
using testing::LocalSide;
using testing::eventually;

class LinkTest : public ::testing::Test {
 protected:
  LinkTest() {
    options_.name = "central";
    options_.bootstrap = {{"central", 9092}};
    options_.topics = {"sensors"};
    options_.linger_ms = 5;
    options_.retry_backoff_ms = 10;
    options_.retry_backoff_max_ms = 50;
    options_.request_timeout_ms = 2000;
    options_.transport_factory = central_.transport_factory();
    EXPECT_TRUE(TopicMapping::create(options_, &mapping_).ok());
    EXPECT_TRUE(meta::ForwardProgress::open(local_.data_dir() + "/forward.db", &progress_).ok());
    store_ = std::make_unique<LocalStore>(local_.reactor(), local_.broker().topics(), progress_.get());
    local_.reactor().run([&] { EXPECT_TRUE(store_->load({{options_.name, &mapping_}}).ok()); });
    local_.broker().add_partition_observer(
        [this](const std::string& topic, int32_t partition, storage::PartitionLog* log, bool after_start) {
          store_->on_partition_opened(topic, partition, log, after_start);
        });
    local_.start();
    central_.add_topic("sensors", 2);
    local_.create_topic("sensors", 2);
  }

  ~LinkTest() override {
    store_->stop();
    link_.reset();
    local_.reactor().run([] {});  // what the store posted runs before it goes
  }

  void start_link() {
    link_ = std::make_unique<Link>(options_, mapping_, store_.get(), progress_.get(), &board_);
    link_->start();
  }
  void stop_link() {
    link_->request_stop();
    link_->join();
  }

  int64_t saved_offset(int32_t partition) {
    meta::ForwardCursor c;
    return progress_->get(options_.name, "sensors", partition, &c).ok() ? c.next_offset : -1;
  }
  meta::ForwardCursor saved(int32_t partition) {
    meta::ForwardCursor c;
    EXPECT_TRUE(progress_->get(options_.name, "sensors", partition, &c).ok());
    return c;
  }
  LinkState state() {
    for (const LinkStatus& l : board_.snapshot()) {
      if (l.name == options_.name) return l.state;
    }
    return LinkState::kStopped;
  }

  LocalSide local_;
  FakeCentral central_;
  LinkOptions options_;
  TopicMapping mapping_;
  std::unique_ptr<meta::ForwardProgress> progress_;
  std::unique_ptr<LocalStore> store_;
  StatusBoard board_;
  std::unique_ptr<Link> link_;
};

TEST_F(LinkTest, ForwardsBatchesAsStoredAndSavesTheCursor) {
  EXPECT_EQ(local_.append("sensors", 0, 5), 0);
  EXPECT_EQ(local_.append("sensors", 0, 10), 5);
  EXPECT_EQ(local_.append("sensors", 0, 1), 15);
  EXPECT_EQ(local_.append("sensors", 1, 3), 0);
  start_link();
  ASSERT_TRUE(eventually([&] { return saved_offset(0) == 16 && saved_offset(1) == 3; }))
      << saved_offset(0) << " " << saved_offset(1);
  stop_link();

  EXPECT_EQ(central_.written("sensors", 0), (std::vector<int64_t>{0, 5, 15}));
  EXPECT_EQ(central_.written("sensors", 1), (std::vector<int64_t>{0}));
  std::map<int64_t, int32_t> sequences;
  for (const FakeCentral::Received& r : central_.received()) {
    EXPECT_EQ(r.producer_id, 1000);
    EXPECT_EQ(r.producer_epoch, 0);
    if (r.partition == 0) sequences[r.local_base_offset] = r.base_sequence;
  }
  EXPECT_EQ(sequences, (std::map<int64_t, int32_t>{{0, 0}, {5, 5}, {15, 15}}));
  const meta::ForwardCursor c = saved(0);
  EXPECT_EQ(c.producer_id, 1000);
  EXPECT_EQ(c.next_sequence, 16);
  // The store heard of the saved cursor: retention may drop what is forwarded.
  EXPECT_TRUE(eventually([&] { return local_.pin("sensors", 0) == 16; }));
  ASSERT_EQ(board_.snapshot().size(), 1u);
  const LinkStatus status = board_.snapshot()[0];
  EXPECT_EQ(status.state, LinkState::kStopped);
  ASSERT_EQ(status.partitions.size(), 2u);
  EXPECT_EQ(status.partitions[0].forwarded_offset, 16);
  EXPECT_EQ(status.partitions[0].forwarded_messages, 16);
  EXPECT_EQ(status.partitions[0].backlog_messages, 0);
}

TEST_F(LinkTest, AfterATransportFailureResendsFromTheCursorWithTheSameSequences) {
  for (int i = 0; i < 6; ++i) local_.append("sensors", 0, 2);
  // The first request goes alone (nothing confirmed yet); the second and
  // later ones are pipelined. The connection is cut at the second: it and
  // those after it reach the central cluster, their answers do not. The
  // link's user may not read the central topic, so it cannot look for them
  // there: it sends them again and the central cluster's sequences keep
  // them once.
  central_.refuse_reads(true);
  central_.cut_at_produce_request(2);
  start_link();
  ASSERT_TRUE(eventually([&] { return saved_offset(0) == 12; })) << saved_offset(0);
  stop_link();

  // Exactly once on the central partition, in order.
  EXPECT_EQ(central_.written("sensors", 0), (std::vector<int64_t>{0, 2, 4, 6, 8, 10}));
  // Every batch sent again went with the sequence it had before.
  std::map<int64_t, int32_t> sequence_of;
  std::map<int64_t, int> sends;
  for (const FakeCentral::Received& r : central_.received()) {
    if (r.partition != 0) continue;
    EXPECT_EQ(r.producer_id, 1000) << "a new producer id would lose exactly-once";
    auto [it, fresh] = sequence_of.emplace(r.local_base_offset, r.base_sequence);
    EXPECT_EQ(it->second, r.base_sequence) << "batch at " << r.local_base_offset;
    EXPECT_EQ(r.base_sequence, r.local_base_offset);
    ++sends[r.local_base_offset];
  }
  EXPECT_EQ(sends[0], 1);
  EXPECT_EQ(sends[2], 2) << "the batch whose answer was lost is sent again";
  EXPECT_EQ(central_.init_producer_id_requests(), 1);
  EXPECT_EQ(saved(0).next_sequence, 12);
  EXPECT_GE(board_.snapshot()[0].connects, 2u);
}

// Batches whose answers were lost with the connection, then forgotten by a
// central cluster that takes a forgotten producer's resend as new data
// (Kafka 4): found in the central log and not sent again.
TEST_F(LinkTest, BatchesWrittenButNeverAcknowledgedAreFoundCentrallyAndNotSentAgain) {
  for (int i = 0; i < 6; ++i) local_.append("sensors", 0, 2);
  central_.cut_at_produce_request(2);
  central_.forget_producers_after_the_cut();
  start_link();
  ASSERT_TRUE(eventually([&] { return saved_offset(0) == 12; })) << saved_offset(0);
  stop_link();
  EXPECT_EQ(central_.written("sensors", 0), (std::vector<int64_t>{0, 2, 4, 6, 8, 10})) << "each batch once";
  std::map<int64_t, int> sends;
  for (const FakeCentral::Received& r : central_.received()) {
    if (r.partition == 0) ++sends[r.local_base_offset];
  }
  EXPECT_EQ(sends[2], 1) << "the batch written but never acknowledged is not sent again";
  EXPECT_GE(board_.snapshot()[0].found_unacknowledged, 1u);
  EXPECT_EQ(board_.snapshot()[0].producer_resets, 0u);
  const meta::ForwardCursor c = saved(0);
  EXPECT_EQ(c.next_sequence, 12);
  EXPECT_EQ(c.remote_next_offset, 12);
  EXPECT_EQ(board_.snapshot()[0].partitions[0].forwarded_messages, 12);
}

// The same cut when the link may not read the central topic: the resends
// are new data to a central cluster that forgot the producer (at-least-once
// for exactly the batches whose answers were lost).
TEST_F(LinkTest, WithoutReadingTheCentralTopicForgottenBatchesAreWrittenAgain) {
  for (int i = 0; i < 6; ++i) local_.append("sensors", 0, 2);
  central_.refuse_reads(true);
  central_.cut_at_produce_request(2);
  central_.forget_producers_after_the_cut();
  start_link();
  ASSERT_TRUE(eventually([&] { return saved_offset(0) == 12; })) << saved_offset(0);
  stop_link();
  const std::vector<int64_t> written = central_.written("sensors", 0);
  EXPECT_GT(written.size(), 6u) << "at-least-once for the batches in flight at the cut";
  EXPECT_EQ(board_.snapshot()[0].found_unacknowledged, 0u);
}

// After a restart the link looks at the central log once: a batch the
// central cluster wrote while the link was stopped waiting for its answer is
// found, not sent twice to a central cluster that forgot the producer.
TEST_F(LinkTest, ARestartFindsWhatTheCentralClusterWroteAfterTheSavedCursor) {
  local_.append("sensors", 0, 4);
  start_link();
  ASSERT_TRUE(eventually([&] { return saved_offset(0) == 4; }));
  EXPECT_EQ(saved(0).remote_next_offset, 4);
  const int next_request = central_.produce_requests() + 1;
  central_.cut_at_produce_request(next_request);
  local_.append("sensors", 0, 3);
  ASSERT_TRUE(eventually([&] { return central_.produce_requests() == next_request; }));
  stop_link();  // waiting for the answer that does not come
  EXPECT_EQ(saved_offset(0), 4);
  central_.forget_producers();
  local_.append("sensors", 0, 1);
  start_link();
  ASSERT_TRUE(eventually([&] { return saved_offset(0) == 8; }));
  stop_link();
  EXPECT_EQ(central_.written("sensors", 0), (std::vector<int64_t>{0, 4, 7}));
  EXPECT_EQ(saved(0).remote_next_offset, 8);
  EXPECT_EQ(saved(0).next_sequence, 8);
  EXPECT_EQ(board_.snapshot()[0].found_unacknowledged, 1u);
}

// A cursor that never had an acknowledgement (remote_next_offset -1: in a
// cluster, one another node shared before its first): the link looks for
// its batches from the central log's start before it sends, and finds the
// one written whose answer was lost.
TEST_F(LinkTest, ACursorWithoutAnAcknowledgementIsLookedForFromTheCentralStart) {
  local_.append("sensors", 0, 4);
  central_.cut_at_produce_request(1);
  options_.retry_backoff_ms = options_.retry_backoff_max_ms = 60000;  // stopped before it reconnects
  start_link();
  ASSERT_TRUE(eventually([&] { return central_.produce_requests() >= 1; }));
  ASSERT_TRUE(eventually([&] { return central_.written("sensors", 0).size() == 1; }));
  stop_link();
  meta::ForwardCursor c = saved(0);
  EXPECT_EQ(c.next_offset, 0);
  EXPECT_EQ(c.remote_next_offset, 0) << "learnt before the first send";
  c.remote_next_offset = -1;  // as shared before that was learnt
  ASSERT_TRUE(progress_->save(options_.name, {c}).ok());
  central_.forget_producers();
  local_.reactor().run([&] {
    store_ = std::make_unique<LocalStore>(local_.reactor(), local_.broker().topics(), progress_.get());
    EXPECT_TRUE(store_->load({{options_.name, &mapping_}}).ok());
  });
  options_.retry_backoff_ms = 10;
  options_.retry_backoff_max_ms = 50;
  start_link();
  ASSERT_TRUE(eventually([&] { return saved_offset(0) == 4; })) << saved_offset(0);
  stop_link();
  EXPECT_EQ(central_.written("sensors", 0), (std::vector<int64_t>{0})) << "written once";
  EXPECT_EQ(board_.snapshot()[0].found_unacknowledged, 1u);
}

TEST_F(LinkTest, ARestartedLinkContinuesTheSavedProducerAndSequences) {
  local_.append("sensors", 0, 4);
  start_link();
  ASSERT_TRUE(eventually([&] { return saved_offset(0) == 4; }));
  stop_link();
  local_.append("sensors", 0, 3);
  start_link();
  ASSERT_TRUE(eventually([&] { return saved_offset(0) == 7; }));
  stop_link();
  EXPECT_EQ(central_.init_producer_id_requests(), 1);
  EXPECT_EQ(central_.written("sensors", 0), (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(central_.received().back().base_sequence, 4);
  EXPECT_EQ(saved(0).next_sequence, 7);
}

TEST_F(LinkTest, AProducerTheCentralClusterForgotIsReplacedAndSequencesRestart) {
  local_.append("sensors", 0, 3);
  local_.append("sensors", 0, 3);
  central_.refuse_batches(protocol::ErrorCode::kUnknownProducerId, 1);
  start_link();
  ASSERT_TRUE(eventually([&] { return saved_offset(0) == 6; }));
  stop_link();
  EXPECT_EQ(central_.init_producer_id_requests(), 2);
  EXPECT_EQ(central_.written("sensors", 0), (std::vector<int64_t>{0, 3}));
  for (const FakeCentral::Received& r : central_.received()) {
    if (r.written) {
      EXPECT_EQ(r.producer_id, 1001);
    }
  }
  EXPECT_EQ(saved(0).producer_id, 1001);
  EXPECT_EQ(saved(0).next_sequence, 6);
  EXPECT_EQ(board_.snapshot()[0].producer_resets, 1u);
}

TEST_F(LinkTest, ARefusedTopicPausesItsPartitionOnly) {
  options_.paused_retry_ms = 60000;
  local_.append("sensors", 0, 2);
  local_.append("sensors", 1, 2);
  // The first request carries a batch of each partition; the first of them
  // (whichever partition the rotation puts first) is refused.
  central_.refuse_batches(protocol::ErrorCode::kTopicAuthorizationFailed, 1);
  start_link();
  ASSERT_TRUE(eventually([&] { return saved_offset(0) == 2 || saved_offset(1) == 2; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  stop_link();
  const LinkStatus status = board_.snapshot()[0];
  ASSERT_EQ(status.partitions.size(), 2u);
  int paused = 0;
  for (const PartitionStatus& p : status.partitions) {
    if (!p.paused.empty()) {
      ++paused;
      EXPECT_EQ(p.forwarded_offset, 0);
    } else {
      EXPECT_EQ(p.forwarded_offset, 2);
    }
  }
  EXPECT_EQ(paused, 1);
  EXPECT_EQ(status.connects, 1u) << "a pause is no reason to reconnect";
}

// Appends a batch straight to sensors-0's log on the reactor (a
// transactional producer's data, a coordinator's marker); its base offset.
int64_t append_raw(LocalSide& local, std::vector<uint8_t> batch) {
  int64_t base = -1;
  local.reactor().run([&] {
    storage::PartitionLog* log = local.broker().topics().find("sensors")->partitions[0];
    storage::AppendResult result;
    if (log->append(batch, storage::AppendOptions{}, &result).ok()) base = result.base_offset;
  });
  return base;
}

// Values as LocalSide::append writes them (FakeCentral reads the offsets
// back from them).
std::vector<uint8_t> transactional(int64_t producer_id, int records, int64_t first_offset) {
  protocol::RecordBatchBuilder builder;
  builder.producer(producer_id, 0, 0).attributes(protocol::batch_attributes::kTransactional);
  for (int i = 0; i < records; ++i) builder.add("k", "sensors-0:" + std::to_string(first_offset + i), 1000 + i);
  return builder.build();
}

TEST_F(LinkTest, ForwardsCommittedTransactionalDataOnlyAndNoMarkers) {
  EXPECT_EQ(local_.append("sensors", 0, 2), 0);
  EXPECT_EQ(append_raw(local_, transactional(77, 3, 2)), 2);  // aborted below
  EXPECT_EQ(local_.append("sensors", 0, 1), 5);
  EXPECT_EQ(append_raw(local_, transactional(78, 2, 6)), 6);  // committed below
  EXPECT_EQ(append_raw(local_, protocol::build_control_batch(protocol::ControlType::kAbort, 77, 0, 0, 1000)), 8);
  EXPECT_EQ(append_raw(local_, protocol::build_control_batch(protocol::ControlType::kCommit, 78, 0, 0, 1000)), 9);
  EXPECT_EQ(local_.append("sensors", 0, 1), 10);
  EXPECT_EQ(append_raw(local_, transactional(79, 1, 11)), 11);  // open: the LSO stays at 11
  EXPECT_EQ(local_.append("sensors", 0, 1), 12);
  start_link();
  ASSERT_TRUE(eventually([&] { return saved_offset(0) == 11; })) << saved_offset(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // nothing more goes out
  EXPECT_EQ(central_.written("sensors", 0), (std::vector<int64_t>{0, 5, 6, 10}));

  EXPECT_EQ(append_raw(local_, protocol::build_control_batch(protocol::ControlType::kCommit, 79, 0, 0, 1000)), 13);
  ASSERT_TRUE(eventually([&] { return saved_offset(0) == 14; })) << saved_offset(0);
  stop_link();
  EXPECT_EQ(central_.written("sensors", 0), (std::vector<int64_t>{0, 5, 6, 10, 11, 12}));
  std::map<int64_t, int32_t> sequences;
  for (const FakeCentral::Received& r : central_.received()) {
    if (r.partition != 0) continue;
    EXPECT_FALSE(r.transactional) << "offset " << r.local_base_offset << ": sent as the link's idempotent data";
    EXPECT_FALSE(r.control) << "offset " << r.local_base_offset;
    EXPECT_TRUE(r.crc_ok) << "offset " << r.local_base_offset;
    EXPECT_EQ(r.producer_id, 1000);
    sequences[r.local_base_offset] = r.base_sequence;
  }
  // Consecutive sequences over what was sent: skipped batches use none.
  EXPECT_EQ(sequences, (std::map<int64_t, int32_t>{{0, 0}, {5, 2}, {6, 3}, {10, 5}, {11, 6}, {12, 7}}));
  EXPECT_EQ(saved(0).next_sequence, 8);
}

// An empty batch (a partition leader's first of its epoch) holds nothing
// to forward, and Kafka would refuse it from a producer: skipped, and the
// sequences stay consecutive over what is sent.
TEST_F(LinkTest, AnEmptyBatchIsNotForwarded) {
  EXPECT_EQ(local_.append("sensors", 0, 2), 0);
  EXPECT_EQ(append_raw(local_, protocol::build_empty_batch(1000)), 2);
  EXPECT_EQ(local_.append("sensors", 0, 2), 3);
  start_link();
  ASSERT_TRUE(eventually([&] { return saved_offset(0) == 5; })) << saved_offset(0);
  stop_link();
  EXPECT_EQ(central_.written("sensors", 0), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(saved(0).next_sequence, 4);
}

TEST_F(LinkTest, RequestStopEndsALinkThatBacksOff) {
  central_.refuse_connections(true);
  options_.retry_backoff_ms = 60000;
  options_.retry_backoff_max_ms = 60000;
  start_link();
  ASSERT_TRUE(eventually([&] { return state() == LinkState::kBackingOff; }));
  const int64_t before = port::monotonic_millis();
  stop_link();
  EXPECT_LT(port::monotonic_millis() - before, 2000);
  EXPECT_EQ(state(), LinkState::kStopped);
}

TEST_F(LinkTest, RequestStopEndsAnIdleLink) {
  options_.linger_ms = 60000;
  start_link();
  ASSERT_TRUE(eventually([&] { return state() == LinkState::kConnected; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // into its linger
  const int64_t before = port::monotonic_millis();
  stop_link();
  EXPECT_LT(port::monotonic_millis() - before, 2000);
  EXPECT_EQ(state(), LinkState::kStopped);
}

}  // namespace
}  // namespace eddy::forward
