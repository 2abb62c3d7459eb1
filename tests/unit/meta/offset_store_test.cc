#include "meta/offset_store.h"

#include <gtest/gtest.h>

#include "tests/unit/meta/meta_test_util.h"

namespace eddy::meta {
namespace {

using OffsetStoreTest = testing::MetaStoreTest;

TEST_F(OffsetStoreTest, CommitAndFetchAll) {
  std::vector<CommittedOffset> batch = {
      {"sensors", 1, 100, 4, "meta-1", 1000},
      {"alarms", 0, 7, -1, "", 1001},
      {"sensors", 0, 50, 4, "", 1002},
  };
  ASSERT_TRUE(store_->offsets().commit("g1", batch).ok());
  std::vector<CommittedOffset> got;
  ASSERT_TRUE(store_->offsets().fetch_all("g1", &got).ok());
  std::vector<CommittedOffset> sorted = {batch[1], batch[2], batch[0]};
  EXPECT_EQ(got, sorted);

  ASSERT_TRUE(store_->offsets().fetch_all("other-group", &got).ok());
  EXPECT_TRUE(got.empty());
}

TEST_F(OffsetStoreTest, LaterCommitReplaces) {
  ASSERT_TRUE(store_->offsets().commit("g", {{"t", 0, 10, 1, "a", 1}}).ok());
  ASSERT_TRUE(store_->offsets().commit("g", {{"t", 0, 20, 2, "b", 2}, {"t", 1, 5, 2, "", 2}}).ok());
  std::vector<CommittedOffset> got;
  ASSERT_TRUE(store_->offsets().fetch_all("g", &got).ok());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], (CommittedOffset{"t", 0, 20, 2, "b", 2}));
  EXPECT_EQ(got[1], (CommittedOffset{"t", 1, 5, 2, "", 2}));
}

TEST_F(OffsetStoreTest, FetchGivenPartitionsInRequestOrder) {
  ASSERT_TRUE(store_->offsets().commit("g", {{"t", 0, 10, 1, "", 1}, {"t", 2, 30, 1, "", 1}, {"u", 0, 5, 1, "", 1}}).ok());
  std::vector<CommittedOffset> got;
  ASSERT_TRUE(store_->offsets().fetch("g", {{"u", 0}, {"t", 1}, {"t", 2}, {"missing", 0}}, &got).ok());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].topic, "u");
  EXPECT_EQ(got[0].offset, 5);
  EXPECT_EQ(got[1].topic, "t");
  EXPECT_EQ(got[1].partition, 2);
  EXPECT_EQ(got[1].offset, 30);
  ASSERT_TRUE(store_->offsets().fetch("other", {{"t", 0}}, &got).ok());
  EXPECT_TRUE(got.empty());
}

TEST_F(OffsetStoreTest, BatchIsAllOrNothing) {
  ASSERT_TRUE(store_->offsets().commit("g", {{"t", 0, 10, 1, "", 1}}).ok());
  // The negative partition violates a CHECK: the whole batch is refused.
  Status s = store_->offsets().commit("g", {{"t", 0, 99, 1, "", 2}, {"t", -1, 5, 1, "", 2}});
  EXPECT_TRUE(s.is_invalid_argument()) << s.to_string();
  EXPECT_NE(s.message().find(path()), std::string::npos) << s.message();
  std::vector<CommittedOffset> got;
  ASSERT_TRUE(store_->offsets().fetch_all("g", &got).ok());
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].offset, 10);
}

TEST_F(OffsetStoreTest, ReopenPersists) {
  ASSERT_TRUE(store_->offsets().commit("g", {{"t", 3, 123456789012, 9, "x", 77}}).ok());
  reopen();
  std::vector<CommittedOffset> got;
  ASSERT_TRUE(store_->offsets().fetch_all("g", &got).ok());
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], (CommittedOffset{"t", 3, 123456789012, 9, "x", 77}));
}

TEST_F(OffsetStoreTest, ListAndRemove) {
  ASSERT_TRUE(store_->offsets().commit("b", {{"t", 0, 1, -1, "", 1}, {"t", 1, 1, -1, "", 1}, {"u", 0, 1, -1, "", 1}}).ok());
  ASSERT_TRUE(store_->offsets().commit("a", {{"t", 0, 1, -1, "", 1}}).ok());
  ASSERT_TRUE(store_->offsets().commit("c", {{"t", 0, 1, -1, "", 1}}).ok());
  std::vector<std::string> groups;
  ASSERT_TRUE(store_->offsets().list_groups(&groups).ok());
  EXPECT_EQ(groups, (std::vector<std::string>{"a", "b", "c"}));

  int64_t removed = -1;
  ASSERT_TRUE(store_->offsets().remove("b", {{"t", 1}, {"u", 0}, {"nothing", 0}}, &removed).ok());
  EXPECT_EQ(removed, 2);
  std::vector<CommittedOffset> got;
  ASSERT_TRUE(store_->offsets().fetch_all("b", &got).ok());
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].partition, 0);

  ASSERT_TRUE(store_->offsets().remove_group("a", &removed).ok());
  EXPECT_EQ(removed, 1);
  ASSERT_TRUE(store_->offsets().remove_group("a", &removed).ok());
  EXPECT_EQ(removed, 0);
  ASSERT_TRUE(store_->offsets().list_groups(&groups).ok());
  EXPECT_EQ(groups, (std::vector<std::string>{"b", "c"}));
}

TEST_F(OffsetStoreTest, ExpireOnlyOldOffsetsOfGivenGroups) {
  ASSERT_TRUE(store_->offsets().commit("empty", {{"t", 0, 1, -1, "", 100}, {"t", 1, 1, -1, "", 200}, {"t", 2, 1, -1, "", 300}}).ok());
  ASSERT_TRUE(store_->offsets().commit("active", {{"t", 0, 1, -1, "", 100}}).ok());
  std::vector<GroupTopicPartition> expired;
  ASSERT_TRUE(store_->offsets().expire({"empty", "unknown"}, 300, &expired).ok());
  EXPECT_EQ(expired, (std::vector<GroupTopicPartition>{{"empty", {"t", 0}}, {"empty", {"t", 1}}}));

  std::vector<CommittedOffset> got;
  ASSERT_TRUE(store_->offsets().fetch_all("empty", &got).ok());
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].partition, 2);
  ASSERT_TRUE(store_->offsets().fetch_all("active", &got).ok());
  EXPECT_EQ(got.size(), 1u);

  ASSERT_TRUE(store_->offsets().expire({"empty"}, 1000).ok());
  std::vector<std::string> groups;
  ASSERT_TRUE(store_->offsets().list_groups(&groups).ok());
  EXPECT_EQ(groups, (std::vector<std::string>{"active"}));
}

TEST_F(OffsetStoreTest, TextIsStoredExactly) {
  // Group ids and metadata come from clients: any bytes, including NUL and non-ASCII.
  const std::string group("g\0\xff", 3);
  const std::string metadata("m\0\n\xc3\xa9", 5);
  ASSERT_TRUE(store_->offsets().commit(group, {{"t", 0, 1, -1, metadata, 1}}).ok());
  std::vector<CommittedOffset> got;
  ASSERT_TRUE(store_->offsets().fetch_all(group, &got).ok());
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].metadata, metadata);
  std::vector<std::string> groups;
  ASSERT_TRUE(store_->offsets().list_groups(&groups).ok());
  EXPECT_EQ(groups, std::vector<std::string>{group});
  ASSERT_TRUE(store_->offsets().fetch_all(std::string("g"), &got).ok());
  EXPECT_TRUE(got.empty());
}

}  // namespace
}  // namespace eddy::meta
