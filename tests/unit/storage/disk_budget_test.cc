#include "storage/disk_budget.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "port/port.h"
#include "storage/log_manager.h"
#include "storage/segment.h"
#include "storage_test_util.h"

namespace eddy::storage {
namespace {

using testing::TempDir;

constexpr uint64_t kMiB = uint64_t{1} << 20;

LogConfig config_of(uint64_t segment_bytes, int64_t retention_bytes, uint32_t interval = 4096) {
  LogConfig c;
  c.segment_bytes = segment_bytes;
  c.retention_bytes = retention_bytes;
  c.index_interval_bytes = interval;
  return c;
}

// ---------------------------------------------------------------------------
// Arithmetic
// ---------------------------------------------------------------------------

TEST(DiskBudgetArithmetic, FilesAreCountedInWholeBlocks) {
  EXPECT_EQ(round_up_to_blocks(0), 0u);
  EXPECT_EQ(round_up_to_blocks(1), 4096u);
  EXPECT_EQ(round_up_to_blocks(4096), 4096u);
  EXPECT_EQ(round_up_to_blocks(4097), 8192u);
  EXPECT_EQ(partition_overhead_bytes(), 3u * 4096);
}

TEST(DiskBudgetArithmetic, IndexFileBoundOfASixteenMiBSegment) {
  // 4096 entries (one per 4 KiB), 512 time samples, 56-byte header, CRC.
  EXPECT_EQ(index_file_bound_bytes(16 * kMiB, 4096), 56u + 4096 * 8 + 512 * 8 + 4);
  EXPECT_EQ(segment_footprint_bytes(16 * kMiB, 4096), 16 * kMiB + 40960);
  // An interval below the smallest batch (61 bytes) cannot add more entries
  // than there are batches.
  EXPECT_EQ(index_file_bound_bytes(61 * 100, 1), 56u + 100 * 8 + 13 * 8 + 4);
}

TEST(DiskBudgetArithmetic, ReservationIsTheRingOrTwoSegmentsWhenUnbounded) {
  // retention.bytes 64 MiB in 16 MiB segments: a ring of 4.
  EXPECT_EQ(reserved_segments(config_of(16 * kMiB, 64 * kMiB)), 4u);
  // Rounded up, and never below 2.
  EXPECT_EQ(reserved_segments(config_of(16 * kMiB, 64 * kMiB + 1)), 5u);
  EXPECT_EQ(reserved_segments(config_of(16 * kMiB, 1)), 2u);
  // retention.bytes = -1: the minimum ring; growth comes from the budget.
  EXPECT_EQ(reserved_segments(config_of(16 * kMiB, kNoLimit)), 2u);
  EXPECT_EQ(partition_reservation_bytes(config_of(16 * kMiB, 64 * kMiB)),
            4 * segment_footprint_bytes(16 * kMiB, 4096) + partition_overhead_bytes());
  EXPECT_EQ(partition_reservation_bytes(config_of(16 * kMiB, kNoLimit)),
            2 * segment_footprint_bytes(16 * kMiB, 4096) + partition_overhead_bytes());
}

TEST(DiskBudgetArithmetic, TheBuiltInSegmentSizeIsGatewaySized) {
  EXPECT_EQ(LogConfig{}.segment_bytes, 16 * kMiB);
  EXPECT_EQ(reserved_segments(LogConfig{}), 2u);  // retention.bytes defaults to -1
}

TEST(DiskBudgetArithmetic, DefaultIsHalfTheFilesystemAtMostWhatIsFreePlusOwnData) {
  DataDirectorySpace space;
  space.filesystem_bytes = 100 * kMiB;
  space.available_bytes = 80 * kMiB;
  space.directory_bytes = 0;
  EXPECT_EQ(default_budget_bytes(space), 50 * kMiB);
  space.available_bytes = 30 * kMiB;  // the disk is mostly taken by others
  EXPECT_EQ(default_budget_bytes(space), 30 * kMiB);
  space.directory_bytes = 10 * kMiB;  // what Eddy already holds counts as its own
  EXPECT_EQ(default_budget_bytes(space), 40 * kMiB);
  space.directory_bytes = 40 * kMiB;
  EXPECT_EQ(default_budget_bytes(space), 50 * kMiB);
}

TEST(DiskBudgetArithmetic, MeasuresTheDataDirectory) {
  TempDir dir;
  DataDirectorySpace space;
  ASSERT_EQ(measure_data_directory(dir.path(), &space).code(), Status::Code::kOk);
  EXPECT_GT(space.filesystem_bytes, 0u);
  EXPECT_LE(space.available_bytes, space.filesystem_bytes);
  EXPECT_EQ(measure_data_directory(dir.file("missing"), &space).code(), Status::Code::kIOError);
}

TEST(DiskBudgetArithmetic, HumanBytes) {
  EXPECT_EQ(human_bytes(512), "512 B");
  EXPECT_EQ(human_bytes(16 * kMiB), "16 MiB");
  EXPECT_EQ(human_bytes(16 * kMiB + 40960), "16.0 MiB");
  EXPECT_EQ(human_bytes(3 * kMiB / 2), "1.5 MiB");
  EXPECT_EQ(human_bytes(uint64_t{4} << 30), "4 GiB");
}

TEST(DiskBudget, UsedCountsTheReserveAndEveryCharge) {
  DiskBudget budget(100 * kMiB);
  EXPECT_EQ(budget.used_bytes(), kOtherFilesReserveBytes);
  EXPECT_EQ(budget.free_bytes(), 100 * kMiB - kOtherFilesReserveBytes);
  budget.recharge(0, 30 * kMiB);
  budget.recharge(0, 20 * kMiB);
  EXPECT_EQ(budget.used_bytes(), kOtherFilesReserveBytes + 50 * kMiB);
  EXPECT_TRUE(budget.has_room(100 * kMiB - kOtherFilesReserveBytes - 50 * kMiB));
  EXPECT_FALSE(budget.has_room(100 * kMiB - kOtherFilesReserveBytes - 50 * kMiB + 1));
  budget.recharge(30 * kMiB, 10 * kMiB);
  EXPECT_EQ(budget.used_bytes(), kOtherFilesReserveBytes + 30 * kMiB);
  // A limit below what is promised: nothing free, never negative.
  budget.set_limit(20 * kMiB);
  EXPECT_EQ(budget.free_bytes(), 0u);
  EXPECT_FALSE(budget.has_room(1));
  EXPECT_TRUE(budget.has_room(0));
  EXPECT_EQ(DiskBudget().limit_bytes(), kUnlimitedBudget);
}

// ---------------------------------------------------------------------------
// Partitions charged to a budget
// ---------------------------------------------------------------------------

class BudgetedLogsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    ASSERT_EQ(LogManager::open(dir_.file("data"), &logs_).code(), Status::Code::kOk);
  }

  PartitionLog* open(const std::string& topic, int32_t partition, const LogConfig& config) {
    PartitionLog* log = nullptr;
    EXPECT_EQ(logs_->open_partition({topic, partition}, config, &log).code(), Status::Code::kOk);
    return log;
  }

  Status append(PartitionLog* log, int records = 2) {
    std::vector<uint8_t> batch = testing::batch_for_offsets(log->log_end_offset(), records, 20, 60);
    AppendResult result;
    return log->append(batch, {}, &result);
  }

  // The sum of the charges of every open partition.
  uint64_t charges() const {
    uint64_t sum = 0;
    for (const auto& [tp, log] : logs_->partitions()) sum += log->budget_charge();
    return sum;
  }

  uint64_t allocated(const std::string& path) const {
    uint64_t bytes = 0;
    EXPECT_FALSE(port::allocated_bytes(path, &bytes));
    return bytes;
  }

  TempDir dir_;
  std::unique_ptr<LogManager> logs_;
};

TEST_F(BudgetedLogsTest, AnUnboundedPartitionGrowsUntilTheBudgetIsFullThenRecycles) {
  const LogConfig config = testing::small_config(4096, kNoLimit);  // index interval 256
  const uint64_t segment = segment_footprint_bytes(4096, 256);
  // Room for the reservation (2 segments) and 3 more segments.
  logs_->budget().set_limit(kOtherFilesReserveBytes + partition_reservation_bytes(config) + 3 * segment);
  PartitionLog* log = open("t", 0, config);
  EXPECT_EQ(log->budget_charge(), partition_reservation_bytes(config));
  for (int i = 0; i < 600; ++i) {
    ASSERT_EQ(append(log).code(), Status::Code::kOk);
    ASSERT_LE(logs_->budget().used_bytes(), logs_->budget().limit_bytes());
    ASSERT_LE(log->segments().size(), 5u);
  }
  EXPECT_EQ(log->segments().size(), 5u);
  EXPECT_GT(log->stats().segments_recycled, 10u);
  EXPECT_GT(log->log_start_offset(), 0);
  EXPECT_EQ(logs_->budget().free_bytes(), 0u);
  EXPECT_EQ(logs_->budget().used_bytes(), kOtherFilesReserveBytes + charges());
  // What du counts never exceeds what the partition is charged.
  EXPECT_LE(allocated(dir_.file("data/t-0")), log->budget_charge());
}

TEST_F(BudgetedLogsTest, UnboundedPartitionsShareWhatIsLeft) {
  const LogConfig config = testing::small_config(4096, kNoLimit);
  const uint64_t segment = segment_footprint_bytes(4096, 256);
  logs_->budget().set_limit(kOtherFilesReserveBytes + 2 * partition_reservation_bytes(config) + 4 * segment);
  PartitionLog* a = open("a", 0, config);
  PartitionLog* b = open("b", 0, config);
  for (int i = 0; i < 400; ++i) ASSERT_EQ(append(a).code(), Status::Code::kOk);
  EXPECT_EQ(a->segments().size(), 6u);  // took all the room
  for (int i = 0; i < 400; ++i) ASSERT_EQ(append(b).code(), Status::Code::kOk);
  EXPECT_EQ(b->segments().size(), 2u);  // its reservation is always there
  EXPECT_LE(logs_->budget().used_bytes(), logs_->budget().limit_bytes());
  // Deleting a gives its charge back; b may grow into it.
  ASSERT_EQ(logs_->delete_topic("a").code(), Status::Code::kOk);
  EXPECT_EQ(logs_->budget().used_bytes(), kOtherFilesReserveBytes + b->budget_charge());
  for (int i = 0; i < 400; ++i) ASSERT_EQ(append(b).code(), Status::Code::kOk);
  const uint64_t room = logs_->budget().limit_bytes() - kOtherFilesReserveBytes - partition_overhead_bytes();
  EXPECT_EQ(b->segments().size(), room / segment);
  EXPECT_LE(logs_->budget().used_bytes(), logs_->budget().limit_bytes());
}

TEST_F(BudgetedLogsTest, AFullBudgetWithPinnedDataRejectsUnderRejectPolicy) {
  LogConfig config = testing::small_config(4096, kNoLimit);
  config.full_policy = FullPolicy::kReject;
  logs_->budget().set_limit(kOtherFilesReserveBytes + partition_reservation_bytes(config) +
                            segment_footprint_bytes(4096, 256));
  PartitionLog* log = open("t", 0, config);
  log->set_pin(0);  // nothing forwarded
  Status s;
  for (int i = 0; i < 1000 && s.ok(); ++i) s = append(log);
  EXPECT_EQ(s.code(), Status::Code::kLogFull);
  EXPECT_EQ(log->segments().size(), 3u);
  EXPECT_EQ(log->log_start_offset(), 0);
  EXPECT_LE(logs_->budget().used_bytes(), logs_->budget().limit_bytes());
  // Forwarding the first segment lets the ring recycle it.
  log->set_pin(log->segments()[1].base_offset);
  EXPECT_EQ(append(log).code(), Status::Code::kOk);
  EXPECT_GT(log->log_start_offset(), 0);
}

TEST_F(BudgetedLogsTest, AFullBudgetWithPinnedDataDropsUnderDropOldestPolicy) {
  const LogConfig config = testing::small_config(4096, kNoLimit);
  logs_->budget().set_limit(kOtherFilesReserveBytes + partition_reservation_bytes(config));
  PartitionLog* log = open("t", 0, config);
  log->set_pin(0);
  for (int i = 0; i < 300; ++i) ASSERT_EQ(append(log).code(), Status::Code::kOk);
  EXPECT_EQ(log->segments().size(), 2u);
  EXPECT_GT(log->stats().pinned_segments_dropped, 0u);
  EXPECT_LE(logs_->budget().used_bytes(), logs_->budget().limit_bytes());
}

TEST_F(BudgetedLogsTest, ABoundedPartitionAlwaysGetsItsRing) {
  const LogConfig config = testing::small_config(4096, 4 * 4096);
  logs_->budget().set_limit(kOtherFilesReserveBytes + partition_reservation_bytes(config));
  PartitionLog* log = open("t", 0, config);
  EXPECT_EQ(logs_->budget().free_bytes(), 0u);
  // Even when the limit drops below what it was promised (a restart with a
  // smaller budget), the ring it was created with is kept.
  logs_->budget().set_limit(kOtherFilesReserveBytes);
  for (int i = 0; i < 300; ++i) ASSERT_EQ(append(log).code(), Status::Code::kOk);
  EXPECT_EQ(log->segments().size(), 4u);
  EXPECT_EQ(log->budget_charge(), partition_reservation_bytes(config));
}

TEST_F(BudgetedLogsTest, ChargesFollowConfigChangesAndClosing) {
  const LogConfig small = testing::small_config(4096, 2 * 4096);
  PartitionLog* log = open("t", 0, small);
  const uint64_t before = logs_->budget().used_bytes();
  EXPECT_EQ(log->budget_charge_for(testing::small_config(4096, 8 * 4096)),
            partition_reservation_bytes(testing::small_config(4096, 8 * 4096)));
  ASSERT_EQ(log->update_config(testing::small_config(4096, 8 * 4096)).code(), Status::Code::kOk);
  EXPECT_EQ(logs_->budget().used_bytes(), before + 6 * segment_footprint_bytes(4096, 256));
  ASSERT_EQ(logs_->close().code(), Status::Code::kOk);
}

TEST_F(BudgetedLogsTest, IndexFilesStayWithinTheirBound) {
  // Many tiny batches: as many index entries as the interval allows.
  LogConfig config = testing::small_config(64 * 1024, kNoLimit);
  config.index_interval_bytes = 1;
  PartitionLog* log = open("t", 0, config);
  for (int i = 0; i < 3000; ++i) ASSERT_EQ(append(log, 1).code(), Status::Code::kOk);
  ASSERT_GT(log->segments().size(), 2u);
  ASSERT_EQ(logs_->close().code(), Status::Code::kOk);  // writes the active segment's index too
  int indexes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_.file("data/t-0"))) {
    if (entry.path().extension() != ".index") continue;
    ++indexes;
    EXPECT_LE(entry.file_size(), index_file_bound_bytes(64 * 1024, 1)) << entry.path();
  }
  EXPECT_GT(indexes, 2);
}

}  // namespace
}  // namespace eddy::storage
