#include "protocol/consumer_protocol.h"

#include <gtest/gtest.h>

#include <vector>

namespace eddy::protocol {
namespace {

using Bytes = std::vector<uint8_t>;

TEST(ConsumerProtocol, SubscriptionV0BytesMatchTheSpec) {
  ConsumerProtocolSubscription s;
  s.topics = {"ab"};
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(encode_consumer_subscription(s, 0, &bytes).ok());
  // version 0, topics [ "ab" ], user data null
  EXPECT_EQ(bytes, (Bytes{0, 0, 0, 0, 0, 1, 0, 2, 'a', 'b', 0xff, 0xff, 0xff, 0xff}));

  ConsumerProtocolSubscription decoded;
  int16_t version = -1;
  ASSERT_TRUE(decode_consumer_subscription(bytes, &decoded, &version).ok());
  EXPECT_EQ(version, 0);
  EXPECT_TRUE(decoded == s);
}

TEST(ConsumerProtocol, AssignmentRoundTripsInEveryVersion) {
  ConsumerProtocolAssignment a;
  auto& tp = a.assigned_partitions.emplace_back();
  tp.topic = "sensors";
  tp.partitions = {0, 2, 5};
  a.user_data = std::vector<uint8_t>{9, 9};
  for (int16_t v = ConsumerProtocolAssignment::kMinVersion; v <= ConsumerProtocolAssignment::kMaxVersion; ++v) {
    std::vector<uint8_t> bytes;
    ASSERT_TRUE(encode_consumer_assignment(a, v, &bytes).ok());
    ConsumerProtocolAssignment decoded;
    int16_t version = -1;
    ASSERT_TRUE(decode_consumer_assignment(bytes, &decoded, &version).ok());
    EXPECT_EQ(version, v);
    EXPECT_TRUE(decoded == a);
  }
}

TEST(ConsumerProtocol, NewerVersionsDecodeAsTheNewestKnown) {
  ConsumerProtocolSubscription s;
  s.topics = {"t"};
  s.generation_id = 4;
  s.rack_id = "r1";
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(encode_consumer_subscription(s, 3, &bytes).ok());
  bytes[1] = 9;                              // claim version 9
  bytes.insert(bytes.end(), {1, 2, 3, 4});  // fields a newer version appended
  ConsumerProtocolSubscription decoded;
  int16_t version = -1;
  Status st = decode_consumer_subscription(bytes, &decoded, &version);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(version, 9);
  EXPECT_TRUE(decoded == s);
}

TEST(ConsumerProtocol, MalformedInputIsAnError) {
  ConsumerProtocolSubscription decoded;
  int16_t version;
  EXPECT_FALSE(decode_consumer_subscription(Bytes{0}, &decoded, &version).ok());
  EXPECT_FALSE(decode_consumer_subscription(Bytes{0xff, 0xff, 0, 0, 0, 0}, &decoded, &version).ok());
  Status s = decode_consumer_subscription(Bytes{0, 0, 0x7f, 0xff, 0xff, 0xff}, &decoded, &version);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("ConsumerProtocolSubscription.topics"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace eddy::protocol
