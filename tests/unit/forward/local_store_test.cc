// LocalStore against a real local broker (local_side.h): what a link is
// listed and reads, and the pins that keep undelivered data from retention.
#include "forward/local_store.h"

#include <gtest/gtest.h>

#include <memory>

#include "forward/link_options.h"
#include "forward/topic_mapping.h"
#include "local_side.h"
#include "protocol/record_batch.h"

namespace eddy::forward {
namespace {

using testing::LocalSide;

class LocalStoreTest : public ::testing::Test {
 protected:
  LocalStoreTest() {
    LinkOptions options;
    options.name = "central";
    options.topics = {"sensors.*"};
    EXPECT_TRUE(TopicMapping::create(options, &mapping_).ok());
    EXPECT_TRUE(meta::ForwardProgress::open(local_.data_dir() + "/forward.db", &progress_).ok());
    store_ = std::make_unique<LocalStore>(local_.reactor(), local_.broker().topics(), progress_.get());
    local_.broker().add_partition_observer(
        [this](const std::string& topic, int32_t partition, storage::PartitionLog* log, bool after_start) {
          store_->on_partition_opened(topic, partition, log, after_start);
        });
  }
  ~LocalStoreTest() override {
    store_->stop();
    local_.reactor().run([] {});  // what the store posted runs before it goes
  }

  // Loads the saved cursors (as the Forwarder does before the broker
  // starts), then starts the broker.
  void start() {
    local_.reactor().run([&] {
      Status s = store_->load({{"central", &mapping_}});
      EXPECT_TRUE(s.ok()) << s.to_string();
    });
    local_.start();
  }
  std::vector<LocalPartition> list(const std::map<TopicPartitionKey, int64_t>& acked = {}, bool bytes = false) {
    std::vector<LocalPartition> out;
    EXPECT_TRUE(store_->list("central", acked, bytes, &out));
    return out;
  }
  meta::ForwardCursor cursor(const std::string& topic, int32_t partition, int64_t next_offset, int32_t sequence) {
    meta::ForwardCursor c;
    c.topic = topic;
    c.partition = partition;
    c.next_offset = next_offset;
    c.producer_id = 1000;
    c.producer_epoch = 0;
    c.next_sequence = sequence;
    return c;
  }

  LocalSide local_;
  TopicMapping mapping_;
  std::unique_ptr<meta::ForwardProgress> progress_;
  std::unique_ptr<LocalStore> store_;
};

TEST_F(LocalStoreTest, ListsTheForwardedPartitionsAndPinsThemAtTheCursor) {
  start();
  local_.create_topic("sensors.temp", 2);
  local_.create_topic("logs", 1);
  local_.append("sensors.temp", 1, 4);
  local_.append("logs", 0, 4);
  std::vector<LocalPartition> listed = list({}, /*bytes=*/true);
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].topic, "sensors.temp");
  EXPECT_EQ(listed[1].partition, 1);
  EXPECT_EQ(listed[1].log_end_offset, 4);
  EXPECT_EQ(listed[1].high_watermark, 4);
  EXPECT_EQ(listed[1].cursor.next_offset, 0);
  EXPECT_GT(listed[1].backlog_bytes, 0u);
  EXPECT_EQ(listed[0].backlog_bytes, 0u);
  // From the link's acknowledged offset, nothing is left.
  EXPECT_EQ(list({{{"sensors.temp", 1}, 4}}, true)[1].backlog_bytes, 0u);
  EXPECT_EQ(local_.pin("sensors.temp", 1), 0);
  EXPECT_EQ(local_.pin("logs", 0), -1) << "not forwarded: not pinned";

  store_->cursors_saved("central", {cursor("sensors.temp", 1, 4, 4)});
  local_.reactor().run([] {});
  EXPECT_EQ(local_.pin("sensors.temp", 1), 4);
  EXPECT_EQ(list()[1].cursor.next_offset, 4);
}

TEST_F(LocalStoreTest, ReadsWholeBatchesFromTheOneHoldingTheOffset) {
  start();
  local_.create_topic("sensors", 1);
  local_.append("sensors", 0, 3);
  local_.append("sensors", 0, 2);
  LocalRead r;
  ASSERT_TRUE(store_->read("sensors", 0, 4, 1 << 20, &r));
  EXPECT_TRUE(r.exists);
  EXPECT_EQ(r.status.code(), Status::Code::kOk);
  protocol::RecordBatchView first;
  ASSERT_EQ(protocol::RecordBatchView::parse(r.bytes, &first), protocol::BatchError::kOk);
  EXPECT_EQ(first.base_offset(), 3);
  EXPECT_EQ(first.size(), r.bytes.size()) << "only the batch holding offset 4 and after";
  EXPECT_EQ(r.next_offset, 5);
  ASSERT_TRUE(store_->read("missing", 0, 0, 1 << 20, &r));
  EXPECT_FALSE(r.exists);
}

TEST_F(LocalStoreTest, SavedCursorsPinAtStartAndARecreatedTopicContinuesTheSequence) {
  ASSERT_TRUE(progress_->save("central", {cursor("sensors", 0, 3, 7)}).ok());
  start();
  local_.create_topic("sensors", 1);  // a fresh log under a saved name: from its start
  std::vector<LocalPartition> listed = list();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].cursor.next_offset, 0);
  // The central partition still knows the old producer's sequence.
  EXPECT_EQ(listed[0].cursor.next_sequence, 7);
  EXPECT_EQ(listed[0].cursor.producer_id, 1000);

  store_->cursors_saved("central", {cursor("sensors", 0, 2, 9)});
  local_.delete_topic("sensors");
  store_->cursors_forgotten("central", {{"sensors", 0}});
  local_.reactor().run([] {});
  local_.create_topic("sensors", 1);
  listed = list();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].cursor.next_offset, 0);
  EXPECT_EQ(listed[0].cursor.next_sequence, 9);
}

TEST_F(LocalStoreTest, CallsFailOnceStopping) {
  start();
  store_->stop();
  std::vector<LocalPartition> out;
  EXPECT_FALSE(store_->list("central", {}, false, &out));
  LocalRead r;
  EXPECT_FALSE(store_->read("sensors", 0, 0, 1024, &r));
  EXPECT_TRUE(store_->stopping());
}

}  // namespace
}  // namespace eddy::forward
