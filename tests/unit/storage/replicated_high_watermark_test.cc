// PartitionLog::set_replicated_high_watermark: a partition of a Raft group
// reads up to its group's commit index instead of the durable offset or the
// log end, the value only moves forward except when truncate_to / reset_to
// cut below it, and read_committed readers are told when the last stable
// offset moved.
#include <gtest/gtest.h>

#include "storage/partition_log.h"
#include "storage_test_util.h"
#include "transaction_test_util.h"

namespace eddy::storage {
namespace {

using protocol::ControlType;
using testing::TempDir;

class ReplicatedHighWatermarkTest : public ::testing::Test {
 protected:
  void SetUp() override { flusher_.start(); }

  std::unique_ptr<PartitionLog> open_log(LogConfig config = testing::small_config(4096)) {
    std::unique_ptr<PartitionLog> log;
    Status s = PartitionLog::open(dir_.file("t-0"), config, &flusher_, &log);
    EXPECT_TRUE(s.ok()) << s.to_string();
    return log;
  }
  // Appends batches of 2 records; returns the LEO.
  static int64_t fill(PartitionLog& log, int batches) {
    for (int i = 0; i < batches; ++i) {
      std::vector<uint8_t> batch = testing::batch_for_offsets(log.log_end_offset(), 2, 20, 40);
      AppendResult result;
      EXPECT_TRUE(log.append(batch, AppendOptions{}, &result).ok());
    }
    return log.log_end_offset();
  }
  // What a read (bounded by the high watermark) returns from offset.
  static int64_t readable_end(PartitionLog& log, int64_t offset) {
    std::vector<uint8_t> bytes;
    int64_t next = -1;
    EXPECT_TRUE(log.read_copy(offset, SIZE_MAX, -1, &bytes, &next).ok());
    return next;
  }

  TempDir dir_;
  Flusher flusher_;
};

TEST_F(ReplicatedHighWatermarkTest, TheGroupsCommitIndexBoundsReads) {
  auto log = open_log();
  const int64_t end = fill(*log, 5);  // 10 offsets, page-cache: HW = LEO
  EXPECT_FALSE(log->replicated());
  EXPECT_EQ(log->high_watermark(), end);

  log->set_replicated_high_watermark(4);
  EXPECT_TRUE(log->replicated());
  EXPECT_EQ(log->high_watermark(), 4);
  EXPECT_EQ(log->last_stable_offset(), 4);
  EXPECT_EQ(readable_end(*log, 0), 4);
  EXPECT_EQ(readable_end(*log, 4), 4) << "nothing above the commit index";
  // Appends do not move it: only the group does.
  fill(*log, 2);
  EXPECT_EQ(log->high_watermark(), 4);
  // DeleteRecords is bounded by it too.
  EXPECT_EQ(log->delete_records_before(6).code(), Status::Code::kOutOfRange);

  log->set_replicated_high_watermark(8);
  EXPECT_EQ(log->high_watermark(), 8);
  EXPECT_EQ(readable_end(*log, 4), 8);
}

TEST_F(ReplicatedHighWatermarkTest, MovesOnlyForwardAndNeverPastTheLogEnd) {
  auto log = open_log();
  const int64_t end = fill(*log, 3);  // 6
  log->set_replicated_high_watermark(4);
  log->set_replicated_high_watermark(2);
  EXPECT_EQ(log->high_watermark(), 4) << "a smaller value is ignored";
  // A commit index beyond what this replica holds covers only what it holds,
  // and does not reach what it appends later.
  log->set_replicated_high_watermark(100);
  EXPECT_EQ(log->high_watermark(), end);
  fill(*log, 2);
  EXPECT_EQ(log->high_watermark(), end);
  log->set_replicated_high_watermark(end + 2);
  EXPECT_EQ(log->high_watermark(), end + 2);
  // A negative value makes the partition replicated at its start.
  auto other = std::make_unique<TempDir>();
  std::unique_ptr<PartitionLog> fresh;
  ASSERT_TRUE(PartitionLog::open(other->file("u-0"), testing::small_config(), &flusher_, &fresh).ok());
  fill(*fresh, 2);
  fresh->set_replicated_high_watermark(-1);
  EXPECT_TRUE(fresh->replicated());
  EXPECT_EQ(fresh->high_watermark(), 0);
}

TEST_F(ReplicatedHighWatermarkTest, ClampedToTheLogStart) {
  auto log = open_log();
  fill(*log, 5);
  log->set_replicated_high_watermark(6);
  ASSERT_TRUE(log->delete_records_before(6).ok());
  EXPECT_EQ(log->high_watermark(), 6);
  // A reset (a follower continuing at its leader's start) moves the start
  // above the old commit index: the high watermark is the start.
  ASSERT_TRUE(log->reset_to(40).ok());
  EXPECT_EQ(log->log_start_offset(), 40);
  EXPECT_EQ(log->high_watermark(), 40);
  EXPECT_TRUE(log->replicated());
  fill(*log, 1);
  EXPECT_EQ(log->high_watermark(), 40);
  log->set_replicated_high_watermark(42);
  EXPECT_EQ(log->high_watermark(), 42);
}

TEST_F(ReplicatedHighWatermarkTest, TruncationBelowItLowersIt) {
  auto log = open_log();
  fill(*log, 5);  // batches at 0, 2, 4, 6, 8
  log->set_replicated_high_watermark(8);
  ASSERT_TRUE(log->truncate_to(6).ok());
  EXPECT_EQ(log->high_watermark(), 6);
  // The replica appends its new leader's batches: they count once committed.
  fill(*log, 2);  // batches at 6, 8
  EXPECT_EQ(log->high_watermark(), 6);
  log->set_replicated_high_watermark(8);
  EXPECT_EQ(log->high_watermark(), 8);
  // A truncation at or above it leaves it.
  ASSERT_TRUE(log->truncate_to(8).ok());
  EXPECT_EQ(log->high_watermark(), 8);
}

TEST_F(ReplicatedHighWatermarkTest, CommittedMarkersMoveTheStableOffsetAndTellTheListener) {
  auto log = open_log();
  int calls = 0;
  log->set_stable_offset_listener([&] { ++calls; });
  log->set_replicated_high_watermark(0);
  const int64_t data = testing::append_batch(*log, testing::transactional_batch(7, 2));  // 0..1
  fill(*log, 1);                                                                           // 2..3
  const int64_t marker = testing::append_batch(*log, testing::marker_batch(7, ControlType::kCommit));  // 4
  ASSERT_EQ(data, 0);
  ASSERT_EQ(marker, 4);
  const int calls_after_marker = calls;  // the marker's append calls it once

  // Below the marker: the transaction is not stable yet.
  log->set_replicated_high_watermark(3);
  EXPECT_EQ(log->high_watermark(), 3);
  EXPECT_EQ(log->last_stable_offset(), 0);
  EXPECT_EQ(calls, calls_after_marker) << "the LSO did not move";
  // The marker committed: the LSO jumps to the high watermark.
  log->set_replicated_high_watermark(5);
  EXPECT_EQ(log->last_stable_offset(), 5);
  EXPECT_EQ(calls, calls_after_marker + 1);
  EXPECT_TRUE(log->transactions().all_stable()) << "settled";
  // Without transactions every move of the high watermark moves the LSO.
  fill(*log, 1);
  log->set_replicated_high_watermark(7);
  EXPECT_EQ(log->last_stable_offset(), 7);
  EXPECT_EQ(calls, calls_after_marker + 2);
  log->set_replicated_high_watermark(7);
  EXPECT_EQ(calls, calls_after_marker + 2) << "no move, no call";
}

TEST_F(ReplicatedHighWatermarkTest, AReopenedLogIsNotReplicatedUntilTold) {
  {
    auto log = open_log();
    fill(*log, 3);
    log->set_replicated_high_watermark(2);
    ASSERT_TRUE(log->close().ok());
  }
  auto log = open_log();
  EXPECT_FALSE(log->replicated());
  EXPECT_EQ(log->high_watermark(), 6);
  log->set_replicated_high_watermark(log->log_start_offset());
  EXPECT_EQ(log->high_watermark(), 0);
}

}  // namespace
}  // namespace eddy::storage
