#include "meta/uuid.h"

#include <gtest/gtest.h>

#include <set>

namespace eddy::meta {
namespace {

TEST(Uuid, KnownValuePrintsLikeKafka) {
  // Kafka: new Uuid(0x0123456789abcdefL, 0xfedcba9876543210L).toString()
  // is the URL-safe base64 of the 16 big-endian bytes, without padding.
  Uuid id;
  const uint8_t bytes[16] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                             0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10};
  std::copy(std::begin(bytes), std::end(bytes), id.bytes.begin());
  EXPECT_EQ(id.to_string(), "ASNFZ4mrze_-3LqYdlQyEA");
  Uuid parsed;
  ASSERT_TRUE(Uuid::parse("ASNFZ4mrze_-3LqYdlQyEA", &parsed));
  EXPECT_EQ(parsed, id);
}

TEST(Uuid, ZeroAndOnes) {
  Uuid zero;
  EXPECT_TRUE(zero.is_zero());
  EXPECT_EQ(zero.to_string(), "AAAAAAAAAAAAAAAAAAAAAA");
  Uuid ones;
  ones.bytes.fill(0xff);
  EXPECT_EQ(ones.to_string(), "_____________________w");
  Uuid parsed;
  ASSERT_TRUE(Uuid::parse("_____________________w", &parsed));
  EXPECT_EQ(parsed, ones);
}

TEST(Uuid, ParseRejectsBadText) {
  Uuid out;
  EXPECT_FALSE(Uuid::parse("", &out));
  EXPECT_FALSE(Uuid::parse("AAAAAAAAAAAAAAAAAAAAA", &out));    // 21 chars
  EXPECT_FALSE(Uuid::parse("AAAAAAAAAAAAAAAAAAAAAAA", &out));  // 23 chars
  EXPECT_FALSE(Uuid::parse("AAAAAAAAAAAAAAAAAAAA+A", &out));   // standard, not URL-safe, alphabet
  EXPECT_FALSE(Uuid::parse("AAAAAAAAAAAAAAAAAAAA=A", &out));
  EXPECT_FALSE(Uuid::parse("AAAAAAAAAAAAAAAAAAAAAB", &out));   // stray low bits in the last char
}

TEST(Uuid, RandomIsVersion4AndRoundTrips) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    Uuid id = Uuid::random();
    EXPECT_EQ(id.bytes[6] >> 4, 4);
    EXPECT_EQ(id.bytes[8] >> 6, 2);
    std::string text = id.to_string();
    ASSERT_EQ(text.size(), 22u);
    EXPECT_NE(text[0], '-');
    Uuid parsed;
    ASSERT_TRUE(Uuid::parse(text, &parsed));
    EXPECT_EQ(parsed, id);
    seen.insert(text);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

}  // namespace
}  // namespace eddy::meta
