#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "port/port.h"

namespace eddy::port {
namespace {

TEST(Crc32c, StandardCheckValue) {
  const char* check = "123456789";
  EXPECT_EQ(crc32c(0, check, 9), 0xE3069283u);
  EXPECT_EQ(crc32c_portable(0, check, 9), 0xE3069283u);
}

TEST(Crc32c, KnownVectors) {
  // RFC 3720 (iSCSI) B.4 test vectors.
  std::vector<uint8_t> zeros(32, 0x00), ones(32, 0xFF), ascending(32), descending(32);
  for (int i = 0; i < 32; ++i) {
    ascending[i] = static_cast<uint8_t>(i);
    descending[i] = static_cast<uint8_t>(31 - i);
  }
  EXPECT_EQ(crc32c(0, zeros.data(), 32), 0x8A9136AAu);
  EXPECT_EQ(crc32c(0, ones.data(), 32), 0x62A8AB43u);
  EXPECT_EQ(crc32c(0, ascending.data(), 32), 0x46DD794Eu);
  EXPECT_EQ(crc32c(0, descending.data(), 32), 0x113FDB5Cu);
  EXPECT_EQ(crc32c(0, nullptr, 0), 0u);
}

TEST(Crc32c, AcceleratedMatchesPortableOnRandomBuffers) {
  std::printf("crc32c implementation on this CPU: %s\n", crc32c_implementation());
  std::mt19937_64 rng(42);
  std::vector<uint8_t> buffer(70000);
  for (auto& b : buffer) b = static_cast<uint8_t>(rng());
  for (int round = 0; round < 300; ++round) {
    size_t offset = rng() % 64;  // unaligned starts too
    size_t length = rng() % (buffer.size() - offset);
    if (round < 64) length = static_cast<size_t>(round);  // every short length
    uint32_t seed = static_cast<uint32_t>(rng());
    ASSERT_EQ(crc32c(seed, buffer.data() + offset, length), crc32c_portable(seed, buffer.data() + offset, length))
        << "offset " << offset << " length " << length;
  }
}

// The three-stream paths change at 3 * 256, 3 * 2048 and 3 * 8192 bytes (port/
// crc32c.cc): every length around those edges, from aligned and unaligned
// starts, against the portable code and the one-stream hardware path.
TEST(Crc32c, InterleavedStreamsMatchAroundEveryBlockEdge) {
  std::mt19937_64 rng(7);
  std::vector<uint8_t> buffer(4 * 3 * 8192 + 64);
  for (auto& b : buffer) b = static_cast<uint8_t>(rng());
  const size_t edges[] = {3 * 256,      2 * 3 * 256,  3 * 2048,        3 * 2048 + 3 * 256, 2 * 3 * 2048,
                         3 * 8192,     3 * 8192 + 3 * 256, 3 * 8192 + 3 * 2048, 2 * 3 * 8192, 4 * 3 * 8192};
  for (size_t edge : edges) {
    for (size_t length = edge - 9; length <= edge + 9; ++length) {
      for (size_t offset : {0, 1, 7}) {
        uint32_t seed = static_cast<uint32_t>(rng());
        const uint8_t* p = buffer.data() + offset;
        uint32_t expected = crc32c_portable(seed, p, length);
        ASSERT_EQ(crc32c(seed, p, length), expected) << "offset " << offset << " length " << length;
        ASSERT_EQ(crc32c_one_stream(seed, p, length), expected) << "offset " << offset << " length " << length;
      }
    }
  }
}

TEST(Crc32c, ExtendingEqualsWhole) {
  const char* text = "The quick brown fox jumps over the lazy dog";
  size_t n = std::strlen(text);
  for (size_t split = 0; split <= n; ++split) {
    uint32_t part = crc32c(0, text, split);
    EXPECT_EQ(crc32c(part, text + split, n - split), crc32c(0, text, n));
  }
}

}  // namespace
}  // namespace eddy::port
