// The transaction coordinator in the broker: created at start with its
// state in eddy.db (a single node, started at once) or in the controller
// log (a cluster, started when this node takes over as controller leader,
// cluster_groups.cc); and its MarkerSink: each marker goes to its
// partition's leader as WriteTxnMarkers, answered once it is durable
// there. The partitions this node leads go to write_txn_markers directly,
// those led elsewhere in one request per leader node over the controller
// listener (ControllerClient::send_txn_markers), as Kafka's coordinator
// sends WriteTxnMarkers to each partition leader.
#include <map>

#include "broker/broker.h"
#include "broker/controller_txn_state_store.h"
#include "port/log.h"

namespace eddy::broker {

using protocol::ErrorCode;
using Outcome = txn::MarkerSink::Outcome;

Status Broker::start_transactions() {
  if (controller_ != nullptr) {
    txn_store_ = std::make_unique<ControllerTxnStateStore>(controller_, meta_);
  } else {
    txn_store_ = std::make_unique<txn::MetaStateStore>(meta_);
  }
  txn::MarkerSink sink;
  sink.write = [this](const std::vector<meta::TopicPartition>& partitions, protocol::ControlType type,
                      int64_t producer_id, int16_t epoch, txn::MarkerSink::PartitionDone done) {
    route_txn_markers(partitions, type, producer_id, epoch, std::move(done));
  };
  txn_ = std::make_unique<txn::Coordinator>(
      executor_, txn_store_.get(), [this](int64_t* id) { return next_producer_id(id); }, std::move(sink),
      options_.transactions);
  if (controller_ != nullptr) return Status();  // takes over with the controller quorum's leadership
  return txn_->start().with_context("transaction coordinator");
}

int32_t Broker::partition_leader(const Topic& topic, int32_t p) const {
  const storage::PartitionLog* log = topic.local(p);
  const ReplicaStatus status = replica_status(topic, p, log);
  if (status.replicated) return status.leader_id;
  const auto& replicas = topic.replicas[static_cast<size_t>(p)];
  const meta::PartitionLeader* published = replicas.size() > 1 ? published_leader(topic.id, p) : nullptr;
  if (published != nullptr && log == nullptr) return published->leader;
  return log != nullptr ? options_.node_id : replicas.front();
}

void Broker::route_txn_markers(const std::vector<meta::TopicPartition>& partitions, protocol::ControlType type,
                               int64_t producer_id, int16_t epoch, txn::MarkerSink::PartitionDone done) {
  const int32_t coordinator_epoch = controller_ != nullptr ? std::max(controller_->epoch(), 0) : 0;
  std::map<int32_t, protocol::WriteTxnMarkersRequest> by_leader;
  for (const meta::TopicPartition& tp : partitions) {
    const Topic* topic = topics_.find(tp.topic);
    if (topic == nullptr || !topic->has_partition(tp.partition)) {
      done(tp, Outcome::kPartitionGone, "");
      continue;
    }
    const int32_t leader = controller_ != nullptr ? partition_leader(*topic, tp.partition) : options_.node_id;
    if (leader < 0) {
      done(tp, Outcome::kFailed, "no leader of the partition is known");
      continue;
    }
    protocol::WriteTxnMarkersRequest& request = by_leader[leader];
    if (request.markers.empty()) {
      auto& m = request.markers.emplace_back();
      m.producer_id = producer_id;
      m.producer_epoch = epoch;
      m.transaction_result = type == protocol::ControlType::kCommit;
      m.coordinator_epoch = coordinator_epoch;
    }
    auto& topics = request.markers.front().topics;
    if (topics.empty() || topics.back().name != tp.topic) topics.emplace_back().name = tp.topic;
    topics.back().partition_indexes.push_back(tp.partition);
  }
  for (auto& entry : by_leader) {
    const int32_t leader = entry.first;
    protocol::WriteTxnMarkersRequest& request = entry.second;
    // Every partition asked for gets one outcome: from the answer, or
    // kFailed when the answer lacks it or none came.
    auto answered = [done, request, type](const Status& status, const protocol::WriteTxnMarkersResponse& response) {
      std::map<meta::TopicPartition, ErrorCode> codes;
      if (status.ok()) {
        for (const auto& m : response.markers) {
          for (const auto& t : m.topics) {
            for (const auto& p : t.partitions) codes[{t.name, p.partition_index}] = static_cast<ErrorCode>(p.error_code);
          }
        }
      }
      for (const auto& t : request.markers.front().topics) {
        for (int32_t p : t.partition_indexes) {
          const meta::TopicPartition tp{t.name, p};
          auto it = codes.find(tp);
          if (it == codes.end()) {
            done(tp, Outcome::kFailed, status.ok() ? "the leader's answer did not name it" : status.to_string());
          } else if (it->second == ErrorCode::kNone) {
            done(tp, Outcome::kDurable, "");
          } else if (it->second == ErrorCode::kInvalidProducerEpoch ||
                     it->second == ErrorCode::kTransactionCoordinatorFenced) {
            // A newer producer (or coordinator) epoch already wrote there
            // (Kafka's appendEndTxnMarker checks): this marker is stale, and
            // the transaction it ends cannot be open there (Kafka's
            // coordinator drops such markers too).
            EDDY_LOG_WARN("transactions: {} marker for {}-{} skipped by its leader: {}",
                          type == protocol::ControlType::kCommit ? "COMMIT" : "ABORT", t.name, p,
                          protocol::error_name(it->second));
            done(tp, Outcome::kDurable, "");
          } else {
            done(tp, Outcome::kFailed, protocol::error_name(it->second));
          }
        }
      }
    };
    if (leader == options_.node_id) {
      write_txn_markers(request, [answered](protocol::WriteTxnMarkersResponse response) {
        answered(Status(), response);
      });
    } else {
      controller_->send_txn_markers(leader, std::move(request), std::move(answered));
    }
  }
}

}  // namespace eddy::broker
