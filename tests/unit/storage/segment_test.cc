// Segment files at the size limits: a segment never exceeds
// kMaxSegmentBytes (2 GiB - 1), so that its byte positions fit the index. A
// file found larger (not written by Eddy) is used up to that limit only.
#include "storage/segment.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "port/port.h"
#include "protocol/big_endian.h"
#include "storage/log_config.h"
#include "storage/recovery.h"
#include "storage_test_util.h"

namespace eddy::storage {
namespace {

using testing::TempDir;

constexpr uint64_t kGiB = uint64_t{1} << 30;

TEST(SegmentTest, AFileLargerThanASegmentCanBeIsUsedUpToTheMaximumOnly) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string path = dir.file(segment_file_name(0));
  const std::vector<uint8_t> batch = testing::batch_for_offsets(0, 3, 10, 20);
  {
    // 5 GiB, sparse: a few KiB on disk.
    port::File file;
    ASSERT_FALSE(port::File::open(path, port::OpenMode::kCreate, &file));
    ASSERT_FALSE(file.truncate(5 * kGiB));
    ASSERT_FALSE(file.write_at(0, batch.data(), batch.size()));
    struct stat st;
    ASSERT_EQ(::fstat(file.fd(), &st), 0);
    if (static_cast<uint64_t>(st.st_blocks) * 512 > (1u << 20)) {
      GTEST_SKIP() << "the file system of " << dir.path() << " does not keep holes in sparse files";
    }
  }

  std::unique_ptr<Segment> segment;
  ASSERT_EQ(Segment::open(path, 0, 256, &segment).code(), Status::Code::kOk);
  EXPECT_EQ(segment->capacity(), kMaxSegmentBytes);

  // Recovery reads from the start and stops at the zeros after the batch.
  SegmentIndex index(0, 256);
  ScanOutcome outcome;
  ASSERT_EQ(scan_segment(segment->file()->file, segment->capacity(), &index, &outcome).code(), Status::Code::kOk);
  EXPECT_EQ(outcome.stop_reason, "");
  EXPECT_EQ(index.next_offset(), 3);
  EXPECT_EQ(index.end_position(), batch.size());

  // The bytes past the limit are left as they are.
  uint64_t size = 0;
  ASSERT_FALSE(segment->file()->file.size(&size));
  EXPECT_EQ(size, 5 * kGiB);
}

TEST(SegmentTest, ReadEndMatchesTheBatchesWhereverAReadStartsAndStops) {
  // Batches of 1 to 4 records and varying sizes, a sparse index (one entry
  // per 256 bytes): read_end, with or without its shortcuts (the index's
  // jump, and a read at the tail known from memory), must end where the
  // batch list says.
  TempDir dir;
  std::unique_ptr<Segment> segment;
  ASSERT_EQ(Segment::create(dir.file(segment_file_name(100)), 100, 1 << 20, 256, &segment).code(),
            Status::Code::kOk);
  std::vector<BatchPosition> batches;
  int64_t offset = 100;
  for (int i = 0; i < 40; ++i) {
    const int records = 1 + i % 4;
    std::vector<uint8_t> batch = testing::batch_for_offsets(offset, records, 10, 10 + 37 * (i % 5));
    protocol::store_be64(batch.data(), static_cast<uint64_t>(offset));  // as the broker assigns it
    BatchPosition at;
    at.position = segment->end_position();
    at.info = BatchInfo{offset, offset + records - 1, 1000, static_cast<uint32_t>(batch.size())};
    ASSERT_EQ(segment->append(batch, at.info).code(), Status::Code::kOk);
    batches.push_back(at);
    offset += records;
  }
  const uint64_t end_position = segment->end_position();
  for (size_t first = 0; first < batches.size(); ++first) {
    const uint64_t from = batches[first].position;
    for (uint64_t limit : {from, from + 1, from + 300, from + 1000, end_position - 1, end_position,
                           end_position + 5000}) {
      for (int64_t upper : {batches[first].info.base_offset, batches[first].info.base_offset + 1,
                            batches[(first + batches.size()) / 2].info.base_offset, offset - 1, offset,
                            offset + 10}) {
        for (bool include_first : {false, true}) {
          uint64_t want_end = from;
          int64_t want_next = -7;
          for (size_t k = first; k < batches.size(); ++k) {
            const BatchPosition& b = batches[k];
            if (b.info.base_offset >= upper) break;
            if (!(include_first && k == first) && b.position + b.info.size > limit) break;
            want_end = b.position + b.info.size;
            want_next = b.info.last_offset + 1;
          }
          uint64_t got_end = 0;
          int64_t got_next = -7;
          ASSERT_EQ(segment->read_end(from, limit, upper, include_first, &got_end, &got_next).code(),
                    Status::Code::kOk);
          EXPECT_EQ(got_end, want_end) << "from " << from << " limit " << limit << " upper " << upper;
          EXPECT_EQ(got_next, want_next) << "from " << from << " limit " << limit << " upper " << upper;
        }
      }
    }
  }
}

TEST(SegmentTest, SegmentBytesAboveTheMaximumAreRefused) {
  LogConfig config = testing::small_config();
  config.segment_bytes = kMaxSegmentBytes;
  EXPECT_EQ(validate(config).code(), Status::Code::kOk);
  config.segment_bytes = kMaxSegmentBytes + 1;
  EXPECT_EQ(validate(config).code(), Status::Code::kInvalidArgument);
  config.segment_bytes = 4 * kGiB + 4096;  // would pass a check cut to 32 bits
  EXPECT_EQ(validate(config).code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace eddy::storage
