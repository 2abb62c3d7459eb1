// ListOffsets, OffsetForLeaderEpoch and DeleteRecords: questions and
// changes about a partition's offsets. With an authorizer: DESCRIBE on the
// topic (ListOffsets, OffsetForLeaderEpoch), DELETE (DeleteRecords), else
// TOPIC_AUTHORIZATION_FAILED per partition, as Kafka.
//
// A replicated partition (partition_replication.h) answers them only on its
// group's leader, after KIP-320's check of the request's CurrentLeaderEpoch
// (leader_error), with the group's epochs: ListOffsets' latest carries the
// current epoch, its earliest and lookups by time the epoch of the batch
// found; OffsetForLeaderEpoch answers from the log's epoch index as Kafka's
// leader does. A single node stamps epoch 0 on every batch and answers so.
#include "broker/broker.h"
#include "broker/replicated_partition.h"
#include "protocol/errors.h"

namespace eddy::broker {

using protocol::ErrorCode;

namespace {

// Kafka's special timestamps in ListOffsets.
constexpr int64_t kLatest = -1;
constexpr int64_t kEarliest = -2;
constexpr int64_t kMaxTimestamp = -3;
constexpr int64_t kEarliestLocal = -4;

// The leader epoch Eddy stamps into every batch (single node, no elections).
constexpr int32_t kLeaderEpoch = 0;

storage::PartitionLog* find_partition(TopicTable& topics, const std::string& name, int32_t partition) {
  Topic* topic = topics.find(name);
  return topic == nullptr ? nullptr : topic->local(partition);
}

}  // namespace

void Broker::handle_list_offsets(RequestPtr request) {
  protocol::ListOffsetsRequest body;
  if (!decode(*request, &body)) return;
  const int16_t version = request->version();
  // READ_COMMITTED (v2+): latest is the last stable offset, and lookups by
  // time stop there.
  const bool read_committed = version >= 2 && body.isolation_level == 1;
  protocol::ListOffsetsResponse response;
  for (const auto& t : body.topics) {
    protocol::ListOffsetsResponse::ListOffsetsTopicResponse topic_out;
    topic_out.name = t.name;
    const bool may_describe = authorized(*request, security::AclOperation::kDescribe,
                                         security::ResourceType::kTopic, t.name);
    for (const auto& p : t.partitions) {
      protocol::ListOffsetsResponse::ListOffsetsPartitionResponse out;
      out.partition_index = p.partition_index;
      storage::PartitionLog* log = may_describe ? find_partition(topics_, t.name, p.partition_index) : nullptr;
      if (log == nullptr) {
        out.error_code = protocol::to_int(may_describe ? partition_error(topics_.find(t.name), p.partition_index)
                                                       : ErrorCode::kTopicAuthorizationFailed);
        topic_out.partitions.push_back(std::move(out));
        continue;
      }
      const ReplicaStatus status = replica_status(*topics_.find(t.name), p.partition_index, log);
      if (status.replicated) {
        const ErrorCode refusal = leader_error(status, p.current_leader_epoch);
        if (refusal != ErrorCode::kNone) {
          out.error_code = protocol::to_int(refusal);
          topic_out.partitions.push_back(std::move(out));
          continue;
        }
      }
      out.leader_epoch = status.replicated ? status.leader_epoch : kLeaderEpoch;
      // What a consumer of this isolation level may read up to (Kafka's
      // Partition.fetchOffsetForTimestamp "lastFetchableOffset").
      const int64_t last_fetchable = read_committed ? log->last_stable_offset() : log->high_watermark();
      if (p.timestamp == kLatest) {
        out.offset = last_fetchable;
      } else if (p.timestamp == kEarliest || p.timestamp == kEarliestLocal) {
        out.offset = log->log_start_offset();
      } else if (p.timestamp == kMaxTimestamp) {
        storage::TimestampLookup found;
        if (log->find_max_timestamp(&found, &options_.decompress).ok() && found.found) {
          out.offset = found.offset;
          out.timestamp = found.timestamp;
        }
      } else if (p.timestamp >= 0) {
        storage::TimestampLookup found;
        Status s = log->find_offset_by_timestamp(p.timestamp, &found, &options_.decompress);
        if (!s.ok()) {
          out.error_code = protocol::to_int(ErrorCode::kKafkaStorageError);
        } else if (found.found) {
          out.offset = found.offset;
          out.timestamp = found.timestamp;
        }
      } else {
        out.error_code = protocol::to_int(ErrorCode::kUnsupportedVersion);
      }
      if (p.timestamp >= 0 || p.timestamp == kMaxTimestamp) {
        // As Kafka's ReplicaManager: a record found at or beyond the last
        // fetchable offset is not one this consumer may see: none found.
        if (out.offset >= last_fetchable) {
          out.offset = -1;
          out.timestamp = -1;
        }
      }
      if (status.replicated && p.timestamp != kLatest) {
        // As Kafka: the epoch of the batch holding the offset answered (the
        // earliest: of the first batch); none when there is none.
        out.leader_epoch = out.offset >= 0 ? log->epoch_at(out.offset) : storage::kNoLeaderEpoch;
      }
      if (version == 0 && out.offset >= 0) out.old_style_offsets = {out.offset};
      topic_out.partitions.push_back(std::move(out));
    }
    response.topics.push_back(std::move(topic_out));
  }
  respond(*request, response);
}

void Broker::handle_offset_for_leader_epoch(RequestPtr request) {
  protocol::OffsetForLeaderEpochRequest body;
  if (!decode(*request, &body)) return;
  protocol::OffsetForLeaderEpochResponse response;
  for (const auto& t : body.topics) {
    protocol::OffsetForLeaderEpochResponse::OffsetForLeaderTopicResult topic_out;
    topic_out.topic = t.topic;
    const bool may_describe = authorized(*request, security::AclOperation::kDescribe,
                                         security::ResourceType::kTopic, t.topic);
    for (const auto& p : t.partitions) {
      protocol::OffsetForLeaderEpochResponse::EpochEndOffset out;
      out.partition = p.partition;
      storage::PartitionLog* log = find_partition(topics_, t.topic, p.partition);
      const ReplicaStatus status =
          log == nullptr ? ReplicaStatus{} : replica_status(*topics_.find(t.topic), p.partition, log);
      if (!may_describe) {
        out.error_code = protocol::to_int(ErrorCode::kTopicAuthorizationFailed);
      } else if (log == nullptr) {
        out.error_code = protocol::to_int(partition_error(topics_.find(t.topic), p.partition));
      } else if (status.replicated) {
        out.error_code = protocol::to_int(leader_error(status, p.current_leader_epoch));
        if (out.error_code == 0) {
          const storage::EpochEndOffset end =
              kafka_end_offset_for_epoch(log->epochs(), p.leader_epoch, log->log_end_offset());
          out.leader_epoch = end.epoch;
          out.end_offset = end.end_offset;
        }
      } else if (p.current_leader_epoch > kLeaderEpoch) {
        out.error_code = protocol::to_int(ErrorCode::kUnknownLeaderEpoch);
      } else if (p.leader_epoch >= kLeaderEpoch) {
        // Every batch carries epoch 0: it ends at the log end.
        out.leader_epoch = kLeaderEpoch;
        out.end_offset = log->log_end_offset();
      }
      topic_out.partitions.push_back(std::move(out));
    }
    response.topics.push_back(std::move(topic_out));
  }
  respond(*request, response);
}

void Broker::handle_delete_records(RequestPtr request) {
  protocol::DeleteRecordsRequest body;
  if (!decode(*request, &body)) return;
  protocol::DeleteRecordsResponse response;
  for (const auto& t : body.topics) {
    protocol::DeleteRecordsResponse::DeleteRecordsTopicResult topic_out;
    topic_out.name = t.name;
    const bool may_delete = authorized(*request, security::AclOperation::kDelete, security::ResourceType::kTopic,
                                       t.name);
    for (const auto& p : t.partitions) {
      protocol::DeleteRecordsResponse::DeleteRecordsPartitionResult out;
      out.partition_index = p.partition_index;
      out.low_watermark = -1;
      storage::PartitionLog* log = find_partition(topics_, t.name, p.partition_index);
      const ReplicaStatus status =
          log == nullptr ? ReplicaStatus{} : replica_status(*topics_.find(t.name), p.partition_index, log);
      if (!may_delete) {
        out.error_code = protocol::to_int(ErrorCode::kTopicAuthorizationFailed);
      } else if (log == nullptr) {
        out.error_code = protocol::to_int(partition_error(topics_.find(t.name), p.partition_index));
      } else if (status.replicated && !status.leader) {
        // The leader's start moves; a follower's follows from the group
        // (only when a fetch of its lies below the leader's start: the
        // followers' own starts are not moved by DeleteRecords yet).
        out.error_code = protocol::to_int(ErrorCode::kNotLeaderOrFollower);
      } else {
        // -1 means "up to the high watermark", as in Kafka.
        int64_t offset = p.offset == -1 ? log->high_watermark() : p.offset;
        Status s = offset < 0 ? Status::out_of_range("offset out of range") : Status();
        if (s.ok() && offset > log->log_start_offset()) s = log->delete_records_before(offset);
        if (s.ok()) {
          out.low_watermark = log->log_start_offset();
        } else {
          out.error_code = protocol::to_int(s.code() == Status::Code::kOutOfRange ? ErrorCode::kOffsetOutOfRange
                                                                                  : ErrorCode::kKafkaStorageError);
        }
      }
      topic_out.partitions.push_back(std::move(out));
    }
    response.topics.push_back(std::move(topic_out));
  }
  respond(*request, response);
}

}  // namespace eddy::broker
