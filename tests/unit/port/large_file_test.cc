// Files past 2 GiB and 4 GiB: the offsets that a 32-bit off_t (signed: 2 GiB)
// or a 32-bit size type (4 GiB) would cut. One sparse file of 5 GiB
// (ftruncate leaves a hole, so it takes a few KiB of disk) gets data written
// across both boundaries, which every port function that takes a file offset
// must then find again at the same place.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "port/port.h"
#include "test_dir.h"

namespace eddy::port {
namespace {

using eddy::testing::TempDir;

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kBoundaries[] = {2 * kGiB, 4 * kGiB};
constexpr uint64_t kFileSize = 5 * kGiB;
// Bytes written on each side of a boundary.
constexpr size_t kSide = 4096;

// The byte that belongs at offset o: depends on all of o's bits, so a read
// from an offset cut to 32 bits (where the file has a hole, or other data)
// gets different bytes.
uint8_t byte_at(uint64_t o) {
  uint64_t h = (o + 0x9e3779b97f4a7c15ULL) * 0xbf58476d1ce4e5b9ULL;
  return static_cast<uint8_t>((h ^ (h >> 29) ^ (h >> 47)) | 1);  // never 0: distinct from a hole
}

std::vector<uint8_t> pattern(uint64_t offset, size_t length) {
  std::vector<uint8_t> bytes(length);
  for (size_t i = 0; i < length; ++i) bytes[i] = byte_at(offset + i);
  return bytes;
}

class LargeFile : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(File::open(dir_.file("big"), OpenMode::kCreate, &file_));
    ASSERT_FALSE(file_.truncate(kFileSize));
    if (allocated_bytes() > (1u << 20)) {
      GTEST_SKIP() << "the file system of " << dir_.path() << " does not keep holes in sparse files";
    }
    for (uint64_t b : kBoundaries) {
      std::vector<uint8_t> bytes = pattern(b - kSide, 2 * kSide);
      ASSERT_FALSE(file_.write_at(b - kSide, bytes.data(), bytes.size())) << "at " << b - kSide;
    }
  }

  // Disk space the file takes (st_blocks is in 512-byte units).
  uint64_t allocated_bytes() const {
    struct stat st;
    EXPECT_EQ(::fstat(file_.fd(), &st), 0);
    return static_cast<uint64_t>(st.st_blocks) * 512;
  }

  std::vector<uint8_t> read(uint64_t offset, size_t length) const {
    std::vector<uint8_t> bytes(length);
    size_t got = 0;
    EXPECT_FALSE(file_.read_at(offset, bytes.data(), length, &got)) << "at " << offset;
    bytes.resize(got);
    return bytes;
  }

  // Sends [offset, offset+length) through a socket pair with send and
  // returns what arrived. length fits the socket buffer: no reader thread.
  std::vector<uint8_t> send(uint64_t offset, size_t length,
                            std::error_code (*send_range)(int, int, uint64_t, size_t, size_t*)) const {
    int sockets[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sockets), 0);
    size_t sent = 0;
    std::error_code ec = send_range(sockets[0], file_.fd(), offset, length, &sent);
    EXPECT_FALSE(ec) << ec.message() << " at " << offset;
    std::vector<uint8_t> received(sent);
    size_t done = 0;
    while (done < sent) {
      ssize_t n = ::read(sockets[1], received.data() + done, sent - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    received.resize(done);
    ::close(sockets[0]);
    ::close(sockets[1]);
    return received;
  }

  TempDir dir_;
  File file_;
};

TEST_F(LargeFile, IsSparse) { EXPECT_LT(allocated_bytes(), uint64_t{1} << 20); }

TEST_F(LargeFile, SizeIsReportedInFull) {
  uint64_t size = 0;
  ASSERT_FALSE(file_.size(&size));
  EXPECT_EQ(size, kFileSize);
}

TEST_F(LargeFile, ReadsFindTheBytesJustBelowAndAboveEachBoundary) {
  for (uint64_t b : kBoundaries) {
    SCOPED_TRACE(b);
    EXPECT_EQ(read(b - 16, 16), pattern(b - 16, 16));          // just below
    EXPECT_EQ(read(b, 16), pattern(b, 16));                    // just above
    EXPECT_EQ(read(b - kSide, 2 * kSide), pattern(b - kSide, 2 * kSide));  // across
    EXPECT_EQ(read(b - kSide - 16, 16), std::vector<uint8_t>(16, 0));      // the hole before
  }
}

TEST_F(LargeFile, ReadsEndAtTheEndOfTheFile) {
  EXPECT_EQ(read(kFileSize - 10, 100).size(), 10u);
  EXPECT_TRUE(read(kFileSize, 100).empty());
}

TEST_F(LargeFile, SendFileRangesAcrossEachBoundary) {
  uint64_t copied_before = bytes_copied_by_send_file();
  for (uint64_t b : kBoundaries) {
    SCOPED_TRACE(b);
    EXPECT_EQ(send(b - kSide, 2 * kSide, send_file_range), pattern(b - kSide, 2 * kSide));
  }
#if defined(__linux__) && !defined(EDDY_PORT_GENERIC_BUILD)
  EXPECT_EQ(bytes_copied_by_send_file(), copied_before) << "sendfile path copied bytes through user space";
#endif
  for (uint64_t b : kBoundaries) {
    SCOPED_TRACE(b);
    EXPECT_EQ(send(b - kSide, 2 * kSide, send_file_range_copying), pattern(b - kSide, 2 * kSide));
  }
}

TEST_F(LargeFile, PreallocateInsideAndPastTheEnd) {
  // Inside the hole above 4 GiB: the size stays, the range reads as zeros and
  // the data below it is untouched. Past the end: the file grows.
  constexpr size_t kRange = 64 * 1024;
  const uint64_t inside = 4 * kGiB + kGiB / 2;
  ASSERT_FALSE(file_.preallocate(inside, kRange));
  ASSERT_FALSE(file_.preallocate(kFileSize, kRange));
  uint64_t size = 0;
  ASSERT_FALSE(file_.size(&size));
  EXPECT_EQ(size, kFileSize + kRange);
  EXPECT_EQ(read(inside, kRange), std::vector<uint8_t>(kRange, 0));
  EXPECT_EQ(read(kFileSize, kRange), std::vector<uint8_t>(kRange, 0));
  EXPECT_EQ(read(4 * kGiB - kSide, 2 * kSide), pattern(4 * kGiB - kSide, 2 * kSide));
}

TEST_F(LargeFile, TruncateBetweenTheBoundaries) {
  ASSERT_FALSE(file_.truncate(3 * kGiB));
  uint64_t size = 0;
  ASSERT_FALSE(file_.size(&size));
  EXPECT_EQ(size, 3 * kGiB);
  EXPECT_EQ(read(2 * kGiB - kSide, 2 * kSide), pattern(2 * kGiB - kSide, 2 * kSide));
  EXPECT_TRUE(read(4 * kGiB - kSide, 2 * kSide).empty());
}

}  // namespace
}  // namespace eddy::port
