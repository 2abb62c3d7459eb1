// Request frames captured from kcat (librdkafka 2.0.2) and kafka-python
// 2.0.2 (see data/capture.py): they decode to the values the clients sent and
// re-encode to the same bytes.
#include <gtest/gtest.h>

#include <string_view>

#include "captures.h"
#include "port/port.h"
#include "protocol/headers.h"
#include "protocol/generated/messages.h"

namespace eddy::protocol::testing {
namespace {

using Bytes = std::vector<uint8_t>;

struct Decoded {
  ParsedRequestHeader header;
  std::span<const uint8_t> frame;
};

// Parses the header and decodes the body into *body; checks that header and
// body re-encode to exactly the captured bytes.
template <typename M>
Decoded decode_capture(const char* name, M* body) {
  Decoded d;
  d.frame = capture(name);
  Status s = parse_request_header(d.frame, &d.header);
  EXPECT_TRUE(s.ok()) << name << ": " << s.message();
  EXPECT_EQ(d.header.header.request_api_key, M::kApiKey) << name;
  s = decode_request_body(d.frame, d.header, body);
  EXPECT_TRUE(s.ok()) << name << ": " << s.message();

  OutputBuffer out;
  Writer w(&out);
  d.header.header.encode(w, d.header.header_version);
  EXPECT_TRUE(w.ok());
  EXPECT_TRUE(encode(*body, d.header.header.request_api_version, &out).ok());
  EXPECT_FALSE(out.has_file_regions());
  EXPECT_EQ(Bytes(out.memory(), out.memory() + out.memory_size()), Bytes(d.frame.begin(), d.frame.end()))
      << name << " does not re-encode to the captured bytes";
  return d;
}

bool contains(std::span<const uint8_t> haystack, std::string_view needle) {
  std::string_view h(reinterpret_cast<const char*>(haystack.data()), haystack.size());
  return h.find(needle) != std::string_view::npos;
}

// The records are one RecordBatch v2 whose CRC-32C (over attributes..end)
// matches: the view holds exactly the bytes the client sent.
void expect_intact_batch(std::span<const uint8_t> records) {
  ASSERT_GE(records.size(), 61u);
  EXPECT_EQ(records[16], 2) << "magic";
  uint32_t batch_length = (uint32_t{records[8]} << 24) | (records[9] << 16) | (records[10] << 8) | records[11];
  EXPECT_EQ(batch_length + 12, records.size());
  uint32_t stored = (uint32_t{records[17]} << 24) | (records[18] << 16) | (records[19] << 8) | records[20];
  EXPECT_EQ(port::crc32c(0, records.data() + 21, records.size() - 21), stored);
}

TEST(Golden, KcatApiVersionsV3) {
  ApiVersionsRequest body;
  Decoded d = decode_capture("kcat_api_versions_v3.bin", &body);
  EXPECT_EQ(d.header.header.request_api_version, 3);
  EXPECT_EQ(d.header.header_version, 2);
  EXPECT_EQ(d.header.header.correlation_id, 1);
  EXPECT_EQ(d.header.header.client_id, std::optional<std::string>("capture-kcat"));
  EXPECT_EQ(body.client_software_name, "librdkafka");
  EXPECT_EQ(body.client_software_version, "2.0.2");
}

TEST(Golden, KcatMetadataV4) {
  MetadataRequest body;
  Decoded d = decode_capture("kcat_metadata_v4.bin", &body);
  EXPECT_EQ(d.header.header.request_api_version, 4);
  EXPECT_EQ(d.header.header_version, 1);
  ASSERT_TRUE(body.topics.has_value()) << "an empty list (brokers only), not null (all topics)";
  EXPECT_TRUE(body.topics->empty());
  EXPECT_FALSE(body.allow_auto_topic_creation);
}

TEST(Golden, KcatProduceV7) {
  ProduceRequest body;
  Decoded d = decode_capture("kcat_produce_v7.bin", &body);
  EXPECT_EQ(d.header.header.request_api_version, 7);
  EXPECT_EQ(body.transactional_id, std::nullopt);
  EXPECT_EQ(body.acks, -1);
  EXPECT_EQ(body.timeout_ms, 30000);
  ASSERT_EQ(body.topic_data.size(), 1u);
  EXPECT_EQ(body.topic_data[0].name, "capture");
  ASSERT_EQ(body.topic_data[0].partition_data.size(), 1u);
  const auto& partition = body.topic_data[0].partition_data[0];
  EXPECT_EQ(partition.index, 0);
  ASSERT_TRUE(partition.records.has_value());
  std::span<const uint8_t> records = partition.records->bytes;
  EXPECT_EQ(records.size(), 85u);
  EXPECT_GE(records.data(), d.frame.data());
  EXPECT_LE(records.data() + records.size(), d.frame.data() + d.frame.size());
  EXPECT_TRUE(contains(records, "hello from kcat"));
  expect_intact_batch(records);
}

TEST(Golden, KcatFetchV11) {
  FetchRequest body;
  Decoded d = decode_capture("kcat_fetch_v11.bin", &body);
  EXPECT_EQ(d.header.header.request_api_version, 11);
  EXPECT_EQ(body.replica_id, -1);
  EXPECT_EQ(body.max_wait_ms, 500);
  EXPECT_EQ(body.min_bytes, 1);
  EXPECT_EQ(body.max_bytes, 52428800);
  EXPECT_EQ(body.isolation_level, 1);
  EXPECT_EQ(body.session_id, 0);
  EXPECT_EQ(body.session_epoch, -1);
  ASSERT_EQ(body.topics.size(), 1u);
  EXPECT_EQ(body.topics[0].topic, "capture");
  ASSERT_EQ(body.topics[0].partitions.size(), 1u);
  const auto& p = body.topics[0].partitions[0];
  EXPECT_EQ(p.partition, 0);
  EXPECT_EQ(p.current_leader_epoch, -1);
  EXPECT_EQ(p.fetch_offset, 0);
  EXPECT_EQ(p.log_start_offset, -1);
  EXPECT_EQ(p.partition_max_bytes, 1048576);
  EXPECT_TRUE(body.forgotten_topics_data.empty());
  EXPECT_EQ(body.rack_id, "");
}

TEST(Golden, KafkaPythonApiVersionsV0) {
  ApiVersionsRequest body;
  Decoded d = decode_capture("kafka_python_api_versions_v0.bin", &body);
  EXPECT_EQ(d.header.header.request_api_version, 0);
  EXPECT_EQ(d.header.header_version, 1);
  EXPECT_EQ(d.header.header.client_id, std::optional<std::string>("capture-kafka-python"));
  EXPECT_EQ(d.header.body_offset, d.frame.size()) << "v0 has an empty body";
}

TEST(Golden, KafkaPythonMetadataV0) {
  MetadataRequest body;
  Decoded d = decode_capture("kafka_python_metadata_v0.bin", &body);
  EXPECT_EQ(d.header.header.request_api_version, 0);
  ASSERT_TRUE(body.topics.has_value());
  EXPECT_TRUE(body.topics->empty()) << "v0: an empty list means all topics";
}

TEST(Golden, KafkaPythonProduceV7) {
  ProduceRequest body;
  Decoded d = decode_capture("kafka_python_produce_v7.bin", &body);
  EXPECT_EQ(d.header.header.request_api_version, 7);
  EXPECT_EQ(body.transactional_id, std::nullopt);
  EXPECT_EQ(body.acks, 1);
  EXPECT_EQ(body.timeout_ms, 60000);
  ASSERT_EQ(body.topic_data.size(), 1u);
  EXPECT_EQ(body.topic_data[0].name, "capture");
  ASSERT_EQ(body.topic_data[0].partition_data.size(), 1u);
  const auto& partition = body.topic_data[0].partition_data[0];
  ASSERT_TRUE(partition.records.has_value());
  EXPECT_EQ(partition.records->size(), 93u);
  EXPECT_TRUE(contains(partition.records->bytes, "hello from kafka-python"));
  expect_intact_batch(partition.records->bytes);
}

TEST(Golden, KafkaPythonFetchV4) {
  FetchRequest body;
  Decoded d = decode_capture("kafka_python_fetch_v4.bin", &body);
  EXPECT_EQ(d.header.header.request_api_version, 4);
  EXPECT_EQ(body.replica_id, -1);
  EXPECT_EQ(body.max_wait_ms, 500);
  EXPECT_EQ(body.min_bytes, 1);
  EXPECT_EQ(body.max_bytes, 52428800);
  EXPECT_EQ(body.isolation_level, 0);
  ASSERT_EQ(body.topics.size(), 1u);
  EXPECT_EQ(body.topics[0].topic, "capture");
  ASSERT_EQ(body.topics[0].partitions.size(), 1u);
  EXPECT_EQ(body.topics[0].partitions[0].fetch_offset, 0);
  EXPECT_EQ(body.topics[0].partitions[0].partition_max_bytes, 1048576);
}

TEST(Golden, EveryCaptureIsCovered) {
  EXPECT_EQ(kCaptureCount, 8u) << "a new capture in data/ needs a test here";
}

}  // namespace
}  // namespace eddy::protocol::testing
