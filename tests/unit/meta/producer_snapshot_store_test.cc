#include "meta/producer_snapshot_store.h"

#include <gtest/gtest.h>

#include "tests/unit/meta/meta_test_util.h"

namespace eddy::meta {
namespace {

using ProducerSnapshotStoreTest = testing::MetaStoreTest;

TEST_F(ProducerSnapshotStoreTest, SaveLoadPersist) {
  std::vector<ProducerSnapshot> batch = {
      {"t", 0, 2000, 1, 41, 1041, 5000},
      {"t", 0, 1000, 0, 9, 999, 4000},
      {"t", 1, 1000, 0, 3, 17, 4500},
      {"u", 0, 3000, 32767, 2147483647, 9223372036854775807, 1},
  };
  ASSERT_TRUE(store_->producer_snapshots().save(batch).ok());
  reopen();
  std::vector<ProducerSnapshot> got;
  ASSERT_TRUE(store_->producer_snapshots().load("t", 0, &got).ok());
  EXPECT_EQ(got, (std::vector<ProducerSnapshot>{batch[1], batch[0]}));
  ASSERT_TRUE(store_->producer_snapshots().load_all(&got).ok());
  EXPECT_EQ(got, (std::vector<ProducerSnapshot>{batch[1], batch[0], batch[2], batch[3]}));
  ASSERT_TRUE(store_->producer_snapshots().load("t", 9, &got).ok());
  EXPECT_TRUE(got.empty());
}

TEST_F(ProducerSnapshotStoreTest, SaveUpdatesAProducer) {
  ASSERT_TRUE(store_->producer_snapshots().save({{"t", 0, 1000, 0, 9, 999, 4000}}).ok());
  ASSERT_TRUE(store_->producer_snapshots().save({{"t", 0, 1000, 1, 0, 1200, 4100}}).ok());
  std::vector<ProducerSnapshot> got;
  ASSERT_TRUE(store_->producer_snapshots().load("t", 0, &got).ok());
  EXPECT_EQ(got, (std::vector<ProducerSnapshot>{{"t", 0, 1000, 1, 0, 1200, 4100}}));
}

TEST_F(ProducerSnapshotStoreTest, ReplacePartition) {
  ASSERT_TRUE(store_->producer_snapshots().save({{"t", 0, 1, 0, 1, 1, 1}, {"t", 0, 2, 0, 1, 2, 1}, {"t", 1, 1, 0, 1, 1, 1}}).ok());
  ASSERT_TRUE(store_->producer_snapshots().replace_partition("t", 0, {{"t", 0, 3, 0, 5, 50, 2}}).ok());
  std::vector<ProducerSnapshot> got;
  ASSERT_TRUE(store_->producer_snapshots().load("t", 0, &got).ok());
  EXPECT_EQ(got, (std::vector<ProducerSnapshot>{{"t", 0, 3, 0, 5, 50, 2}}));
  ASSERT_TRUE(store_->producer_snapshots().load("t", 1, &got).ok());
  EXPECT_EQ(got.size(), 1u);

  Status s = store_->producer_snapshots().replace_partition("t", 0, {{"t", 1, 4, 0, 1, 1, 1}});
  EXPECT_TRUE(s.is_invalid_argument()) << s.to_string();
  ASSERT_TRUE(store_->producer_snapshots().load("t", 0, &got).ok());
  EXPECT_EQ(got, (std::vector<ProducerSnapshot>{{"t", 0, 3, 0, 5, 50, 2}}));
}

TEST_F(ProducerSnapshotStoreTest, RemovePartitionAndExpire) {
  ASSERT_TRUE(store_->producer_snapshots().save({{"t", 0, 1, 0, 1, 1, 100}, {"t", 0, 2, 0, 1, 2, 300}, {"t", 1, 1, 0, 1, 1, 100}}).ok());
  int64_t removed = -1;
  ASSERT_TRUE(store_->producer_snapshots().remove_older_than(200, &removed).ok());
  EXPECT_EQ(removed, 2);
  std::vector<ProducerSnapshot> got;
  ASSERT_TRUE(store_->producer_snapshots().load_all(&got).ok());
  EXPECT_EQ(got, (std::vector<ProducerSnapshot>{{"t", 0, 2, 0, 1, 2, 300}}));
  ASSERT_TRUE(store_->producer_snapshots().remove_partition("t", 0).ok());
  ASSERT_TRUE(store_->producer_snapshots().load_all(&got).ok());
  EXPECT_TRUE(got.empty());
}

}  // namespace
}  // namespace eddy::meta
