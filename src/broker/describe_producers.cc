// DescribeProducers v0 (KIP-664; Kafka's KafkaApis.handleDescribeProducersRequest
// and UnifiedLog.activeProducers): per partition, the producers its
// idempotent-producer state holds (producer_state.h), with the first offset
// of each one's open transaction from the partition's transaction index
// (-1: none). kafka-transactions describe-producers, find-hanging and abort
// (which looks the transaction up by its start offset) read it.
//
// As Kafka: READ on the topic (TOPIC_AUTHORIZATION_FAILED), an invalid name
// INVALID_TOPIC_EXCEPTION, an unknown topic or partition
// UNKNOWN_TOPIC_OR_PARTITION; any replica holding the partition answers
// from its own state, a follower included (find-hanging --broker-id asks
// every replica on the node); NOT_LEADER_OR_FOLLOWER where this node holds
// no replica, or holds one whose group does not run here (its state may be
// anything).
#include "broker/broker.h"
#include "meta/topic_name.h"
#include "protocol/errors.h"

namespace eddy::broker {

using protocol::DescribeProducersResponse;
using protocol::ErrorCode;

void Broker::handle_describe_producers(RequestPtr request) {
  protocol::DescribeProducersRequest body;
  if (!decode(*request, &body)) return;
  DescribeProducersResponse response;
  response.topics.reserve(body.topics.size());
  for (const auto& t : body.topics) {
    auto& rt = response.topics.emplace_back();
    rt.name = t.name;
    const Topic* topic = nullptr;
    ErrorCode topic_error = ErrorCode::kNone;
    std::optional<std::string> message;
    if (std::string why = meta::topic_name_error(t.name); !why.empty()) {
      topic_error = ErrorCode::kInvalidTopicException;
      message = std::move(why);
    } else if (!authorized(*request, security::AclOperation::kRead, security::ResourceType::kTopic, t.name)) {
      topic_error = ErrorCode::kTopicAuthorizationFailed;
    } else if ((topic = topics_.find(t.name)) == nullptr) {
      topic_error = ErrorCode::kUnknownTopicOrPartition;
    }
    rt.partitions.reserve(t.partition_indexes.size());
    for (int32_t p : t.partition_indexes) {
      auto& rp = rt.partitions.emplace_back();
      rp.partition_index = p;
      if (topic_error != ErrorCode::kNone) {
        rp.error_code = protocol::to_int(topic_error);
        rp.error_message = message;
        continue;
      }
      storage::PartitionLog* log = topic->local(p);
      if (log == nullptr) {
        rp.error_code = protocol::to_int(partition_error(topic, p));
        continue;
      }
      // A partition of several replicas whose group does not run here
      // (replica_status: led by nobody, not even followed).
      const auto i = static_cast<size_t>(p);
      if (replication_ != nullptr && i < topic->replicas.size() && topic->replicas[i].size() > 1 &&
          !replication_->status(log).replicated) {
        rp.error_code = protocol::to_int(ErrorCode::kNotLeaderOrFollower);
        continue;
      }
      const PartitionProducers* producers = producer_state_.find(log);
      if (producers == nullptr) continue;  // never opened: no producers
      const storage::TransactionIndex& transactions = log->transactions();
      rp.active_producers.reserve(producers->size());
      producers->for_each([&](int64_t producer_id, const ProducerEntry& e) {
        auto& out = rp.active_producers.emplace_back();
        out.producer_id = producer_id;
        out.producer_epoch = e.epoch;
        out.last_sequence = e.last_sequence;
        // The broker's clock at the producer's last write here (Kafka: the
        // last batch's max timestamp); find-hanging measures a
        // transaction's age from it.
        out.last_timestamp = e.last_write_ms;
        out.coordinator_epoch = e.coordinator_epoch;
        out.current_txn_start_offset = transactions.ongoing_first_offset(producer_id);
      });
    }
  }
  respond(*request, response);
}

}  // namespace eddy::broker
