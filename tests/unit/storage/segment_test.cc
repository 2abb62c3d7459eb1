// Segment files at the size limits: a segment never exceeds
// kMaxSegmentBytes (2 GiB - 1), so that its byte positions fit the index. A
// file found larger (not written by Eddy) is used up to that limit only.
#include "storage/segment.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "port/port.h"
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
