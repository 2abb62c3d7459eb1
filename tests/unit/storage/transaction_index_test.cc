// The transaction index of a partition: open transactions, aborted ones,
// the last stable offset; fed at append and rebuilt at open.
#include "storage/transaction_index.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "port/port.h"
#include "storage/checkpoint.h"
#include "storage/partition_log.h"
#include "storage/segment.h"
#include "storage_test_util.h"
#include "transaction_test_util.h"

namespace eddy::storage {
namespace {

using protocol::ControlType;
using testing::append_batch;
using testing::marker_batch;
using testing::TempDir;
using testing::transactional_batch;

std::vector<AbortedTransaction> collect(const TransactionIndex& index, int64_t from, int64_t to) {
  std::vector<AbortedTransaction> out;
  index.collect_aborted(from, to, &out);
  return out;
}

TEST(TransactionIndexTest, InterleavedProducersHoldTheStableOffsetAtTheEarliestOpenOne) {
  TransactionIndex index;
  EXPECT_TRUE(index.all_stable());
  EXPECT_EQ(index.first_unstable_offset(100), -1);
  index.on_data_batch(7, 10);
  index.on_data_batch(8, 12);
  index.on_data_batch(7, 14);  // the same transaction goes on
  EXPECT_EQ(index.ongoing_count(), 2u);
  EXPECT_EQ(index.ongoing_first_offset(7), 10);
  EXPECT_EQ(index.ongoing_first_offset(8), 12);
  EXPECT_EQ(index.first_unstable_offset(100), 10);

  index.on_marker(7, ControlType::kCommit, 20);
  EXPECT_EQ(index.ongoing_first_offset(7), -1);
  // Decided, but the marker is not below the high watermark yet.
  EXPECT_EQ(index.first_unstable_offset(20), 10);
  EXPECT_EQ(index.first_unstable_offset(21), 12);
  index.on_marker(8, ControlType::kAbort, 22);
  EXPECT_EQ(index.first_unstable_offset(23), -1);
  index.settle(23);
  EXPECT_TRUE(index.all_stable());
  EXPECT_EQ(collect(index, 0, 100), (std::vector<AbortedTransaction>{{8, 12, 22}}));
}

TEST(TransactionIndexTest, AMarkerWithoutAnOpenTransactionEndsNothing) {
  TransactionIndex index;
  index.on_data_batch(1, 5);
  index.on_marker(2, ControlType::kAbort, 6);  // producer 2 has nothing open
  EXPECT_EQ(index.ongoing_first_offset(1), 5);
  EXPECT_EQ(index.ongoing_count(), 1u);
  EXPECT_EQ(index.first_unstable_offset(100), 5);
  // As in Kafka: an aborted transaction of the marker's offset alone.
  EXPECT_EQ(collect(index, 0, 100), (std::vector<AbortedTransaction>{{2, 6, 6}}));
  index.on_marker(3, ControlType::kCommit, 7);
  EXPECT_EQ(index.aborted().size(), 1u);
}

TEST(TransactionIndexTest, RangeQueriesReturnEveryOverlappingAbortedTransaction) {
  TransactionIndex index;
  // A long one (5..60) ends after short ones that started after it.
  index.on_data_batch(1, 5);
  index.on_data_batch(2, 10);
  index.on_marker(2, ControlType::kAbort, 20);  // {2, 10, 20}
  index.on_data_batch(3, 30);
  index.on_marker(3, ControlType::kAbort, 40);  // {3, 30, 40}
  index.on_data_batch(4, 42);
  index.on_marker(4, ControlType::kCommit, 45);
  index.on_marker(1, ControlType::kAbort, 60);  // {1, 5, 60}
  index.on_data_batch(2, 70);
  index.on_marker(2, ControlType::kAbort, 71);  // {2, 70, 71}

  const AbortedTransaction a{2, 10, 20}, b{3, 30, 40}, c{1, 5, 60}, d{2, 70, 71};
  EXPECT_EQ(collect(index, 0, 5), (std::vector<AbortedTransaction>{}));
  EXPECT_EQ(collect(index, 0, 6), (std::vector<AbortedTransaction>{c}));
  EXPECT_EQ(collect(index, 0, 11), (std::vector<AbortedTransaction>{a, c}));
  EXPECT_EQ(collect(index, 20, 21), (std::vector<AbortedTransaction>{a, c}));
  EXPECT_EQ(collect(index, 21, 30), (std::vector<AbortedTransaction>{c}));
  EXPECT_EQ(collect(index, 35, 50), (std::vector<AbortedTransaction>{b, c}));
  EXPECT_EQ(collect(index, 61, 70), (std::vector<AbortedTransaction>{}));
  EXPECT_EQ(collect(index, 61, 71), (std::vector<AbortedTransaction>{d}));
  EXPECT_EQ(collect(index, 0, 1000), (std::vector<AbortedTransaction>{a, b, c, d}));
  EXPECT_EQ(collect(index, 72, 1000), (std::vector<AbortedTransaction>{}));
  EXPECT_EQ(collect(index, 50, 50), (std::vector<AbortedTransaction>{}));

  // Trimming at the log start drops what ended below it, keeps the rest.
  index.trim_before(41);
  EXPECT_EQ(collect(index, 0, 1000), (std::vector<AbortedTransaction>{c, d}));
  index.trim_before(72);
  EXPECT_FALSE(index.has_aborted());
}

class TransactionLogTest : public ::testing::Test {
 protected:
  void SetUp() override { flusher_.start(); }

  std::unique_ptr<PartitionLog> open_log(const LogConfig& config) {
    std::unique_ptr<PartitionLog> log;
    Status s = PartitionLog::open(dir_.file("t-0"), config, &flusher_, &log);
    EXPECT_EQ(s.code(), Status::Code::kOk) << s.to_string().c_str();
    return log;
  }
  int64_t plain(PartitionLog& log, int records = 2) {
    return append_batch(log, testing::batch_for_offsets(log.log_end_offset(), records, 20, 60));
  }
  std::vector<AbortedTransaction> aborted(const PartitionLog& log, int64_t from, int64_t to) {
    std::vector<AbortedTransaction> out;
    log.collect_aborted_transactions(from, to, &out);
    return out;
  }

  TempDir dir_;
  Flusher flusher_;
};

TEST_F(TransactionLogTest, AppendedBatchesAndMarkersMoveTheLastStableOffset) {
  auto log = open_log(testing::small_config(64 * 1024));
  plain(*log);                                                     // 0..1
  EXPECT_EQ(log->last_stable_offset(), 2);
  const int64_t p1 = append_batch(*log, transactional_batch(1, 3));  // 2..4
  const int64_t p2 = append_batch(*log, transactional_batch(2, 1));  // 5
  plain(*log);                                                     // 6..7
  append_batch(*log, transactional_batch(1, 1, 3));                // 8
  EXPECT_EQ(p1, 2);
  EXPECT_EQ(p2, 5);
  EXPECT_EQ(log->high_watermark(), 9);
  EXPECT_EQ(log->last_stable_offset(), 2);
  const int64_t commit1 = append_batch(*log, marker_batch(1, ControlType::kCommit));
  EXPECT_EQ(commit1, 9);
  EXPECT_EQ(log->last_stable_offset(), 5);
  const int64_t abort2 = append_batch(*log, marker_batch(2, ControlType::kAbort));
  EXPECT_EQ(log->last_stable_offset(), log->high_watermark());
  EXPECT_EQ(aborted(*log, 0, log->log_end_offset()), (std::vector<AbortedTransaction>{{2, 5, abort2}}));
  EXPECT_EQ(aborted(*log, 0, 5), (std::vector<AbortedTransaction>{}));
  EXPECT_TRUE(port::path_exists(dir_.file("t-0") + "/" + kTransactionsFile));
}

TEST_F(TransactionLogTest, ThePartitionWithoutTransactionsScansNothingAndWritesNoCheckpoint) {
  {
    auto log = open_log(testing::small_config(4096));
    for (int i = 0; i < 40; ++i) plain(*log, 3);
    EXPECT_EQ(log->last_stable_offset(), log->high_watermark());
    EXPECT_FALSE(log->has_aborted_transactions());
  }  // a crash: no close
  EXPECT_FALSE(port::path_exists(dir_.file("t-0") + "/" + kTransactionsFile));
  auto log = open_log(testing::small_config(4096));
  EXPECT_EQ(log->recovery_stats().bytes_scanned_for_transactions, 0u);
  EXPECT_EQ(log->last_stable_offset(), log->log_end_offset());
}

TEST_F(TransactionLogTest, DiskModeStableOffsetWaitsForTheMarkerToBeDurable) {
  LogConfig config = testing::small_config(64 * 1024);
  config.acks_all_waits_for = AcksAllWaitsFor::kDisk;
  auto log = open_log(config);
  append_batch(*log, transactional_batch(1, 2));  // 0..1
  plain(*log);                                    // 2..3
  ASSERT_TRUE(log->wait_durable(log->log_end_offset(), 10000));
  EXPECT_EQ(log->last_stable_offset(), 0);
  const int64_t marker = append_batch(*log, marker_batch(1, ControlType::kCommit));
  // LSO <= HW always, and the transaction is stable only once its marker is.
  EXPECT_LE(log->last_stable_offset(), log->high_watermark());
  ASSERT_TRUE(log->wait_durable(marker + 1, 10000));
  EXPECT_EQ(log->last_stable_offset(), marker + 1);
}

// The state an open must rebuild, written in several segments.
void write_transactions(PartitionLog& log, std::vector<AbortedTransaction>* aborted, int rounds = 12) {
  for (int round = 0; round < rounds; ++round) {
    const int64_t a = append_batch(log, transactional_batch(1, 4));
    append_batch(log, testing::simple_batch(3, 40));
    const int64_t b = append_batch(log, transactional_batch(2, 2));
    const int64_t abort1 = append_batch(log, marker_batch(1, ControlType::kAbort));
    aborted->push_back({1, a, abort1});
    append_batch(log, transactional_batch(2, 2, 2));
    if (round % 3 == 0) {
      const int64_t abort2 = append_batch(log, marker_batch(2, ControlType::kAbort));
      aborted->push_back({2, b, abort2});
    } else {
      append_batch(log, marker_batch(2, ControlType::kCommit));
    }
  }
  append_batch(log, transactional_batch(3, 2));  // left open
  append_batch(log, testing::simple_batch(2, 40));
}

TEST_F(TransactionLogTest, ReopeningRebuildsExactlyTheSameState) {
  std::vector<AbortedTransaction> expected;
  int64_t open_first = -1, lso = -1, end = -1;
  {
    auto log = open_log(testing::small_config(4096));
    write_transactions(*log, &expected, 40);
    ASSERT_GT(log->segments().size(), 3u);
    open_first = log->transactions().ongoing_first_offset(3);
    lso = log->last_stable_offset();
    end = log->log_end_offset();
    EXPECT_EQ(lso, open_first);
    EXPECT_EQ(aborted(*log, 0, end), expected);
    ASSERT_TRUE(log->close().ok());
  }
  for (bool clean : {true, false}) {
    SCOPED_TRACE(clean ? "after a clean close" : "after a crash");
    auto log = open_log(testing::small_config(4096));
    // A clean close left a snapshot: nothing to scan.
    EXPECT_EQ(log->recovery_stats().bytes_scanned_for_transactions > 0, !clean);
    EXPECT_EQ(log->log_end_offset(), end);
    EXPECT_EQ(log->transactions().ongoing_count(), 1u);
    EXPECT_EQ(log->transactions().ongoing_first_offset(3), open_first);
    EXPECT_EQ(log->last_stable_offset(), lso);
    EXPECT_EQ(aborted(*log, 0, end), expected);
  }  // no close: the next open follows a crash
  // The open transaction ends after the restart.
  auto log = open_log(testing::small_config(4096));
  append_batch(*log, marker_batch(3, ControlType::kCommit));
  EXPECT_EQ(log->last_stable_offset(), log->log_end_offset());
}

TEST_F(TransactionLogTest, AbortedTransactionsBelowTheLogStartAreTrimmed) {
  std::vector<AbortedTransaction> expected;
  auto log = open_log(testing::small_config(4096));
  write_transactions(*log, &expected);
  const int64_t cut = expected[3].last_offset + 1;
  ASSERT_TRUE(log->delete_records_before(cut).ok());
  std::vector<AbortedTransaction> kept(expected.begin() + 4, expected.end());
  EXPECT_EQ(aborted(*log, 0, log->log_end_offset()), kept);
  EXPECT_EQ(log->transactions().aborted().size(), kept.size());
  log.reset();  // a crash; the log start was checkpointed
  log = open_log(testing::small_config(4096));
  EXPECT_EQ(log->log_start_offset(), cut);
  EXPECT_EQ(log->transactions().aborted().size(), kept.size());
  EXPECT_EQ(aborted(*log, 0, log->log_end_offset()), kept);
}

TEST_F(TransactionLogTest, RecyclingTheRingTrimsAbortedTransactions) {
  const LogConfig ring = testing::small_config(4096, 3 * 4096);
  auto log = open_log(ring);
  std::vector<AbortedTransaction> all;
  for (int i = 0; i < 4; ++i) write_transactions(*log, &all);
  ASSERT_GT(log->stats().segments_recycled, 0u);
  std::vector<AbortedTransaction> kept;
  for (const auto& a : all) {
    if (a.last_offset >= log->log_start_offset()) kept.push_back(a);
  }
  ASSERT_LT(kept.size(), all.size());
  EXPECT_EQ(aborted(*log, 0, log->log_end_offset()), kept);
  const int64_t start = log->log_start_offset();
  // A clean close's snapshot keeps the state exactly as it was.
  ASSERT_TRUE(log->close().ok());
  log.reset();
  log = open_log(ring);
  EXPECT_EQ(log->recovery_stats().bytes_scanned_for_transactions, 0u);
  EXPECT_EQ(aborted(*log, 0, log->log_end_offset()), kept);
  log.reset();  // a crash: rebuilt from the batches
  log = open_log(ring);
  EXPECT_GT(log->recovery_stats().bytes_scanned_for_transactions, 0u);
  ASSERT_EQ(log->log_start_offset(), start);
  // The transaction that began in a recycled segment: its first offset is
  // where what is left of it begins (its marker, here: its one data batch
  // was recycled), since a read_committed consumer finds nothing of it
  // before that.
  const std::vector<AbortedTransaction> reopened = aborted(*log, 0, log->log_end_offset());
  ASSERT_EQ(reopened.size(), kept.size());
  ASSERT_LT(kept.front().first_offset, start);
  EXPECT_EQ(reopened.front(), (AbortedTransaction{kept.front().producer_id, kept.front().last_offset,
                                                  kept.front().last_offset}));
  EXPECT_EQ(std::vector<AbortedTransaction>(reopened.begin() + 1, reopened.end()),
            std::vector<AbortedTransaction>(kept.begin() + 1, kept.end()));
}

TEST_F(TransactionLogTest, ACheckpointAheadOfTheLogIsRewrittenByTheNextTransactionalBatch) {
  // As after a power cut that took back the first transactional batch but
  // kept its (synced) checkpoint.
  {
    auto log = open_log(testing::small_config(4096));
    for (int i = 0; i < 30; ++i) plain(*log, 3);
    ASSERT_TRUE(log->close().ok());
  }
  ASSERT_TRUE(write_first_transactional_offset(dir_.file("t-0"), 10000).ok());
  int64_t first = -1;
  {
    auto log = open_log(testing::small_config(4096));
    EXPECT_EQ(log->recovery_stats().bytes_scanned_for_transactions, 0u);
    first = append_batch(*log, transactional_batch(5, 2));
    for (int i = 0; i < 30; ++i) plain(*log, 3);  // rolls: the batch is in a sealed segment
  }
  auto log = open_log(testing::small_config(4096));
  EXPECT_EQ(log->transactions().ongoing_first_offset(5), first);
  EXPECT_EQ(log->last_stable_offset(), first);
}

TEST_F(TransactionLogTest, ASnapshotIsNotTrustedOnceAppendsFollowedIt) {
  {
    auto log = open_log(testing::small_config(4096));
    append_batch(*log, transactional_batch(1, 2));
    ASSERT_TRUE(log->close().ok());
  }
  EXPECT_TRUE(port::path_exists(dir_.file("t-0") + "/" + kTransactionsSnapshotFile));
  int64_t abort = -1;
  {
    auto log = open_log(testing::small_config(4096));
    EXPECT_FALSE(port::path_exists(dir_.file("t-0") + "/" + kTransactionsSnapshotFile)) << "removed by open";
    EXPECT_EQ(log->transactions().ongoing_first_offset(1), 0);
    abort = append_batch(*log, marker_batch(1, ControlType::kAbort));
  }  // a crash
  auto log = open_log(testing::small_config(4096));
  EXPECT_GT(log->recovery_stats().bytes_scanned_for_transactions, 0u);
  EXPECT_EQ(log->transactions().ongoing_count(), 0u);
  EXPECT_EQ(aborted(*log, 0, log->log_end_offset()), (std::vector<AbortedTransaction>{{1, 0, abort}}));
}

TEST_F(TransactionLogTest, ADamagedHeaderInATrustedSegmentDoesNotStopTheOpen) {
  std::vector<AbortedTransaction> expected;
  int64_t victim = -1, lso = -1;
  size_t segments = 0;
  {
    auto log = open_log(testing::small_config(4096));
    write_transactions(*log, &expected, 40);
    segments = log->segments().size();
    ASSERT_GT(segments, 3u);
    victim = log->segments()[0].base_offset + 12;  // inside the first segment, not its first or last batch
    BatchLocation at;
    ASSERT_TRUE(log->lookup(victim, &at).ok());
    ASSERT_GT(at.batch.position, 0u);
    ASSERT_LT(at.batch.info.last_offset + 1, log->segments()[0].next_offset);
    victim = static_cast<int64_t>(at.batch.position);
    lso = log->last_stable_offset();
    ASSERT_TRUE(log->close().ok());
  }
  // Its batchLength now runs past the segment; the snapshot is gone, so open scans.
  const std::string dir = dir_.file("t-0");
  ASSERT_TRUE(std::filesystem::remove(dir + "/" + kTransactionsSnapshotFile));
  {
    port::File file;
    ASSERT_FALSE(port::File::open(dir + "/" + segment_file_name(0), port::OpenMode::kReadWrite, &file));
    const uint8_t huge[4] = {0x7f, 0xff, 0xff, 0xff};
    ASSERT_FALSE(file.write_at(static_cast<uint64_t>(victim) + protocol::batch_layout::kBatchLength, huge, 4));
  }
  auto log = open_log(testing::small_config(4096));
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(log->segments().size(), segments);
  // What the later segments say is known: the open transaction, the aborted
  // ones whose markers lie there.
  EXPECT_EQ(log->last_stable_offset(), lso);
  EXPECT_FALSE(log->transactions().aborted().empty());
  EXPECT_EQ(log->transactions().aborted().back(), expected.back());
}

TEST(TransactionIndexTest, EncodesAndDecodesItsState) {
  TransactionIndex index;
  index.on_data_batch(1, 5);
  index.on_data_batch(2, 7);
  index.on_marker(2, ControlType::kAbort, 9);
  index.on_data_batch(3, 10);
  index.on_marker(3, ControlType::kAbort, 40);
  index.settle(41);
  std::vector<uint8_t> bytes;
  index.encode(&bytes);
  TransactionIndex copy;
  ASSERT_TRUE(copy.decode(bytes));
  EXPECT_EQ(copy.ongoing_first_offset(1), 5);
  EXPECT_EQ(copy.ongoing_count(), 1u);
  EXPECT_EQ(copy.aborted(), index.aborted());
  EXPECT_EQ(collect(copy, 20, 21), (std::vector<AbortedTransaction>{{3, 10, 40}}));  // the span came along
  // Anything else is refused and changes nothing.
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    EXPECT_FALSE(copy.decode(std::span<const uint8_t>(bytes.data(), cut))) << cut;
  }
  bytes.push_back(0);
  EXPECT_FALSE(copy.decode(bytes));
  EXPECT_EQ(copy.aborted(), index.aborted());
}

}  // namespace
}  // namespace eddy::storage
