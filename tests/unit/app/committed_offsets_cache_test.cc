// CommittedOffsetsCache on a real meta store in a temp dir: the copy is
// served while eddy.db is unchanged and read again after any write that
// changes committed offsets (commit, transactional completion, delete).
#include "app/committed_offsets_cache.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "meta/meta_store.h"
#include "tests/unit/port/test_dir.h"

namespace eddy::app {
namespace {

meta::CommittedOffset offset(const std::string& topic, int32_t partition, int64_t value) {
  meta::CommittedOffset c;
  c.topic = topic;
  c.partition = partition;
  c.offset = value;
  return c;
}

class CommittedOffsetsCacheTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(meta::MetaStore::open(dir_.file("eddy.db"), &meta_).ok()); }

  // "group topic/partition=offset" per row, in the order read() gives.
  std::vector<std::string> rows() {
    const std::vector<GroupCommittedOffset>* out = nullptr;
    Status s = cache_.read(*meta_, &out);
    EXPECT_TRUE(s.ok()) << s.message();
    std::vector<std::string> text;
    for (const GroupCommittedOffset& r : *out) {
      text.push_back(r.group + " " + r.topic + "/" + std::to_string(r.partition) + "=" + std::to_string(r.offset));
    }
    return text;
  }

  void commit(const std::string& group, const std::vector<meta::CommittedOffset>& offsets) {
    ASSERT_TRUE(meta_->offsets().commit(group, offsets).ok());
  }

  eddy::testing::TempDir dir_;
  std::unique_ptr<meta::MetaStore> meta_;
  CommittedOffsetsCache cache_;
};

TEST_F(CommittedOffsetsCacheTest, ServesItsCopyWhileNothingIsWritten) {
  commit("b", {offset("t", 1, 7), offset("t", 0, 5)});
  commit("a", {offset("t", 0, 3)});
  const std::vector<std::string> want = {"a t/0=3", "b t/0=5", "b t/1=7"};
  EXPECT_EQ(rows(), want);
  EXPECT_EQ(rows(), want);
  EXPECT_EQ(rows(), want);
  EXPECT_EQ(cache_.store_reads(), 1);
}

TEST_F(CommittedOffsetsCacheTest, ReadsAgainAfterACommit) {
  commit("a", {offset("t", 0, 3)});
  EXPECT_EQ(rows(), std::vector<std::string>{"a t/0=3"});
  commit("a", {offset("t", 0, 9)});
  EXPECT_EQ(rows(), std::vector<std::string>{"a t/0=9"});
  commit("a", {offset("t", 0, 9)});  // the same offset again is still a write
  EXPECT_EQ(rows(), std::vector<std::string>{"a t/0=9"});
  EXPECT_EQ(cache_.store_reads(), 3);
}

TEST_F(CommittedOffsetsCacheTest, ReadsAgainAfterATransactionCommitsItsOffsets) {
  EXPECT_TRUE(rows().empty());
  ASSERT_TRUE(meta_->pending_offsets().stage("g", 42, {offset("t", 2, 11)}).ok());
  EXPECT_TRUE(rows().empty()) << "staged offsets are not committed ones";
  ASSERT_TRUE(meta_->pending_offsets().complete("g", 42, true).ok());
  EXPECT_EQ(rows(), std::vector<std::string>{"g t/2=11"});
}

TEST_F(CommittedOffsetsCacheTest, ReadsAgainAfterOffsetsOrGroupsAreDeleted) {
  commit("a", {offset("t", 0, 3), offset("t", 1, 4)});
  commit("b", {offset("u", 0, 1)});
  EXPECT_EQ(rows().size(), 3u);
  ASSERT_TRUE(meta_->offsets().remove("a", {meta::TopicPartition{"t", 1}}).ok());
  EXPECT_EQ(rows(), (std::vector<std::string>{"a t/0=3", "b u/0=1"}));
  ASSERT_TRUE(meta_->offsets().remove_group("b").ok());
  EXPECT_EQ(rows(), std::vector<std::string>{"a t/0=3"});
}

TEST_F(CommittedOffsetsCacheTest, AWriteToAnotherTableCostsOneReadAndChangesNothing) {
  commit("a", {offset("t", 0, 3)});
  EXPECT_EQ(rows(), std::vector<std::string>{"a t/0=3"});
  meta::NewTopic topic;
  topic.name = "t";
  meta::TopicRecord created;
  ASSERT_TRUE(meta_->topics().create(topic, &created).ok());
  EXPECT_EQ(rows(), std::vector<std::string>{"a t/0=3"});
  EXPECT_EQ(rows(), std::vector<std::string>{"a t/0=3"});
  EXPECT_EQ(cache_.store_reads(), 2);
}

}  // namespace
}  // namespace eddy::app
