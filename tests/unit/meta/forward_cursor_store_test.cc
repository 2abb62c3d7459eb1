#include "meta/forward_cursor_store.h"

#include <gtest/gtest.h>

#include "tests/unit/meta/meta_test_util.h"

namespace eddy::meta {
namespace {

using ForwardCursorStoreTest = testing::MetaStoreTest;

TEST_F(ForwardCursorStoreTest, SaveLoadGetPersist) {
  ASSERT_TRUE(store_->forward_cursors().save("central", {{"t", 1, 100}, {"a", 0, 5}, {"t", 0, 0}}).ok());
  ASSERT_TRUE(store_->forward_cursors().save("backup", {{"t", 0, 7}}).ok());
  ASSERT_TRUE(store_->forward_cursors().save("central", {{"t", 1, 150}}).ok());
  reopen();
  std::vector<ForwardCursor> got;
  ASSERT_TRUE(store_->forward_cursors().load("central", &got).ok());
  EXPECT_EQ(got, (std::vector<ForwardCursor>{{"a", 0, 5}, {"t", 0, 0}, {"t", 1, 150}}));
  ForwardCursor one;
  ASSERT_TRUE(store_->forward_cursors().get("backup", "t", 0, &one).ok());
  EXPECT_EQ(one.next_offset, 7);
  Status s = store_->forward_cursors().get("backup", "t", 1, &one);
  EXPECT_TRUE(s.is_not_found()) << s.to_string();
  std::vector<std::string> links;
  ASSERT_TRUE(store_->forward_cursors().list_links(&links).ok());
  EXPECT_EQ(links, (std::vector<std::string>{"backup", "central"}));
}

TEST_F(ForwardCursorStoreTest, InvalidCursorRefusesTheBatch) {
  ASSERT_TRUE(store_->forward_cursors().save("l", {{"t", 0, 10}}).ok());
  EXPECT_TRUE(store_->forward_cursors().save("l", {{"t", 0, 20}, {"t", 1, -5}}).is_invalid_argument());
  EXPECT_TRUE(store_->forward_cursors().save("l", {{"t", -1, 20}}).is_invalid_argument());
  ForwardCursor bad_sequence{"t", 0, 20, 7, 0, -1, 0};
  EXPECT_TRUE(store_->forward_cursors().save("l", {bad_sequence}).is_invalid_argument());
  ForwardCursor one;
  ASSERT_TRUE(store_->forward_cursors().get("l", "t", 0, &one).ok());
  EXPECT_EQ(one.next_offset, 10);
}

TEST_F(ForwardCursorStoreTest, ProducerAndSequencesSurviveReopen) {
  ForwardProducer producer{4242, 3};
  ASSERT_TRUE(store_->forward_cursors().save_producer("central", producer).ok());
  ForwardCursor cursor{"sensors", 2, 1000, 4242, 3, 977, 15};
  ASSERT_TRUE(store_->forward_cursors().save("central", {cursor}).ok());
  reopen();
  ForwardProducer got_producer;
  ASSERT_TRUE(store_->forward_cursors().load_producer("central", &got_producer).ok());
  EXPECT_EQ(got_producer, producer);
  ForwardCursor got;
  ASSERT_TRUE(store_->forward_cursors().get("central", "sensors", 2, &got).ok());
  EXPECT_EQ(got, cursor);
  EXPECT_TRUE(store_->forward_cursors().load_producer("other", &got_producer).is_not_found());
  EXPECT_TRUE(store_->forward_cursors().save_producer("x", {-1, 0}).is_invalid_argument());
  // A producer alone makes a link known; remove_link forgets both.
  ASSERT_TRUE(store_->forward_cursors().save_producer("only-producer", {1, 0}).ok());
  std::vector<std::string> links;
  ASSERT_TRUE(store_->forward_cursors().list_links(&links).ok());
  EXPECT_EQ(links, (std::vector<std::string>{"central", "only-producer"}));
  ASSERT_TRUE(store_->forward_cursors().remove_link("central").ok());
  EXPECT_TRUE(store_->forward_cursors().load_producer("central", &got_producer).is_not_found());
}

TEST_F(ForwardCursorStoreTest, RemoveLink) {
  ASSERT_TRUE(store_->forward_cursors().save("old", {{"t", 0, 10}}).ok());
  ASSERT_TRUE(store_->forward_cursors().save("new", {{"t", 0, 3}}).ok());
  ASSERT_TRUE(store_->forward_cursors().remove_link("old").ok());
  std::vector<std::string> links;
  ASSERT_TRUE(store_->forward_cursors().list_links(&links).ok());
  EXPECT_EQ(links, std::vector<std::string>{"new"});
  std::vector<ForwardCursor> got;
  ASSERT_TRUE(store_->forward_cursors().load("old", &got).ok());
  EXPECT_TRUE(got.empty());
}

}  // namespace
}  // namespace eddy::meta
