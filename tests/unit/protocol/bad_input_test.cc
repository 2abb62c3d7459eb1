// Malformed input: truncated messages, huge counts, bad lengths, random
// bytes. Decoding reports an error naming the field and byte; it never
// crashes, reads out of bounds (run under EDDY_SANITIZE) or allocates by a
// count the input cannot back.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "generated/message_list.h"
#include "generated/test_messages.h"
#include "protocol/codec.h"
#include "protocol/headers.h"

namespace eddy::protocol::testing {
namespace {

using Bytes = std::vector<uint8_t>;

template <typename M>
void every_truncation_fails() {
  for (int16_t version = M::kMinVersion; version <= M::kMaxVersion; ++version) {
    M m;
    Filler filler(0);
    fill_test_values(m, version, filler);
    OutputBuffer out;
    ASSERT_TRUE(encode(m, version, &out).ok());
    Bytes bytes(out.memory(), out.memory() + out.memory_size());
    for (size_t n = 0; n < bytes.size(); ++n) {
      M decoded;
      Status s = decode(std::span<const uint8_t>(bytes.data(), n), version, &decoded);
      ASSERT_FALSE(s.ok()) << M::kName << " v" << version << " truncated to " << n << " bytes decoded";
      ASSERT_EQ(s.message().rfind(M::kName, 0), 0u) << s.message();
      ASSERT_NE(s.message().find(" at byte "), std::string::npos) << s.message();
    }
    // One byte too many is an error too.
    bytes.push_back(0);
    M decoded;
    Status s = decode(std::span<const uint8_t>(bytes), version, &decoded);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("1 unexpected bytes after the message"), std::string::npos) << s.message();
    // Asked to, decode ignores and counts them (requests, as Kafka does),
    // and the message is the same as without them.
    bytes.insert(bytes.end(), {0, 0});
    M lenient;
    size_t trailing = 0;
    s = decode(std::span<const uint8_t>(bytes), version, &lenient, 0, &trailing);
    ASSERT_TRUE(s.ok()) << M::kName << " v" << version << ": " << s.message();
    EXPECT_EQ(trailing, 3u);
    OutputBuffer again;
    ASSERT_TRUE(encode(lenient, version, &again).ok());
    EXPECT_EQ(Bytes(again.memory(), again.memory() + again.memory_size()),
              Bytes(bytes.begin(), bytes.end() - 3));
    // A truncated message is still an error in lenient mode.
    s = decode(std::span<const uint8_t>(bytes.data(), bytes.size() - 4), version, &lenient, 0, &trailing);
    if (bytes.size() > 4) {
      EXPECT_FALSE(s.ok()) << M::kName << " v" << version;
    }
  }
}

#define EDDY_TRUNCATION_TEST(M) \
  TEST(Truncation, M) { every_truncation_fails<M>(); }
EDDY_PROTOCOL_FOR_EACH_MESSAGE(EDDY_TRUNCATION_TEST)
#undef EDDY_TRUNCATION_TEST

// Request frame: header v1 (api 0, version 3, correlation 7, client "c").
Bytes produce_v3_header() { return {0, 0, 0, 3, 0, 0, 0, 7, 0, 1, 'c'}; }

TEST(BadInput, StringLengthBeyondTheFrame) {
  Bytes frame = produce_v3_header();
  Bytes body = {0xff, 0xff,          // transactional id: null
                0, 1,                // acks
                0, 0, 0x75, 0x30,    // timeout
                0, 0, 0, 1,          // one topic
                0x01, 0x2c};         // name length 300 ...
  body.resize(body.size() + 12, 'x');  // ... but 12 bytes follow
  frame.insert(frame.end(), body.begin(), body.end());

  ParsedRequestHeader header;
  ASSERT_TRUE(parse_request_header(frame, &header).ok());
  ProduceRequest request;
  Status s = decode_request_body(frame, header, &request);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "ProduceRequest.topic_data[0].name: string length 300 exceeds remaining 12 bytes at byte 25");
}

TEST(BadInput, HugeArrayCountFailsBeforeAllocating) {
  Bytes frame = produce_v3_header();
  Bytes body = {0xff, 0xff, 0, 1, 0, 0, 0x75, 0x30,
                0x7f, 0xff, 0xff, 0xff,  // 2^31-1 topics
                0, 0, 0, 0};
  frame.insert(frame.end(), body.begin(), body.end());
  ParsedRequestHeader header;
  ASSERT_TRUE(parse_request_header(frame, &header).ok());
  ProduceRequest request;
  Status s = decode_request_body(frame, header, &request);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("ProduceRequest.topic_data: array count 2147483647 exceeds"), std::string::npos)
      << s.message();
  EXPECT_EQ(request.topic_data.capacity(), 0u);
}

TEST(BadInput, HugeCompactArrayCountInNestedArray) {
  // Fetch v12 (flexible): one topic whose partition count claims 2^28.
  FetchRequest request;
  request.topics.emplace_back().topic = "t";
  OutputBuffer out;
  ASSERT_TRUE(encode(request, 12, &out).ok());
  Bytes bytes(out.memory(), out.memory() + out.memory_size());
  // Locate the partitions count: topic name "t" is encoded as {2, 't'} and
  // the empty partition array as {1} right after it.
  size_t at = 0;
  for (size_t i = 0; i + 2 < bytes.size(); ++i) {
    if (bytes[i] == 2 && bytes[i + 1] == 't' && bytes[i + 2] == 1) at = i + 2;
  }
  ASSERT_NE(at, 0u);
  bytes[at] = 0x80;
  bytes.insert(bytes.begin() + static_cast<ptrdiff_t>(at) + 1, {0x80, 0x80, 0x80, 0x01});
  FetchRequest decoded;
  Status s = decode(std::span<const uint8_t>(bytes), 12, &decoded);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("FetchRequest.topics[0].partitions: array count 268435455 exceeds"),
            std::string::npos)
      << s.message();
}

TEST(BadInput, NegativeRecordsLength) {
  Bytes frame = produce_v3_header();
  Bytes body = {0xff, 0xff, 0, 1, 0, 0, 0x75, 0x30, 0, 0, 0, 1, 0, 1, 't',
                0,    0,    0, 1,                   // one partition
                0,    0,    0, 0,                   // index 0
                0xff, 0xff, 0xff, 0xf0};            // records length -16
  frame.insert(frame.end(), body.begin(), body.end());
  ParsedRequestHeader header;
  ASSERT_TRUE(parse_request_header(frame, &header).ok());
  ProduceRequest request;
  Status s = decode_request_body(frame, header, &request);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "ProduceRequest.topic_data[0].partition_data[0].records: records length -16 is negative at byte 38");
}

// Random bytes for every request and response of every api key and
// version: no crash, and whatever
// decodes re-encodes to an equal message.
TEST(BadInput, RandomBytesNeverCrash) {
  std::mt19937 rng(12345);
  int decoded = 0;
  for (const ApiInfo& api : codec_apis()) {
    for (int16_t version = api.min_version; version <= api.max_version; ++version) {
      for (int i = 0; i < 200; ++i) {
        Bytes bytes(rng() % 64);
        for (auto& b : bytes) {
          // Small values make plausible lengths and counts more likely.
          b = static_cast<uint8_t>(rng() % 4 == 0 ? rng() : rng() % 3);
        }
        bool reencode_ok = false;
        Status s = decode_any_request(api.api_key, version, bytes, &reencode_ok);
        if (s.ok()) ++decoded;
        EXPECT_TRUE(reencode_ok) << api.name << " request v" << version;
        s = decode_any_response(api.api_key, version, bytes, &reencode_ok);
        if (s.ok()) ++decoded;
        EXPECT_TRUE(reencode_ok) << api.name << " response v" << version;
      }
    }
  }
  EXPECT_GT(decoded, 0) << "some random inputs should be valid requests";
}

// A float64 NaN (a quota value in DescribeClientQuotas) survives the round
// trip bit for bit even though NaN compares unequal to itself; the check used
// to call it a finding (fuzz_response_decoder, in CI).
TEST(BadInput, NanQuotaValueSurvivesTheRoundTrip) {
  Bytes body = {0, 0, 0, 0,  0, 0,  0xff, 0xff,  // throttle, error code, null message
                0, 0, 0, 1,                    // one entry
                0, 0, 0, 0,                    // no entity
                0, 0, 0, 1,  0, 1, 'a',        // one value, key "a"
                0x7f, 0xf8, 0, 0, 0, 0, 0, 1}; // a quiet NaN with a payload
  bool reencode_ok = false;
  Status s = decode_any_response(DescribeClientQuotasResponse::kApiKey, 0, body, &reencode_ok);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(reencode_ok);
  DescribeClientQuotasResponse m;
  ASSERT_TRUE(decode(std::span<const uint8_t>(body), 0, &m).ok());
  ASSERT_EQ(m.entries->size(), 1u);
  EXPECT_TRUE(std::isnan((*m.entries)[0].values[0].value));
}

}  // namespace
}  // namespace eddy::protocol::testing
