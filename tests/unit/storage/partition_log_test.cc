#include "storage/partition_log.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <set>
#include <thread>

#include "port/port.h"
#include "storage/segment.h"
#include "storage_test_util.h"

namespace eddy::storage {
namespace {

using protocol::BatchError;
using protocol::BatchIterator;
using protocol::RecordBatchView;
using testing::TempDir;

class PartitionLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    flusher_.start();
  }

  std::unique_ptr<PartitionLog> open_log(const LogConfig& config) {
    std::unique_ptr<PartitionLog> log;
    Status s = PartitionLog::open(dir_.file("t-0"), config, &flusher_, &log);
    EXPECT_EQ(s.code(), Status::Code::kOk) << s.to_string().c_str();
    return log;
  }

  // Appends a batch of `records` records whose contents name their offsets.
  AppendResult append(PartitionLog& log, int records, size_t min_size = 20, size_t max_size = 60,
                      int64_t timestamp = 1000) {
    std::vector<uint8_t> batch = testing::batch_for_offsets(log.log_end_offset(), records, min_size, max_size, timestamp);
    AppendResult result;
    Status s = log.append(batch, AppendOptions{}, &result);
    EXPECT_EQ(s.code(), Status::Code::kOk) << s.to_string().c_str();
    return result;
  }

  // Reads [from, LEO) and checks every batch and record; returns the number
  // of records seen.
  int64_t verify_log(PartitionLog& log, int64_t from) {
    std::vector<uint8_t> bytes;
    int64_t next = 0;
    EXPECT_EQ(log.read_copy(from, SIZE_MAX, log.log_end_offset(), &bytes, &next).code(), Status::Code::kOk);
    BatchIterator it(bytes);
    RecordBatchView view;
    int64_t expected = -1;
    int64_t records = 0;
    while (it.next(&view)) {
      if (expected >= 0) {
        EXPECT_EQ(view.base_offset(), expected);
      }
      expected = view.next_offset();
      protocol::RecordIterator rit(view);
      protocol::Record r;
      while (rit.next(&r)) {
        int64_t offset = view.base_offset() + r.offset_delta;
        EXPECT_EQ(std::string(reinterpret_cast<const char*>(r.key->data()), r.key->size()),
                  testing::key_for_offset(offset));
        EXPECT_EQ(std::string(reinterpret_cast<const char*>(r.value->data()), r.value->size()),
                  testing::value_for_offset(offset, 20, 60));
        ++records;
      }
      EXPECT_EQ(rit.error(), BatchError::kOk);
    }
    EXPECT_EQ(it.error(), BatchError::kOk);
    EXPECT_EQ(it.position(), bytes.size());
    if (!bytes.empty()) {
      EXPECT_EQ(expected, log.log_end_offset());
    }
    return records;
  }

  std::vector<std::string> files_with_suffix(const char* suffix) {
    std::vector<std::string> out;
    for (const auto& entry : std::filesystem::directory_iterator(dir_.file("t-0"))) {
      std::string name = entry.path().filename().string();
      if (name.size() > strlen(suffix) && name.compare(name.size() - strlen(suffix), strlen(suffix), suffix) == 0) {
        out.push_back(name);
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  TempDir dir_;
  Flusher flusher_;
};

// A loop that says whether the calling thread is its own.
class StubLoop : public port::Executor {
 public:
  explicit StubLoop(bool on_loop) : on_loop_(on_loop) {}
  void post(std::function<void()>) override {}
  TimerId schedule_after(int64_t, std::function<void()>) override { return 0; }
  void cancel(TimerId) override {}
  int64_t now_ms() override { return 0; }
  bool on_loop_thread() const override { return on_loop_; }

 private:
  bool on_loop_;
};

TEST_F(PartitionLogTest, AnOwnedLogWorksOnItsOwnersThread) {
  StubLoop owner(/*on_loop=*/true);
  auto log = open_log(testing::small_config(4096));
  log->set_owner(&owner);
  append(*log, 3);
  EXPECT_EQ(verify_log(*log, 0), 3);
  EXPECT_TRUE(log->close().ok());
}

TEST_F(PartitionLogTest, OwnerThreadMethodsOnAnotherThreadAbortInCheckedBuilds) {
#if EDDY_CHECKED
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the flusher thread runs
  StubLoop elsewhere(/*on_loop=*/false);
  auto log = open_log(testing::small_config(4096));
  append(*log, 1);  // no owner yet: nothing is checked
  log->set_owner(&elsewhere);
  std::vector<uint8_t> batch = testing::batch_for_offsets(log->log_end_offset(), 1, 20, 60, 1000);
  AppendResult result;
  EXPECT_DEATH((void)log->append(batch, AppendOptions{}, &result), "reactor-only code called on another thread");
  std::vector<uint8_t> bytes;
  int64_t next = 0;
  EXPECT_DEATH((void)log->read_copy(0, SIZE_MAX, -1, &bytes, &next), "reactor-only code called on another thread");
  EXPECT_DEATH((void)log->high_watermark(), "reactor-only code called on another thread");
  log->set_owner(nullptr);
#else
  GTEST_SKIP() << "the owner-thread checks are compiled only into checked builds (EDDY_CHECKED)";
#endif
}

TEST_F(PartitionLogTest, AppendAssignsOffsetsAndPatchesHeaders) {
  auto log = open_log(testing::small_config(64 << 10));
  EXPECT_EQ(log->log_start_offset(), 0);
  EXPECT_EQ(log->log_end_offset(), 0);
  for (int i = 0; i < 10; ++i) {
    std::vector<uint8_t> batch = testing::batch_for_offsets(log->log_end_offset(), 3, 20, 60);
    AppendResult result;
    ASSERT_EQ(log->append(batch, AppendOptions{.leader_epoch = 7}, &result).code(), Status::Code::kOk);
    EXPECT_EQ(result.base_offset, i * 3);
    EXPECT_EQ(result.last_offset, i * 3 + 2);
    EXPECT_EQ(result.log_append_time_ms, -1);
    // Patched in place, CRC still valid.
    RecordBatchView view;
    ASSERT_EQ(RecordBatchView::parse(batch, &view), BatchError::kOk);
    EXPECT_EQ(view.base_offset(), i * 3);
    EXPECT_EQ(view.partition_leader_epoch(), 7);
    EXPECT_TRUE(view.crc_matches());
  }
  EXPECT_EQ(log->log_end_offset(), 30);
  EXPECT_EQ(log->high_watermark(), 30);  // page-cache mode
  EXPECT_EQ(verify_log(*log, 0), 30);
}

TEST_F(PartitionLogTest, RejectsBadBatchesWithoutChangingTheLog) {
  auto log = open_log(testing::small_config(4096));
  append(*log, 2);
  AppendResult result;
  std::vector<uint8_t> bad_crc = testing::simple_batch(2, 10);
  bad_crc.back() ^= 1;
  EXPECT_EQ(log->append(bad_crc, {}, &result).code(), Status::Code::kCorruption);
  std::vector<uint8_t> magic1 = testing::simple_batch(2, 10);
  magic1[protocol::batch_layout::kMagic] = 1;
  EXPECT_EQ(log->append(magic1, {}, &result).code(), Status::Code::kNotSupported);
  std::vector<uint8_t> trailing = testing::simple_batch(2, 10);
  trailing.push_back(0);
  EXPECT_EQ(log->append(trailing, {}, &result).code(), Status::Code::kCorruption);
  std::vector<uint8_t> truncated = testing::simple_batch(2, 10);
  truncated.pop_back();
  EXPECT_EQ(log->append(truncated, {}, &result).code(), Status::Code::kCorruption);
  std::vector<uint8_t> huge = testing::simple_batch(1, 5000);
  EXPECT_EQ(log->append(huge, {}, &result).code(), Status::Code::kTooLarge);
  EXPECT_EQ(log->log_end_offset(), 2);
  EXPECT_EQ(verify_log(*log, 0), 2);
}

TEST_F(PartitionLogTest, ReadStartsAtTheBatchHoldingTheOffsetAndReturnsWholeBatches) {
  auto log = open_log(testing::small_config(64 << 10));
  std::vector<size_t> sizes;
  for (int i = 0; i < 20; ++i) {
    std::vector<uint8_t> batch = testing::batch_for_offsets(log->log_end_offset(), 4, 20, 60);
    sizes.push_back(batch.size());
    AppendResult r;
    ASSERT_EQ(log->append(batch, {}, &r).code(), Status::Code::kOk);
  }
  ReadResult result;
  ASSERT_EQ(log->read(6, 1 << 20, -1, &result).code(), Status::Code::kOk);
  ASSERT_FALSE(result.regions.empty());
  std::vector<uint8_t> bytes;
  int64_t next = 0;
  ASSERT_EQ(log->read_copy(6, 1 << 20, -1, &bytes, &next).code(), Status::Code::kOk);
  RecordBatchView first;
  ASSERT_EQ(RecordBatchView::parse(bytes, &first), BatchError::kOk);
  EXPECT_EQ(first.base_offset(), 4);  // the batch holding offset 6
  EXPECT_EQ(next, 80);

  // max_bytes smaller than one batch: that batch alone.
  ASSERT_EQ(log->read_copy(8, 1, -1, &bytes, &next).code(), Status::Code::kOk);
  EXPECT_EQ(bytes.size(), sizes[2]);
  EXPECT_EQ(next, 12);
  ASSERT_EQ(log->read_copy(8, 0, -1, &bytes, &next).code(), Status::Code::kOk);
  EXPECT_EQ(bytes.size(), sizes[2]);

  // Whole batches only, never more than max_bytes after the first.
  for (size_t max = 1; max < 3000; max += 37) {
    ASSERT_EQ(log->read_copy(0, max, -1, &bytes, &next).code(), Status::Code::kOk);
    size_t expected = sizes[0];
    size_t batches = 1;
    while (batches < sizes.size() && expected + sizes[batches] <= max) expected += sizes[batches++];
    EXPECT_EQ(bytes.size(), expected) << max;
    EXPECT_EQ(next, static_cast<int64_t>(batches) * 4) << max;
    size_t count = 0;
    EXPECT_EQ(protocol::validate_batches(bytes, &count), BatchError::kOk);
    EXPECT_EQ(count, batches);
  }

  // Upper bound: batches from the bound on are not returned.
  ASSERT_EQ(log->read_copy(0, 1 << 20, 40, &bytes, &next).code(), Status::Code::kOk);
  EXPECT_EQ(next, 40);
  ASSERT_EQ(log->read_copy(40, 1 << 20, 40, &bytes, &next).code(), Status::Code::kOk);
  EXPECT_TRUE(bytes.empty());
  EXPECT_EQ(next, 40);

  // Range: at the end is empty, beyond the end is out of range.
  ASSERT_EQ(log->read(80, 100, -1, &result).code(), Status::Code::kOk);
  EXPECT_TRUE(result.regions.empty());
  EXPECT_EQ(result.next_offset, 80);
  EXPECT_EQ(log->read(81, 100, -1, &result).code(), Status::Code::kOutOfRange);
  EXPECT_EQ(log->read(-1, 100, -1, &result).code(), Status::Code::kOutOfRange);
}

TEST_F(PartitionLogTest, VisitHeadersGivesEachBatchsFixedFieldsAcrossSegments) {
  auto log = open_log(testing::small_config(4096));  // a roll every few batches
  std::vector<std::vector<uint8_t>> stored;
  for (int i = 0; i < 30; ++i) {
    std::vector<uint8_t> batch = testing::batch_for_offsets(log->log_end_offset(), 3, 100, 300);
    AppendResult r;
    ASSERT_EQ(log->append(batch, {}, &r).code(), Status::Code::kOk);
    std::vector<uint8_t> bytes;
    int64_t next = 0;
    ASSERT_EQ(log->read_copy(r.base_offset, 1, log->log_end_offset(), &bytes, &next).code(), Status::Code::kOk);
    stored.push_back(bytes);
  }
  ASSERT_GE(log->stats().segments, 3u) << "spans several segments";
  // From inside batch 4 (offsets 12..14) to before the batch at offset 60.
  std::vector<int64_t> bases;
  Status s = log->visit_headers(13, 60, [&](const BatchPosition& batch, std::span<const uint8_t> header, bool*) {
    const auto& whole = stored[static_cast<size_t>(batch.info.base_offset / 3)];
    EXPECT_TRUE(std::equal(header.begin(), header.end(), whole.begin())) << batch.info.base_offset;
    EXPECT_EQ(header.size(), protocol::batch_layout::kHeaderSize);
    EXPECT_EQ(batch.info.size, whole.size());
    bases.push_back(batch.info.base_offset);
    return Status();
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
  std::vector<int64_t> want;
  for (int64_t b = 12; b < 60; b += 3) want.push_back(b);
  EXPECT_EQ(bases, want);
  // stop ends the visit; an error is returned; past the end: out of range.
  bases.clear();
  ASSERT_TRUE(log->visit_headers(0, 90, [&](const BatchPosition& batch, std::span<const uint8_t>, bool* stop) {
                    bases.push_back(batch.info.base_offset);
                    *stop = bases.size() == 2;
                    return Status();
                  }).ok());
  EXPECT_EQ(bases, (std::vector<int64_t>{0, 3}));
  EXPECT_TRUE(log->visit_headers(0, 90, [](const BatchPosition&, std::span<const uint8_t>, bool*) {
                    return Status::io_error("visitor");
                  }).is_io_error());
  EXPECT_EQ(log->visit_headers(91, 100, [](const BatchPosition&, std::span<const uint8_t>, bool*) {
              return Status();
            }).code(), Status::Code::kOutOfRange);
  // At the end: nothing to visit.
  EXPECT_TRUE(log->visit_headers(90, 100, [](const BatchPosition&, std::span<const uint8_t>, bool*) {
                    ADD_FAILURE() << "nothing past the end";
                    return Status();
                  }).ok());
}

TEST_F(PartitionLogTest, FileRegionsHoldExactlyTheReturnedBytes) {
  auto log = open_log(testing::small_config(4096));
  for (int i = 0; i < 40; ++i) append(*log, 3);
  ReadResult result;
  ASSERT_EQ(log->read(0, 1 << 20, -1, &result).code(), Status::Code::kOk);
  EXPECT_GT(result.regions.size(), 1u);  // spans segments
  std::vector<uint8_t> via_regions;
  for (const auto& region : result.regions) {
    ASSERT_GE(region.fd, 0);
    ASSERT_TRUE(region.keep_alive);
    size_t at = via_regions.size();
    via_regions.resize(at + region.length);
    ASSERT_EQ(pread(region.fd, via_regions.data() + at, region.length, static_cast<off_t>(region.offset)),
              static_cast<ssize_t>(region.length));
  }
  EXPECT_EQ(via_regions.size(), result.bytes);
  std::vector<uint8_t> copied;
  int64_t next = 0;
  ASSERT_EQ(log->read_copy(0, 1 << 20, -1, &copied, &next).code(), Status::Code::kOk);
  EXPECT_EQ(via_regions, copied);
  EXPECT_EQ(next, result.next_offset);
  EXPECT_EQ(next, 120);
}

TEST_F(PartitionLogTest, RollsIntoPreallocatedSegmentsNamedByBaseOffset) {
  auto log = open_log(testing::small_config(4096));
  for (int i = 0; i < 150; ++i) append(*log, 2);
  std::vector<SegmentInfo> segments = log->segments();
  ASSERT_GT(segments.size(), 3u);
  std::vector<std::string> files = files_with_suffix(".log");
  ASSERT_EQ(files.size(), segments.size());
  for (size_t i = 0; i < segments.size(); ++i) {
    EXPECT_EQ(files[i], segment_file_name(segments[i].base_offset));
    EXPECT_EQ(files[i].size(), 24u);
    EXPECT_EQ(std::filesystem::file_size(dir_.file("t-0/" + files[i])), 4096u);
    EXPECT_EQ(segments[i].capacity, 4096u);
    if (i + 1 < segments.size()) {
      EXPECT_EQ(segments[i].next_offset, segments[i + 1].base_offset);
      // Rolled because the next batch did not fit.
      EXPECT_GT(segments[i].end_position + 100, 4096u - 200);
    }
  }
  EXPECT_EQ(log->stats().rolls, segments.size() - 1);
  EXPECT_EQ(verify_log(*log, 0), 300);
}

TEST_F(PartitionLogTest, RecyclesTheOldestSegmentFileWithinTheBudget) {
  LogConfig config = testing::small_config(4096, 3 * 4096);
  auto log = open_log(config);
  while (files_with_suffix(".log").size() < 3) append(*log, 2);
  std::set<ino_t> inodes;
  for (const std::string& f : files_with_suffix(".log")) {
    struct stat st;
    ASSERT_EQ(stat(dir_.file("t-0/" + f).c_str(), &st), 0);
    inodes.insert(st.st_ino);
  }
  ASSERT_EQ(inodes.size(), 3u);
  for (int i = 0; i < 300; ++i) {
    append(*log, 2);
    ASSERT_EQ(files_with_suffix(".log").size(), 3u);
  }
  // Still the same three files, renamed and reused.
  std::set<ino_t> after;
  for (const std::string& f : files_with_suffix(".log")) {
    struct stat st;
    ASSERT_EQ(stat(dir_.file("t-0/" + f).c_str(), &st), 0);
    after.insert(st.st_ino);
    EXPECT_EQ(st.st_size, 4096);
  }
  EXPECT_EQ(after, inodes);
  EXPECT_GT(log->stats().segments_recycled, 10u);
  std::vector<SegmentInfo> segments = log->segments();
  EXPECT_EQ(log->log_start_offset(), segments.front().base_offset);
  EXPECT_GT(log->log_start_offset(), 0);
  ReadResult result;
  EXPECT_EQ(log->read(log->log_start_offset() - 1, 100, -1, &result).code(), Status::Code::kOutOfRange);
  int64_t records = verify_log(*log, log->log_start_offset());
  EXPECT_EQ(records, log->log_end_offset() - log->log_start_offset());
  EXPECT_EQ(log->stats().disk_bytes, 3u * 4096);
}

TEST_F(PartitionLogTest, IndexLookupsAtSegmentEdges) {
  for (uint32_t interval : {1u, 256u, 100000u}) {
    TempDir dir;
    LogConfig config = testing::small_config(4096);
    config.index_interval_bytes = interval;
    std::unique_ptr<PartitionLog> log;
    ASSERT_EQ(PartitionLog::open(dir.file("p-0"), config, &flusher_, &log).code(), Status::Code::kOk);
    // Batches of varying record counts, so offsets and positions differ.
    std::vector<std::pair<int64_t, int64_t>> batches;  // base, last
    for (int i = 0; i < 80; ++i) {
      AppendResult r = append(*log, 1 + i % 5);
      batches.push_back({r.base_offset, r.last_offset});
    }
    std::vector<SegmentInfo> segments = log->segments();
    ASSERT_GT(segments.size(), 4u);
    for (const SegmentInfo& segment : segments) {
      BatchLocation at;
      ASSERT_EQ(log->lookup(segment.base_offset, &at).code(), Status::Code::kOk);
      EXPECT_EQ(at.segment_base_offset, segment.base_offset);
      EXPECT_EQ(at.batch.position, 0u);
      EXPECT_EQ(at.batch.info.base_offset, segment.base_offset);
      if (segment.next_offset == log->log_end_offset()) continue;
      ASSERT_EQ(log->lookup(segment.next_offset - 1, &at).code(), Status::Code::kOk);
      EXPECT_EQ(at.segment_base_offset, segment.base_offset);
      EXPECT_EQ(at.batch.info.last_offset, segment.next_offset - 1);
      EXPECT_EQ(at.batch.position + at.batch.info.size, segment.end_position);
    }
    // Every offset maps to the batch holding it.
    for (const auto& [base, last] : batches) {
      for (int64_t o = base; o <= last; ++o) {
        BatchLocation at;
        ASSERT_EQ(log->lookup(o, &at).code(), Status::Code::kOk);
        EXPECT_EQ(at.batch.info.base_offset, base);
        EXPECT_EQ(at.batch.info.last_offset, last);
      }
    }
    BatchLocation at;
    EXPECT_EQ(log->lookup(log->log_end_offset(), &at).code(), Status::Code::kOutOfRange);
    // Reading from each segment edge returns that segment's first batch.
    for (const SegmentInfo& segment : segments) {
      std::vector<uint8_t> bytes;
      int64_t next = 0;
      ASSERT_EQ(log->read_copy(segment.base_offset, 1, -1, &bytes, &next).code(), Status::Code::kOk);
      RecordBatchView view;
      ASSERT_EQ(RecordBatchView::parse(bytes, &view), BatchError::kOk);
      EXPECT_EQ(view.base_offset(), segment.base_offset);
    }
  }
}

TEST_F(PartitionLogTest, TimestampLookupFindsTheFirstRecordAtOrAfter) {
  auto log = open_log(testing::small_config(4096));
  // Batch i holds 3 records with timestamps 10000 + 100 i + {0, 1, 2}.
  for (int i = 0; i < 60; ++i) append(*log, 3, 20, 60, 10000 + 100 * i);
  ASSERT_GT(log->segments().size(), 3u);
  TimestampLookup found;
  ASSERT_EQ(log->find_offset_by_timestamp(0, &found).code(), Status::Code::kOk);
  EXPECT_TRUE(found.found);
  EXPECT_EQ(found.offset, 0);
  EXPECT_EQ(found.timestamp, 10000);
  for (int i = 0; i < 60; ++i) {
    ASSERT_EQ(log->find_offset_by_timestamp(10000 + 100 * i + 1, &found).code(), Status::Code::kOk);
    EXPECT_TRUE(found.found);
    EXPECT_EQ(found.offset, 3 * i + 1) << i;
    EXPECT_EQ(found.timestamp, 10000 + 100 * i + 1);
    ASSERT_EQ(log->find_offset_by_timestamp(10000 + 100 * i + 50, &found).code(), Status::Code::kOk);
    if (i + 1 < 60) {
      EXPECT_EQ(found.offset, 3 * (i + 1)) << i;
    } else {
      EXPECT_FALSE(found.found);
    }
  }
  ASSERT_EQ(log->find_max_timestamp(&found).code(), Status::Code::kOk);
  EXPECT_TRUE(found.found);
  EXPECT_EQ(found.offset, 179);
  EXPECT_EQ(found.timestamp, 10000 + 100 * 59 + 2);
  // Below the log start is never returned.
  ASSERT_EQ(log->delete_records_before(31).code(), Status::Code::kOk);
  ASSERT_EQ(log->find_offset_by_timestamp(0, &found).code(), Status::Code::kOk);
  EXPECT_EQ(found.offset, 31);
}

TEST_F(PartitionLogTest, LogAppendTimeStampsTheBatch) {
  LogConfig config = testing::small_config(4096);
  config.timestamp_type = protocol::TimestampType::kLogAppendTime;
  auto log = open_log(config);
  std::vector<uint8_t> batch = testing::simple_batch(3, 10, 5);
  AppendResult result;
  ASSERT_EQ(log->append(batch, AppendOptions{.leader_epoch = 0, .now_ms = 1700000000000LL}, &result).code(), Status::Code::kOk);
  EXPECT_EQ(result.log_append_time_ms, 1700000000000LL);
  std::vector<uint8_t> stored;
  int64_t next = 0;
  ASSERT_EQ(log->read_copy(0, 1000, -1, &stored, &next).code(), Status::Code::kOk);
  RecordBatchView view;
  ASSERT_EQ(RecordBatchView::parse(stored, &view), BatchError::kOk);
  EXPECT_EQ(view.timestamp_type(), protocol::TimestampType::kLogAppendTime);
  EXPECT_EQ(view.max_timestamp(), 1700000000000LL);
  EXPECT_TRUE(view.crc_matches());
  TimestampLookup found;
  ASSERT_EQ(log->find_offset_by_timestamp(1700000000000LL, &found).code(), Status::Code::kOk);
  EXPECT_TRUE(found.found);
  EXPECT_EQ(found.offset, 0);
  EXPECT_EQ(found.timestamp, 1700000000000LL);
}

TEST_F(PartitionLogTest, RetentionByTimeDropsWholeOldSegmentsOnly) {
  LogConfig config = testing::small_config(4096);
  config.retention_ms = 1000;
  auto log = open_log(config);
  for (int i = 0; i < 80; ++i) append(*log, 2, 20, 60, 5000);    // old
  for (int i = 0; i < 80; ++i) append(*log, 2, 20, 60, 100000);  // new
  std::vector<SegmentInfo> segments = log->segments();
  ASSERT_GT(segments.size(), 3u);
  EXPECT_EQ(log->apply_retention(5500), 0u);  // nothing older than 4500
  size_t old_segments = 0;
  for (const SegmentInfo& s : segments) old_segments += s.max_timestamp < 100000 ? 1 : 0;
  ASSERT_GT(old_segments, 0u);
  // A pin inside the second old segment stops retention before it.
  log->set_pin(segments[1].base_offset + 1);
  EXPECT_EQ(log->apply_retention(100000), 1u);
  EXPECT_EQ(log->log_start_offset(), segments[1].base_offset);
  log->set_pin(-1);
  EXPECT_EQ(log->apply_retention(100000), old_segments - 1);
  EXPECT_EQ(log->log_start_offset(), segments[old_segments].base_offset);
  // The active segment stays whatever its age.
  EXPECT_GT(log->apply_retention(1LL << 50), 0u);
  EXPECT_EQ(log->log_start_offset(), log->segments().back().base_offset);
  EXPECT_EQ(verify_log(*log, log->log_start_offset()), log->log_end_offset() - log->log_start_offset());
  // The dropped files are reused by the next rolls, not kept beyond need.
  size_t files = files_with_suffix(".log").size();
  for (int i = 0; i < 30; ++i) append(*log, 2, 20, 60, 100000);
  EXPECT_EQ(files_with_suffix(".log").size(), files);
}

TEST_F(PartitionLogTest, FullBudgetWithPinRejectsUnderRejectPolicy) {
  LogConfig config = testing::small_config(4096, 2 * 4096);
  config.full_policy = FullPolicy::kReject;
  auto log = open_log(config);
  log->set_pin(0);  // nothing delivered yet
  Status s;
  int appended = 0;
  while (s.ok() && appended < 1000) {
    std::vector<uint8_t> batch = testing::batch_for_offsets(log->log_end_offset(), 2, 20, 60);
    AppendResult r;
    s = log->append(batch, {}, &r);
    if (s.ok()) ++appended;
  }
  EXPECT_EQ(s.code(), Status::Code::kLogFull);
  EXPECT_EQ(log->log_start_offset(), 0);
  EXPECT_EQ(verify_log(*log, 0), log->log_end_offset());
  EXPECT_GE(log->stats().appends_rejected_full, 1u);
  // Delivering the first segment releases it.
  log->set_pin(log->segments()[1].base_offset);
  append(*log, 2);
  EXPECT_EQ(log->log_start_offset(), log->segments().front().base_offset);
  EXPECT_GT(log->log_start_offset(), 0);
}

TEST_F(PartitionLogTest, FullBudgetWithPinDropsUnderDropOldestPolicy) {
  LogConfig config = testing::small_config(4096, 2 * 4096);
  auto log = open_log(config);
  log->set_pin(0);
  for (int i = 0; i < 200; ++i) append(*log, 2);
  EXPECT_GT(log->log_start_offset(), 0);
  EXPECT_GT(log->stats().pinned_segments_dropped, 0u);
  EXPECT_EQ(files_with_suffix(".log").size(), 2u);
}

TEST_F(PartitionLogTest, DeleteRecordsAdvancesTheLogStartDurably) {
  {
    auto log = open_log(testing::small_config(4096));
    for (int i = 0; i < 50; ++i) append(*log, 2);
    EXPECT_EQ(log->delete_records_before(101).code(), Status::Code::kOutOfRange);
    ASSERT_EQ(log->delete_records_before(37).code(), Status::Code::kOk);
    EXPECT_EQ(log->log_start_offset(), 37);
    ReadResult result;
    EXPECT_EQ(log->read(36, 100, -1, &result).code(), Status::Code::kOutOfRange);
    std::vector<uint8_t> bytes;
    int64_t next = 0;
    ASSERT_EQ(log->read_copy(37, 1, -1, &bytes, &next).code(), Status::Code::kOk);
    RecordBatchView view;
    ASSERT_EQ(RecordBatchView::parse(bytes, &view), BatchError::kOk);
    EXPECT_EQ(view.base_offset(), 36);  // the batch holding 37
    ASSERT_EQ(log->delete_records_before(20).code(), Status::Code::kOk);  // never backwards
    EXPECT_EQ(log->log_start_offset(), 37);
    // Unclean stop.
  }
  auto log = open_log(testing::small_config(4096));
  EXPECT_EQ(log->log_start_offset(), 37);
  ASSERT_EQ(log->close().code(), Status::Code::kOk);
  log = open_log(testing::small_config(4096));
  EXPECT_EQ(log->log_start_offset(), 37);
  EXPECT_EQ(log->log_end_offset(), 100);
}

TEST_F(PartitionLogTest, ReopenAfterCleanCloseDoesNotRescan) {
  LogConfig config = testing::small_config(4096);
  {
    auto log = open_log(config);
    for (int i = 0; i < 50; ++i) append(*log, 3);
    ASSERT_EQ(log->close().code(), Status::Code::kOk);
  }
  EXPECT_FALSE(files_with_suffix(".checkpoint").empty());
  auto log = open_log(config);
  EXPECT_TRUE(log->recovery_stats().clean);
  EXPECT_EQ(log->recovery_stats().bytes_scanned, 0u);
  EXPECT_EQ(log->recovery_stats().segments_scanned, 0u);
  EXPECT_EQ(log->recovery_stats().bytes_zero_checked, 0u);
  EXPECT_EQ(log->recovery_stats().segments_trusted, log->segments().size());
  EXPECT_EQ(log->log_end_offset(), 150);
  EXPECT_EQ(log->durable_offset(), 150);
  // The checkpoint is gone once the log is open again.
  EXPECT_TRUE(files_with_suffix(".checkpoint").empty());
  EXPECT_EQ(verify_log(*log, 0), 150);
  for (int i = 0; i < 10; ++i) append(*log, 3);
  EXPECT_EQ(verify_log(*log, 0), 180);
  // The same log after an unclean stop is scanned (the active segment only:
  // sealed ones were synced and indexed by the flusher).
  ASSERT_TRUE(log->wait_durable(log->log_end_offset(), 10000));
  log.reset();
  log = open_log(config);
  EXPECT_FALSE(log->recovery_stats().clean);
  EXPECT_EQ(log->recovery_stats().segments_scanned, 1u);
  EXPECT_GT(log->recovery_stats().bytes_scanned, 0u);
  EXPECT_LE(log->recovery_stats().bytes_scanned, 4096u);
  EXPECT_EQ(log->log_end_offset(), 180);
  EXPECT_EQ(verify_log(*log, 0), 180);
}

TEST_F(PartitionLogTest, ReopenWithoutIndexFilesScansEverything) {
  LogConfig config = testing::small_config(4096);
  {
    auto log = open_log(config);
    for (int i = 0; i < 50; ++i) append(*log, 3);
    ASSERT_TRUE(log->wait_durable(log->log_end_offset(), 10000));
  }
  for (const std::string& f : files_with_suffix(".index")) std::filesystem::remove(dir_.file("t-0/" + f));
  auto log = open_log(config);
  EXPECT_EQ(log->recovery_stats().segments_scanned, log->segments().size());
  EXPECT_EQ(log->log_end_offset(), 150);
  EXPECT_EQ(verify_log(*log, 0), 150);
  // Recovery wrote the index files back for the sealed segments.
  EXPECT_EQ(files_with_suffix(".index").size(), log->segments().size() - 1);
}

// The empty batch a partition leader writes at the start of its epoch
// (src/raft/README.md): one offset, kept across a crash and a rescan, its
// epoch in the epoch index.
TEST_F(PartitionLogTest, AnEmptyBatchTakesOneOffsetAndSurvivesAReopen) {
  LogConfig config = testing::small_config(4096);
  {
    auto log = open_log(config);
    for (int i = 0; i < 10; ++i) append(*log, 3);
    std::vector<uint8_t> empty = protocol::build_empty_batch(2000);
    AppendResult result;
    ASSERT_TRUE(log->append(empty, AppendOptions{.leader_epoch = 4}, &result).ok());
    EXPECT_EQ(result.base_offset, 30);
    EXPECT_EQ(result.last_offset, 30);
    std::vector<uint8_t> after = testing::batch_for_offsets(31, 3, 20, 60);
    ASSERT_TRUE(log->append(after, AppendOptions{.leader_epoch = 4}, &result).ok());
    EXPECT_EQ(result.base_offset, 31);
    ASSERT_TRUE(log->wait_durable(log->log_end_offset(), 10000));
  }  // no close: a crash
  for (const std::string& f : files_with_suffix(".index")) std::filesystem::remove(dir_.file("t-0/" + f));
  auto log = open_log(config);
  EXPECT_EQ(log->log_end_offset(), 34);
  EXPECT_EQ(verify_log(*log, 0), 33) << "33 records; the empty batch holds none";
  EXPECT_EQ(verify_log(*log, 30), 3) << "a read from the empty batch's offset starts there and goes on";
}

TEST_F(PartitionLogTest, DiskModeHighWatermarkFollowsDurability) {
  LogConfig config = testing::small_config(64 << 10);
  config.acks_all_waits_for = AcksAllWaitsFor::kDisk;
  auto log = open_log(config);
  std::atomic<int64_t> notified{-1};
  std::atomic<bool> on_other_thread{false};
  std::thread::id reactor = std::this_thread::get_id();
  log->set_durability_listener([&](int64_t durable, Status status) {
    EXPECT_EQ(status.code(), Status::Code::kOk);
    on_other_thread = std::this_thread::get_id() != reactor;
    notified = durable;
  });
  for (int i = 0; i < 20; ++i) append(*log, 5);
  ASSERT_TRUE(log->wait_durable(100, 10000));
  EXPECT_EQ(log->durable_offset(), 100);
  EXPECT_EQ(log->high_watermark(), 100);
  int64_t deadline = port::monotonic_millis() + 10000;
  while (notified.load() < 100 && port::monotonic_millis() < deadline) std::this_thread::yield();
  EXPECT_EQ(notified.load(), 100);
  EXPECT_TRUE(on_other_thread.load());
  EXPECT_GE(log->syncs(), 1u);
}

TEST_F(PartitionLogTest, FlushIntervalsSyncInPageCacheMode) {
  {
    LogConfig config = testing::small_config(64 << 10);
    config.flush_interval_messages = 10;
    auto log = open_log(config);
    for (int i = 0; i < 4; ++i) append(*log, 3);  // 12 records: one sync due
    int64_t deadline = port::monotonic_millis() + 10000;
    while (log->durable_offset() < 12 && port::monotonic_millis() < deadline) std::this_thread::yield();
    EXPECT_EQ(log->durable_offset(), 12);
  }
  {
    TempDir dir;
    LogConfig config = testing::small_config(64 << 10);
    config.flush_interval_ms = 20;
    std::unique_ptr<PartitionLog> log;
    ASSERT_EQ(PartitionLog::open(dir.file("p-0"), config, &flusher_, &log).code(), Status::Code::kOk);
    append(*log, 3);
    int64_t deadline = port::monotonic_millis() + 10000;
    while (log->durable_offset() < 3 && port::monotonic_millis() < deadline) std::this_thread::yield();
    EXPECT_EQ(log->durable_offset(), 3);
  }
}

TEST_F(PartitionLogTest, RegionOfARecycledSegmentKeepsItsBytes) {
  LogConfig config = testing::small_config(4096, 2 * 4096);
  auto log = open_log(config);
  for (int i = 0; i < 10; ++i) append(*log, 2);
  ReadResult held;
  ASSERT_EQ(log->read(0, 1 << 20, -1, &held).code(), Status::Code::kOk);
  std::vector<uint8_t> before;
  int64_t next = 0;
  ASSERT_EQ(log->read_copy(0, 1 << 20, -1, &before, &next).code(), Status::Code::kOk);
  for (int i = 0; i < 100; ++i) append(*log, 2);  // wraps the ring many times
  EXPECT_GT(log->log_start_offset(), next);
  std::vector<uint8_t> after;
  for (const auto& region : held.regions) {
    size_t at = after.size();
    after.resize(at + region.length);
    ASSERT_EQ(pread(region.fd, after.data() + at, region.length, static_cast<off_t>(region.offset)),
              static_cast<ssize_t>(region.length));
  }
  EXPECT_EQ(after, before);
  held.regions.clear();
  for (int i = 0; i < 30; ++i) append(*log, 2);
  EXPECT_EQ(files_with_suffix(".log").size(), 2u);
}

TEST_F(PartitionLogTest, LoweringTheBudgetDeletesExtraSegmentsAtTheNextRoll) {
  auto log = open_log(testing::small_config(4096));
  for (int i = 0; i < 150; ++i) append(*log, 2);
  ASSERT_GT(files_with_suffix(".log").size(), 4u);
  ASSERT_EQ(log->update_config(testing::small_config(4096, 3 * 4096)).code(), Status::Code::kOk);
  for (int i = 0; i < 30; ++i) append(*log, 2);
  EXPECT_EQ(files_with_suffix(".log").size(), 3u);
  EXPECT_EQ(verify_log(*log, log->log_start_offset()), log->log_end_offset() - log->log_start_offset());
}

TEST_F(PartitionLogTest, RecyclingLeavesNoIndexFileWithoutItsSegment) {
  // A ring of 2 small segments rolls faster than the flusher writes index
  // files: those written for segments already recycled are removed again.
  auto log = open_log(testing::small_config(4096, 2 * 4096));
  for (int i = 0; i < 600; ++i) append(*log, 2);
  ASSERT_EQ(log->close().code(), Status::Code::kOk);  // waits for the flusher's last round
  std::set<std::string> bases;
  for (const std::string& f : files_with_suffix(".log")) bases.insert(f.substr(0, 20));
  for (const std::string& f : files_with_suffix(".index")) {
    EXPECT_EQ(bases.count(f.substr(0, 20)), 1u) << f << " has no segment";
  }
  EXPECT_EQ(bases.size(), 2u);
}

TEST_F(PartitionLogTest, InvalidConfigurationsAreRefused) {
  std::unique_ptr<PartitionLog> log;
  LogConfig config = testing::small_config(100);
  EXPECT_EQ(PartitionLog::open(dir_.file("x-0"), config, &flusher_, &log).code(), Status::Code::kInvalidArgument);
  config = testing::small_config(4096);
  config.flush_interval_messages = 0;
  EXPECT_EQ(PartitionLog::open(dir_.file("x-0"), config, &flusher_, &log).code(), Status::Code::kInvalidArgument);
  config = testing::small_config(4096, -2);
  EXPECT_EQ(PartitionLog::open(dir_.file("x-0"), config, &flusher_, &log).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(ring_segments(testing::small_config(4096, 1)), 2u);
  EXPECT_EQ(ring_segments(testing::small_config(4096, 4096 * 5 + 1)), 6u);
  EXPECT_EQ(ring_segments(testing::small_config(4096, kNoLimit)), 0u);
}

}  // namespace
}  // namespace eddy::storage
