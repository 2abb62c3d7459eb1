// The client's I/O-free pieces: addresses, version negotiation, request
// correlation, metadata, topic id text, the murmur2 partitioner.
#include <gtest/gtest.h>

#include <string>

#include "client/api_versions.h"
#include "client/broker_address.h"
#include "client/cluster_metadata.h"
#include "client/partitioner.h"
#include "client/request_codec.h"
#include "protocol/generated/metadata.h"

namespace eddy::client {
namespace {

std::span<const uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

TEST(BrokerAddressTest, ParsesHostPortListsAndIpv6) {
  std::vector<BrokerAddress> list;
  Status s = parse_broker_list("a:1, b.example:9092,[::1]:9093", &list);
  ASSERT_TRUE(s.ok()) << s.to_string();
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0], (BrokerAddress{"a", 1}));
  EXPECT_EQ(list[1], (BrokerAddress{"b.example", 9092}));
  EXPECT_EQ(list[2], (BrokerAddress{"::1", 9093}));
  EXPECT_EQ(list[2].to_string(), "[::1]:9093");
}

TEST(BrokerAddressTest, RejectsMalformedAddresses) {
  std::vector<BrokerAddress> list;
  for (const char* bad : {"", " , ", "host", "host:", ":9092", "host:0", "host:65536", "host:12a", "[::1]9092",
                          "::1:9092", "h:1,h2"}) {
    Status s = parse_broker_list(bad, &list);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << bad;
    EXPECT_FALSE(s.message().empty());
  }
}

TEST(ApiVersionsTest, PicksHighestCommonVersion) {
  EXPECT_EQ(pick_version({4, 12}, {0, 17}), 12);
  EXPECT_EQ(pick_version({4, 12}, {0, 7}), 7);
  EXPECT_EQ(pick_version({4, 12}, {5, 5}), 5);
  EXPECT_FALSE(pick_version({4, 12}, {0, 3}).has_value());
  EXPECT_FALSE(pick_version({4, 12}, {13, 17}).has_value());
}

TEST(ApiVersionsTest, NegotiatesAgainstTheBrokerTable) {
  protocol::ApiVersionsResponse response;
  response.api_keys.push_back({1, 0, 17, {}});  // Fetch
  response.api_keys.push_back({0, 0, 2, {}});   // Produce, too old for RecordBatch v2
  ApiVersionTable table;
  table.set(response);
  int16_t version = -1;
  ASSERT_TRUE(table.negotiate(1, &version).ok());
  EXPECT_EQ(version, client_version_range(1)->max);  // capped by this client
  Status s = table.negotiate(0, &version);
  EXPECT_EQ(s.code(), Status::Code::kUnsupportedVersion);
  EXPECT_NE(s.message().find("0-2"), std::string::npos) << s.message();
  s = table.negotiate(3, &version);  // Metadata: not listed by the broker
  EXPECT_EQ(s.code(), Status::Code::kUnsupportedVersion);
  EXPECT_NE(s.message().find("Metadata"), std::string::npos) << s.message();
  s = table.negotiate(11, &version);  // JoinGroup: not implemented by this client
  EXPECT_EQ(s.code(), Status::Code::kUnsupportedVersion);
}

TEST(ApiVersionsTest, NegotiatesKRaftApisAgainstAControllerThatAdvertisesThem) {
  protocol::ApiVersionsResponse response;
  response.api_keys.push_back({52, 0, 2, {}});  // Vote (Kafka 4.1: v2 adds pre-vote)
  response.api_keys.push_back({53, 0, 1, {}});  // BeginQuorumEpoch
  response.api_keys.push_back({54, 0, 1, {}});  // EndQuorumEpoch
  response.api_keys.push_back({55, 0, 2, {}});  // DescribeQuorum
  ApiVersionTable table;
  table.set(response);
  int16_t version = -1;
  ASSERT_TRUE(table.negotiate(52, &version).ok());
  EXPECT_EQ(version, 1);
  ASSERT_TRUE(table.negotiate(53, &version).ok());
  EXPECT_EQ(version, 1);
  ASSERT_TRUE(table.negotiate(54, &version).ok());
  EXPECT_EQ(version, 1);
  ASSERT_TRUE(table.negotiate(55, &version).ok());
  EXPECT_EQ(version, 2);
  ApiVersionTable eddy_broker;  // advertises none of them
  EXPECT_EQ(eddy_broker.negotiate(52, &version).code(), Status::Code::kUnsupportedVersion);
}

// Encodes a response body as the broker would.
std::vector<uint8_t> encode_body(const protocol::ApiVersionsResponse& r, int16_t version) {
  protocol::OutputBuffer out;
  EXPECT_TRUE(protocol::encode(r, version, &out).ok());
  return {out.memory(), out.memory() + out.memory_size()};
}

TEST(ApiVersionsHandshakeTest, AcceptsAnAnswerAtTheVersionSent) {
  ApiVersionsHandshake hs;
  EXPECT_EQ(hs.version(), 3);
  EXPECT_EQ(hs.request("eddy", "1.0").client_software_name, "eddy");
  protocol::ApiVersionsResponse r;
  r.api_keys.push_back({3, 0, 12, {}});
  ApiVersionTable table;
  Status error;
  EXPECT_EQ(hs.on_response(encode_body(r, 3), &table, &error), ApiVersionsHandshake::Step::kDone);
  EXPECT_EQ(table.broker_range(3), (VersionRange{0, 12}));
}

TEST(ApiVersionsHandshakeTest, RetriesAtTheVersionAnOlderBrokerSpeaks) {
  // KIP-511: an old broker answers a v3 request with a v0 body holding
  // UNSUPPORTED_VERSION and its own ApiVersions range.
  ApiVersionsHandshake hs;
  protocol::ApiVersionsResponse r;
  r.error_code = protocol::to_int(protocol::ErrorCode::kUnsupportedVersion);
  r.api_keys.push_back({18, 0, 2, {}});
  ApiVersionTable table;
  Status error;
  EXPECT_EQ(hs.on_response(encode_body(r, 0), &table, &error), ApiVersionsHandshake::Step::kRetry);
  EXPECT_EQ(hs.version(), 2);
  EXPECT_TRUE(hs.request("eddy", "1").client_software_name.empty());  // v2 has no such field
  // A second UNSUPPORTED_VERSION is final.
  EXPECT_EQ(hs.on_response(encode_body(r, 0), &table, &error), ApiVersionsHandshake::Step::kFailed);
  EXPECT_EQ(protocol::kafka_error(error), protocol::ErrorCode::kUnsupportedVersion);
}

TEST(ApiVersionsHandshakeTest, FailsOnGarbage) {
  ApiVersionsHandshake hs;
  ApiVersionTable table;
  Status error;
  std::vector<uint8_t> garbage = {0, 0, 0, 0, 0xff, 0xff, 0xff};
  EXPECT_EQ(hs.on_response(garbage, &table, &error), ApiVersionsHandshake::Step::kFailed);
  EXPECT_EQ(error.code(), Status::Code::kProtocol);
  EXPECT_TRUE(table.empty());
}

protocol::OutputBuffer response_frame(const protocol::MetadataResponse& body, int16_t version, int32_t correlation) {
  protocol::OutputBuffer out;
  EXPECT_TRUE(protocol::encode_response_frame(body, version, correlation, &out).ok());
  return out;
}

std::span<const uint8_t> without_prefix(const protocol::OutputBuffer& out) {
  return {out.memory() + 4, out.memory_size() - 4};
}

TEST(RequestCodecTest, CorrelatesPipelinedResponsesInOrder) {
  RequestCodec codec(std::string("test"));
  protocol::OutputBuffer requests;
  PendingRequest first, second;
  ASSERT_TRUE(codec.encode(protocol::MetadataRequest{}, 12, true, &requests, &first).ok());
  ASSERT_TRUE(codec.encode(protocol::MetadataRequest{}, 4, true, &requests, &second).ok());
  EXPECT_NE(first.correlation_id, second.correlation_id);
  EXPECT_EQ(codec.pending(), 2u);

  // The request frames parse as a broker would see them.
  protocol::ParsedRequestHeader h;
  ASSERT_TRUE(protocol::parse_request_header({requests.memory() + 4, requests.memory_size() - 4}, &h).ok());
  EXPECT_EQ(h.header.request_api_key, 3);
  EXPECT_EQ(h.header.request_api_version, 12);
  EXPECT_EQ(h.header.correlation_id, first.correlation_id);
  EXPECT_EQ(h.header.client_id, "test");

  protocol::MetadataResponse body;
  body.cluster_id = "c";
  auto frame1 = response_frame(body, 12, first.correlation_id);
  PendingRequest answered;
  std::span<const uint8_t> bytes;
  ASSERT_TRUE(codec.match(without_prefix(frame1), &answered, &bytes).ok());
  EXPECT_EQ(answered.correlation_id, first.correlation_id);
  protocol::MetadataResponse decoded;
  ASSERT_TRUE(decode_response(bytes, answered, &decoded).ok());
  EXPECT_EQ(decoded.cluster_id, "c");

  // A response to the first request again is out of order.
  Status s = codec.match(without_prefix(frame1), &answered, &bytes);
  EXPECT_EQ(s.code(), Status::Code::kProtocol);
  auto frame2 = response_frame(body, 4, second.correlation_id);
  ASSERT_TRUE(codec.match(without_prefix(frame2), &answered, &bytes).ok());
  EXPECT_EQ(answered.api_version, 4);
  EXPECT_EQ(codec.pending(), 0u);
  EXPECT_EQ(codec.match(without_prefix(frame2), &answered, &bytes).code(), Status::Code::kProtocol);
}

TEST(RequestCodecTest, RequestsWithoutResponseAreNotPending) {
  RequestCodec codec(std::nullopt);
  protocol::OutputBuffer out;
  ASSERT_TRUE(codec.encode(protocol::MetadataRequest{}, 9, false, &out).ok());
  EXPECT_EQ(codec.pending(), 0u);
}

TEST(RequestCodecTest, RefusesValuesTheVersionCannotCarry) {
  RequestCodec codec(std::nullopt);
  protocol::MetadataRequest request;
  request.allow_auto_topic_creation = false;  // versions 4+ only
  protocol::OutputBuffer out;
  EXPECT_EQ(codec.encode(request, 3, true, &out).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(codec.pending(), 0u);
}

TEST(ClusterMetadataTest, TracksBrokersTopicsAndLeaders) {
  protocol::MetadataResponse r;
  r.brokers.push_back({1, "h1", 9092, std::nullopt, {}});
  r.brokers.push_back({2, "h2", 0, std::nullopt, {}});  // bad port: ignored
  r.controller_id = 1;
  protocol::MetadataResponse::MetadataResponseTopic t;
  t.name = "t";
  for (int32_t p : {1, 0}) {
    protocol::MetadataResponse::MetadataResponsePartition part;
    part.partition_index = p;
    part.leader_id = 1;
    part.replica_nodes = {1};
    t.partitions.push_back(part);
  }
  t.partitions[0].error_code = protocol::to_int(protocol::ErrorCode::kLeaderNotAvailable);
  r.topics.push_back(t);
  ClusterMetadata m;
  m.update(r, true);
  ASSERT_EQ(m.brokers().size(), 1u);
  EXPECT_EQ(m.broker(1)->address, (BrokerAddress{"h1", 9092}));
  EXPECT_EQ(m.broker(2), nullptr);
  ASSERT_NE(m.topic("t"), nullptr);
  EXPECT_EQ(m.topic("t")->partitions[0].partition, 0);  // sorted
  EXPECT_EQ(m.leader_for("t", 0), 1);
  EXPECT_EQ(m.leader_for("t", 1), -1);  // partition error
  EXPECT_EQ(m.leader_for("t", 2), -1);
  EXPECT_EQ(m.leader_for("u", 0), -1);

  // A partial update keeps other topics; a full one forgets them.
  protocol::MetadataResponse u = r;
  u.topics[0].name = "u";
  m.update(u, false);
  EXPECT_NE(m.topic("t"), nullptr);
  EXPECT_NE(m.topic("u"), nullptr);
  m.update(u, true);
  EXPECT_EQ(m.topic("t"), nullptr);
}

TEST(ClusterMetadataTest, FormatsTopicIdsAsKafkaDoes) {
  protocol::Uuid id;
  EXPECT_EQ(format_topic_id(id), "AAAAAAAAAAAAAAAAAAAAAA");
  for (uint8_t i = 0; i < 16; ++i) id.bytes[i] = i;
  // base64.urlsafe_b64encode(bytes(range(16))) without '=='.
  EXPECT_EQ(format_topic_id(id), "AAECAwQFBgcICQoLDA0ODw");
  for (auto& b : id.bytes) b = 0xff;
  EXPECT_EQ(format_topic_id(id), "_____________________w");
}

TEST(PartitionerTest, Murmur2MatchesKafka) {
  // Kafka's UtilsTest.testMurmur2.
  EXPECT_EQ(murmur2(bytes_of("21")), -973932308);
  EXPECT_EQ(murmur2(bytes_of("foobar")), -790332482);
  EXPECT_EQ(murmur2(bytes_of("a-little-bit-long-string")), -985981536);
  EXPECT_EQ(murmur2(bytes_of("a-little-bit-longer-string")), -1486304829);
  EXPECT_EQ(murmur2(bytes_of("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8")), -58897971);
  EXPECT_EQ(murmur2(bytes_of("abc")), 479470107);
}

TEST(PartitionerTest, PartitionIsPositiveHashModuloCount) {
  for (const char* key : {"21", "foobar", "abc", ""}) {
    uint32_t positive = static_cast<uint32_t>(murmur2(bytes_of(key))) & 0x7fffffff;
    EXPECT_EQ(partition_for_key(bytes_of(key), 7), static_cast<int32_t>(positive % 7)) << key;
  }
}

TEST(StatusTest, RetriableFollowsKafkaAndTransport) {
  EXPECT_TRUE(Status::error(Status::Code::kNetwork, "x").retriable());
  EXPECT_TRUE(Status::error(Status::Code::kTimeout, "x").retriable());
  EXPECT_FALSE(Status::error(Status::Code::kProtocol, "x").retriable());
  Status nl = protocol::broker_error(protocol::to_int(protocol::ErrorCode::kNotLeaderOrFollower), "produce");
  EXPECT_TRUE(nl.retriable());
  EXPECT_EQ(nl.message(), "produce: NOT_LEADER_OR_FOLLOWER");
  Status exists = protocol::broker_error(protocol::to_int(protocol::ErrorCode::kTopicAlreadyExists), "create",
                                         std::string("Topic 't' already exists."));
  EXPECT_FALSE(exists.retriable());
  EXPECT_EQ(exists.message(), "create: TOPIC_ALREADY_EXISTS: Topic 't' already exists.");
  EXPECT_EQ(protocol::broker_error(3, "m").code(), Status::Code::kNotFound);
}

}  // namespace
}  // namespace eddy::client
