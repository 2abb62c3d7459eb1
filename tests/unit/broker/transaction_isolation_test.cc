// Fetch and ListOffsets under both isolation levels, on a real broker over
// real logs (no sockets): transactional batches and COMMIT / ABORT markers
// are appended straight to a partition's log, as the transaction coordinator
// and transactional producers would, and the requests go through
// Broker::handle as frames.
#include <gtest/gtest.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <optional>

#include "broker/broker.h"
#include "port/port.h"
#include "protocol/codec.h"
#include "protocol/control_batch.h"
#include "protocol/generated/messages.h"
#include "protocol/headers.h"
#include "protocol/record_batch.h"
#include "tests/unit/broker/capturing_reply.h"
#include "tests/unit/forward/local_side.h"

namespace eddy::broker {
namespace {

using forward::testing::LocalSide;
using protocol::ControlType;
using protocol::FetchRequest;
using protocol::FetchResponse;
using protocol::ListOffsetsRequest;
using protocol::ListOffsetsResponse;

constexpr int8_t kReadUncommitted = 0;
constexpr int8_t kReadCommitted = 1;
const std::string kTopic = "txn";

class TransactionIsolationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    side_.start();
    side_.create_topic(kTopic, 1);
  }

  // Sends request; returns the answer to wait for.
  template <typename Req>
  std::shared_ptr<Answer> send(const Req& request, int16_t version) {
    protocol::OutputBuffer out;
    EXPECT_TRUE(protocol::encode_request_frame(request, version, 7, std::string("test"), &out).ok());
    protocol::FrameBytes frame(out.memory() + 4, out.memory() + out.memory_size());
    auto answer = std::make_shared<Answer>();
    side_.reactor().post([this, frame = std::move(frame), answer]() mutable {
      side_.broker().handle(ClientInfo{}, std::move(frame), std::make_unique<CapturingReply>(answer));
    });
    return answer;
  }
  // Waits for the answer and decodes it into *response (whose records view
  // answer's bytes). False on timeout.
  template <typename Resp>
  bool wait(Answer& answer, int16_t version, Resp* response, int64_t timeout_ms = 10000) {
    std::unique_lock<std::mutex> lock(answer.mu);
    if (!answer.cv.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return answer.frame.has_value(); })) {
      return false;
    }
    std::span<const uint8_t> frame(answer.frame->data() + 4, answer.frame->size() - 4);
    int32_t correlation = 0;
    size_t body = 0;
    EXPECT_TRUE(protocol::parse_response_header(frame, Resp::kApiKey, version, &correlation, &body).ok());
    Status s = protocol::decode(frame.subspan(body), version, response, body);
    EXPECT_TRUE(s.ok()) << s.to_string();
    return true;
  }

  FetchResponse::PartitionData fetch(int64_t offset, int8_t isolation, int16_t version, std::vector<uint8_t>* records) {
    FetchRequest request;
    request.max_wait_ms = 0;
    request.min_bytes = 0;
    request.isolation_level = isolation;
    request.topics.emplace_back();
    request.topics[0].topic = kTopic;
    request.topics[0].partitions.emplace_back();
    request.topics[0].partitions[0].fetch_offset = offset;
    request.topics[0].partitions[0].partition_max_bytes = 1 << 20;
    auto answer = send(request, version);
    FetchResponse response;
    EXPECT_TRUE(wait(*answer, version, &response));
    EXPECT_EQ(response.responses.size(), 1u);
    if (response.responses.size() != 1 || response.responses[0].partitions.size() != 1) return {};
    FetchResponse::PartitionData out = response.responses[0].partitions[0];
    records->clear();
    if (out.records) records->assign(out.records->bytes.begin(), out.records->bytes.end());
    return out;
  }

  ListOffsetsResponse::ListOffsetsPartitionResponse list_offsets(int64_t timestamp, int8_t isolation) {
    ListOffsetsRequest request;
    request.replica_id = -1;
    request.isolation_level = isolation;
    request.topics.emplace_back();
    request.topics[0].name = kTopic;
    request.topics[0].partitions.emplace_back();
    request.topics[0].partitions[0].timestamp = timestamp;
    auto answer = send(request, 5);
    ListOffsetsResponse response;
    EXPECT_TRUE(wait(*answer, 5, &response));
    if (response.topics.size() != 1 || response.topics[0].partitions.size() != 1) return {};
    return response.topics[0].partitions[0];
  }

  // Appends on the reactor; returns the base offset.
  int64_t append(std::vector<uint8_t> batch) {
    int64_t base = -1;
    side_.reactor().run([&] {
      storage::PartitionLog* log = side_.broker().topics().find(kTopic)->partitions[0];
      storage::AppendResult result;
      Status s = log->append(batch, storage::AppendOptions{}, &result);
      EXPECT_TRUE(s.ok()) << s.to_string();
      base = result.base_offset;
    });
    return base;
  }
  int64_t plain(int records, int64_t timestamp = 1000) {
    protocol::RecordBatchBuilder builder;
    for (int i = 0; i < records; ++i) builder.add("k", "plain", timestamp + i);
    return append(builder.build());
  }
  int64_t data(int64_t producer_id, int records, int64_t timestamp = 1000) {
    protocol::RecordBatchBuilder builder;
    builder.producer(producer_id, 0, 0).attributes(protocol::batch_attributes::kTransactional);
    for (int i = 0; i < records; ++i) builder.add("k", "txn", timestamp + i);
    return append(builder.build());
  }
  int64_t marker(int64_t producer_id, ControlType type) {
    return append(protocol::build_control_batch(type, producer_id, 0, 0, 1000));
  }
  std::vector<uint8_t> log_bytes(int64_t from, int64_t to) {
    std::vector<uint8_t> bytes;
    side_.reactor().run([&] {
      int64_t next = 0;
      EXPECT_TRUE(side_.broker().topics().find(kTopic)->partitions[0]->read_copy(from, 1 << 20, to, &bytes, &next).ok());
    });
    return bytes;
  }
  // Base offsets of the batches in records.
  static std::vector<int64_t> batch_offsets(const std::vector<uint8_t>& records) {
    std::vector<int64_t> out;
    protocol::BatchIterator it(records);
    protocol::RecordBatchView view;
    while (it.next(&view)) out.push_back(view.base_offset());
    return out;
  }
  using Aborted = std::vector<FetchResponse::AbortedTransaction>;
  static Aborted aborted(std::initializer_list<std::pair<int64_t, int64_t>> list) {
    Aborted out;
    for (auto [producer, first] : list) {
      FetchResponse::AbortedTransaction a;
      a.producer_id = producer;
      a.first_offset = first;
      out.push_back(a);
    }
    return out;
  }
  static Aborted pairs(const FetchResponse::PartitionData& p) {
    return p.aborted_transactions ? *p.aborted_transactions : Aborted{};
  }

  LocalSide side_;
};


TEST_F(TransactionIsolationTest, ReadCommittedStopsAtTheStableOffsetAndListsAbortedTransactions) {
  EXPECT_EQ(plain(2), 0);
  EXPECT_EQ(data(7, 3), 2);
  EXPECT_EQ(plain(1), 5);
  EXPECT_EQ(data(8, 1), 6);
  EXPECT_EQ(marker(7, ControlType::kAbort), 7);
  EXPECT_EQ(plain(1), 8);

  std::vector<uint8_t> records;
  FetchResponse::PartitionData p = fetch(0, kReadUncommitted, 11, &records);
  EXPECT_EQ(p.error_code, 0);
  EXPECT_EQ(p.high_watermark, 9);
  EXPECT_EQ(p.last_stable_offset, 6);
  EXPECT_FALSE(p.aborted_transactions.has_value()) << "read_uncommitted: null, as Kafka";
  EXPECT_EQ(records, log_bytes(0, 9)) << "read_uncommitted returns the log as it is";

  p = fetch(0, kReadCommitted, 11, &records);
  EXPECT_EQ(p.high_watermark, 9);
  EXPECT_EQ(p.last_stable_offset, 6);
  EXPECT_EQ(batch_offsets(records), (std::vector<int64_t>{0, 2, 5}));
  EXPECT_EQ(records, log_bytes(0, 6));
  ASSERT_TRUE(p.aborted_transactions.has_value());
  EXPECT_EQ(pairs(p), aborted({{7, 2}}));

  // Nothing below the LSO from there on: empty, with an empty list.
  p = fetch(6, kReadCommitted, 11, &records);
  EXPECT_TRUE(records.empty());
  ASSERT_TRUE(p.aborted_transactions.has_value());
  EXPECT_TRUE(p.aborted_transactions->empty());

  // Producer 8 commits: everything is stable.
  EXPECT_EQ(marker(8, ControlType::kCommit), 9);
  p = fetch(0, kReadCommitted, 11, &records);
  EXPECT_EQ(p.last_stable_offset, 10);
  EXPECT_EQ(p.high_watermark, 10);
  EXPECT_EQ(records, log_bytes(0, 10));
  EXPECT_EQ(pairs(p), aborted({{7, 2}}));
  // A range after the aborted transaction's marker does not list it.
  p = fetch(8, kReadCommitted, 11, &records);
  EXPECT_EQ(batch_offsets(records), (std::vector<int64_t>{8, 9}));
  ASSERT_TRUE(p.aborted_transactions.has_value());
  EXPECT_TRUE(p.aborted_transactions->empty());
  // A range inside it does.
  p = fetch(3, kReadCommitted, 11, &records);
  EXPECT_EQ(pairs(p), aborted({{7, 2}}));
}

TEST_F(TransactionIsolationTest, VersionsWithoutIsolationReadUncommitted) {
  plain(1);
  data(3, 2);
  std::vector<uint8_t> records;
  // v3 has no isolation level: read_uncommitted, whatever the field says.
  FetchResponse::PartitionData p = fetch(0, kReadCommitted, 3, &records);
  EXPECT_EQ(records, log_bytes(0, 3));
  p = fetch(0, kReadCommitted, 4, &records);
  EXPECT_EQ(p.last_stable_offset, 1);
  EXPECT_EQ(records, log_bytes(0, 1));
  p = fetch(0, kReadCommitted, 12, &records);
  EXPECT_EQ(p.last_stable_offset, 1);
  EXPECT_EQ(records, log_bytes(0, 1));
}

TEST_F(TransactionIsolationTest, AParkedReadCommittedFetchWakesWhenTheStableOffsetMoves) {
  plain(1);
  const int64_t first = data(5, 2);
  FetchRequest request;
  request.max_wait_ms = 8000;
  request.min_bytes = 1;
  request.isolation_level = kReadCommitted;
  request.topics.emplace_back();
  request.topics[0].topic = kTopic;
  request.topics[0].partitions.emplace_back();
  request.topics[0].partitions[0].fetch_offset = first;
  request.topics[0].partitions[0].partition_max_bytes = 1 << 20;
  const int64_t started = port::monotonic_millis();
  auto answer = send(request, 11);
  ASSERT_TRUE(forward::testing::eventually([&] {
    size_t parked = 0;
    side_.reactor().run([&] { parked = side_.broker().parked_fetches(); });
    return parked == 1;
  }));
  marker(5, ControlType::kCommit);  // moves the LSO, not the HW's meaning for it
  FetchResponse response;
  ASSERT_TRUE(wait(*answer, 11, &response, 6000));
  EXPECT_LT(port::monotonic_millis() - started, 6000) << "woken by the marker, not by max_wait_ms";
  ASSERT_EQ(response.responses.size(), 1u);
  const auto& p = response.responses[0].partitions[0];
  EXPECT_EQ(p.last_stable_offset, first + 3);
  std::vector<uint8_t> records(p.records->bytes.begin(), p.records->bytes.end());
  EXPECT_EQ(batch_offsets(records), (std::vector<int64_t>{first, first + 2}));
}

TEST_F(TransactionIsolationTest, ListOffsetsAnswersTheIsolationLevelsLastFetchableOffset) {
  plain(2, 1000);         // 0..1, timestamps 1000, 1001
  data(4, 2, 2000);       // 2..3, 2000, 2001 (open)
  plain(1, 3000);         // 4
  EXPECT_EQ(list_offsets(-1, kReadUncommitted).offset, 5);
  EXPECT_EQ(list_offsets(-1, kReadCommitted).offset, 2);
  EXPECT_EQ(list_offsets(-2, kReadCommitted).offset, 0);
  // By time: a record at or beyond the LSO is not found for read_committed.
  EXPECT_EQ(list_offsets(1001, kReadCommitted).offset, 1);
  EXPECT_EQ(list_offsets(1500, kReadUncommitted).offset, 2);
  ListOffsetsResponse::ListOffsetsPartitionResponse p = list_offsets(1500, kReadCommitted);
  EXPECT_EQ(p.error_code, 0);
  EXPECT_EQ(p.offset, -1);
  EXPECT_EQ(p.timestamp, -1);
  EXPECT_EQ(list_offsets(-3, kReadUncommitted).offset, 4);  // max timestamp
  EXPECT_EQ(list_offsets(-3, kReadCommitted).offset, -1);
  marker(4, ControlType::kAbort);  // 5
  EXPECT_EQ(list_offsets(-1, kReadCommitted).offset, 6);
  EXPECT_EQ(list_offsets(1500, kReadCommitted).offset, 2);
  EXPECT_EQ(list_offsets(-3, kReadCommitted).offset, 4);
}

}  // namespace
}  // namespace eddy::broker
