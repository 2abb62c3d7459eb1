// BrokerConnection and Client against the in-memory fake broker: the
// ApiVersions exchange and its fallback, version negotiation, correlation
// and frame checks, timeouts, bootstrap and per-node connections.
#include <gtest/gtest.h>

#include "client/broker_connection.h"
#include "client/client.h"
#include "fake_broker.h"
#include "protocol/generated/describe_cluster.h"
#include "protocol/generated/metadata.h"
#include "protocol/generated/produce.h"
#include "protocol/record_batch.h"

namespace eddy::client {
namespace {

using protocol::MetadataRequest;
using protocol::MetadataResponse;
using testing::FakeBroker;

Deadline soon() { return Deadline::after_ms(1000); }

MetadataResponse one_broker_metadata(const std::string& host, int32_t port) {
  MetadataResponse r;
  r.brokers.push_back({1, host, port, std::nullopt, {}});
  r.controller_id = 1;
  r.cluster_id = "cluster";
  return r;
}

TEST(BrokerConnectionTest, NegotiatesVersionsOnOpen) {
  FakeBroker broker;
  broker.set_range(3, 0, 7);  // Metadata up to v7 only
  BrokerConnection conn(broker.transport(), ConnectionOptions{});
  ASSERT_TRUE(conn.open({"b", 1}, soon()).ok());
  ASSERT_EQ(broker.requests.size(), 1u);
  EXPECT_EQ(broker.requests[0].api_key, 18);
  EXPECT_EQ(broker.requests[0].api_version, 3);
  int16_t version = -1;
  ASSERT_TRUE(conn.negotiate<MetadataRequest>(&version).ok());
  EXPECT_EQ(version, 7);

  broker.on<MetadataRequest, MetadataResponse>(
      [](const MetadataRequest&, int16_t) { return one_broker_metadata("b", 1); });
  MetadataResponse response;
  ASSERT_TRUE(conn.call(MetadataRequest{}, version, &response, soon()).ok());
  EXPECT_EQ(broker.requests.back().api_version, 7);
  EXPECT_EQ(response.brokers.size(), 1u);
}

TEST(BrokerConnectionTest, FallsBackWhenTheBrokerSpeaksAnOlderApiVersions) {
  FakeBroker broker;
  broker.set_range(18, 0, 1);
  BrokerConnection conn(broker.transport(), ConnectionOptions{});
  ASSERT_TRUE(conn.open({"b", 1}, soon()).ok());
  ASSERT_EQ(broker.requests.size(), 2u);
  EXPECT_EQ(broker.requests[0].api_version, 3);
  EXPECT_EQ(broker.requests[1].api_version, 1);
  EXPECT_TRUE(conn.versions().broker_range(3).has_value());
}

TEST(BrokerConnectionTest, RefusesApisWithoutACommonVersion) {
  FakeBroker broker;
  broker.set_range(0, 0, 2);  // Produce before RecordBatch v2
  BrokerConnection conn(broker.transport(), ConnectionOptions{});
  ASSERT_TRUE(conn.open({"b", 1}, soon()).ok());
  int16_t version;
  EXPECT_EQ(conn.negotiate<protocol::ProduceRequest>(&version).code(), Status::Code::kUnsupportedVersion);
}

TEST(BrokerConnectionTest, ASilentBrokerTimesOutAndClosesTheConnection) {
  FakeBroker broker;  // no Metadata handler: never answers
  BrokerConnection conn(broker.transport(), ConnectionOptions{});
  ASSERT_TRUE(conn.open({"b", 1}, soon()).ok());
  MetadataResponse response;
  Status s = conn.call(MetadataRequest{}, 12, &response, soon());
  EXPECT_EQ(s.code(), Status::Code::kTimeout);
  EXPECT_TRUE(s.retriable());
  EXPECT_FALSE(conn.is_open());
  EXPECT_EQ(conn.call(MetadataRequest{}, 12, &response, soon()).code(), Status::Code::kNetwork);
}

TEST(BrokerConnectionTest, AWrongCorrelationIdIsAProtocolError) {
  FakeBroker broker;
  broker.on_raw(3, [](const protocol::ParsedRequestHeader& h, std::span<const uint8_t>, protocol::OutputBuffer* out) {
    EXPECT_TRUE(protocol::encode_response_frame(MetadataResponse{}, h.header.request_api_version,
                                                h.header.correlation_id + 1, out)
                    .ok());
  });
  BrokerConnection conn(broker.transport(), ConnectionOptions{});
  ASSERT_TRUE(conn.open({"b", 1}, soon()).ok());
  MetadataResponse response;
  Status s = conn.call(MetadataRequest{}, 12, &response, soon());
  EXPECT_EQ(s.code(), Status::Code::kProtocol);
  EXPECT_NE(s.message().find("correlation"), std::string::npos) << s.message();
  EXPECT_FALSE(conn.is_open());
}

TEST(BrokerConnectionTest, AnOversizedOrUndecodableResponseIsAProtocolError) {
  FakeBroker broker;
  broker.on_raw(3, [](const protocol::ParsedRequestHeader& h, std::span<const uint8_t>, protocol::OutputBuffer* out) {
    uint8_t frame[] = {0x7f, 0xff, 0xff, 0xff};  // a 2 GiB frame
    out->append(frame, sizeof frame);
  });
  ConnectionOptions options;
  options.max_response_bytes = 1 << 20;
  BrokerConnection conn(broker.transport(), options);
  ASSERT_TRUE(conn.open({"b", 1}, soon()).ok());
  MetadataResponse response;
  Status s = conn.call(MetadataRequest{}, 12, &response, soon());
  EXPECT_EQ(s.code(), Status::Code::kProtocol);
  EXPECT_NE(s.message().find("limit"), std::string::npos) << s.message();

  broker.on_raw(3, [](const protocol::ParsedRequestHeader& h, std::span<const uint8_t>, protocol::OutputBuffer* out) {
    // Correct header, truncated body.
    uint8_t frame[] = {0, 0, 0, 6, 0, 0, 0, 0, 0, 0};
    protocol::store_be32(frame + 4, static_cast<uint32_t>(h.header.correlation_id));
    out->append(frame, sizeof frame);
  });
  ASSERT_TRUE(conn.open({"b", 1}, soon()).ok());
  s = conn.call(MetadataRequest{}, 12, &response, soon());
  EXPECT_EQ(s.code(), Status::Code::kProtocol);
  EXPECT_FALSE(conn.is_open());
}

TEST(ClientTest, BootstrapTriesEachAddress) {
  FakeBroker broker;
  broker.refuse_connections = true;
  ClientOptions options;
  options.bootstrap = {{"a", 1}, {"b", 2}};
  options.transport_factory = broker.factory();
  Client client(options);
  Status s = client.bootstrap();
  EXPECT_EQ(s.code(), Status::Code::kNetwork);
  EXPECT_EQ(broker.connects.size(), 2u);
  broker.refuse_connections = false;
  EXPECT_TRUE(client.bootstrap().ok());
}

TEST(ClientTest, AdoptsTheBootstrapConnectionForItsNode) {
  FakeBroker broker;
  broker.on<MetadataRequest, MetadataResponse>([](const MetadataRequest& request, int16_t) {
    MetadataResponse r = one_broker_metadata("b", 9092);
    protocol::MetadataResponse::MetadataResponseTopic t;
    t.name = "t";
    t.partitions.push_back({});
    t.partitions[0].leader_id = 1;
    r.topics.push_back(t);
    return r;
  });
  broker.on<protocol::DescribeClusterRequest, protocol::DescribeClusterResponse>(
      [](const protocol::DescribeClusterRequest&, int16_t) {
        protocol::DescribeClusterResponse r;
        r.cluster_id = "cluster";
        return r;
      });
  ClientOptions options;
  options.bootstrap = {{"b", 9092}};
  options.transport_factory = broker.factory();
  Client client(options);
  ASSERT_TRUE(client.bootstrap().ok());
  const TopicInfo* topic = nullptr;
  ASSERT_TRUE(client.topic_metadata("t", false, &topic).ok());
  EXPECT_EQ(client.metadata().leader_for("t", 0), 1);
  protocol::DescribeClusterResponse cluster;
  ASSERT_TRUE(client.call<protocol::DescribeClusterRequest>(1, [](auto&, int16_t) {}, &cluster).ok());
  EXPECT_EQ(cluster.cluster_id, "cluster");
  EXPECT_EQ(broker.connects.size(), 1u);  // node 1 reused the bootstrap connection
  BrokerConnection* unknown = nullptr;
  EXPECT_EQ(client.connection(7, &unknown).code(), Status::Code::kNotFound);
}

TEST(ClientTest, MetadataRequestCarriesAutoCreateFromV4) {
  FakeBroker broker;
  std::vector<bool> auto_create;
  broker.on<MetadataRequest, MetadataResponse>([&](const MetadataRequest& request, int16_t) {
    auto_create.push_back(request.allow_auto_topic_creation);
    MetadataResponse r = one_broker_metadata("b", 1);
    protocol::MetadataResponse::MetadataResponseTopic t;
    t.name = request.topics->at(0).name;
    t.error_code = protocol::to_int(protocol::ErrorCode::kUnknownTopicOrPartition);
    r.topics.push_back(t);
    return r;
  });
  ClientOptions options;
  options.bootstrap = {{"b", 1}};
  options.transport_factory = broker.factory();
  Client client(options);
  ASSERT_TRUE(client.bootstrap().ok());
  const TopicInfo* topic = nullptr;
  Status s = client.topic_metadata("missing", false, &topic);
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_NE(s.message().find("missing"), std::string::npos);
  ASSERT_EQ(auto_create.size(), 1u);
  EXPECT_FALSE(auto_create[0]);
}

}  // namespace
}  // namespace eddy::client
