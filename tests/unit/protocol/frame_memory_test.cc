#include "protocol/frame_memory.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "protocol/frame_bytes.h"

namespace eddy::protocol {
namespace {

using frame_memory::kCachedMinBytes;
using frame_memory::kCacheLimitBytes;
using frame_memory::kGranuleBytes;

class FrameMemory : public ::testing::Test {
 protected:
  void SetUp() override { frame_memory::release_cached(); }
  void TearDown() override { frame_memory::release_cached(); }
};

TEST_F(FrameMemory, AFreedLargeBlockServesTheNextFrameOfAboutItsSize) {
  const size_t size = 1000123;
  void* first = frame_memory::allocate(size);
  std::memset(first, 0xab, size);
  frame_memory::deallocate(first, size);
  EXPECT_EQ(frame_memory::stats().cached_blocks, 1u);
  const uint64_t reused = frame_memory::stats().reused;

  // A little larger: the same block (capacities are whole granules).
  void* second = frame_memory::allocate(size + 1000);
  EXPECT_EQ(second, first);
  EXPECT_EQ(frame_memory::stats().reused, reused + 1);
  EXPECT_EQ(frame_memory::stats().cached_blocks, 0u);
  frame_memory::deallocate(second, size + 1000);
}

TEST_F(FrameMemory, ABlockIsNotHandedToAFrameOfLessThanHalfItsSize) {
  void* big = frame_memory::allocate(size_t{1} << 20);
  frame_memory::deallocate(big, size_t{1} << 20);
  void* small = frame_memory::allocate(kCachedMinBytes * 2);
  EXPECT_NE(small, big);
  EXPECT_EQ(frame_memory::stats().cached_blocks, 1u);  // the big one waits
  frame_memory::deallocate(small, kCachedMinBytes * 2);
}

TEST_F(FrameMemory, TooSmallOrTooLargeBlocksAreNeverCached) {
  void* small = frame_memory::allocate(kCachedMinBytes - 1);
  frame_memory::deallocate(small, kCachedMinBytes - 1);
  void* huge = frame_memory::allocate(kCacheLimitBytes + 1);
  frame_memory::deallocate(huge, kCacheLimitBytes + 1);
  EXPECT_EQ(frame_memory::stats().cached_blocks, 0u);
  EXPECT_EQ(frame_memory::stats().cached_bytes, 0u);
}

TEST_F(FrameMemory, TheCacheStaysWithinItsLimitAndKeepsTheLargerBlocks) {
  std::vector<void*> blocks;
  const size_t small = kCachedMinBytes;
  const size_t large = size_t{1} << 20;
  for (size_t i = 0; i < kCacheLimitBytes / small; ++i) blocks.push_back(frame_memory::allocate(small));
  for (void* p : blocks) frame_memory::deallocate(p, small);
  EXPECT_EQ(frame_memory::stats().cached_bytes, kCacheLimitBytes);

  // Large blocks push small ones out; the total never exceeds the limit.
  std::vector<void*> larges;
  for (int i = 0; i < 6; ++i) larges.push_back(frame_memory::allocate(large));
  for (void* p : larges) {
    frame_memory::deallocate(p, large);
    EXPECT_LE(frame_memory::stats().cached_bytes, kCacheLimitBytes);
  }
  EXPECT_EQ(frame_memory::stats().cached_bytes, kCacheLimitBytes);
  EXPECT_EQ(frame_memory::stats().cached_blocks, kCacheLimitBytes / large);

  frame_memory::release_cached();
  EXPECT_EQ(frame_memory::stats().cached_bytes, 0u);
  EXPECT_EQ(frame_memory::stats().cached_blocks, 0u);
}

// A block that smaller cached ones cannot make room for is not kept, and
// the cache is left as it was (nothing evicted on the way, nothing lost:
// under ASan a block dropped without being freed fails the run at exit).
TEST_F(FrameMemory, ABlockThatDoesNotFitLeavesTheCacheAsItWas) {
  const size_t small = kCachedMinBytes;
  const size_t huge = kCacheLimitBytes - 8 * kGranuleBytes;  // 3.5 MiB
  const size_t large = size_t{1} << 20;
  void* a = frame_memory::allocate(small);
  void* b = frame_memory::allocate(huge);
  void* c = frame_memory::allocate(large);
  frame_memory::deallocate(a, small);
  frame_memory::deallocate(b, huge);
  ASSERT_EQ(frame_memory::stats().cached_bytes, small + huge);
  frame_memory::deallocate(c, large);  // would need 576 KiB; the small block gives 64
  EXPECT_EQ(frame_memory::stats().cached_blocks, 2u);
  EXPECT_EQ(frame_memory::stats().cached_bytes, small + huge);
}

TEST_F(FrameMemory, FrameBytesRecycleTheirBufferAndKeepTheirContents) {
  const uint8_t* data = nullptr;
  {
    FrameBytes frame(700000);
    std::memset(frame.data(), 7, frame.size());
    data = frame.data();
  }
  FrameBytes again(650000);
  EXPECT_EQ(again.data(), data);
  again[0] = 9;
  again[649999] = 10;
  again.resize(size_t{1} << 20);  // grows into another block, copying
  EXPECT_NE(again.data(), data);
  EXPECT_EQ(again[0], 9);
  EXPECT_EQ(again[649999], 10);
}

}  // namespace
}  // namespace eddy::protocol
