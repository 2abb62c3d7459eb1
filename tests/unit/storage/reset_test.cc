// PartitionLog::reset_to: its argument, what it leaves in memory and on disk
// for an offset below, at, inside and above the log, leader epochs and
// transactions after it, reopening (clean close, crash), a reader holding
// regions across it, the disk budget, the ring afterwards; and a power cut
// at every file operation it makes (power_cut_filesystem.h), each of which
// must reopen the old log (or a prefix of it) or the empty log at the offset.
//
//   EDDY_POWER_CUT_SEED  the seed to replay (the power-cut test prints it)
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <random>
#include <set>

#include "log_check.h"
#include "port/file_interceptor.h"
#include "port/log.h"
#include "port/port.h"
#include "power_cut_filesystem.h"
#include "storage/checkpoint.h"
#include "storage/disk_budget.h"
#include "storage/partition_log.h"
#include "storage/segment.h"
#include "storage_test_util.h"
#include "transaction_test_util.h"

namespace eddy::storage {
namespace {

using testing::TempDir;

// Records of the log before a reset, and those appended after it: a reader
// of the new log that met an old record would see a value of the wrong size.
constexpr size_t kOldMin = 40;
constexpr size_t kOldMax = 120;
constexpr size_t kNewMin = 10;
constexpr size_t kNewMax = 30;

// A batch of records that name their offsets, from first on.
std::vector<uint8_t> batch_at(int64_t first, int records, size_t min_size, size_t max_size,
                              bool transactional = false) {
  protocol::RecordBatchBuilder builder;
  if (transactional) builder.producer(7, 0, 0).attributes(protocol::batch_attributes::kTransactional);
  for (int i = 0; i < records; ++i) {
    builder.add(testing::key_for_offset(first + i), testing::value_for_offset(first + i, min_size, max_size), 1000 + i);
  }
  return builder.build();
}

Status append_at_end(PartitionLog& log, int records, size_t min_size, size_t max_size, int32_t epoch = 0,
                     bool transactional = false) {
  std::vector<uint8_t> batch = batch_at(log.log_end_offset(), records, min_size, max_size, transactional);
  AppendResult result;
  return log.append(batch, AppendOptions{.leader_epoch = epoch}, &result);
}

// "" when log is the empty log at offset in memory: offsets, durability,
// one empty segment there, no epoch, no transaction, reads refused below it.
std::string empty_at(PartitionLog& log, int64_t offset) {
  if (log.log_start_offset() != offset || log.log_end_offset() != offset) {
    return "offsets " + std::to_string(log.log_start_offset()) + ".." + std::to_string(log.log_end_offset()) +
           ", expected " + std::to_string(offset);
  }
  if (log.durable_offset() != offset) return "durable offset " + std::to_string(log.durable_offset());
  if (log.high_watermark() != offset || log.last_stable_offset() != offset) return "high watermark or LSO";
  const std::vector<SegmentInfo> segments = log.segments();
  if (segments.size() != 1 || segments[0].base_offset != offset || segments[0].end_position != 0) {
    return "not one empty segment at the offset";
  }
  if (!log.epochs().entries().empty() || log.last_epoch() != kNoLeaderEpoch) return "epochs left";
  if (log.transactions().ongoing_count() != 0 || log.has_aborted_transactions()) return "transactions left";
  ReadResult read;
  if (offset > 0 && log.read(offset - 1, SIZE_MAX, -1, &read).code() != Status::Code::kOutOfRange) {
    return "a read below the offset was not refused";
  }
  if (!log.read(offset, SIZE_MAX, -1, &read).ok() || !read.regions.empty()) return "a read at the offset";
  BatchLocation location;
  if (log.lookup(offset, &location).code() != Status::Code::kOutOfRange) return "a lookup at the offset";
  return "";
}

class ResetTest : public ::testing::Test {
 protected:
  void SetUp() override { flusher_.start(); }
  std::string directory() const { return dir_.file("t-0"); }

  std::unique_ptr<PartitionLog> open_log(LogConfig config = testing::small_config(4096)) {
    std::unique_ptr<PartitionLog> log;
    Status s = PartitionLog::open(directory(), config, &flusher_, &log);
    EXPECT_TRUE(s.ok()) << s.to_string();
    return log;
  }
  // Batches of 3 old records; a new epoch every epoch_every batches (0: epoch 0).
  static void fill_old(PartitionLog& log, int batches, int epoch_every = 0) {
    for (int i = 0; i < batches; ++i) {
      const int32_t epoch = epoch_every > 0 ? 1 + i / epoch_every : 0;
      ASSERT_TRUE(append_at_end(log, 3, kOldMin, kOldMax, epoch).ok());
    }
  }
  static void fill_new(PartitionLog& log, int batches, int32_t epoch = 0) {
    for (int i = 0; i < batches; ++i) ASSERT_TRUE(append_at_end(log, 3, kNewMin, kNewMax, epoch).ok());
  }
  std::set<std::string> files() const {
    std::vector<std::string> names;
    EXPECT_FALSE(port::list_directory(directory(), &names));
    return {names.begin(), names.end()};
  }
  // What a reset to offset leaves in the directory: the segment and an
  // empty leader-epoch-checkpoint; no index, log start or transactions file.
  void expect_files_of_empty_log(int64_t offset) const {
    EXPECT_EQ(files(), (std::set<std::string>{segment_file_name(offset), kLeaderEpochFile}));
    std::vector<int64_t> fields;
    EXPECT_TRUE(read_leader_epochs(directory(), &fields));
    EXPECT_TRUE(fields.empty());
  }

  TempDir dir_;
  Flusher flusher_;
};

TEST_F(ResetTest, RefusesANegativeOffsetAndAClosedLog) {
  auto log = open_log();
  fill_old(*log, 4);
  EXPECT_EQ(log->reset_to(-1).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(log->log_start_offset(), 0);
  EXPECT_EQ(log->log_end_offset(), 12);
  EXPECT_EQ(log->stats().resets, 0u);
  fill_old(*log, 1);  // still appending
  EXPECT_EQ(testing::check_log(*log, kOldMin, kOldMax), "");
  ASSERT_TRUE(log->close().ok());
  EXPECT_EQ(log->reset_to(5).code(), Status::Code::kIOError);
}

TEST_F(ResetTest, AboveTheLogRaisesTheDurableOffset) {
  auto log = open_log();
  std::atomic<int64_t> heard{-1};
  log->set_durability_listener([&](int64_t durable, Status) { heard = durable; });
  fill_old(*log, 30);  // several segments, page-cache mode: mostly not durable
  ASSERT_GE(log->segments().size(), 3u);
  const int64_t offset = log->log_end_offset() + 1000;
  ASSERT_LT(log->durable_offset(), offset);
  ASSERT_TRUE(log->reset_to(offset).ok());
  EXPECT_EQ(empty_at(*log, offset), "");
  EXPECT_EQ(heard.load(), offset) << "the durability listener is told";
  EXPECT_EQ(log->segments()[0].capacity, 4096u);
  EXPECT_EQ(log->stats().resets, 1u);
  expect_files_of_empty_log(offset);
  fill_new(*log, 2);
  AppendResult result;
  std::vector<uint8_t> batch = batch_at(log->log_end_offset(), 1, kNewMin, kNewMax);
  ASSERT_TRUE(log->append(batch, AppendOptions{}, &result).ok());
  EXPECT_EQ(result.base_offset, offset + 6);
  EXPECT_EQ(result.log_start_offset, offset);
  EXPECT_EQ(testing::check_log(*log, kNewMin, kNewMax), "");
}

TEST_F(ResetTest, AtTheLogEnd) {
  auto log = open_log();
  fill_old(*log, 10);
  const int64_t end = log->log_end_offset();
  ASSERT_TRUE(log->reset_to(end).ok());
  EXPECT_EQ(empty_at(*log, end), "");
  expect_files_of_empty_log(end);
}

TEST_F(ResetTest, BelowTheLogStartLowersTheDurableOffsetAndDropsTheLogStartCheckpoint) {
  auto log = open_log();
  fill_old(*log, 30);
  ASSERT_TRUE(log->wait_durable(log->log_end_offset(), 10000));
  ASSERT_TRUE(log->delete_records_before(60).ok());
  ASSERT_TRUE(files().count(kLogStartOffsetFile));
  ASSERT_EQ(log->segments()[0].base_offset, 0);
  // Inside the first segment, below the log start: the checkpoint (60) must
  // not move the new log's start up once appends pass it.
  ASSERT_TRUE(log->reset_to(5).ok());
  EXPECT_EQ(empty_at(*log, 5), "");
  expect_files_of_empty_log(5);
  fill_new(*log, 30);
  ASSERT_GT(log->log_end_offset(), 60);
  log.reset();  // a crash
  log = open_log();
  EXPECT_EQ(log->log_start_offset(), 5);
  EXPECT_EQ(log->log_end_offset(), 95);
  EXPECT_EQ(testing::check_log(*log, kNewMin, kNewMax), "");
}

TEST_F(ResetTest, BelowTheFirstSegmentOfARecycledRing) {
  const LogConfig config = testing::small_config(4096, 4 * 4096);
  auto log = open_log(config);
  fill_old(*log, 80);
  ASSERT_GT(log->stats().segments_recycled, 0u);
  const int64_t first = log->segments()[0].base_offset;
  ASSERT_GT(first, 10);
  ASSERT_TRUE(log->reset_to(first / 2).ok());
  EXPECT_EQ(empty_at(*log, first / 2), "");
  expect_files_of_empty_log(first / 2);
  // The ring grows back and recycles again.
  fill_new(*log, 200);
  EXPECT_EQ(log->segments().size(), 4u);
  EXPECT_EQ(testing::check_log(*log, kNewMin, kNewMax), "");
}

TEST_F(ResetTest, AtTheFirstSegmentsBase) {
  auto log = open_log();
  fill_old(*log, 30);
  ASSERT_TRUE(log->reset_to(0).ok());  // the new segment replaces the old one of that name
  EXPECT_EQ(empty_at(*log, 0), "");
  expect_files_of_empty_log(0);
  fill_new(*log, 5);
  log.reset();
  log = open_log();
  EXPECT_EQ(log->log_start_offset(), 0);
  EXPECT_EQ(log->log_end_offset(), 15);
  EXPECT_EQ(testing::check_log(*log, kNewMin, kNewMax), "");
}

TEST_F(ResetTest, InsideTheLogAtASegmentBaseOrInsideABatch) {
  for (const bool at_base : {true, false}) {
    SCOPED_TRACE(at_base ? "at a segment base" : "inside a batch");
    auto log = open_log();
    fill_old(*log, 40);
    const std::vector<SegmentInfo> segments = log->segments();
    ASSERT_GE(segments.size(), 4u);
    const int64_t offset = segments[2].base_offset + (at_base ? 0 : 4);
    ASSERT_TRUE(log->reset_to(offset).ok());
    EXPECT_EQ(empty_at(*log, offset), "");
    expect_files_of_empty_log(offset);
    fill_new(*log, 40);  // over the old offsets, rolling
    EXPECT_EQ(testing::check_log(*log, kNewMin, kNewMax), "");
    ASSERT_TRUE(log->close().ok());
    log = open_log();
    EXPECT_EQ(log->log_start_offset(), offset);
    EXPECT_EQ(log->log_end_offset(), offset + 120);
    EXPECT_EQ(testing::check_log(*log, kNewMin, kNewMax), "");
    ASSERT_TRUE(log->reset_to(0).ok());  // for the next round
  }
}

TEST_F(ResetTest, EpochsStartAfresh) {
  auto log = open_log();
  fill_old(*log, 12, /*epoch_every=*/4);  // epochs 1, 2, 3
  ASSERT_EQ(log->last_epoch(), 3);
  const int64_t offset = log->log_end_offset() + 7;
  ASSERT_TRUE(log->reset_to(offset).ok());
  EXPECT_TRUE(log->epochs().entries().empty());
  EXPECT_EQ(log->last_epoch(), kNoLeaderEpoch);
  EXPECT_EQ(log->end_offset_for_epoch(2), (EpochEndOffset{0, 0}));
  fill_new(*log, 2, /*epoch=*/2);  // an epoch the old log held
  fill_new(*log, 1, /*epoch=*/5);
  const std::vector<EpochStart> expected{{2, offset}, {5, offset + 6}};
  EXPECT_EQ(log->epochs().entries(), expected);
  log.reset();  // a crash
  log = open_log();
  EXPECT_EQ(log->epochs().entries(), expected);
  ASSERT_TRUE(log->close().ok());
  log = open_log();
  EXPECT_EQ(log->epochs().entries(), expected);
}

TEST_F(ResetTest, BatchesWithoutAnEpochAfterAResetDoNotInheritAnOldOne) {
  auto log = open_log();
  fill_old(*log, 12, /*epoch_every=*/4);
  ASSERT_TRUE(log->reset_to(3).ok());
  fill_new(*log, 10, kNoLeaderEpoch);  // past where the old epochs began: no epoch file write
  log.reset();  // a crash
  log = open_log();
  EXPECT_TRUE(log->epochs().entries().empty());
  EXPECT_EQ(log->epoch_at(20), kNoLeaderEpoch);
}

TEST_F(ResetTest, TransactionsAreForgotten) {
  auto log = open_log();
  int notified = 0;
  log->set_stable_offset_listener([&] { ++notified; });
  fill_old(*log, 1);
  const int64_t first = testing::append_batch(*log, testing::transactional_batch(7, 2));
  ASSERT_GE(testing::append_batch(*log, testing::marker_batch(8, protocol::ControlType::kAbort)), 0);
  fill_old(*log, 1);
  ASSERT_EQ(log->transactions().ongoing_count(), 1u);
  ASSERT_TRUE(log->has_aborted_transactions());
  ASSERT_EQ(log->last_stable_offset(), first);
  ASSERT_TRUE(files().count(kTransactionsFile));
  const int notified_before = notified;

  const int64_t offset = log->log_end_offset() + 3;
  ASSERT_TRUE(log->reset_to(offset).ok());
  EXPECT_EQ(empty_at(*log, offset), "");
  EXPECT_GT(notified, notified_before) << "the LSO moved";
  EXPECT_EQ(files().count(kTransactionsFile), 0u);
  ASSERT_TRUE(log->close().ok());
  log = open_log();
  EXPECT_EQ(log->recovery_stats().bytes_scanned_for_transactions, 0u);
  EXPECT_EQ(log->transactions().ongoing_count(), 0u);
  fill_new(*log, 1);
  EXPECT_EQ(log->last_stable_offset(), log->log_end_offset());

  // A transactional batch after the reset is found again after a crash.
  const int64_t again = testing::append_batch(*log, testing::transactional_batch(9, 1));
  log.reset();
  log = open_log();
  EXPECT_EQ(log->transactions().ongoing_first_offset(9), again);
  EXPECT_EQ(log->transactions().ongoing_first_offset(7), -1);
  EXPECT_FALSE(log->has_aborted_transactions());
}

TEST_F(ResetTest, AppendsGoOnAndReopenTheSameCleanlyOrAfterACrash) {
  auto log = open_log();
  fill_old(*log, 20, /*epoch_every=*/5);
  ASSERT_TRUE(log->reset_to(1000).ok());
  fill_new(*log, 40, /*epoch=*/9);  // several segments
  ASSERT_GE(log->segments().size(), 2u);
  ASSERT_TRUE(log->close().ok());
  log = open_log();
  EXPECT_TRUE(log->recovery_stats().clean);
  EXPECT_EQ(log->recovery_stats().bytes_scanned, 0u);
  EXPECT_EQ(log->log_start_offset(), 1000);
  EXPECT_EQ(log->log_end_offset(), 1120);
  EXPECT_EQ(log->epochs().entries(), (std::vector<EpochStart>{{9, 1000}}));
  EXPECT_EQ(testing::check_log(*log, kNewMin, kNewMax), "");

  ASSERT_TRUE(log->reset_to(500).ok());
  fill_new(*log, 20);
  log.reset();  // a crash, nothing synced since the reset
  log = open_log();
  EXPECT_FALSE(log->recovery_stats().clean);
  EXPECT_EQ(log->log_start_offset(), 500);
  EXPECT_EQ(log->log_end_offset(), 560);  // a process crash: the page cache kept it
  EXPECT_EQ(testing::check_log(*log, kNewMin, kNewMax), "");
  std::set<std::string> names = files();
  for (const std::string& name : names) {
    int64_t base = 0;
    if (parse_offset_file_name(name, ".log", &base)) {
      EXPECT_GE(base, 500) << name << " is an old segment";
    }
  }
  ReadResult read;
  EXPECT_EQ(log->read(499, SIZE_MAX, -1, &read).code(), Status::Code::kOutOfRange);
}

TEST_F(ResetTest, AReaderKeepsItsRegions) {
  auto log = open_log();
  fill_old(*log, 30);
  ReadResult held;
  ASSERT_TRUE(log->read(0, SIZE_MAX, -1, &held).ok());
  ASSERT_GE(held.regions.size(), 3u);
  auto region_bytes = [](const protocol::FileRegion& region) {
    std::vector<uint8_t> bytes(region.length);
    EXPECT_EQ(::pread(region.fd, bytes.data(), bytes.size(), static_cast<off_t>(region.offset)),
              static_cast<ssize_t>(bytes.size()));
    return bytes;
  };
  std::vector<std::vector<uint8_t>> before;
  for (const protocol::FileRegion& region : held.regions) before.push_back(region_bytes(region));
  // At 0: the new segment takes the name of the held first one.
  ASSERT_TRUE(log->reset_to(0).ok());
  fill_new(*log, 30);
  ASSERT_TRUE(log->wait_durable(log->log_end_offset(), 10000));
  for (size_t i = 0; i < held.regions.size(); ++i) {
    EXPECT_EQ(region_bytes(held.regions[i]), before[i]) << "region " << i << " changed under its reader";
  }
  held = ReadResult{};
  EXPECT_EQ(testing::check_log(*log, kNewMin, kNewMax), "");
  log.reset();
  log = open_log();
  EXPECT_EQ(log->log_end_offset(), 90);
  EXPECT_EQ(testing::check_log(*log, kNewMin, kNewMax), "");
}

TEST_F(ResetTest, TheBudgetIsChargedForWhatIsLeft) {
  const LogConfig config = testing::small_config(4096);  // unbounded: grows past its reservation
  DiskBudget budget;
  auto log = open_log(config);
  log->set_budget(&budget);
  fill_old(*log, 60);
  ASSERT_GT(log->budget_charge(), partition_reservation_bytes(config));
  ASSERT_TRUE(log->reset_to(77).ok());
  EXPECT_EQ(log->footprint_bytes(), partition_overhead_bytes() + segment_footprint_bytes(4096, 256));
  EXPECT_EQ(log->budget_charge(), partition_reservation_bytes(config));
  EXPECT_EQ(budget.used_bytes(), kOtherFilesReserveBytes + log->budget_charge());
  fill_new(*log, 60);
  EXPECT_GT(log->budget_charge(), partition_reservation_bytes(config));
  EXPECT_EQ(budget.used_bytes(), kOtherFilesReserveBytes + log->budget_charge());
  log.reset();
  EXPECT_EQ(budget.used_bytes(), kOtherFilesReserveBytes);
}

// ---------------------------------------------------------------------------
// Power cuts
// ---------------------------------------------------------------------------

using testing::PowerCutFilesystem;

// Lets through the first n intercepted operations after arm(n), then fails
// every later one with EIO, as a disk without power: PowerCutFilesystem
// (which it forwards the others to) then undoes what no sync covered.
class PowerOffAfter : public port::FileInterceptor {
 public:
  explicit PowerOffAfter(PowerCutFilesystem* disk) : disk_(disk) {}
  void lock() override { disk_->lock(); }
  void unlock() override { disk_->unlock(); }
  std::error_code before(const port::FileEvent& event) override {
    if (armed_ && !off_) {
      if (passed_ == limit_) {
        off_ = true;
      } else {
        ++passed_;
      }
    }
    if (off_) return std::error_code(EIO, std::generic_category());
    return disk_->before(event);
  }
  void after(const port::FileEvent& event, const std::error_code& result) override { disk_->after(event, result); }

  void arm(uint64_t operations) {
    std::lock_guard<PowerOffAfter> hold(*this);
    armed_ = true;
    off_ = false;
    passed_ = 0;
    limit_ = operations;
  }
  // Everything goes through again.
  void disarm() {
    std::lock_guard<PowerOffAfter> hold(*this);
    armed_ = false;
    off_ = false;
  }
  bool off() {
    std::lock_guard<PowerOffAfter> hold(*this);
    return off_;
  }
  // The operations let through since arm().
  uint64_t passed() {
    std::lock_guard<PowerOffAfter> hold(*this);
    return passed_;
  }

 private:
  PowerCutFilesystem* const disk_;
  bool armed_ = false;
  bool off_ = false;
  uint64_t passed_ = 0;
  uint64_t limit_ = 0;
};

LogConfig ring_config() { return testing::small_config(4096, 4 * 4096); }

// The log a reset starts from, durable: a recycled ring of 4 segments with
// leader epochs, an open transaction and a log start moved by DeleteRecords
// into its first or second segment.
struct OldLog {
  int64_t first_base = 0;
  int64_t start = 0;
  int64_t end = 0;
  int64_t transaction = -1;  // the open transaction's first offset
  std::vector<SegmentInfo> segments;
};

constexpr int kOldBatches = 100;
constexpr int kTransactionBatch = 90;

// live_first_segment: the log start lies in the first segment (else in the
// second: the first holds only deleted records).
void build_old_log(const std::string& directory, Flusher* flusher, bool live_first_segment,
                   std::unique_ptr<PartitionLog>* log, OldLog* old) {
  ASSERT_TRUE(PartitionLog::open(directory, ring_config(), flusher, log).ok());
  PartitionLog& l = **log;
  for (int i = 0; i < kOldBatches; ++i) {
    const bool transactional = i == kTransactionBatch;
    if (transactional) old->transaction = l.log_end_offset();
    ASSERT_TRUE(append_at_end(l, 1 + i % 3, kOldMin, kOldMax, 1 + i / 12, transactional).ok());
  }
  const std::vector<SegmentInfo> segments = l.segments();
  ASSERT_EQ(segments.size(), 4u);
  ASSERT_GT(segments[0].base_offset, 0) << "the ring has not recycled";
  ASSERT_GE(old->transaction, segments[0].base_offset);
  const int64_t start = segments[live_first_segment ? 0 : 1].base_offset + 2;
  ASSERT_TRUE(l.delete_records_before(start).ok());
  ASSERT_TRUE(l.close().ok());  // everything durable, log-start-offset.checkpoint too
  log->reset();
  ASSERT_TRUE(PartitionLog::open(directory, ring_config(), flusher, log).ok());
  // (The caller forgets what is not synced: log-start-offset.checkpoint's
  // contents never are. A lost one would bring the old log's first segment
  // back, with epochs only from the old start: not what is tested here.)
  old->first_base = (*log)->segments()[0].base_offset;
  old->start = (*log)->log_start_offset();
  old->end = (*log)->log_end_offset();
  old->segments = (*log)->segments();
  ASSERT_EQ(old->start, start);
}

// "" when log is the old log or a prefix of it: old records only, from a
// start the old log's would be (or its first segment's base, when the reset
// had to drop a log start above offset), with the epochs and the open
// transaction its batches say.
std::string old_or_prefix(PartitionLog& log, const OldLog& old, int64_t offset) {
  if (std::string problem = testing::check_log(log, kOldMin, kOldMax); !problem.empty()) return problem;
  if (log.log_end_offset() > old.end) return "offsets were invented";
  const int64_t end = log.log_end_offset();
  const int64_t start = log.log_start_offset();
  const bool as_before = start == std::min(old.start, end);
  const bool from_first_base = old.start > offset && start == old.first_base;
  if (!as_before && !from_first_base) return "log start " + std::to_string(start);
  std::vector<uint8_t> bytes;
  int64_t next = 0;
  if (!log.read_copy(start, SIZE_MAX, end, &bytes, &next).ok()) return "read";
  protocol::BatchIterator it(bytes);
  protocol::RecordBatchView view;
  EpochIndex epochs;
  while (it.next(&view)) epochs.note_batch(view.partition_leader_epoch(), view.base_offset());
  epochs.trim_before(start);
  if (epochs.entries() != log.epochs().entries()) {
    auto text = [](const std::vector<EpochStart>& entries) {
      std::string out;
      for (const EpochStart& e : entries) out += " " + std::to_string(e.epoch) + "@" + std::to_string(e.start_offset);
      return out;
    };
    return "the epoch index is not what the batches say: batches" + text(epochs.entries()) + ", index" +
           text(log.epochs().entries());
  }
  const int64_t open = log.transactions().ongoing_first_offset(7);
  if (open != (old.transaction < end ? old.transaction : -1)) return "open transaction at " + std::to_string(open);
  return "";
}

uint64_t env_number(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

TEST(StorageResetPowerCutTest, EveryCrashPointReopensTheOldLogOrTheEmptyLogAtTheOffset) {
  const uint64_t seed = env_number("EDDY_POWER_CUT_SEED", std::random_device{}());
  std::printf("seed %llu (EDDY_POWER_CUT_SEED=%llu replays it)\n", static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> share(0, 1);
  TempDir root(port::is_directory("/dev/shm") ? "/dev/shm" : nullptr);
  const port::LogLevel level = port::log_level();
  port::set_log_level(port::LogLevel::kOff);
  PowerCutFilesystem disk(root.file("disk"), root.file("stash"));
  PowerOffAfter power(&disk);
  port::set_file_interceptor(&power);
  struct Uninstall {  // before power, disk and root go, however the test ends
    port::LogLevel level;
    ~Uninstall() {
      port::set_file_interceptor(nullptr);
      port::set_log_level(level);
    }
  } uninstall{level};
  auto flusher = std::make_unique<Flusher>();
  flusher->start();

  enum Where { kBelowAll, kAtFirstBase, kBelowLogStart, kAtSegmentBase, kInsideSegment, kAtEnd, kAbove };
  const char* const names[] = {"below every segment", "at the first segment's base", "below the log start",
                               "at a later segment's base", "inside a segment", "at the log end", "above the log"};
  uint64_t serial = 0;
  uint64_t resets_cut = 0, old_whole = 0, old_prefix = 0, new_before_ok = 0, new_after_ok = 0;
  for (int where = kBelowAll; where <= kAbove; ++where) {
    SCOPED_TRACE(names[where]);
    uint64_t operations = UINT64_MAX;  // reset_to's, known once a reset ran through
    for (uint64_t cut_at = 0; cut_at <= operations; ++cut_at) {
      // Power off before operation cut_at of the reset (after the last one:
      // once it returned), with what was unsynced lost at several rates.
      const std::pair<double, double> rates[] = {{0, 0}, {1, 1}, {1, 0}, {share(rng), share(rng)},
                                                 {share(rng), share(rng)}};
      for (const auto& [undo, directory_undo] : rates) {
        SCOPED_TRACE("power off before operation " + std::to_string(cut_at) + ", seed " + std::to_string(seed));
        const std::string directory = root.file("disk") + "/p-" + std::to_string(serial++);
        std::unique_ptr<PartitionLog> log;
        OldLog old;
        ASSERT_NO_FATAL_FAILURE(build_old_log(directory, flusher.get(), rng() % 2 == 0, &log, &old));
        disk.reset();  // the old log is on disk, whole
        int64_t offset = 0;
        switch (where) {
          case kBelowAll: offset = old.first_base / 2; break;
          case kAtFirstBase: offset = old.first_base; break;
          case kBelowLogStart: offset = (old.first_base + old.start) / 2; break;
          case kAtSegmentBase: offset = old.segments[2].base_offset; break;
          case kInsideSegment: offset = old.segments[2].base_offset + 2; break;
          case kAtEnd: offset = old.end; break;
          case kAbove: offset = old.end + 100; break;
        }
        std::optional<ReadResult> held;
        if (serial % 2 == 0) {
          held.emplace();
          ASSERT_TRUE(log->read(old.start, SIZE_MAX, -1, &*held).ok());
        }

        // Armed until the log is gone: when the power went off, nothing
        // the log does on its way out reaches the disk.
        auto forget_partition = [&] {
          log.reset();
          std::error_code ec;
          std::filesystem::remove_all(directory, ec);
          disk.reset();
        };
        // Appends to the new log, without an epoch (so that no epoch file is
        // written) and up to the base of an old segment above offset when
        // there is one, synced; then a power cut. No leftover of the old
        // log may continue the new one, nor an old epoch or transaction.
        auto append_then_cut = [&] {
          int64_t target = offset + 12;
          for (const SegmentInfo& segment : old.segments) {
            if (segment.base_offset > offset) {
              target = segment.base_offset;
              break;
            }
          }
          while (log->log_end_offset() < target) {
            const int records = static_cast<int>(std::min<int64_t>(3, target - log->log_end_offset()));
            ASSERT_TRUE(append_at_end(*log, records, kNewMin, kNewMax, kNoLeaderEpoch).ok());
          }
          ASSERT_TRUE(log->wait_durable(target, 10000));
          disk.cut(rng, share(rng), share(rng));
          held.reset();
          log.reset();
          disk.reset();
          Status s = PartitionLog::open(directory, ring_config(), flusher.get(), &log);
          ASSERT_TRUE(s.ok()) << s.to_string();
          EXPECT_EQ(log->log_start_offset(), offset);
          EXPECT_EQ(log->log_end_offset(), target);
          EXPECT_EQ(testing::check_log(*log, kNewMin, kNewMax), "");
          EXPECT_TRUE(log->epochs().entries().empty());
          EXPECT_EQ(log->transactions().ongoing_count(), 0u);
        };

        // Armed until the log is gone: when the power went off, nothing
        // the log does on its way out reaches the disk.
        power.arm(cut_at);
        const Status reset = log->reset_to(offset);
        if (!power.off()) {
          ASSERT_TRUE(reset.ok()) << reset.to_string();
          operations = std::min(operations, power.passed());
          power.disarm();
          // The reset returned: the power cut comes after appends to the
          // new log, in the same run.
          ASSERT_EQ(empty_at(*log, offset), "");
          ASSERT_NO_FATAL_FAILURE(append_then_cut());
          ++new_after_ok;
          forget_partition();
          continue;
        }
        ++resets_cut;
        disk.cut(rng, undo, directory_undo);
        held.reset();
        log.reset();
        disk.reset();
        power.disarm();

        Status s = PartitionLog::open(directory, ring_config(), flusher.get(), &log);
        ASSERT_TRUE(s.ok()) << s.to_string();
        if (log->log_start_offset() != offset || log->log_end_offset() != offset) {
          ASSERT_EQ(old_or_prefix(*log, old, offset), "");
          ++(log->log_end_offset() == old.end && log->log_start_offset() == old.start ? old_whole : old_prefix);
          forget_partition();
          continue;
        }
        ASSERT_EQ(empty_at(*log, offset), "");
        ++new_before_ok;
        // Leftovers of the cut reset (a later old segment, a stale
        // checkpoint) are harmless after reopening.
        ASSERT_NO_FATAL_FAILURE(append_then_cut());
        forget_partition();
      }
    }
    std::printf("%s: %llu file operations\n", names[where], static_cast<unsigned long long>(operations));
    EXPECT_GT(operations, 5u);
    EXPECT_LT(operations, UINT64_MAX);
  }
  flusher.reset();
  std::printf("%llu resets cut short: reopened %llu old logs whole, %llu as a prefix, %llu empty at the offset; "
              "%llu completed resets survived\n",
              static_cast<unsigned long long>(resets_cut), static_cast<unsigned long long>(old_whole),
              static_cast<unsigned long long>(old_prefix), static_cast<unsigned long long>(new_before_ok),
              static_cast<unsigned long long>(new_after_ok));
  EXPECT_GT(old_whole, 0u);
  EXPECT_GT(old_prefix, 0u);
  EXPECT_GT(new_before_ok, 0u);
  EXPECT_GT(new_after_ok, 0u);
}

}  // namespace
}  // namespace eddy::storage
