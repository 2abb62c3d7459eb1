// Producer ids: strictly increasing on one database, across clean restarts
// and across crashes.
#include "meta/producer_id_allocator.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "tests/unit/meta/meta_test_util.h"

namespace eddy::meta {
namespace {

using testing::open_or_die;

MetaStore::Options block_of(int32_t size) {
  MetaStore::Options options;
  options.producer_id_block_size = size;
  return options;
}

int64_t next_id(MetaStore* store) {
  int64_t id = -1;
  Status s = store->producer_ids().next(&id);
  EXPECT_TRUE(s.ok()) << s.to_string();
  return id;
}

TEST(ProducerIds, StrictlyIncreasingAcrossBlocks) {
  eddy::testing::TempDir dir;
  auto store = open_or_die(dir.file("eddy.db"), block_of(3));
  int64_t last = -1;
  for (int i = 0; i < 20; ++i) {
    int64_t id = next_id(store.get());
    EXPECT_EQ(id, last + 1);  // within a run nothing is skipped
    last = id;
  }
}

TEST(ProducerIds, CleanRestartSkipsTheRestOfTheBlock) {
  eddy::testing::TempDir dir;
  const std::string path = dir.file("eddy.db");
  int64_t last = -1;
  for (int run = 0; run < 4; ++run) {
    auto store = open_or_die(path, block_of(10));
    for (int i = 0; i < 4; ++i) {
      int64_t id = next_id(store.get());
      EXPECT_GT(id, last);
      last = id;
    }
    ASSERT_TRUE(store->close().ok());
  }
  EXPECT_EQ(last, 33);  // runs start at 0, 10, 20, 30
}

TEST(ProducerIds, BlockSizeMayChangeBetweenRuns) {
  eddy::testing::TempDir dir;
  const std::string path = dir.file("eddy.db");
  int64_t last = -1;
  for (int32_t size : {1000, 1, 7, 1000}) {
    auto store = open_or_die(path, block_of(size));
    for (int i = 0; i < 3; ++i) {
      int64_t id = next_id(store.get());
      EXPECT_GT(id, last);
      last = id;
    }
  }
}

// A crash image: the files copied while the store is open (no close, no
// checkpoint), then opened as a fresh process would after power loss.
TEST(ProducerIds, IncreasingAfterCrashImage) {
  eddy::testing::TempDir dir;
  const std::string path = dir.file("eddy.db");
  auto store = open_or_die(path, block_of(10));
  int64_t last = -1;
  for (int i = 0; i < 13; ++i) last = next_id(store.get());  // blocks [0,10) and [10,20) reserved
  EXPECT_EQ(last, 12);
  const std::string copy = dir.file("crashed.db");
  std::filesystem::copy_file(path, copy);
  if (port::path_exists(path + "-wal")) std::filesystem::copy_file(path + "-wal", copy + "-wal");

  auto recovered = open_or_die(copy, block_of(10));
  int64_t after = next_id(recovered.get());
  EXPECT_EQ(after, 20);  // the rest of [10,20) is skipped, never reused
  EXPECT_GT(next_id(recovered.get()), after);
}

// A real crash: a child process allocates ids and exits without closing
// anything; the parent then reopens the database. (The parent's connection
// is closed before the fork: SQLite connections must not cross a fork.)
TEST(ProducerIdsDeathTest, IncreasingAfterProcessDiesWithoutClose) {
  // "fast" (fork, no re-exec): the child writes the parent's database.
  GTEST_FLAG_SET(death_test_style, "fast");
  eddy::testing::TempDir dir;
  const std::string path = dir.file("eddy.db");
  int64_t before = -1;
  {
    auto store = open_or_die(path, block_of(10));
    before = next_id(store.get());
    EXPECT_EQ(before, 0);
  }
  EXPECT_EXIT(
      {
        std::unique_ptr<MetaStore> store;
        if (!MetaStore::open(path, block_of(10), &store).ok()) std::_Exit(2);
        int64_t id = -1;
        for (int i = 0; i < 15; ++i) {  // ids 10..24: blocks [10,20) and [20,30)
          if (!store->producer_ids().next(&id).ok()) std::_Exit(3);
        }
        std::_Exit(id == 24 ? 0 : 4);  // no destructor, no sqlite3_close
      },
      ::testing::ExitedWithCode(0), "");
  auto store = open_or_die(path, block_of(10));
  EXPECT_EQ(next_id(store.get()), 30);
}

}  // namespace
}  // namespace eddy::meta
