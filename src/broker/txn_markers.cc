// The transaction coordinator's hands in the broker: it is created at
// start (after the partitions are open, so that transactions found in a
// Prepare state can be completed), and writes its COMMIT / ABORT markers
// through the same PartitionLog::append as produced batches, updating the
// partition's producer state as Kafka's ProducerStateManager does. A
// replicated partition's marker goes through its group, on its leader only
// (refused elsewhere: the coordinator retries), and counts as written for
// good once the group's high watermark passed it. Known gap: a marker a
// leader change cut after the high watermark passed its offset in a new
// epoch is not told apart (transaction state is not replicated yet either).
#include "broker/broker.h"
#include "port/log.h"
#include "port/port.h"
#include "protocol/control_batch.h"

namespace eddy::broker {

namespace {

// Single node: the coordinator's epoch never changes.
constexpr int32_t kCoordinatorEpoch = 0;

}  // namespace

Status Broker::start_transactions() {
  txn_store_ = std::make_unique<txn::MetaStateStore>(meta_);
  txn::MarkerSink sink;
  sink.write = [this](const meta::TopicPartition& tp, protocol::ControlType type, int64_t producer_id, int16_t epoch,
                      int64_t* offset, std::string* why) {
    return write_txn_marker(tp, type, producer_id, epoch, offset, why);
  };
  sink.durable = [this](const meta::TopicPartition& tp, int64_t offset) { return txn_marker_durable(tp, offset); };
  sink.complete_offsets = [this](const std::string& group, int64_t producer_id, bool commit) {
    return coordinator_->complete_transaction(group, producer_id, commit);
  };
  txn_ = std::make_unique<txn::Coordinator>(
      executor_, txn_store_.get(), [this](int64_t* id) { return next_producer_id(id); }, std::move(sink),
      options_.transactions);
  return txn_->start().with_context("transaction coordinator");
}

txn::MarkerSink::Outcome Broker::write_txn_marker(const meta::TopicPartition& tp, protocol::ControlType type,
                                                  int64_t producer_id, int16_t epoch, int64_t* offset,
                                                  std::string* why) {
  Topic* topic = topics_.find(tp.topic);
  storage::PartitionLog* log = topic == nullptr ? nullptr : topic->local(tp.partition);
  if (log == nullptr) return txn::MarkerSink::Outcome::kPartitionGone;
  const ReplicaStatus status = replica_status(*topic, tp.partition, log);
  if (status.replicated && !status.leader) {
    *why = "this node does not lead the partition's group (leader " + std::to_string(status.leader_id) + ")";
    return txn::MarkerSink::Outcome::kFailed;
  }
  PartitionProducers* producers = producer_state_.find(log);
  if (producers != nullptr && !producers->marker_allowed(producer_id, epoch)) {
    // A newer epoch already wrote here: this marker is stale (Kafka's
    // checkProducerEpoch); the transaction it ends cannot be open here.
    EDDY_LOG_WARN("transactions: marker of producer {} epoch {} for {}-{} skipped: the partition has a newer epoch",
                  producer_id, epoch, tp.topic, tp.partition);
    return txn::MarkerSink::Outcome::kPartitionGone;
  }
  const int64_t now = port::wall_clock_millis();
  std::vector<uint8_t> batch = protocol::build_control_batch(type, producer_id, epoch, kCoordinatorEpoch, now);
  // The group keeps the bytes as given: a LogAppendTime topic's stamp first.
  if (status.replicated && log->config().timestamp_type == protocol::TimestampType::kLogAppendTime) {
    protocol::set_log_append_time(batch, now);
  }
  storage::AppendResult result;
  Status s = status.replicated ? replication_->append(log, batch, &result)
                               : log->append(batch, storage::AppendOptions{}, &result);
  if (!s.ok()) {
    *why = s.to_string();
    return txn::MarkerSink::Outcome::kFailed;
  }
  if (producers != nullptr) producers->record_marker(producer_id, epoch, result.base_offset, now);
  producer_state_.saw_producer(producer_id, epoch, now);
  log->request_sync();
  *offset = result.last_offset;
  if (!status.replicated) wake_fetch_waiters(tp.topic, tp.partition);
  return txn::MarkerSink::Outcome::kWritten;
}

bool Broker::txn_marker_durable(const meta::TopicPartition& tp, int64_t offset) {
  Topic* topic = topics_.find(tp.topic);
  storage::PartitionLog* log = topic == nullptr ? nullptr : topic->local(tp.partition);
  if (log == nullptr) return true;
  if (replica_status(*topic, tp.partition, log).replicated) return log->high_watermark() > offset;
  return log->durable_offset() > offset;
}

}  // namespace eddy::broker
