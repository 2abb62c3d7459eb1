#include "protocol/headers.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <vector>

#include "protocol/generated/messages.h"

namespace eddy::protocol {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes memory_bytes(const OutputBuffer& out) { return Bytes(out.memory(), out.memory() + out.memory_size()); }

int16_t key(ApiKey k) { return static_cast<int16_t>(k); }

TEST(Headers, RequestHeaderVersionFollowsFlexibleVersions) {
  EXPECT_EQ(request_header_version(key(ApiKey::kProduce), 8), 1);
  EXPECT_EQ(request_header_version(key(ApiKey::kProduce), 9), 2);
  EXPECT_EQ(request_header_version(key(ApiKey::kFetch), 11), 1);
  EXPECT_EQ(request_header_version(key(ApiKey::kFetch), 12), 2);
  EXPECT_EQ(request_header_version(key(ApiKey::kMetadata), 9), 2);
  EXPECT_EQ(request_header_version(key(ApiKey::kApiVersions), 2), 1);
  EXPECT_EQ(request_header_version(key(ApiKey::kApiVersions), 3), 2);
  // A version newer than the codec knows is still flexible.
  EXPECT_EQ(request_header_version(key(ApiKey::kApiVersions), 9), 2);
  EXPECT_EQ(request_header_version(key(ApiKey::kDescribeCluster), 0), 2);
}

TEST(Headers, ResponseHeaderVersionAndTheApiVersionsException) {
  EXPECT_EQ(response_header_version(key(ApiKey::kProduce), 8), 0);
  EXPECT_EQ(response_header_version(key(ApiKey::kProduce), 9), 1);
  EXPECT_EQ(response_header_version(key(ApiKey::kMetadata), 12), 1);
  EXPECT_EQ(response_header_version(key(ApiKey::kSaslHandshake), 1), 0);
  // ApiVersions responses use header v0 even in flexible versions.
  EXPECT_EQ(response_header_version(key(ApiKey::kApiVersions), 3), 0);
  EXPECT_EQ(response_header_version(key(ApiKey::kApiVersions), 4), 0);
}

TEST(Headers, ApiTableCoversEveryGeneratedApi) {
  // 52-55 and 59: KRaft's RPCs, 58, 62 and 67 (Envelope, BrokerRegistration,
  // AllocateProducerIds):
  // the controller listener's, not advertised by the broker.
  const std::set<int16_t> required = {0,  1,  2,  3,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
                                      23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 35, 36, 37, 42, 44, 47, 48, 50, 51,
                                      52, 53, 54, 55, 58, 59, 60, 61, 62, 65, 66, 67};
  std::set<int16_t> keys;
  int16_t previous = -1;
  for (const ApiInfo& api : codec_apis()) {
    EXPECT_GT(api.api_key, previous) << "sorted by key";
    previous = api.api_key;
    keys.insert(api.api_key);
    EXPECT_LE(api.min_version, api.max_version) << api.name;
    EXPECT_EQ(find_api(api.api_key), &api);
    EXPECT_TRUE(is_supported(api.api_key, api.min_version));
    EXPECT_TRUE(is_supported(api.api_key, api.max_version));
    EXPECT_FALSE(is_supported(api.api_key, static_cast<int16_t>(api.max_version + 1)));
  }
  EXPECT_EQ(keys, required);
  EXPECT_EQ(find_api(-1), nullptr);
  EXPECT_EQ(find_api(4), nullptr) << "LeaderAndIsr is not generated";
  EXPECT_EQ(find_api(1000), nullptr);
  EXPECT_FALSE(is_supported(4, 0));
  EXPECT_STREQ(api_name(0), "Produce");
  EXPECT_STREQ(api_name(18), "ApiVersions");
  EXPECT_STREQ(api_name(99), "Unknown");

  const ApiInfo* produce = find_api(0);
  EXPECT_EQ(produce->min_version, ProduceRequest::kMinVersion);
  EXPECT_EQ(produce->max_version, ProduceRequest::kMaxVersion);
  EXPECT_EQ(produce->request_first_flexible, 9);
  EXPECT_EQ(produce->response_first_flexible, 9);
  const ApiInfo* sasl = find_api(17);
  EXPECT_EQ(sasl->request_first_flexible, sasl->max_version + 1) << "SaslHandshake is never flexible";
}

TEST(Headers, RequestFrameRoundTrip) {
  MetadataRequest request;
  request.topics.emplace();
  request.topics->emplace_back().name = "sensors";
  for (int16_t version : {int16_t{4}, int16_t{12}}) {
    OutputBuffer out;
    ASSERT_TRUE(encode_request_frame(request, version, 77, std::string("gw-1"), &out).ok());
    Bytes wire = memory_bytes(out);
    ASSERT_GE(wire.size(), 4u);
    uint32_t size = (uint32_t{wire[0]} << 24) | (wire[1] << 16) | (wire[2] << 8) | wire[3];
    EXPECT_EQ(size, wire.size() - 4);

    std::span<const uint8_t> frame(wire.data() + 4, wire.size() - 4);
    ParsedRequestHeader parsed;
    ASSERT_TRUE(parse_request_header(frame, &parsed).ok());
    EXPECT_EQ(parsed.header.request_api_key, 3);
    EXPECT_EQ(parsed.header.request_api_version, version);
    EXPECT_EQ(parsed.header.correlation_id, 77);
    EXPECT_EQ(parsed.header.client_id, std::optional<std::string>("gw-1"));
    EXPECT_EQ(parsed.header_version, version >= 9 ? 2 : 1);
    EXPECT_EQ(parsed.body_offset, 8u + 2u + 4u + (version >= 9 ? 1u : 0u));

    MetadataRequest decoded;
    Status s = decode_request_body(frame, parsed, &decoded);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_TRUE(decoded == request);
  }
}

TEST(Headers, UnknownApiKeyIsAnErrorButKeepsWhatWasRead) {
  // api key 99, version 1, correlation 5, client id "x", then junk.
  Bytes frame = {0, 99, 0, 1, 0, 0, 0, 5, 0, 1, 'x', 1, 2, 3};
  ParsedRequestHeader parsed;
  Status s = parse_request_header(frame, &parsed);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("unknown api key 99"), std::string::npos) << s.message();
  EXPECT_EQ(parsed.header.request_api_key, 99);
  EXPECT_EQ(parsed.header.request_api_version, 1);
  EXPECT_EQ(parsed.header.correlation_id, 5);
  EXPECT_EQ(parsed.header.client_id, std::optional<std::string>("x"));
}

TEST(Headers, UnsupportedVersionOfAKnownApiParses) {
  // ApiVersions v7 from a client newer than the codec: header v2.
  Bytes frame = {0, 18, 0, 7, 0, 0, 0, 9, 0, 1, 'c', 0, /* body */ 1, 1, 0};
  ParsedRequestHeader parsed;
  ASSERT_TRUE(parse_request_header(frame, &parsed).ok());
  EXPECT_FALSE(is_supported(parsed.header.request_api_key, parsed.header.request_api_version));
  EXPECT_EQ(parsed.header_version, 2);
  EXPECT_EQ(parsed.body_offset, 12u);
  ApiVersionsRequest body;
  EXPECT_FALSE(decode_request_body(frame, parsed, &body).ok()) << "v7 is outside the codec's versions";
}

TEST(Headers, TruncatedHeadersAreErrors) {
  Bytes full = {0, 0, 0, 9, 0, 0, 0, 1, 0, 3, 'a', 'b', 'c', 0};
  for (size_t n = 0; n < full.size(); ++n) {
    ParsedRequestHeader parsed;
    Status s = parse_request_header(std::span<const uint8_t>(full.data(), n), &parsed);
    EXPECT_FALSE(s.ok()) << n;
    EXPECT_FALSE(s.message().empty());
  }
  ParsedRequestHeader parsed;
  EXPECT_TRUE(parse_request_header(full, &parsed).ok());
  EXPECT_EQ(parsed.body_offset, full.size());
}

TEST(Headers, ApiVersionsResponseFrameUsesHeaderV0) {
  ApiVersionsResponse response;
  for (const ApiInfo& api : codec_apis()) {
    auto& k = response.api_keys.emplace_back();
    k.api_key = api.api_key;
    k.min_version = api.min_version;
    k.max_version = api.max_version;
  }
  OutputBuffer out;
  ASSERT_TRUE(encode_response_frame(response, 3, 0x01020304, &out).ok());
  Bytes wire = memory_bytes(out);
  // size(4) correlation id(4), then straight into the body: error code 0.
  ASSERT_GT(wire.size(), 10u);
  EXPECT_EQ(Bytes(wire.begin() + 4, wire.begin() + 8), (Bytes{1, 2, 3, 4}));
  EXPECT_EQ(wire[8], 0);
  EXPECT_EQ(wire[9], 0);
  EXPECT_EQ(wire[10], codec_apis().size() + 1) << "compact array length right after the error code";

  std::span<const uint8_t> frame(wire.data() + 4, wire.size() - 4);
  int32_t correlation = 0;
  size_t body_offset = 0;
  ASSERT_TRUE(parse_response_header(frame, 18, 3, &correlation, &body_offset).ok());
  EXPECT_EQ(correlation, 0x01020304);
  EXPECT_EQ(body_offset, 4u);
  ApiVersionsResponse decoded;
  ASSERT_TRUE(decode(frame.subspan(body_offset), 3, &decoded).ok());
  EXPECT_TRUE(decoded == response);
}

TEST(Headers, FlexibleResponseFrameHasTaggedHeader) {
  HeartbeatResponse response;
  response.error_code = 27;
  OutputBuffer out;
  ASSERT_TRUE(encode_response_frame(response, 4, 42, &out).ok());
  // size, correlation id, empty tag section, throttle, error code, empty tags
  EXPECT_EQ(memory_bytes(out), (Bytes{0, 0, 0, 12, 0, 0, 0, 42, 0, 0, 0, 0, 0, 0, 27, 0}));
  OutputBuffer v0;
  ASSERT_TRUE(encode_response_frame(response, 0, 42, &v0).ok());
  EXPECT_EQ(memory_bytes(v0), (Bytes{0, 0, 0, 6, 0, 0, 0, 42, 0, 27}));
}

TEST(Headers, FetchResponseFrameCarriesRecordsAsFileRegions) {
  FetchResponse response;
  auto& topic = response.responses.emplace_back();
  topic.topic = "t";
  auto& partition = topic.partitions.emplace_back();
  partition.high_watermark = 10;
  partition.records.emplace();
  auto segment = std::make_shared<int>(0);
  partition.records->file_regions.push_back(FileRegion{42, 4096, 70000, segment});
  partition.records->file_regions.push_back(FileRegion{43, 0, 500, segment});

  OutputBuffer out;
  ASSERT_TRUE(encode_response_frame(response, 11, 1, &out).ok());
  ASSERT_TRUE(out.has_file_regions());
  size_t file_bytes = 0;
  int file_chunks = 0;
  for (const auto& chunk : out.chunks()) {
    if (chunk.is_file) {
      file_bytes += chunk.length;
      ++file_chunks;
    }
  }
  EXPECT_EQ(file_chunks, 2);
  EXPECT_EQ(file_bytes, 70500u);
  EXPECT_EQ(out.size(), out.memory_size() + 70500u);
  const uint8_t* m = out.memory();
  uint32_t size = (uint32_t{m[0]} << 24) | (m[1] << 16) | (m[2] << 8) | m[3];
  EXPECT_EQ(size, out.size() - 4) << "the size prefix counts the file bytes";
  // The records length prefix (int32 in v11) is the last thing before the
  // first file chunk.
  const auto& first_memory = out.chunks()[0];
  ASSERT_FALSE(first_memory.is_file);
  auto tail = out.memory_of(first_memory).last(4);
  EXPECT_EQ(Bytes(tail.begin(), tail.end()), (Bytes{0, 1, 0x13, 0x64}));  // 70500
}

TEST(Headers, TwoFramesInOneBuffer) {
  HeartbeatResponse a, b;
  a.error_code = 1;
  b.error_code = 2;
  OutputBuffer out;
  ASSERT_TRUE(encode_response_frame(a, 0, 1, &out).ok());
  ASSERT_TRUE(encode_response_frame(b, 0, 2, &out).ok());
  EXPECT_EQ(memory_bytes(out), (Bytes{0, 0, 0, 6, 0, 0, 0, 1, 0, 1, 0, 0, 0, 6, 0, 0, 0, 2, 0, 2}));
}

TEST(Headers, EncodeReportsValuesTheVersionCannotCarry) {
  FetchResponse response;
  response.session_id = 5;  // v7+, not ignorable
  OutputBuffer out;
  Status s = encode_response_frame(response, 6, 1, &out);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("FetchResponse.session_id"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("version 6"), std::string::npos) << s.message();
  response.session_id = 0;
  response.throttle_time_ms = 100;  // v1+, ignorable: silently dropped in v0
  OutputBuffer v0;
  EXPECT_TRUE(encode_response_frame(response, 0, 1, &v0).ok());
}

}  // namespace
}  // namespace eddy::protocol
