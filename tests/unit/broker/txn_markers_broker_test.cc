// WriteTxnMarkers and DescribeProducers on a cluster node's broker
// (replicated_broker_fixture.h): a transaction opened through the broker's
// own coordinator (InitProducerId, AddPartitionsToTxn, a transactional
// Produce) and ended by a marker another coordinator asks for, answered
// once the partition's group committed it; the refusals (a follower, an
// unknown partition, stale epochs), the timeout, the cap on parked requests,
// and the producer state DescribeProducers shows on a leader and a follower.
#include <algorithm>
#include <chrono>
#include <thread>

#include "protocol/control_batch.h"
#include "tests/unit/broker/replicated_broker_fixture.h"

namespace eddy::broker {
namespace {

constexpr int64_t kMarkerTimeoutMs = 3000;  // the markers commit well before, the timeout test waits it out

class TxnMarkersBrokerTest : public ReplicatedBrokerTest {
 protected:
  void SetUp() override {
    configure_ = [](BrokerOptions& o) {
      o.txn_marker_timeout_ms = kMarkerTimeoutMs;
      o.transactions.marker_retry_ms = 200;
    };
    start(/*cluster=*/true);
    // This node leads the (fake) controller quorum: it coordinates the
    // transactions as a cluster's controller leader does.
    reactor_.run([&] { broker_->take_over_groups(); });
    log_ = log_of("r", 0);
    ASSERT_NE(log_, nullptr);
    set_status(log_, leading());
    commit(log_, 0);
  }

  // A transaction of "txn-a" open in r-0: three records at offsets 0-2.
  void open_transaction() {
    protocol::InitProducerIdRequest init;
    init.transactional_id = "txn-a";
    init.transaction_timeout_ms = 60000;
    protocol::InitProducerIdResponse initialized;
    ASSERT_TRUE(wait(*send(init, 1), 1, &initialized));
    ASSERT_EQ(initialized.error_code, 0);
    pid_ = initialized.producer_id;
    epoch_ = initialized.producer_epoch;
    protocol::AddPartitionsToTxnRequest add;
    add.v3_and_below_transactional_id = "txn-a";
    add.v3_and_below_producer_id = pid_;
    add.v3_and_below_producer_epoch = epoch_;
    add.v3_and_below_topics.push_back({"r", {0}, {}});
    protocol::AddPartitionsToTxnResponse added;
    ASSERT_TRUE(wait(*send(add, 3), 3, &added));
    ASSERT_EQ(added.results_by_topic_v3_and_below.at(0).results_by_partition.at(0).partition_error_code, 0);
    protocol::RecordBatchBuilder builder;
    builder.producer(pid_, epoch_, 0).attributes(protocol::batch_attributes::kTransactional);
    for (int i = 0; i < 3; ++i) builder.add("k", std::to_string(i), port::wall_clock_millis());
    auto out = produce("r", 0, 1, builder.build());
    ASSERT_EQ(out.error_code, 0);
    ASSERT_EQ(out.base_offset, 0);
    commit(log_, 3);
  }

  static protocol::WriteTxnMarkersRequest markers(int64_t pid, int16_t epoch, bool commit, int32_t coordinator_epoch,
                                                  std::vector<std::pair<std::string, std::vector<int32_t>>> topics) {
    protocol::WriteTxnMarkersRequest request;
    auto& m = request.markers.emplace_back();
    m.producer_id = pid;
    m.producer_epoch = epoch;
    m.transaction_result = commit;
    m.coordinator_epoch = coordinator_epoch;
    for (auto& [name, partitions] : topics) m.topics.push_back({name, partitions, {}});
    return request;
  }
  // Every partition's error code, in the response's order.
  static std::vector<int16_t> codes(const protocol::WriteTxnMarkersResponse& response) {
    std::vector<int16_t> out;
    for (const auto& m : response.markers) {
      for (const auto& t : m.topics) {
        for (const auto& p : t.partitions) out.push_back(p.error_code);
      }
    }
    return out;
  }
  protocol::DescribeProducersResponse::PartitionResponse describe(const std::string& topic, int32_t partition) {
    protocol::DescribeProducersRequest request;
    request.topics.push_back({topic, {partition}, {}});
    protocol::DescribeProducersResponse response;
    EXPECT_TRUE(wait(*send(request, 0), 0, &response));
    if (response.topics.size() != 1 || response.topics[0].partitions.size() != 1) return {};
    return response.topics[0].partitions[0];
  }

  storage::PartitionLog* log_ = nullptr;
  int64_t pid_ = -1;
  int16_t epoch_ = -1;
};

int16_t code(ErrorCode e) { return protocol::to_int(e); }

TEST_F(TxnMarkersBrokerTest, AnAbortIsAnsweredOnceCommittedAndEndsTheTransaction) {
  open_transaction();
  EXPECT_EQ(on_reactor<int64_t>([&] { return log_->last_stable_offset(); }), 0) << "the transaction holds the LSO";
  auto p = describe("r", 0);
  ASSERT_EQ(p.error_code, 0);
  ASSERT_EQ(p.active_producers.size(), 1u);
  EXPECT_EQ(p.active_producers[0].producer_id, pid_);
  EXPECT_EQ(p.active_producers[0].producer_epoch, epoch_);
  EXPECT_EQ(p.active_producers[0].last_sequence, 2);
  EXPECT_EQ(p.active_producers[0].coordinator_epoch, -1) << "no marker yet";
  EXPECT_EQ(p.active_producers[0].current_txn_start_offset, 0);
  EXPECT_GT(p.active_producers[0].last_timestamp, 0);

  auto answer = send(markers(pid_, epoch_, /*commit=*/false, 4, {{"r", {0}}}), 1);
  settle();
  EXPECT_FALSE(answer->answered()) << "the marker at offset 3 is not committed yet";
  EXPECT_EQ(on_reactor<size_t>([&] { return broker_->parked_txn_markers(); }), 1u);
  EXPECT_EQ(on_reactor<int64_t>([&] { return log_->log_end_offset(); }), 4);
  commit(log_, 3);
  settle();
  EXPECT_FALSE(answer->answered()) << "the high watermark has not passed the marker";
  EXPECT_EQ(on_reactor<int64_t>([&] { return log_->last_stable_offset(); }), 0)
      << "a marker above the high watermark does not settle its transaction";
  commit(log_, 4);
  protocol::WriteTxnMarkersResponse response;
  ASSERT_TRUE(wait(*answer, 1, &response));
  ASSERT_EQ(response.markers.size(), 1u);
  EXPECT_EQ(response.markers[0].producer_id, pid_);
  EXPECT_EQ(codes(response), std::vector<int16_t>{0});
  EXPECT_EQ(on_reactor<size_t>([&] { return broker_->parked_txn_markers(); }), 0u);
  EXPECT_EQ(on_reactor<int64_t>([&] { return log_->last_stable_offset(); }), 4) << "the LSO moved past the abort";
  std::vector<storage::AbortedTransaction> aborted;
  reactor_.run([&] { log_->collect_aborted_transactions(0, 4, &aborted); });
  EXPECT_EQ(aborted, (std::vector<storage::AbortedTransaction>{{pid_, 0, 3}}));

  p = describe("r", 0);
  ASSERT_EQ(p.active_producers.size(), 1u);
  EXPECT_EQ(p.active_producers[0].current_txn_start_offset, -1);
  EXPECT_EQ(p.active_producers[0].coordinator_epoch, 4) << "the marker's coordinator epoch";
  // The marker is Kafka's: an ABORT control batch of the producer.
  reactor_.run([&] {
    std::vector<uint8_t> bytes;
    int64_t next = 0;
    ASSERT_TRUE(log_->read_copy(3, 1 << 16, log_->log_end_offset(), &bytes, &next).ok());
    protocol::RecordBatchView batch;
    ASSERT_EQ(protocol::RecordBatchView::parse(bytes, &batch), protocol::BatchError::kOk);
    EXPECT_EQ(batch.producer_id(), pid_);
    EXPECT_EQ(protocol::control_type(batch), protocol::ControlType::kAbort);
    EXPECT_EQ(protocol::marker_coordinator_epoch(batch), 4);
    EXPECT_EQ(log_->epoch_at(3), kEpoch);
  });

  // Stale markers: an older coordinator epoch, then an older producer epoch.
  protocol::WriteTxnMarkersResponse stale;
  ASSERT_TRUE(wait(*send(markers(pid_, epoch_, true, 3, {{"r", {0}}}), 1), 1, &stale));
  EXPECT_EQ(codes(stale), std::vector<int16_t>{code(ErrorCode::kTransactionCoordinatorFenced)});
  reactor_.run([&] {
    protocol::WriteTxnMarkersRequest bump = markers(pid_, static_cast<int16_t>(epoch_ + 1), false, 4, {{"r", {0}}});
    broker_->write_txn_markers(bump, [](protocol::WriteTxnMarkersResponse) {});
  });
  commit(log_, 5);
  ASSERT_TRUE(wait(*send(markers(pid_, epoch_, false, 4, {{"r", {0}}}), 1), 1, &stale));
  EXPECT_EQ(codes(stale), std::vector<int16_t>{code(ErrorCode::kInvalidProducerEpoch)});
  EXPECT_EQ(on_reactor<int64_t>([&] { return log_->log_end_offset(); }), 5) << "stale markers are not written";
}

TEST_F(TxnMarkersBrokerTest, RefusalsPerPartition) {
  storage::PartitionLog* follower = log_of("r", 1);
  set_status(follower, following(2));
  // r-1: a follower here; r-2: on other nodes only; r-9 and "nope": absent;
  // r-0 twice in one marker: written once.
  protocol::WriteTxnMarkersRequest request =
      markers(7000, 0, true, 0, {{"r", {1, 2, 9, 0, 0}}, {"nope", {0}}, {"", {-1}}});
  protocol::WriteTxnMarkersResponse response;
  auto answer = send(request, 0);
  settle();
  commit(log_, 1);
  ASSERT_TRUE(wait(*answer, 0, &response));
  EXPECT_EQ(codes(response), (std::vector<int16_t>{code(ErrorCode::kNotLeaderOrFollower),
                                                    code(ErrorCode::kNotLeaderOrFollower),
                                                    code(ErrorCode::kUnknownTopicOrPartition), 0, 0,
                                                    code(ErrorCode::kUnknownTopicOrPartition),
                                                    code(ErrorCode::kUnknownTopicOrPartition)}));
  EXPECT_EQ(on_reactor<int64_t>([&] { return log_->log_end_offset(); }), 1) << "one marker for r-0";
  EXPECT_EQ(on_reactor<int64_t>([&] { return follower->log_end_offset(); }), 0);
  EXPECT_EQ(replication_.appends, 1);
}

TEST_F(TxnMarkersBrokerTest, AMarkerNotCommittedInItsEpochIsRefused) {
  auto answer = send(markers(7000, 0, false, 0, {{"r", {0}}}), 1);
  settle();
  EXPECT_FALSE(answer->answered());
  // Another node took over (epoch 6) before the marker was committed.
  set_status(log_, following(2, kEpoch + 1));
  commit(log_, 1);
  protocol::WriteTxnMarkersResponse response;
  ASSERT_TRUE(wait(*answer, 1, &response));
  EXPECT_EQ(codes(response), std::vector<int16_t>{code(ErrorCode::kNotLeaderOrFollower)});
}

TEST_F(TxnMarkersBrokerTest, AMarkerNeverCommittedTimesOut) {
  const int64_t started = port::monotonic_millis();
  auto answer = send(markers(7000, 0, false, 0, {{"r", {0}}, {"one", {0}}}), 1);
  protocol::WriteTxnMarkersResponse response;
  ASSERT_TRUE(wait(*answer, 1, &response));
  EXPECT_GE(port::monotonic_millis() - started, kMarkerTimeoutMs - 50);
  ASSERT_EQ(codes(response).size(), 2u);
  EXPECT_EQ(codes(response)[0], code(ErrorCode::kRequestTimedOut)) << "r-0: its group never committed it";
  // "one" (a single replica): durable by the flusher, or still waiting at
  // the deadline; never refused.
  EXPECT_TRUE(codes(response)[1] == 0 || codes(response)[1] == code(ErrorCode::kRequestTimedOut));
  EXPECT_EQ(on_reactor<size_t>([&] { return broker_->parked_txn_markers(); }), 0u);
}

TEST_F(TxnMarkersBrokerTest, ParkedRequestsAreCapped) {
  std::vector<int> answered(Broker::kMaxParkedTxnMarkers + 1, -1);
  reactor_.run([&] {
    for (size_t i = 0; i <= Broker::kMaxParkedTxnMarkers; ++i) {
      broker_->write_txn_markers(markers(static_cast<int64_t>(8000 + i), 0, true, 0, {{"r", {0}}}),
                                 [&answered, i](protocol::WriteTxnMarkersResponse response) {
                                   answered[i] = codes(response).at(0);
                                 });
    }
  });
  EXPECT_EQ(on_reactor<size_t>([&] { return broker_->parked_txn_markers(); }), Broker::kMaxParkedTxnMarkers);
  EXPECT_EQ(answered.back(), code(ErrorCode::kRequestTimedOut)) << "beyond the cap: answered at once";
  EXPECT_EQ(on_reactor<int64_t>([&] { return log_->log_end_offset(); }),
            static_cast<int64_t>(Broker::kMaxParkedTxnMarkers))
      << "nothing written for the refused one";
  commit(log_, static_cast<int64_t>(Broker::kMaxParkedTxnMarkers));
  EXPECT_EQ(on_reactor<size_t>([&] { return broker_->parked_txn_markers(); }), 0u);
  for (size_t i = 0; i < Broker::kMaxParkedTxnMarkers; ++i) EXPECT_EQ(answered[i], 0) << i;
}

TEST_F(TxnMarkersBrokerTest, DescribeProducersOnAFollowerAndWhereNoGroupRuns) {
  storage::PartitionLog* follower = log_of("r", 1);
  set_status(follower, following(2));
  // The leader's batches reach this replica by replication.
  size_t appended = 0;
  reactor_.run([&] {
    protocol::RecordBatchBuilder builder;
    builder.producer(9000, 3, 0).attributes(protocol::batch_attributes::kTransactional);
    builder.add("k", "v", port::wall_clock_millis());
    std::vector<uint8_t> batch = builder.build();
    storage::AppendResult result;
    storage::AppendOptions options;
    options.leader_epoch = kEpoch;
    ASSERT_TRUE(follower->append(batch, options, &result).ok());
    broker_->on_replica_log_changed(follower, 0, false);
    appended = 1;
  });
  ASSERT_EQ(appended, 1u);
  auto p = describe("r", 1);
  ASSERT_EQ(p.error_code, 0) << "a follower answers from its own state, as Kafka's replicas do";
  ASSERT_EQ(p.active_producers.size(), 1u);
  EXPECT_EQ(p.active_producers[0].producer_id, 9000);
  EXPECT_EQ(p.active_producers[0].producer_epoch, 3);
  EXPECT_EQ(p.active_producers[0].current_txn_start_offset, 0);
  set_status(follower, ReplicaStatus{});  // the group stopped here
  EXPECT_EQ(describe("r", 1).error_code, code(ErrorCode::kNotLeaderOrFollower));
  EXPECT_EQ(describe("r", 2).error_code, code(ErrorCode::kNotLeaderOrFollower)) << "held by other nodes only";
  EXPECT_EQ(describe("r", 7).error_code, code(ErrorCode::kUnknownTopicOrPartition));
  EXPECT_EQ(describe("nope", 0).error_code, code(ErrorCode::kUnknownTopicOrPartition));
  auto invalid = describe("a/b", 0);
  EXPECT_EQ(invalid.error_code, code(ErrorCode::kInvalidTopicException));
  EXPECT_TRUE(invalid.error_message.has_value());
  EXPECT_TRUE(describe("one", 0).active_producers.empty());
}

// The coordinator's own markers (this node leads the controller quorum):
// the partition it leads gets its marker through write_txn_markers, the
// partitions led elsewhere one WriteTxnMarkers per leader node (r-1 follows
// node 3; r-2, held by nodes 2 and 3 only, is led by its first replica as
// far as this node knows), with the controller epoch as the coordinator
// epoch. The transaction completes once every leader answered that its
// marker is durable; a leader that refuses is asked again.
TEST_F(TxnMarkersBrokerTest, TheCoordinatorsMarkersGoToEachPartitionsLeader) {
  storage::PartitionLog* follower_log = log_of("r", 1);
  ASSERT_NE(follower_log, nullptr);
  set_status(follower_log, following(3));
  open_transaction();
  protocol::AddPartitionsToTxnRequest add;
  add.v3_and_below_transactional_id = "txn-a";
  add.v3_and_below_producer_id = pid_;
  add.v3_and_below_producer_epoch = epoch_;
  add.v3_and_below_topics.push_back({"r", {1, 2}, {}});
  protocol::AddPartitionsToTxnResponse added;
  ASSERT_TRUE(wait(*send(add, 3), 3, &added));
  for (const auto& p : added.results_by_topic_v3_and_below.at(0).results_by_partition) {
    EXPECT_EQ(p.partition_error_code, 0) << "partition " << p.partition_index;
  }

  protocol::EndTxnRequest end;
  end.transactional_id = "txn-a";
  end.producer_id = pid_;
  end.producer_epoch = epoch_;
  end.committed = true;
  protocol::EndTxnResponse ended;
  ASSERT_TRUE(wait(*send(end, 3), 3, &ended));
  EXPECT_EQ(ended.error_code, 0);
  settle();
  auto state = [&] {
    protocol::DescribeTransactionsRequest request;
    request.transactional_ids = {"txn-a"};
    protocol::DescribeTransactionsResponse response;
    EXPECT_TRUE(wait(*send(request, 0), 0, &response));
    return response.transaction_states.at(0).transaction_state;
  };
  EXPECT_EQ(state(), "PrepareCommit");

  // One request per leader node, each naming its partitions only.
  auto& sent = controller_.sent_markers;
  ASSERT_EQ(on_reactor<size_t>([&] { return sent.size(); }), 2u);
  std::map<int32_t, std::vector<int32_t>> asked;
  for (const auto& m : sent) {
    ASSERT_EQ(m.request.markers.size(), 1u);
    const auto& marker = m.request.markers[0];
    EXPECT_EQ(marker.producer_id, pid_);
    EXPECT_EQ(marker.producer_epoch, epoch_);
    EXPECT_TRUE(marker.transaction_result) << "COMMIT";
    EXPECT_EQ(marker.coordinator_epoch, 1) << "the controller epoch";
    ASSERT_EQ(marker.topics.size(), 1u);
    EXPECT_EQ(marker.topics[0].name, "r");
    asked[m.node_id] = marker.topics[0].partition_indexes;
  }
  EXPECT_EQ(asked, (std::map<int32_t, std::vector<int32_t>>{{2, {2}}, {3, {1}}}));
  // The marker of the partition led here: written at offset 3, answered
  // once the group commits it.
  EXPECT_EQ(on_reactor<int64_t>([&] { return log_->log_end_offset(); }), 4);
  commit(log_, 4);

  auto answer = [&](size_t i, ErrorCode code) {
    reactor_.run([&] {
      protocol::WriteTxnMarkersResponse response;
      auto& rm = response.markers.emplace_back();
      rm.producer_id = pid_;
      for (const auto& t : sent[i].request.markers[0].topics) {
        auto& rt = rm.topics.emplace_back();
        rt.name = t.name;
        for (int32_t p : t.partition_indexes) rt.partitions.push_back({p, protocol::to_int(code), {}});
      }
      sent[i].done(Status(), response);
    });
  };
  const size_t to_node3 = sent[0].node_id == 3 ? 0 : 1;
  answer(to_node3, ErrorCode::kNone);
  answer(1 - to_node3, ErrorCode::kNotLeaderOrFollower);  // node 2 no longer leads r-2
  settle();
  EXPECT_EQ(state(), "PrepareCommit") << "r-2's marker was refused";
  // Asked again after marker_retry_ms; this time it is written.
  bool asked_again = false;
  for (int i = 0; i < 500 && !asked_again; ++i) {
    asked_again = on_reactor<bool>([&] { return sent.size() == 3; });
    if (!asked_again) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(asked_again) << "r-2's marker asked for again";
  EXPECT_EQ(sent[2].node_id, 2);
  answer(2, ErrorCode::kNone);
  settle();
  EXPECT_EQ(state(), "CompleteCommit");
  // The transaction's states went through the controller log.
  const size_t logged = on_reactor<size_t>([&] {
    return static_cast<size_t>(std::count_if(controller_.proposed.begin(), controller_.proposed.end(), [](const auto& r) {
      return std::holds_alternative<protocol::TransactionStateRecord>(r);
    }));
  });
  EXPECT_GE(logged, 5u) << "init, two adds, PrepareCommit, CompleteCommit";
}

}  // namespace
}  // namespace eddy::broker
