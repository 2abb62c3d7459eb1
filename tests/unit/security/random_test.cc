#include "security/random.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace eddy::security {
namespace {

TEST(RandomTest, FillsTheWholeBufferAndTwoDrawsDiffer) {
  // 3000 bytes: more than one CTR_DRBG request (1024), so the chunking runs.
  std::vector<uint8_t> a(3000, 0), b(3000, 0);
  ASSERT_TRUE(random_bytes(a.data(), a.size()).ok());
  ASSERT_TRUE(random_bytes(b.data(), b.size()).ok());
  EXPECT_NE(a, b);
  // The tail past the first chunk is filled too: 2 000 zero bytes in a row
  // from a working generator has probability 2^-16000.
  EXPECT_NE(std::vector<uint8_t>(a.begin() + 1024, a.end()), std::vector<uint8_t>(a.size() - 1024, 0));
}

TEST(RandomTest, TheMbedtlsCallbackFormDrawsFromTheSameGenerator) {
  std::array<unsigned char, 32> a{}, b{};
  ASSERT_EQ(mbedtls_random(nullptr, a.data(), a.size()), 0);
  ASSERT_EQ(mbedtls_random(nullptr, b.data(), b.size()), 0);
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace eddy::security
