// Producer, Consumer and Admin over the in-memory fake broker: what goes on
// the wire (one batch per partition per request, keyed partitioning, acks),
// retries, delivery reports, start offsets, fetch positions and errors.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "client/admin.h"
#include "client/consumer.h"
#include "client/partitioner.h"
#include "client/producer.h"
#include "fake_broker.h"
#include "protocol/generated/create_topics.h"
#include "protocol/generated/fetch.h"
#include "protocol/generated/list_offsets.h"
#include "protocol/generated/metadata.h"
#include "protocol/generated/produce.h"
#include "protocol/record_batch.h"

namespace eddy::client {
namespace {

using protocol::ErrorCode;
using testing::FakeBroker;

std::span<const uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// A fake single-node cluster with one topic "t" of `partitions` partitions
// whose logs live in memory: Produce appends, Fetch and ListOffsets read.
class FakeCluster {
 public:
  explicit FakeCluster(int32_t partitions) : logs_(static_cast<size_t>(partitions)) {
    broker.on<protocol::MetadataRequest, protocol::MetadataResponse>(
        [this](const protocol::MetadataRequest& request, int16_t) {
          protocol::MetadataResponse r;
          r.brokers.push_back({1, "node1", 9092, std::nullopt, {}});
          r.controller_id = 1;
          for (const auto& wanted : *request.topics) {
            protocol::MetadataResponse::MetadataResponseTopic t;
            t.name = wanted.name;
            if (*wanted.name != "t") {
              t.error_code = protocol::to_int(ErrorCode::kUnknownTopicOrPartition);
            } else {
              for (int32_t p = 0; p < static_cast<int32_t>(logs_.size()); ++p) {
                protocol::MetadataResponse::MetadataResponsePartition part;
                part.partition_index = p;
                part.leader_id = 1;
                part.replica_nodes = {1};
                part.isr_nodes = {1};
                t.partitions.push_back(part);
              }
            }
            r.topics.push_back(t);
          }
          return r;
        });
    broker.on<protocol::ProduceRequest, protocol::ProduceResponse>(
        [this](const protocol::ProduceRequest& request, int16_t) {
          acks_seen.push_back(request.acks);
          protocol::ProduceResponse r;
          for (const auto& topic : request.topic_data) {
            protocol::ProduceResponse::TopicProduceResponse tr;
            tr.name = topic.name;
            std::set<int32_t> seen;
            for (const auto& pd : topic.partition_data) {
              EXPECT_TRUE(seen.insert(pd.index).second) << "two batches for one partition in a request";
              protocol::ProduceResponse::PartitionProduceResponse pr;
              pr.index = pd.index;
              size_t batches = 0;
              EXPECT_EQ(protocol::validate_batches(pd.records->bytes, &batches), protocol::BatchError::kOk);
              EXPECT_EQ(batches, 1u);
              ++batches_received;
              if (!fail_next.empty()) {
                pr.error_code = protocol::to_int(fail_next.front());
                fail_next.erase(fail_next.begin());
              } else {
                pr.base_offset = append(pd.index, pd.records->bytes);
              }
              tr.partition_responses.push_back(pr);
            }
            r.responses.push_back(tr);
          }
          ++produce_requests;
          return r;
        });
    broker.on<protocol::ListOffsetsRequest, protocol::ListOffsetsResponse>(
        [this](const protocol::ListOffsetsRequest& request, int16_t) {
          protocol::ListOffsetsResponse r;
          for (const auto& t : request.topics) {
            protocol::ListOffsetsResponse::ListOffsetsTopicResponse tr;
            tr.name = t.name;
            for (const auto& p : t.partitions) {
              protocol::ListOffsetsResponse::ListOffsetsPartitionResponse pr;
              pr.partition_index = p.partition_index;
              pr.offset = p.timestamp == kEarliestOffset ? log_start : end_offset(p.partition_index);
              tr.partitions.push_back(pr);
            }
            r.topics.push_back(tr);
          }
          return r;
        });
    broker.on<protocol::FetchRequest, protocol::FetchResponse>([this](const protocol::FetchRequest& request, int16_t) {
      protocol::FetchResponse r;
      fetch_buffers_.clear();
      for (const auto& t : request.topics) {
        protocol::FetchResponse::FetchableTopicResponse tr;
        tr.topic = t.topic;
        for (const auto& p : t.partitions) {
          protocol::FetchResponse::PartitionData pd;
          pd.partition_index = p.partition;
          pd.high_watermark = end_offset(p.partition);
          if (p.fetch_offset < log_start || p.fetch_offset > end_offset(p.partition)) {
            pd.error_code = protocol::to_int(ErrorCode::kOffsetOutOfRange);
          } else {
            // Whole batches holding fetch_offset and after.
            std::vector<uint8_t>& out = fetch_buffers_.emplace_back();
            protocol::BatchIterator it(logs_[static_cast<size_t>(p.partition)]);
            protocol::RecordBatchView b;
            while (it.next(&b)) {
              if (b.next_offset() > p.fetch_offset) out.insert(out.end(), b.bytes().begin(), b.bytes().end());
            }
            pd.records = protocol::Records{out, {}};
          }
          tr.partitions.push_back(pd);
        }
        r.responses.push_back(tr);
      }
      ++fetch_requests;
      return r;
    });
  }

  ClientOptions options() {
    ClientOptions o;
    o.bootstrap = {{"node1", 9092}};
    o.transport_factory = broker.factory();
    return o;
  }

  int64_t end_offset(int32_t partition) const {
    int64_t end = log_start;
    protocol::BatchIterator it(logs_[static_cast<size_t>(partition)]);
    protocol::RecordBatchView b;
    while (it.next(&b)) end = b.next_offset();
    return end;
  }

  // Appends a batch (assigning offsets as a broker does); returns its base offset.
  int64_t append(int32_t partition, std::span<const uint8_t> batch) {
    int64_t base = end_offset(partition);
    std::vector<uint8_t>& log = logs_[static_cast<size_t>(partition)];
    size_t at = log.size();
    log.insert(log.end(), batch.begin(), batch.end());
    protocol::set_base_offset(std::span<uint8_t>(log).subspan(at), base);
    return base;
  }

  std::vector<std::string> values(int32_t partition) const {
    std::vector<std::string> out;
    protocol::BatchIterator it(logs_[static_cast<size_t>(partition)]);
    protocol::RecordBatchView b;
    while (it.next(&b)) {
      protocol::RecordIterator records(b);
      protocol::Record rec;
      while (records.next(&rec)) out.emplace_back(reinterpret_cast<const char*>(rec.value->data()), rec.value->size());
    }
    return out;
  }

  FakeBroker broker;
  std::vector<ErrorCode> fail_next;  // errors for the next partitions produced to
  std::vector<int16_t> acks_seen;
  int produce_requests = 0;
  int batches_received = 0;
  int fetch_requests = 0;
  int64_t log_start = 0;

 private:
  std::vector<std::vector<uint8_t>> logs_;
  std::vector<std::vector<uint8_t>> fetch_buffers_;
};

TEST(ProducerTest, KeyedRecordsGoWhereKafkaWouldPutThem) {
  FakeCluster cluster(4);
  Client client(cluster.options());
  ASSERT_TRUE(client.bootstrap().ok());
  Producer producer(&client, ProducerOptions{});
  std::vector<DeliveryReport> reports;
  producer.on_delivery([&](const DeliveryReport& r) { reports.push_back(r); });
  std::map<int32_t, std::vector<std::string>> expected;
  for (int i = 0; i < 40; ++i) {
    std::string key = "key-" + std::to_string(i);
    std::string value = "value-" + std::to_string(i);
    ASSERT_TRUE(producer.send("t", -1, bytes_of(key), bytes_of(value), 1000 + i).ok());
    expected[partition_for_key(bytes_of(key), 4)].push_back(value);
  }
  ASSERT_TRUE(producer.flush().ok());
  EXPECT_EQ(producer.records_delivered(), 40u);
  EXPECT_EQ(producer.records_failed(), 0u);
  for (int32_t p = 0; p < 4; ++p) EXPECT_EQ(cluster.values(p), expected[p]) << "partition " << p;
  EXPECT_EQ(cluster.produce_requests, 1);  // all partitions in one request
  for (const auto& r : reports) EXPECT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(cluster.acks_seen, std::vector<int16_t>{-1});
}

TEST(ProducerTest, FullBatchesGoOutAsTheyFillInOrder) {
  FakeCluster cluster(1);
  Client client(cluster.options());
  ASSERT_TRUE(client.bootstrap().ok());
  ProducerOptions options;
  options.batch_bytes = 100;
  options.acks = 1;
  Producer producer(&client, options);
  std::vector<std::string> values;
  // batch_bytes is small: 10 records make several batches, each sent when
  // the next record does not fit.
  for (int i = 0; i < 10; ++i) {
    values.push_back(std::string(40, static_cast<char>('a' + i)));
    ASSERT_TRUE(producer.send("t", 0, std::nullopt, bytes_of(values.back()), 1).ok());
  }
  ASSERT_TRUE(producer.flush().ok());
  EXPECT_EQ(cluster.values(0), values);
  EXPECT_GE(cluster.produce_requests, 3);
  EXPECT_EQ(producer.records_delivered(), 10u);
  for (int16_t acks : cluster.acks_seen) EXPECT_EQ(acks, 1);
}

TEST(ProducerTest, RetriesRetriableErrorsAndReportsFatalOnes) {
  FakeCluster cluster(1);
  Client client(cluster.options());
  ASSERT_TRUE(client.bootstrap().ok());
  ProducerOptions options;
  options.retry_backoff_ms = 1;
  Producer producer(&client, options);
  std::vector<DeliveryReport> reports;
  producer.on_delivery([&](const DeliveryReport& r) { reports.push_back(r); });

  cluster.fail_next = {ErrorCode::kNotLeaderOrFollower};
  ASSERT_TRUE(producer.send("t", 0, std::nullopt, bytes_of("x"), 1).ok());
  ASSERT_TRUE(producer.flush().ok());
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_TRUE(reports[0].status.ok());
  EXPECT_EQ(reports[0].base_offset, 0);
  EXPECT_EQ(cluster.produce_requests, 2);

  cluster.fail_next = {ErrorCode::kMessageTooLarge};
  ASSERT_TRUE(producer.send("t", 0, std::nullopt, bytes_of("y"), 1).ok());
  ASSERT_TRUE(producer.flush().ok());
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(protocol::kafka_error(reports[1].status), ErrorCode::kMessageTooLarge);
  EXPECT_NE(reports[1].status.message().find("t-0"), std::string::npos) << reports[1].status.message();
  EXPECT_EQ(producer.records_failed(), 1u);

  cluster.fail_next.assign(10, ErrorCode::kNotLeaderOrFollower);  // more than the retries
  ASSERT_TRUE(producer.send("t", 0, std::nullopt, bytes_of("z"), 1).ok());
  ASSERT_TRUE(producer.flush().ok());
  ASSERT_EQ(reports.size(), 3u);
  EXPECT_EQ(protocol::kafka_error(reports[2].status), ErrorCode::kNotLeaderOrFollower);
  EXPECT_EQ(cluster.values(0), std::vector<std::string>{"x"});
}

TEST(ProducerTest, FullBatchesOfSeveralPartitionsShareRequests) {
  FakeCluster cluster(3);
  Client client(cluster.options());
  ASSERT_TRUE(client.bootstrap().ok());
  ProducerOptions options;
  options.batch_bytes = 200;
  Producer producer(&client, options);
  std::vector<std::vector<std::string>> expected(3);
  for (int i = 0; i < 60; ++i) {
    std::string value = "r" + std::to_string(i) + std::string(60, '.');
    expected[static_cast<size_t>(i % 3)].push_back(value);
    ASSERT_TRUE(producer.send("t", i % 3, std::nullopt, bytes_of(value), 1).ok());
  }
  ASSERT_TRUE(producer.flush().ok());
  for (int32_t p = 0; p < 3; ++p) EXPECT_EQ(cluster.values(p), expected[static_cast<size_t>(p)]);
  EXPECT_GE(cluster.batches_received, 3 * cluster.produce_requests - 2) << cluster.produce_requests << " requests";
  EXPECT_GT(cluster.produce_requests, 3);
}

TEST(ProducerTest, PipelinesUpToMaxInFlight) {
  FakeCluster cluster(1);
  Client client(cluster.options());
  ASSERT_TRUE(client.bootstrap().ok());
  ProducerOptions options;
  options.batch_bytes = 100;
  options.max_in_flight = 3;
  Producer producer(&client, options);
  std::vector<std::string> values;
  for (int i = 0; i < 20; ++i) {
    values.push_back("record-" + std::to_string(i) + std::string(50, '.'));
    ASSERT_TRUE(producer.send("t", 0, std::nullopt, bytes_of(values.back()), 1).ok());
  }
  ASSERT_TRUE(producer.flush().ok());
  EXPECT_EQ(cluster.values(0), values);
  EXPECT_EQ(producer.records_delivered(), 20u);
  EXPECT_EQ(cluster.broker.max_unread_answers, 3u);
}

TEST(ProducerTest, RequestsInFlightOnALostConnectionAreRetried) {
  FakeCluster cluster(1);
  // The first connection hangs from the third Produce request on: reading
  // that answer times out, which closes the connection with more requests
  // in flight behind it.
  int produce_seen = 0;
  cluster.broker.on_raw(0, [&](const protocol::ParsedRequestHeader& h, std::span<const uint8_t> frame,
                               protocol::OutputBuffer* out) {
    protocol::ProduceRequest request;
    ASSERT_TRUE(protocol::decode_request_body(frame, h, &request).ok());
    if (++produce_seen >= 3 && cluster.broker.connects.size() == 1) return;
    protocol::ProduceResponse r;
    r.responses.emplace_back();
    r.responses[0].name = "t";
    protocol::ProduceResponse::PartitionProduceResponse pr;
    pr.base_offset = cluster.append(0, request.topic_data[0].partition_data[0].records->bytes);
    r.responses[0].partition_responses.push_back(pr);
    EXPECT_TRUE(protocol::encode_response_frame(r, h.header.request_api_version, h.header.correlation_id, out).ok());
  });
  Client client(cluster.options());
  ASSERT_TRUE(client.bootstrap().ok());
  ProducerOptions options;
  options.batch_bytes = 100;
  options.retry_backoff_ms = 1;
  Producer producer(&client, options);
  std::set<std::string> sent;
  for (int i = 0; i < 10; ++i) {
    std::string v = "record-" + std::to_string(i) + std::string(50, '.');
    sent.insert(v);
    ASSERT_TRUE(producer.send("t", 0, std::nullopt, bytes_of(v), 1).ok());
  }
  ASSERT_TRUE(producer.flush().ok());
  EXPECT_EQ(producer.records_failed(), 0u);
  EXPECT_EQ(producer.records_delivered(), 10u);
  std::vector<std::string> stored = cluster.values(0);
  EXPECT_EQ(std::set<std::string>(stored.begin(), stored.end()), sent);  // at least once
  EXPECT_GE(cluster.broker.connects.size(), 2u);                         // reconnected
}

TEST(ProducerTest, AcksZeroExpectsNoResponse) {
  FakeCluster cluster(1);
  // A broker answering nothing to Produce, as Kafka with acks=0.
  cluster.broker.on_raw(0, [&](const protocol::ParsedRequestHeader& h, std::span<const uint8_t> frame,
                                protocol::OutputBuffer*) {
    protocol::ProduceRequest request;
    ASSERT_TRUE(protocol::decode_request_body(frame, h, &request).ok());
    EXPECT_EQ(request.acks, 0);
    cluster.append(0, request.topic_data[0].partition_data[0].records->bytes);
  });
  Client client(cluster.options());
  ASSERT_TRUE(client.bootstrap().ok());
  ProducerOptions options;
  options.acks = 0;
  Producer producer(&client, options);
  ASSERT_TRUE(producer.send("t", 0, std::nullopt, bytes_of("fire"), 1).ok());
  ASSERT_TRUE(producer.flush().ok());
  EXPECT_EQ(producer.records_delivered(), 1u);
  // The connection is still in step: a later request gets its own answer.
  const TopicInfo* info = nullptr;
  EXPECT_TRUE(client.topic_metadata("t", false, &info).ok());
  EXPECT_EQ(cluster.values(0), std::vector<std::string>{"fire"});
}

TEST(ProducerTest, UnknownTopicAndPartitionAreRefusedUpFront) {
  FakeCluster cluster(2);
  Client client(cluster.options());
  ASSERT_TRUE(client.bootstrap().ok());
  Producer producer(&client, ProducerOptions{});
  EXPECT_EQ(producer.send("nope", -1, std::nullopt, bytes_of("v"), 1).code(), Status::Code::kNotFound);
  Status s = producer.send("t", 2, std::nullopt, bytes_of("v"), 1);
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_NE(s.message().find("has no partition 2"), std::string::npos) << s.message();
}

TEST(ConsumerTest, ReadsFromEarliestLatestAndExplicitOffsets) {
  FakeCluster cluster(2);
  for (int i = 0; i < 5; ++i) {
    protocol::RecordBatchBuilder b;
    b.add("k", "p0-" + std::to_string(i), 100 + i);
    cluster.append(0, b.build());
  }
  Client client(cluster.options());
  ASSERT_TRUE(client.bootstrap().ok());
  Consumer consumer(&client, ConsumerOptions{});
  ASSERT_TRUE(consumer.assign("t", {{0, kEarliestOffset}, {1, kLatestOffset}}).ok());
  EXPECT_EQ(consumer.position(0), 0);
  EXPECT_EQ(consumer.position(1), 0);
  std::vector<std::pair<int32_t, int64_t>> seen;
  size_t delivered = 0;
  auto collect = [&](const ConsumerRecord& r) {
    seen.emplace_back(r.partition, r.decoded.offset);
    return true;
  };
  ASSERT_TRUE(consumer.poll(Deadline::after_ms(1000), collect, &delivered).ok());
  EXPECT_EQ(delivered, 5u);
  EXPECT_EQ(seen.back(), std::make_pair(0, int64_t{4}));
  EXPECT_EQ(consumer.position(0), 5);

  ASSERT_TRUE(consumer.assign("t", {{0, 3}}).ok());
  seen.clear();
  ASSERT_TRUE(consumer.poll(Deadline::after_ms(1000), collect, &delivered).ok());
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].second, 3);

  // Stopping after one record leaves the position right after it.
  ASSERT_TRUE(consumer.assign("t", {{0, kEarliestOffset}}).ok());
  ASSERT_TRUE(consumer.poll(
                          Deadline::after_ms(1000), [](const ConsumerRecord&) { return false; }, &delivered)
                  .ok());
  EXPECT_EQ(delivered, 1u);
  EXPECT_EQ(consumer.position(0), 1);
}

TEST(ConsumerTest, OutOfRangePositionsFollowTheResetPolicy) {
  FakeCluster cluster(1);
  protocol::RecordBatchBuilder b;
  b.add("k", "v", 1);
  cluster.append(0, b.build());
  cluster.append(0, b.build());
  Client client(cluster.options());
  ASSERT_TRUE(client.bootstrap().ok());
  ConsumerOptions options;
  options.reset = OffsetReset::kEarliest;
  Consumer consumer(&client, options);
  ASSERT_TRUE(consumer.assign("t", {{0, 50}}).ok());
  size_t delivered = 0;
  ASSERT_TRUE(consumer.poll(Deadline::after_ms(1000), [](const ConsumerRecord&) { return true; }, &delivered).ok());
  EXPECT_EQ(consumer.position(0), 0);  // reset to earliest, read on the next poll
  ASSERT_TRUE(consumer.poll(Deadline::after_ms(1000), [](const ConsumerRecord&) { return true; }, &delivered).ok());
  EXPECT_EQ(delivered, 2u);

  options.reset = OffsetReset::kNone;
  Consumer strict(&client, options);
  ASSERT_TRUE(strict.assign("t", {{0, 50}}).ok());
  Status s = strict.poll(Deadline::after_ms(1000), [](const ConsumerRecord&) { return true; }, &delivered);
  EXPECT_EQ(protocol::kafka_error(s), ErrorCode::kOffsetOutOfRange);
}

TEST(ConsumerTest, AResetMidResponseKeepsTheOtherPartitionsRecords) {
  // Partition 0 is out of range (its reset sends ListOffsets on the same
  // connection while the Fetch response is still being read); partition 1's
  // records in that response must survive it.
  FakeCluster cluster(2);
  for (int i = 0; i < 3; ++i) {
    protocol::RecordBatchBuilder b;
    b.add("k", "p1-" + std::to_string(i) + std::string(200, 'x'), 1);
    cluster.append(1, b.build());
  }
  Client client(cluster.options());
  ASSERT_TRUE(client.bootstrap().ok());
  Consumer consumer(&client, ConsumerOptions{});
  ASSERT_TRUE(consumer.assign("t", {{0, 99}, {1, kEarliestOffset}}).ok());
  std::vector<std::string> values;
  size_t delivered = 0;
  ASSERT_TRUE(consumer
                  .poll(Deadline::after_ms(1000),
                        [&](const ConsumerRecord& r) {
                          values.emplace_back(reinterpret_cast<const char*>(r.decoded.record->value->data()), 4);
                          return true;
                        },
                        &delivered)
                  .ok());
  EXPECT_EQ(values, (std::vector<std::string>{"p1-0", "p1-1", "p1-2"}));
  EXPECT_EQ(consumer.position(0), 0);  // reset to latest (empty partition)
}

TEST(ConsumerTest, UnknownTopicOrPartitionIsNotFound) {
  FakeCluster cluster(1);
  Client client(cluster.options());
  ASSERT_TRUE(client.bootstrap().ok());
  Consumer consumer(&client, ConsumerOptions{});
  EXPECT_EQ(consumer.assign("nope", {{0, kLatestOffset}}).code(), Status::Code::kNotFound);
  EXPECT_EQ(consumer.assign("t", {{3, kLatestOffset}}).code(), Status::Code::kNotFound);
}

TEST(AdminTest, CreateTopicReportsTheBrokersError) {
  FakeBroker broker;
  std::vector<protocol::CreateTopicsRequest> seen;
  broker.on<protocol::CreateTopicsRequest, protocol::CreateTopicsResponse>(
      [&](const protocol::CreateTopicsRequest& request, int16_t) {
        seen.push_back(request);
        protocol::CreateTopicsResponse r;
        protocol::CreateTopicsResponse::CreatableTopicResult t;
        t.name = request.topics[0].name;
        if (t.name == "exists") {
          t.error_code = protocol::to_int(ErrorCode::kTopicAlreadyExists);
          t.error_message = "Topic 'exists' already exists.";
        }
        r.topics.push_back(t);
        return r;
      });
  ClientOptions options;
  options.bootstrap = {{"b", 1}};
  options.transport_factory = broker.factory();
  Client client(options);
  ASSERT_TRUE(client.bootstrap().ok());
  Admin admin(&client);
  NewTopic topic;
  topic.name = "fresh";
  topic.partitions = 3;
  topic.configs = {{"retention.ms", "1000"}};
  ASSERT_TRUE(admin.create_topic(topic).ok());
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].topics[0].num_partitions, 3);
  EXPECT_EQ(seen[0].topics[0].replication_factor, -1);
  EXPECT_EQ(seen[0].topics[0].configs[0].value, "1000");
  topic.name = "exists";
  Status s = admin.create_topic(topic);
  EXPECT_EQ(protocol::kafka_error(s), ErrorCode::kTopicAlreadyExists);
  EXPECT_NE(s.message().find("already exists"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace eddy::client
