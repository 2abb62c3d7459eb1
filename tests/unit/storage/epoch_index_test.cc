// The leader-epoch index: its rules alone, then as PartitionLog keeps it
// (appends, log start moves, truncation, reopen after a clean close, after a
// crash, and without its file).
#include "storage/epoch_index.h"

#include <gtest/gtest.h>

#include "port/port.h"
#include "storage/checkpoint.h"
#include "storage/partition_log.h"
#include "storage_test_util.h"

namespace eddy::storage {
namespace {

using testing::TempDir;

EpochIndex index_of(std::vector<EpochStart> entries) {
  EpochIndex index;
  for (const EpochStart& e : entries) index.note_batch(e.epoch, e.start_offset);
  return index;
}

TEST(EpochIndex, EndOffsetForEpochIsKafkas) {
  // Offsets 0-1 epoch 1, 2-4 epoch 3, 5 epoch 5; log end 6.
  EpochIndex index = index_of({{1, 0}, {3, 2}, {5, 5}});
  EXPECT_EQ(index.end_offset_for_epoch(0, 6), (EpochEndOffset{0, 0}));
  EXPECT_EQ(index.end_offset_for_epoch(1, 6), (EpochEndOffset{1, 2}));
  EXPECT_EQ(index.end_offset_for_epoch(2, 6), (EpochEndOffset{1, 2}));
  EXPECT_EQ(index.end_offset_for_epoch(3, 6), (EpochEndOffset{3, 5}));
  EXPECT_EQ(index.end_offset_for_epoch(4, 6), (EpochEndOffset{3, 5}));
  EXPECT_EQ(index.end_offset_for_epoch(5, 6), (EpochEndOffset{5, 6}));
  EXPECT_EQ(index.end_offset_for_epoch(9, 6), (EpochEndOffset{5, 6}));
  EXPECT_EQ(EpochIndex().end_offset_for_epoch(3, 0), (EpochEndOffset{0, 0}));
  EXPECT_EQ(index.epoch_at(0), 1);
  EXPECT_EQ(index.epoch_at(4), 3);
  EXPECT_EQ(index.epoch_at(5), 5);
  EXPECT_EQ(index.last_epoch(), 5);
  EXPECT_EQ(EpochIndex().last_epoch(), kNoLeaderEpoch);
}

TEST(EpochIndex, IgnoresSmallerAndMissingEpochsAsKafkaDoes) {
  EpochIndex index = index_of({{2, 0}, {2, 3}, {1, 4}, {kNoLeaderEpoch, 5}, {4, 6}});
  EXPECT_EQ(index.entries(), (std::vector<EpochStart>{{2, 0}, {4, 6}}));
}

TEST(EpochIndex, TruncateAndTrim) {
  EpochIndex index = index_of({{1, 0}, {3, 2}, {5, 5}});
  EXPECT_FALSE(index.truncate_from(6));
  EXPECT_TRUE(index.truncate_from(5));
  EXPECT_EQ(index.entries(), (std::vector<EpochStart>{{1, 0}, {3, 2}}));
  EXPECT_FALSE(index.trim_before(0));
  EXPECT_TRUE(index.trim_before(3));  // inside epoch 3: it starts there now
  EXPECT_EQ(index.entries(), (std::vector<EpochStart>{{3, 3}}));
  EXPECT_FALSE(index.trim_before(3));
  EXPECT_TRUE(index.truncate_from(3));
  EXPECT_TRUE(index.entries().empty());
}

TEST(EpochIndex, FieldsRoundTripAndBadOnesAreRefused) {
  EpochIndex index = index_of({{1, 0}, {3, 2}});
  EpochIndex back;
  ASSERT_TRUE(back.from_fields(index.to_fields()));
  EXPECT_EQ(back.entries(), index.entries());
  for (std::vector<int64_t> bad : std::vector<std::vector<int64_t>>{
           {1}, {3, 0, 1, 2}, {1, 2, 3, 2}, {-1, 0}, {1, -5}, {int64_t{1} << 40, 0}}) {
    EXPECT_FALSE(back.from_fields(bad));
    EXPECT_EQ(back.entries(), index.entries());  // unchanged
  }
}

class PartitionLogEpochTest : public ::testing::Test {
 protected:
  void SetUp() override { flusher_.start(); }

  std::unique_ptr<PartitionLog> open_log() {
    std::unique_ptr<PartitionLog> log;
    Status s = PartitionLog::open(dir_.file("t-0"), testing::small_config(4096), &flusher_, &log);
    EXPECT_TRUE(s.ok()) << s.to_string();
    return log;
  }
  void append(PartitionLog& log, int32_t epoch, int records = 2) {
    std::vector<uint8_t> batch = testing::batch_for_offsets(log.log_end_offset(), records, 100, 200);
    AppendResult result;
    ASSERT_TRUE(log.append(batch, AppendOptions{.leader_epoch = epoch}, &result).ok());
  }
  // The epochs the batches of the log say, from its log start.
  static std::vector<EpochStart> epochs_in_batches(PartitionLog& log) {
    std::vector<uint8_t> bytes;
    int64_t next = 0;
    EXPECT_TRUE(log.read_copy(log.log_start_offset(), SIZE_MAX, log.log_end_offset(), &bytes, &next).ok());
    EpochIndex index;
    protocol::BatchIterator it(bytes);
    protocol::RecordBatchView view;
    while (it.next(&view)) index.note_batch(view.partition_leader_epoch(), view.base_offset());
    index.trim_before(log.log_start_offset());
    return index.entries();
  }

  TempDir dir_;
  Flusher flusher_;
};

TEST_F(PartitionLogEpochTest, AppendsRollsAndTruncationKeepTheIndexTrue) {
  auto log = open_log();
  for (int32_t epoch : {0, 0, 2, 2, 2, 5, 5}) {
    for (int i = 0; i < 8; ++i) append(*log, epoch);  // several segments per epoch
  }
  ASSERT_GT(log->segments().size(), 3u);
  EXPECT_EQ(log->epochs().entries(), epochs_in_batches(*log));
  EXPECT_EQ(log->last_epoch(), 5);
  EXPECT_EQ(log->end_offset_for_epoch(2), (EpochEndOffset{2, 80}));
  EXPECT_EQ(log->end_offset_for_epoch(4), (EpochEndOffset{2, 80}));
  EXPECT_EQ(log->end_offset_for_epoch(7), (EpochEndOffset{5, log->log_end_offset()}));
  EXPECT_EQ(log->epoch_at(79), 2);
  EXPECT_EQ(log->epoch_at(80), 5);
  EXPECT_EQ(log->epoch_at(log->log_end_offset()), kNoLeaderEpoch);

  ASSERT_TRUE(log->truncate_to(80).ok());
  EXPECT_EQ(log->last_epoch(), 2);
  append(*log, 3);
  EXPECT_EQ(log->epochs().entries(), (std::vector<EpochStart>{{0, 0}, {2, 32}, {3, 80}}));
  ASSERT_TRUE(log->delete_records_before(40).ok());
  EXPECT_EQ(log->epochs().entries(), (std::vector<EpochStart>{{2, 40}, {3, 80}}));
  EXPECT_EQ(log->end_offset_for_epoch(1), (EpochEndOffset{0, 0}));
  EXPECT_EQ(log->epochs().entries(), epochs_in_batches(*log));
}

TEST_F(PartitionLogEpochTest, ReopenAfterCleanCloseCrashAndWithoutTheFile) {
  std::vector<EpochStart> expected;
  {
    auto log = open_log();
    for (int32_t epoch : {1, 1, 4, 4, 6}) append(*log, epoch);
    ASSERT_TRUE(log->delete_records_before(3).ok());  // trims epoch 1: rewritten at close
    expected = log->epochs().entries();
    ASSERT_TRUE(log->close().ok());
  }
  {
    auto log = open_log();
    EXPECT_EQ(log->epochs().entries(), expected);
    EXPECT_EQ(log->recovery_stats().bytes_scanned_for_epochs, 0u);
    append(*log, 6);
    append(*log, 9);
    expected = log->epochs().entries();
    // No close: a crash (the page cache keeps what was written).
  }
  {
    auto log = open_log();
    EXPECT_EQ(log->epochs().entries(), expected);
    EXPECT_EQ(log->recovery_stats().bytes_scanned_for_epochs, 0u);
    EXPECT_EQ(log->epochs().entries(), epochs_in_batches(*log));
  }
  // A partition of a version without the file: the headers say it.
  ASSERT_FALSE(port::remove_file(dir_.file("t-0") + "/" + kLeaderEpochFile));
  {
    auto log = open_log();
    EXPECT_GT(log->recovery_stats().bytes_scanned_for_epochs, 0u);
    EXPECT_EQ(log->epochs().entries(), expected);
  }
  EXPECT_TRUE(port::path_exists(dir_.file("t-0") + "/" + kLeaderEpochFile));  // written again
}

TEST_F(PartitionLogEpochTest, AnEpochWhoseBatchWasLostIsDroppedAtOpen) {
  {
    auto log = open_log();
    append(*log, 1);
    append(*log, 1);
    ASSERT_TRUE(log->close().ok());
  }
  // The file as it is once the first batch of epoch 7 was about to be
  // written (a power cut then took that batch back).
  ASSERT_TRUE(write_leader_epochs(dir_.file("t-0"), {1, 0, 7, 4}).ok());
  auto log = open_log();
  EXPECT_EQ(log->log_end_offset(), 4);
  EXPECT_EQ(log->epochs().entries(), (std::vector<EpochStart>{{1, 0}}));
  append(*log, 3);  // a smaller epoch than the lost one
  log.reset();      // crash
  log = open_log();
  EXPECT_EQ(log->epochs().entries(), (std::vector<EpochStart>{{1, 0}, {3, 4}}));
}

}  // namespace
}  // namespace eddy::storage
