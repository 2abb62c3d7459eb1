#include "meta/forward_progress.h"

#include <gtest/gtest.h>

#include <thread>

#include "meta/meta_store.h"
#include "meta/schema.h"
#include "tests/unit/meta/meta_test_util.h"

namespace eddy::meta {
namespace {

class ForwardProgressTest : public ::testing::Test {
 protected:
  void SetUp() override { open(); }
  std::string path() const { return dir_.file("forward.db"); }
  void open() {
    progress_.reset();
    Status s = ForwardProgress::open(path(), &progress_);
    ASSERT_TRUE(s.ok()) << s.to_string();
  }
  eddy::testing::TempDir dir_;
  std::unique_ptr<ForwardProgress> progress_;
};

TEST_F(ForwardProgressTest, SaveLoadGetPersist) {
  ASSERT_TRUE(progress_->save("central", {{"t", 1, 100}, {"a", 0, 5}, {"t", 0, 0}}).ok());
  ASSERT_TRUE(progress_->save("backup", {{"t", 0, 7}}).ok());
  ASSERT_TRUE(progress_->save("central", {{"t", 1, 150}}).ok());
  open();
  std::vector<ForwardCursor> got;
  ASSERT_TRUE(progress_->load("central", &got).ok());
  EXPECT_EQ(got, (std::vector<ForwardCursor>{{"a", 0, 5}, {"t", 0, 0}, {"t", 1, 150}}));
  ForwardCursor one;
  ASSERT_TRUE(progress_->get("backup", "t", 0, &one).ok());
  EXPECT_EQ(one.next_offset, 7);
  Status s = progress_->get("backup", "t", 1, &one);
  EXPECT_TRUE(s.is_not_found()) << s.to_string();
  std::vector<std::string> links;
  ASSERT_TRUE(progress_->list_links(&links).ok());
  EXPECT_EQ(links, (std::vector<std::string>{"backup", "central"}));
}

TEST_F(ForwardProgressTest, KeepsTheCentralOffsetAfterTheLastAcknowledgement) {
  ForwardCursor c{"t", 0, 100, 7, 0, 100, 0};
  EXPECT_EQ(c.remote_next_offset, -1);
  c.remote_next_offset = 12345;
  ASSERT_TRUE(progress_->save("central", {c}).ok());
  open();
  ForwardCursor got;
  ASSERT_TRUE(progress_->get("central", "t", 0, &got).ok());
  EXPECT_EQ(got, c);
  c.remote_next_offset = -2;
  EXPECT_TRUE(progress_->save("central", {c}).is_invalid_argument());
}

TEST_F(ForwardProgressTest, AVersionOneDatabaseIsMigratedKeepingItsCursors) {
  ASSERT_TRUE(progress_->save("central", {{"t", 0, 100, 7, 0, 100, 3}}, nullptr).ok());
  ASSERT_TRUE(progress_->close().ok());
  progress_.reset();
  {
    // Back to version 1, as Eddy wrote it before the column existed.
    std::unique_ptr<Database> db;
    ASSERT_TRUE(Database::open(path(), &db).ok());
    ASSERT_TRUE(db->exec("CREATE TABLE old AS SELECT link, topic, partition, next_offset, producer_id, "
                         "producer_epoch, next_sequence, dropped_messages FROM forward_cursors;"
                         "DROP TABLE forward_cursors;"
                         "CREATE TABLE forward_cursors (link TEXT NOT NULL, topic TEXT NOT NULL, "
                         "partition INTEGER NOT NULL CHECK (partition >= 0), next_offset INTEGER NOT NULL, "
                         "producer_id INTEGER NOT NULL, producer_epoch INTEGER NOT NULL, "
                         "next_sequence INTEGER NOT NULL, dropped_messages INTEGER NOT NULL, "
                         "PRIMARY KEY (link, topic, partition)) WITHOUT ROWID;"
                         "INSERT INTO forward_cursors SELECT * FROM old; DROP TABLE old; PRAGMA user_version = 1;")
                    .ok());
    ASSERT_TRUE(db->close().ok());
  }
  open();
  ForwardCursor got;
  ASSERT_TRUE(progress_->get("central", "t", 0, &got).ok());
  EXPECT_EQ(got, (ForwardCursor{"t", 0, 100, 7, 0, 100, 3}));
  EXPECT_EQ(got.remote_next_offset, -1) << "not known until the next acknowledgement";
}

TEST_F(ForwardProgressTest, InvalidCursorRefusesTheBatch) {
  ASSERT_TRUE(progress_->save("l", {{"t", 0, 10}}).ok());
  EXPECT_TRUE(progress_->save("l", {{"t", 0, 20}, {"t", 1, -5}}).is_invalid_argument());
  EXPECT_TRUE(progress_->save("l", {{"t", -1, 20}}).is_invalid_argument());
  ForwardCursor bad_sequence{"t", 0, 20, 7, 0, -1, 0};
  EXPECT_TRUE(progress_->save("l", {bad_sequence}).is_invalid_argument());
  ForwardProducer bad_producer{-1, 0};
  EXPECT_TRUE(progress_->save("l", {{"t", 0, 30}}, &bad_producer).is_invalid_argument());
  ForwardCursor one;
  ASSERT_TRUE(progress_->get("l", "t", 0, &one).ok());
  EXPECT_EQ(one.next_offset, 10);
}

TEST_F(ForwardProgressTest, ProducerAndCursorsInOneTransaction) {
  ForwardProducer producer{4242, 3};
  ForwardCursor cursor{"sensors", 2, 1000, 4242, 3, 977, 15};
  ASSERT_TRUE(progress_->save("central", {cursor}, &producer).ok());
  open();
  ForwardProducer got_producer;
  ASSERT_TRUE(progress_->load_producer("central", &got_producer).ok());
  EXPECT_EQ(got_producer, producer);
  ForwardCursor got;
  ASSERT_TRUE(progress_->get("central", "sensors", 2, &got).ok());
  EXPECT_EQ(got, cursor);
  EXPECT_TRUE(progress_->load_producer("other", &got_producer).is_not_found());
  EXPECT_TRUE(progress_->save_producer("x", {-1, 0}).is_invalid_argument());
  ASSERT_TRUE(progress_->save_producer("only-producer", {1, 0}).ok());
  std::vector<std::string> links;
  ASSERT_TRUE(progress_->list_links(&links).ok());
  EXPECT_EQ(links, (std::vector<std::string>{"central", "only-producer"}));
}

TEST_F(ForwardProgressTest, RemoveLinkAndCursor) {
  ASSERT_TRUE(progress_->save("old", {{"t", 0, 10}}, nullptr).ok());
  ASSERT_TRUE(progress_->save_producer("old", {5, 0}).ok());
  ASSERT_TRUE(progress_->save("new", {{"t", 0, 3}, {"t", 1, 4}}).ok());
  ASSERT_TRUE(progress_->remove_link("old").ok());
  ASSERT_TRUE(progress_->remove_cursor("new", "t", 0).ok());
  std::vector<std::string> links;
  ASSERT_TRUE(progress_->list_links(&links).ok());
  EXPECT_EQ(links, std::vector<std::string>{"new"});
  ForwardProducer producer;
  EXPECT_TRUE(progress_->load_producer("old", &producer).is_not_found());
  std::vector<ForwardCursor> got;
  ASSERT_TRUE(progress_->load("new", &got).ok());
  EXPECT_EQ(got, (std::vector<ForwardCursor>{{"t", 1, 4}}));
}

TEST_F(ForwardProgressTest, ConcurrentSavesFromSeveralThreads) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([this, t] {
      for (int i = 1; i <= 50; ++i) {
        ASSERT_TRUE(progress_->save("link" + std::to_string(t), {{"t", 0, i}}).ok());
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) {
    ForwardCursor c;
    ASSERT_TRUE(progress_->get("link" + std::to_string(t), "t", 0, &c).ok());
    EXPECT_EQ(c.next_offset, 50);
  }
}

TEST_F(ForwardProgressTest, MetadataDatabaseIsRefusedAndLeftUntouched) {
  // eddy.db where forward.db is expected (a misplaced file): refused, and
  // the other way round.
  const std::string meta_path = dir_.file("eddy.db");
  std::unique_ptr<MetaStore> store = testing::open_or_die(meta_path);
  ASSERT_TRUE(store->close().ok());
  const std::string before = testing::read_bytes(meta_path);
  std::unique_ptr<ForwardProgress> misplaced;
  Status s = ForwardProgress::open(meta_path, &misplaced);
  EXPECT_TRUE(s.is_corruption()) << s.to_string();
  EXPECT_NE(s.message().find("not an Eddy forward progress database"), std::string::npos) << s.message();
  EXPECT_EQ(testing::read_bytes(meta_path), before);
  progress_.reset();
  std::unique_ptr<MetaStore> wrong;
  s = MetaStore::open(path(), &wrong);
  EXPECT_TRUE(s.is_corruption()) << s.to_string();
  EXPECT_NE(s.message().find("not an Eddy metadata database"), std::string::npos) << s.message();
}

TEST_F(ForwardProgressTest, SecondOpenIsRefusedWhileInUse) {
  std::unique_ptr<ForwardProgress> second;
  Status s = ForwardProgress::open(path(), &second);
  EXPECT_FALSE(s.ok());
}

}  // namespace
}  // namespace eddy::meta
