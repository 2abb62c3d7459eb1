#include "meta/transaction_store.h"

#include <gtest/gtest.h>

#include <memory>

#include "meta/meta_store.h"
#include "tests/unit/port/test_dir.h"

namespace eddy::meta {
namespace {

TransactionRow row(const std::string& id, int8_t state) {
  TransactionRow r;
  r.transactional_id = id;
  r.producer_id = 7;
  r.producer_epoch = 3;
  r.last_producer_epoch = 2;
  r.timeout_ms = 60000;
  r.state = state;
  r.start_ms = 1000;
  r.last_update_ms = 2000;
  r.partitions = {{"a", 0}, {"a", 2}, {"b", 1}};
  r.groups = {"g1", "g2"};
  return r;
}

TEST(TransactionStoreTest, SavesReplacesAndRemoves) {
  testing::TempDir dir;
  std::unique_ptr<MetaStore> store;
  ASSERT_TRUE(MetaStore::open(dir.file("eddy.db"), &store).ok());
  ASSERT_TRUE(store->transactions().save(row("tx-b", 2)).ok());
  TransactionRow a = row("tx-a", 1);
  ASSERT_TRUE(store->transactions().save(a).ok());
  // A new transaction: fewer partitions, another state.
  a.state = 4;
  a.partitions = {{"c", 0}};
  a.groups.clear();
  ASSERT_TRUE(store->transactions().save(a).ok());
  store.reset();
  ASSERT_TRUE(MetaStore::open(dir.file("eddy.db"), &store).ok());
  std::vector<TransactionRow> rows;
  ASSERT_TRUE(store->transactions().load_all(&rows).ok());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], a);
  EXPECT_EQ(rows[1], row("tx-b", 2));
  ASSERT_TRUE(store->transactions().remove("tx-a").ok());
  ASSERT_TRUE(store->transactions().remove("never").ok());
  ASSERT_TRUE(store->transactions().load_all(&rows).ok());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].transactional_id, "tx-b");
}

TEST(TransactionStoreTest, RefusesBadShapes) {
  testing::TempDir dir;
  std::unique_ptr<MetaStore> store;
  ASSERT_TRUE(MetaStore::open(dir.file("eddy.db"), &store).ok());
  EXPECT_TRUE(store->transactions().save(row("", 0)).is_invalid_argument());
  EXPECT_TRUE(store->transactions().save(row("x", 8)).is_invalid_argument());
  TransactionRow r = row("x", 0);
  r.timeout_ms = 0;
  EXPECT_TRUE(store->transactions().save(r).is_invalid_argument());
  std::vector<TransactionRow> rows;
  ASSERT_TRUE(store->transactions().load_all(&rows).ok());
  EXPECT_TRUE(rows.empty());
}

TEST(PendingOffsetStoreTest, CommitAppliesAndAbortDrops) {
  testing::TempDir dir;
  std::unique_ptr<MetaStore> store;
  ASSERT_TRUE(MetaStore::open(dir.file("eddy.db"), &store).ok());
  ASSERT_TRUE(store->offsets().commit("g", {{"t", 0, 5, -1, "", 1}, {"t", 1, 6, -1, "", 1}}).ok());
  ASSERT_TRUE(store->pending_offsets().stage("g", 10, {{"t", 0, 50, 2, "m", 9}}).ok());
  ASSERT_TRUE(store->pending_offsets().stage("g", 11, {{"t", 1, 60, -1, "", 9}}).ok());
  ASSERT_TRUE(store->pending_offsets().stage("g", 10, {{"t", 0, 55, 2, "m2", 9}}).ok());  // replaces
  std::vector<TopicPartition> pending;
  ASSERT_TRUE(store->pending_offsets().pending_partitions("g", &pending).ok());
  EXPECT_EQ(pending, (std::vector<TopicPartition>{{"t", 0}, {"t", 1}}));
  std::vector<CommittedOffset> committed;
  ASSERT_TRUE(store->offsets().fetch_all("g", &committed).ok());
  EXPECT_EQ(committed[0].offset, 5) << "staged offsets are not committed offsets";

  int64_t applied = 0;
  ASSERT_TRUE(store->pending_offsets().complete("g", 10, true, &applied).ok());
  EXPECT_EQ(applied, 1);
  ASSERT_TRUE(store->pending_offsets().complete("g", 11, false, &applied).ok());
  EXPECT_EQ(applied, 1);
  ASSERT_TRUE(store->offsets().fetch_all("g", &committed).ok());
  ASSERT_EQ(committed.size(), 2u);
  EXPECT_EQ(committed[0], (CommittedOffset{"t", 0, 55, 2, "m2", 9}));
  EXPECT_EQ(committed[1].offset, 6) << "the aborted transaction's offset was dropped";
  ASSERT_TRUE(store->pending_offsets().pending_partitions("g", &pending).ok());
  EXPECT_TRUE(pending.empty());
}

TEST(PendingOffsetStoreTest, DeletingTheTopicDropsItsStagedOffsets) {
  testing::TempDir dir;
  std::unique_ptr<MetaStore> store;
  ASSERT_TRUE(MetaStore::open(dir.file("eddy.db"), &store).ok());
  NewTopic topic;
  topic.name = "t";
  topic.partition_count = 1;
  TopicRecord created;
  ASSERT_TRUE(store->topics().create(topic, &created).ok());
  ASSERT_TRUE(store->pending_offsets().stage("g", 1, {{"t", 0, 50, -1, "", 9}}).ok());
  ASSERT_TRUE(store->topics().remove("t").ok());
  std::vector<CommittedOffset> staged;
  ASSERT_TRUE(store->pending_offsets().staged("g", 1, &staged).ok());
  EXPECT_TRUE(staged.empty());
}

}  // namespace
}  // namespace eddy::meta
