// The fixture of the broker tests on a cluster node (issue #16;
// partition_replication.h): node 1 of a cluster of nodes 1, 2 and 3, over a
// real meta store and real logs, with a fake controller quorum (this node
// leads it: its proposals apply at once) and a fake partition replication
// whose groups' statuses the test sets and whose appends go to the log as a
// group's leader's do. Requests go through Broker::handle as frames (no
// sockets); the hooks are called as the runtime would, on the reactor.
// Used by replicated_broker_test.cc and txn_markers_broker_test.cc (one
// test binary each; the helpers live in an unnamed namespace).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>

#include "broker/broker.h"
#include "port/port.h"
#include "protocol/codec.h"
#include "protocol/generated/messages.h"
#include "protocol/headers.h"
#include "protocol/record_batch.h"
#include "tests/unit/broker/capturing_reply.h"
#include "tests/unit/forward/local_side.h"
#include "tests/unit/port/test_dir.h"

namespace eddy::broker {
namespace {

using forward::testing::TestReactor;
using protocol::ErrorCode;

constexpr int32_t kSelf = 1;
constexpr int32_t kEpoch = 5;
const std::string kListener = "PLAINTEXT";

// This node leads the controller quorum: a proposal is applied on the
// reactor, then answered.
class FakeController final : public ControllerClient {
 public:
  explicit FakeController(port::Executor& executor) : executor_(executor) {}
  void set_broker(Broker* broker) { broker_ = broker; }
  int32_t leader_id() const override { return kSelf; }
  bool is_leader() const override { return true; }
  void propose(const ControllerRecord& record, std::function<void(const Status&)> done) override {
    proposed.push_back(record);
    executor_.post([this, record, done = std::move(done)] {
      Status s = broker_->apply_controller_record(record);
      EXPECT_TRUE(s.ok()) << s.to_string();
      done(s);
    });
  }
  void forward(const Request&, Forwarded done) override { done(Status::network("no forwarding here"), {}); }
  bool next_producer_id(int64_t* id) override {
    *id = next_id_++;
    return true;
  }
  int32_t epoch() const override { return 1; }
  // Kept unanswered: the test answers as the node would.
  void send_txn_markers(int32_t node_id, protocol::WriteTxnMarkersRequest request, MarkersAnswer done) override {
    sent_markers.push_back({node_id, std::move(request), std::move(done)});
  }

  struct SentMarkers {
    int32_t node_id;
    protocol::WriteTxnMarkersRequest request;
    MarkersAnswer done;
  };
  std::vector<ControllerRecord> proposed;  // reactor thread
  std::vector<SentMarkers> sent_markers;   // reactor thread

 private:
  port::Executor& executor_;
  Broker* broker_ = nullptr;
  int64_t next_id_ = 5000;
};

// The groups as the test sets them; a leader's append writes the batch as
// it is, in the group's epoch (what raft::BatchLog does).
class FakeReplication final : public PartitionReplication {
 public:
  ReplicaStatus status(const storage::PartitionLog* log) const override {
    auto it = statuses.find(log);
    return it == statuses.end() ? ReplicaStatus{} : it->second;
  }
  Status append(storage::PartitionLog* log, std::span<const uint8_t> batch, storage::AppendResult* result) override {
    const ReplicaStatus s = status(log);
    if (!s.leader) return Status::kafka(Status::Code::kBrokerError, 6, true, "not the leader");
    std::vector<uint8_t> copy(batch.begin(), batch.end());
    storage::AppendOptions options;
    options.leader_epoch = s.leader_epoch;
    options.keep_timestamps = true;
    ++appends;
    return log->append(copy, options, result);
  }
  void closing(storage::PartitionLog* log) override { closed.push_back(log); }
  void durable(storage::PartitionLog*) override {}

  std::map<const storage::PartitionLog*, ReplicaStatus> statuses;
  std::vector<storage::PartitionLog*> closed;
  int appends = 0;
};

ReplicaStatus leading(std::vector<int32_t> isr = {1, 2, 3}) {
  ReplicaStatus s;
  s.replicated = true;
  s.leader = true;
  s.leader_id = kSelf;
  s.leader_epoch = kEpoch;
  s.replicas = {1, 2, 3};
  s.isr = std::move(isr);
  return s;
}

ReplicaStatus following(int32_t leader_id, int32_t epoch = kEpoch) {
  ReplicaStatus s;
  s.replicated = true;
  s.leader_id = leader_id;
  s.leader_epoch = epoch;
  s.replicas = {1, 2, 3};
  return s;
}

[[maybe_unused]] std::vector<uint8_t> batch_of(int records, int64_t producer_id = -1, int32_t sequence = -1) {
  protocol::RecordBatchBuilder builder;
  if (producer_id >= 0) builder.producer(producer_id, 0, sequence);
  const int64_t now = port::wall_clock_millis();
  for (int i = 0; i < records; ++i) builder.add("k", std::to_string(i), now);
  return builder.build();
}

class ReplicatedBrokerTest : public ::testing::Test {
 protected:
  void SetUp() override { start(/*cluster=*/true); }

  void start(bool cluster) {
    ASSERT_TRUE(storage::LogManager::open(dir_.file("data"), &logs_).ok());
    ASSERT_TRUE(meta::MetaStore::open(dir_.file("eddy.db"), &meta_).ok());
    BrokerOptions options;
    options.node_id = kSelf;
    options.advertised_listeners = {{kListener, "n1", 9091}};
    options.log_defaults.segment_bytes = 64 * 1024;
    options.log_defaults.acks_all_waits_for = storage::AcksAllWaitsFor::kPageCache;
    if (configure_) configure_(options);
    broker_ = std::make_unique<Broker>(reactor_, options, meta_.get(), logs_.get());
    controller_.set_broker(broker_.get());
    if (cluster) {
      broker_->set_controller(&controller_);
      broker_->set_partition_replication(&replication_);
    }
    reactor_.run([&] {
      Status s = broker_->start();
      ASSERT_TRUE(s.ok()) << s.to_string();
      if (!cluster) return;
      for (int32_t id : {1, 2, 3}) {
        protocol::RegisterBrokerRecord r;
        r.node_id = id;
        std::string host = "n";
        host += std::to_string(id);
        r.endpoints.push_back({kListener, host, 9090 + id, 0, {}});
        ASSERT_TRUE(broker_->apply_controller_record(r).ok());
      }
      // "r": partition 0 of three replicas (this node's group, led as the
      // test says), partition 1 of three, partition 2 on other nodes only.
      protocol::TopicRecord r;
      r.name = "r";
      r.topic_id.bytes[0] = 1;
      r.partitions = {{{1, 2, 3}, {}}, {{2, 3, 1}, {}}, {{2, 3}, {}}};
      r.configs = {{"min.insync.replicas", "2", {}}};
      ASSERT_TRUE(broker_->apply_controller_record(r).ok());
      // "one": a single replica, here: no group.
      protocol::TopicRecord one;
      one.name = "one";
      one.topic_id.bytes[0] = 2;
      one.partitions = {{{1}, {}}};
      ASSERT_TRUE(broker_->apply_controller_record(one).ok());
    });
  }

  void TearDown() override {
    reactor_.run([this] {
      broker_.reset();
      EXPECT_TRUE(logs_->close().ok());
    });
    reactor_.stop();
    EXPECT_TRUE(meta_->close().ok());
  }

  storage::PartitionLog* log_of(const std::string& topic, int32_t partition) {
    storage::PartitionLog* log = nullptr;
    reactor_.run([&] {
      Topic* t = broker_->topics().find(topic);
      if (t != nullptr) log = t->local(partition);
    });
    return log;
  }
  void set_status(storage::PartitionLog* log, ReplicaStatus status) {
    reactor_.run([&] { replication_.statuses[log] = std::move(status); });
  }
  // The group committed up to hw: the runtime's calls.
  void commit(storage::PartitionLog* log, int64_t hw) {
    reactor_.run([&] {
      log->set_replicated_high_watermark(hw);
      broker_->on_replicated_high_watermark(log);
    });
  }
  template <typename T>
  T on_reactor(const std::function<T()>& fn) {
    T value{};
    reactor_.run([&] { value = fn(); });
    return value;
  }

  template <typename Req>
  std::shared_ptr<Answer> send(const Req& request, int16_t version) {
    protocol::OutputBuffer out;
    EXPECT_TRUE(protocol::encode_request_frame(request, version, 7, std::string("test"), &out).ok());
    protocol::FrameBytes frame(out.memory() + 4, out.memory() + out.memory_size());
    auto answer = std::make_shared<Answer>();
    reactor_.post([this, frame = std::move(frame), answer]() mutable {
      ClientInfo client;
      client.listener = kListener;
      broker_->handle(client, std::move(frame), std::make_unique<CapturingReply>(answer));
    });
    return answer;
  }
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
  // Lets the reactor run what is queued, so that "not answered" means it.
  void settle() { reactor_.run([] {}); }

  std::shared_ptr<Answer> send_produce(const std::string& topic, int32_t partition, int16_t acks,
                                       const std::vector<uint8_t>& batch, int32_t timeout_ms = 30000,
                                       int16_t version = 9) {
    protocol::ProduceRequest request;
    request.acks = acks;
    request.timeout_ms = timeout_ms;
    request.topic_data.emplace_back();
    request.topic_data[0].name = topic;
    request.topic_data[0].partition_data.emplace_back();
    request.topic_data[0].partition_data[0].index = partition;
    request.topic_data[0].partition_data[0].records = protocol::Records{batch, {}};
    return send(request, version);
  }
  protocol::ProduceResponse::PartitionProduceResponse produce_answer(Answer& answer, int16_t version = 9,
                                                                     protocol::ProduceResponse* whole = nullptr) {
    protocol::ProduceResponse response;
    EXPECT_TRUE(wait(answer, version, &response));
    if (whole != nullptr) *whole = response;
    if (response.responses.size() != 1 || response.responses[0].partition_responses.size() != 1) return {};
    return response.responses[0].partition_responses[0];
  }
  protocol::ProduceResponse::PartitionProduceResponse produce(const std::string& topic, int32_t partition,
                                                              int16_t acks, const std::vector<uint8_t>& batch) {
    auto answer = send_produce(topic, partition, acks, batch);
    return produce_answer(*answer);
  }

  protocol::FetchRequest fetch_request(const std::string& topic, int32_t partition, int64_t offset,
                                       int32_t current_leader_epoch = -1) {
    protocol::FetchRequest request;
    request.replica_id = -1;
    request.max_wait_ms = 0;
    request.min_bytes = 0;
    request.max_bytes = 1 << 20;
    request.topics.emplace_back();
    request.topics[0].topic = topic;
    request.topics[0].partitions.emplace_back();
    request.topics[0].partitions[0].partition = partition;
    request.topics[0].partitions[0].fetch_offset = offset;
    request.topics[0].partitions[0].current_leader_epoch = current_leader_epoch;
    request.topics[0].partitions[0].partition_max_bytes = 1 << 20;
    return request;
  }
  protocol::FetchResponse::PartitionData fetch_answer(Answer& answer, int16_t version = 12) {
    protocol::FetchResponse response;
    EXPECT_TRUE(wait(answer, version, &response));
    if (response.responses.size() != 1 || response.responses[0].partitions.size() != 1) return {};
    protocol::FetchResponse::PartitionData out = response.responses[0].partitions[0];
    // The records view the answer's bytes: count the batches now.
    last_fetched_batches_ = 0;
    if (out.records) {
      protocol::BatchIterator it(out.records->bytes);
      protocol::RecordBatchView view;
      while (it.next(&view)) {
        ++last_fetched_batches_;
        last_fetched_next_offset_ = view.next_offset();
      }
    }
    out.records.reset();
    return out;
  }

  // Set before start(): changes the broker's options.
  std::function<void(BrokerOptions&)> configure_;
  eddy::testing::TempDir dir_;
  std::unique_ptr<storage::LogManager> logs_;
  std::unique_ptr<meta::MetaStore> meta_;
  TestReactor reactor_;
  FakeController controller_{reactor_};
  FakeReplication replication_;
  std::unique_ptr<Broker> broker_;
  int last_fetched_batches_ = 0;
  int64_t last_fetched_next_offset_ = -1;
};

}  // namespace
}  // namespace eddy::broker
