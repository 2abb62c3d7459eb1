#include "storage/log_manager.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "storage_test_util.h"

namespace eddy::storage {
namespace {

using testing::TempDir;

AppendResult append_records(PartitionLog* log, int records) {
  std::vector<uint8_t> batch = testing::batch_for_offsets(log->log_end_offset(), records, 20, 60);
  AppendResult result;
  EXPECT_EQ(log->append(batch, {}, &result).code(), Status::Code::kOk);
  return result;
}

TEST(LogManagerTest, PartitionsLiveInTopicDashPartitionDirectories) {
  TempDir dir;
  std::unique_ptr<LogManager> manager;
  ASSERT_EQ(LogManager::open(dir.file("data"), &manager).code(), Status::Code::kOk);
  PartitionLog* a0 = nullptr;
  PartitionLog* a1 = nullptr;
  PartitionLog* b7 = nullptr;
  ASSERT_EQ(manager->open_partition({"sensors", 0}, testing::small_config(), &a0).code(), Status::Code::kOk);
  ASSERT_EQ(manager->open_partition({"sensors", 1}, testing::small_config(), &a1).code(), Status::Code::kOk);
  ASSERT_EQ(manager->open_partition({"my-topic-2", 7}, testing::small_config(), &b7).code(), Status::Code::kOk);
  EXPECT_TRUE(std::filesystem::is_directory(dir.file("data/sensors-0")));
  EXPECT_TRUE(std::filesystem::is_directory(dir.file("data/sensors-1")));
  EXPECT_TRUE(std::filesystem::is_directory(dir.file("data/my-topic-2-7")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("data/sensors-0/00000000000000000000.log")));
  EXPECT_EQ(manager->find({"sensors", 1}), a1);
  EXPECT_EQ(manager->find({"sensors", 2}), nullptr);
  PartitionLog* again = nullptr;
  ASSERT_EQ(manager->open_partition({"sensors", 0}, testing::small_config(), &again).code(), Status::Code::kOk);
  EXPECT_EQ(again, a0);

  std::vector<TopicPartition> on_disk = manager->partitions_on_disk();
  ASSERT_EQ(on_disk.size(), 3u);
  EXPECT_EQ(on_disk[0], (TopicPartition{"my-topic-2", 7}));
  EXPECT_EQ(on_disk[1], (TopicPartition{"sensors", 0}));

  PartitionLog* bad = nullptr;
  EXPECT_EQ(manager->open_partition({"", 0}, testing::small_config(), &bad).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(manager->open_partition({"a/b", 0}, testing::small_config(), &bad).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(manager->open_partition({"..", 0}, testing::small_config(), &bad).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(manager->open_partition({"t", -1}, testing::small_config(), &bad).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(manager->open_partition({std::string(250, 'x'), 0}, testing::small_config(), &bad).code(),
            Status::Code::kInvalidArgument);
}

TEST(LogManagerTest, TheDataDirectoryIsLockedAgainstASecondOpener) {
  TempDir dir;
  std::unique_ptr<LogManager> first;
  ASSERT_EQ(LogManager::open(dir.path(), &first).code(), Status::Code::kOk);
  std::unique_ptr<LogManager> second;
  EXPECT_EQ(LogManager::open(dir.path(), &second).code(), Status::Code::kLocked);
  ASSERT_EQ(first->close().code(), Status::Code::kOk);
  EXPECT_EQ(LogManager::open(dir.path(), &second).code(), Status::Code::kOk);
}

TEST(LogManagerTest, CleanCloseAndReopenKeepsEveryPartition) {
  TempDir dir;
  {
    std::unique_ptr<LogManager> manager;
    ASSERT_EQ(LogManager::open(dir.path(), &manager).code(), Status::Code::kOk);
    for (int p = 0; p < 3; ++p) {
      PartitionLog* log = nullptr;
      ASSERT_EQ(manager->open_partition({"t", p}, testing::small_config(), &log).code(), Status::Code::kOk);
      for (int i = 0; i < 10 * (p + 1); ++i) append_records(log, 2);
    }
    ASSERT_EQ(manager->close().code(), Status::Code::kOk);
  }
  std::unique_ptr<LogManager> manager;
  ASSERT_EQ(LogManager::open(dir.path(), &manager).code(), Status::Code::kOk);
  std::vector<TopicPartition> on_disk = manager->partitions_on_disk();
  ASSERT_EQ(on_disk.size(), 3u);
  for (const TopicPartition& tp : on_disk) {
    PartitionLog* log = nullptr;
    ASSERT_EQ(manager->open_partition(tp, testing::small_config(), &log).code(), Status::Code::kOk);
    EXPECT_TRUE(log->recovery_stats().clean);
    EXPECT_EQ(log->recovery_stats().bytes_scanned, 0u);
    EXPECT_EQ(log->log_end_offset(), 20 * (tp.partition + 1));
  }
}

TEST(LogManagerTest, DeletingATopicRemovesItsPartitionsOnly) {
  TempDir dir;
  std::unique_ptr<LogManager> manager;
  ASSERT_EQ(LogManager::open(dir.path(), &manager).code(), Status::Code::kOk);
  PartitionLog* log = nullptr;
  ASSERT_EQ(manager->open_partition({"doomed", 0}, testing::small_config(), &log).code(), Status::Code::kOk);
  append_records(log, 3);
  ASSERT_EQ(manager->open_partition({"kept", 0}, testing::small_config(), &log).code(), Status::Code::kOk);
  append_records(log, 3);
  // A partition of the topic that exists on disk but was not opened.
  std::filesystem::create_directories(dir.file("doomed-1"));
  // A deletion interrupted by a crash in an earlier run.
  std::filesystem::create_directories(dir.file("old-0.deleting"));

  ASSERT_EQ(manager->delete_topic("doomed").code(), Status::Code::kOk);
  EXPECT_EQ(manager->find({"doomed", 0}), nullptr);
  EXPECT_FALSE(std::filesystem::exists(dir.file("doomed-0")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("doomed-1")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("kept-0")));
  EXPECT_NE(manager->find({"kept", 0}), nullptr);
  ASSERT_EQ(manager->close().code(), Status::Code::kOk);

  ASSERT_EQ(LogManager::open(dir.path(), &manager).code(), Status::Code::kOk);
  EXPECT_FALSE(std::filesystem::exists(dir.file("old-0.deleting")));
  EXPECT_EQ(manager->partitions_on_disk().size(), 1u);
}

TEST(LogManagerTest, RetentionRunsOverEveryOpenPartition) {
  TempDir dir;
  std::unique_ptr<LogManager> manager;
  ASSERT_EQ(LogManager::open(dir.path(), &manager).code(), Status::Code::kOk);
  LogConfig config = testing::small_config(4096);
  config.retention_ms = 1000;
  for (int p = 0; p < 2; ++p) {
    PartitionLog* log = nullptr;
    ASSERT_EQ(manager->open_partition({"t", p}, config, &log).code(), Status::Code::kOk);
    for (int i = 0; i < 100; ++i) append_records(log, 2);  // timestamps ~1000
    ASSERT_GT(log->segments().size(), 2u);
  }
  EXPECT_GT(manager->apply_retention(1000000), 2u);
  for (int p = 0; p < 2; ++p) {
    PartitionLog* log = manager->find({"t", p});
    EXPECT_EQ(log->log_start_offset(), log->segments().back().base_offset);
  }
}

TEST(LogManagerTest, PartitionDirectoryNames) {
  TopicPartition tp;
  ASSERT_TRUE(parse_partition_directory_name("a-b-c-12", &tp));
  EXPECT_EQ(tp.topic, "a-b-c");
  EXPECT_EQ(tp.partition, 12);
  EXPECT_EQ(partition_directory_name(tp), "a-b-c-12");
  EXPECT_FALSE(parse_partition_directory_name("nodash", &tp));
  EXPECT_FALSE(parse_partition_directory_name("-1", &tp));
  EXPECT_FALSE(parse_partition_directory_name("t-", &tp));
  EXPECT_FALSE(parse_partition_directory_name("t-1x", &tp));
  EXPECT_FALSE(parse_partition_directory_name("t-0.deleting", &tp));
  EXPECT_FALSE(parse_partition_directory_name("t-12345678901", &tp));
}

}  // namespace
}  // namespace eddy::storage
