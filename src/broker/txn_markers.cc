// The one place a COMMIT / ABORT marker is written (write_txn_marker), for
// WriteTxnMarkers (write_txn_markers.cc), which this node's transaction
// coordinator also goes through (txn_marker_routing.cc) as do another
// node's coordinator and kafka-transactions abort. A marker goes through
// the same PartitionLog::append as produced batches (which ends the
// producer's open transaction in the partition's transaction index, moving
// the LSO), and updates the partition's producer state as Kafka's
// ProducerStateManager does. A replicated partition's marker goes through
// its group, on its leader only (refused elsewhere: the coordinator asks
// again).
#include "broker/broker.h"
#include "port/log.h"
#include "port/port.h"
#include "protocol/control_batch.h"

namespace eddy::broker {

using protocol::ErrorCode;

Broker::TxnMarkerWrite Broker::write_txn_marker(const meta::TopicPartition& tp, protocol::ControlType type,
                                                int64_t producer_id, int16_t epoch, int32_t coordinator_epoch) {
  TxnMarkerWrite out;
  auto fail = [&out](ErrorCode code, std::string why) {
    out.error = code;
    out.why = std::move(why);
    return out;
  };
  Topic* topic = topics_.find(tp.topic);
  storage::PartitionLog* log = topic == nullptr ? nullptr : topic->local(tp.partition);
  if (log == nullptr) {
    out.held_here = false;
    const ErrorCode code = partition_error(topic, tp.partition);
    return fail(code, code == ErrorCode::kUnknownTopicOrPartition ? "no such partition"
                                                                  : "this node holds no replica of the partition");
  }
  const ReplicaStatus status = replica_status(*topic, tp.partition, log);
  if (status.replicated && !status.leader) {
    return fail(ErrorCode::kNotLeaderOrFollower, "this node does not lead the partition's group (leader " +
                                                     std::to_string(status.leader_id) + ")");
  }
  PartitionProducers* producers = producer_state_.find(log);
  if (producers != nullptr) {
    const ErrorCode stale = producers->check_marker(producer_id, epoch, coordinator_epoch);
    if (stale != ErrorCode::kNone) {
      const ProducerEntry* e = producers->find(producer_id);
      return fail(stale, stale == ErrorCode::kInvalidProducerEpoch
                             ? "the partition has epoch " + std::to_string(e->epoch) + " of the producer"
                             : "the producer's last marker here came from coordinator epoch " +
                                   std::to_string(e->coordinator_epoch) + ", newer than " +
                                   std::to_string(coordinator_epoch));
    }
  }
  const int64_t now = port::wall_clock_millis();
  std::vector<uint8_t> batch = protocol::build_control_batch(type, producer_id, epoch, coordinator_epoch, now);
  // The group keeps the bytes as given: a LogAppendTime topic's stamp first.
  if (status.replicated && log->config().timestamp_type == protocol::TimestampType::kLogAppendTime) {
    protocol::set_log_append_time(batch, now);
  }
  storage::AppendResult result;
  Status s = status.replicated ? replication_->append(log, batch, &result)
                               : log->append(batch, storage::AppendOptions{}, &result);
  if (!s.ok()) {
    const ErrorCode code = protocol::kafka_error(s);
    return fail(code != ErrorCode::kNone ? code : ErrorCode::kKafkaStorageError, s.to_string());
  }
  if (producers != nullptr) producers->record_marker(producer_id, epoch, coordinator_epoch, result.base_offset, now);
  producer_state_.saw_producer(producer_id, epoch, now);
  log->request_sync();
  out.offset = result.last_offset;
  out.replicated = status.replicated;
  out.leader_epoch = status.leader_epoch;
  out.log = log;
  if (!status.replicated) wake_fetch_waiters(tp.topic, tp.partition);
  return out;
}

}  // namespace eddy::broker
