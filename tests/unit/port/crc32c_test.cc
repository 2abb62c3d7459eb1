#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "port/port.h"

#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace eddy::port {
namespace {

using Crc = uint32_t (*)(uint32_t, const void*, size_t);

// Every path port/crc32c.cc has, by the name a failure prints. On this CPU
// some may be the same function (e.g. all portable without CRC instructions).
struct Path {
  const char* name;
  Crc f;
};
const Path kPaths[] = {{"crc32c", crc32c},
                       {"three streams", crc32c_three_streams},
                       {"one stream", crc32c_one_stream},
                       {"portable", crc32c_portable}};

std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> bytes(n);
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  return bytes;
}

// Every path against the portable one over data[0, length) from `seed`.
void expect_all_paths_agree(uint32_t seed, const uint8_t* data, size_t length, size_t offset) {
  const uint32_t expected = crc32c_portable(seed, data, length);
  for (const Path& path : kPaths) {
    ASSERT_EQ(path.f(seed, data, length), expected)
        << path.name << ": length " << length << ", offset " << offset << ", seed " << seed;
  }
}

TEST(Crc32c, StandardCheckValue) {
  for (const Path& path : kPaths) EXPECT_EQ(path.f(0, "123456789", 9), 0xE3069283u) << path.name;
}

TEST(Crc32c, KnownVectors) {
  // RFC 3720 (iSCSI) B.4 test vectors.
  std::vector<uint8_t> zeros(32, 0x00), ones(32, 0xFF), ascending(32), descending(32);
  for (int i = 0; i < 32; ++i) {
    ascending[i] = static_cast<uint8_t>(i);
    descending[i] = static_cast<uint8_t>(31 - i);
  }
  for (const Path& path : kPaths) {
    EXPECT_EQ(path.f(0, zeros.data(), 32), 0x8A9136AAu) << path.name;
    EXPECT_EQ(path.f(0, ones.data(), 32), 0x62A8AB43u) << path.name;
    EXPECT_EQ(path.f(0, ascending.data(), 32), 0x46DD794Eu) << path.name;
    EXPECT_EQ(path.f(0, descending.data(), 32), 0x113FDB5Cu) << path.name;
    EXPECT_EQ(path.f(0, nullptr, 0), 0u) << path.name;
  }
}

// crc32c must take the fastest path the CPU has, or the tests below would
// compare the fallback with itself and pass whatever the fused code does.
TEST(Crc32c, UsesTheFastestPathOfThisCpu) {
  std::printf("crc32c implementation on this CPU: %s\n", crc32c_implementation());
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul")) {
    EXPECT_STREQ(crc32c_implementation(), "sse4.2+pclmul");
  }
#elif defined(__aarch64__) && defined(__linux__)
  const unsigned long hwcap = getauxval(AT_HWCAP);
  if ((hwcap & HWCAP_CRC32) && (hwcap & HWCAP_PMULL)) {
    EXPECT_STREQ(crc32c_implementation(), "armv8-crc+pmull");
  }
#endif
}

// Every length from 0 to 5 KiB (the fused path's split into lanes and streams
// changes with each 256 bytes, and its 16-byte alignment with the start), from
// a random start in the first 16 bytes and a random seed.
TEST(Crc32c, EveryPathAgreesOnEveryShortLength) {
  std::mt19937_64 rng(42);
  const std::vector<uint8_t> buffer = random_bytes(5 * 1024 + 16, 1);
  for (size_t length = 0; length <= 5 * 1024; ++length) {
    const size_t offset = rng() % 16;
    expect_all_paths_agree(static_cast<uint32_t>(rng()), buffer.data() + offset, length, offset);
  }
}

TEST(Crc32c, EveryPathAgreesOnLongBuffers) {
  std::mt19937_64 rng(43);
  const std::vector<uint8_t> buffer = random_bytes((1 << 20) + 64, 2);
  for (size_t length : {size_t{64} << 10, size_t{1} << 20}) {
    for (size_t offset : {0, 1, 8, 13}) {
      expect_all_paths_agree(static_cast<uint32_t>(rng()), buffer.data() + offset, length, offset);
    }
  }
  for (int round = 0; round < 40; ++round) {
    const size_t offset = rng() % 64;
    const size_t length = rng() % (buffer.size() - offset);
    expect_all_paths_agree(static_cast<uint32_t>(rng()), buffer.data() + offset, length, offset);
  }
}

// The three-stream path changes at 3 * 256, 3 * 2048 and 3 * 8192 bytes (port/
// crc32c.cc): every length around those edges, from aligned and unaligned
// starts.
TEST(Crc32c, EveryPathAgreesAroundThreeStreamBlockEdges) {
  std::mt19937_64 rng(7);
  const std::vector<uint8_t> buffer = random_bytes(4 * 3 * 8192 + 64, 3);
  const size_t edges[] = {3 * 256,      2 * 3 * 256,  3 * 2048,        3 * 2048 + 3 * 256, 2 * 3 * 2048,
                          3 * 8192,     3 * 8192 + 3 * 256, 3 * 8192 + 3 * 2048, 2 * 3 * 8192, 4 * 3 * 8192};
  for (size_t edge : edges) {
    for (size_t length = edge - 9; length <= edge + 9; ++length) {
      for (size_t offset : {0, 1, 7}) {
        expect_all_paths_agree(static_cast<uint32_t>(rng()), buffer.data() + offset, length, offset);
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
  // Long enough for the fused path on both sides of the split.
  const std::vector<uint8_t> buffer = random_bytes(40000, 4);
  const uint32_t whole = crc32c(0, buffer.data(), buffer.size());
  for (size_t split : {1, 255, 256, 4097, 20000, 39000}) {
    uint32_t part = crc32c(0, buffer.data(), split);
    EXPECT_EQ(crc32c(part, buffer.data() + split, buffer.size() - split), whole) << "split " << split;
  }
}

}  // namespace
}  // namespace eddy::port
