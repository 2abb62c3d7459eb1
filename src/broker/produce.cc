// Produce: validate each partition's record batch, append it (the storage
// patches offsets in place in the request frame, which the broker owns), and
// answer according to acks: 0 nothing, 1 after the append, -1 after the data
// is durable as the topic's eddy.acks.all.waits.for says (or timeout_ms).
// A batch with a producer id is checked against the partition's idempotent
// producer state first (producer_state.h): a duplicate is answered with its
// original offsets and not written again. A transactional batch is checked
// against the transaction coordinator before that; control batches
// (transaction markers) are refused: only the coordinator writes them.
//
// A replicated partition (partition_replication.h) takes batches only on
// its group's leader (NOT_LEADER_OR_FOLLOWER elsewhere, with KIP-951's
// leader hint from v10), refuses acks=-1 up front while fewer replicas than
// min.insync.replicas are in sync (NOT_ENOUGH_REPLICAS), appends through
// the group (LogAppendTime stamped here first: every replica keeps the bytes
// as they are), and answers acks=-1 once the high watermark (the group's
// commit index) passed the batch, in the epoch it was appended in.
#include "broker/broker.h"
#include "broker/replicated_partition.h"
#include "port/log.h"
#include "port/port.h"
#include "protocol/errors.h"
#include "protocol/record_batch.h"

namespace eddy::broker {

using protocol::ErrorCode;
using protocol::ProduceRequest;
using protocol::ProduceResponse;

namespace {

ErrorCode error_for(const Status& s, int16_t version) {
  // A Kafka code carried as it is (the replication's NOT_LEADER_OR_FOLLOWER).
  if (protocol::kafka_error(s) != ErrorCode::kNone) return protocol::kafka_error(s);
  switch (s.code()) {
    case Status::Code::kOk: return ErrorCode::kNone;
    // A CRC mismatch and a malformed batch alike (the message says which).
    case Status::Code::kCorruption: return ErrorCode::kCorruptMessage;
    case Status::Code::kNotSupported:
      // Kafka answers Produce v3+ carrying a magic 0/1 message set with
      // INVALID_RECORD; older versions may carry them, which Eddy does not
      // store.
      return version >= 3 ? ErrorCode::kInvalidRecord : ErrorCode::kUnsupportedForMessageFormat;
    case Status::Code::kTooLarge: return ErrorCode::kMessageTooLarge;
    case Status::Code::kOutOfRange: return ErrorCode::kOffsetOutOfRange;
    case Status::Code::kLogFull:
    case Status::Code::kNoSpace:
    case Status::Code::kIOError: return ErrorCode::kKafkaStorageError;
    default: return ErrorCode::kUnknownServerError;
  }
}

// Why a batch RecordBatchView::parse refused is refused, in Kafka's order
// of checks: framing and CRC first (CORRUPT_MESSAGE), then the header's
// counts (INVALID_RECORD, as Kafka's LogValidator.validateBatch).
ErrorCode refuse_unparsed(std::span<const uint8_t> records, protocol::BatchError e, int16_t version,
                          std::string* message) {
  namespace L = protocol::batch_layout;
  if (e == protocol::BatchError::kUnsupportedMagic) {
    *message = "Magic 0/1 message sets are not supported; use a client that writes record batch v2";
    return version >= 3 ? ErrorCode::kInvalidRecord : ErrorCode::kUnsupportedForMessageFormat;
  }
  size_t size = 0;
  const bool framed = e == protocol::BatchError::kInvalid && records.size() >= L::kHeaderSize &&
                      static_cast<int8_t>(records[L::kMagic]) == protocol::kRecordBatchMagic &&
                      protocol::peek_batch_size(records, &size) == protocol::BatchError::kOk &&
                      size >= L::kHeaderSize && size <= records.size();
  if (!framed) {
    *message = "Malformed record batch";
    return ErrorCode::kCorruptMessage;
  }
  const auto* p = records.data();
  if (port::crc32c(0, p + L::kAttributes, size - L::kAttributes) !=
      protocol::load_be32(p + L::kCrc)) {
    *message = "Record is corrupt (CRC-32C mismatch)";
    return ErrorCode::kCorruptMessage;
  }
  *message = "Inconsistent batch offset range [0, " +
             std::to_string(static_cast<int32_t>(protocol::load_be32(p + L::kLastOffsetDelta))) +
             "] and count of records " + std::to_string(static_cast<int32_t>(protocol::load_be32(p + L::kRecordCount)));
  return ErrorCode::kInvalidRecord;
}

// Checks a partition's records before the append, as Kafka does: one batch
// (v3+), the size limit, the CRC, the header, features Eddy does not offer
// yet, then every record (protocol/record_validator.h). The storage trusts
// the CRC checked here (AppendOptions::crc_verified).
ErrorCode precheck(std::span<const uint8_t> records, const EffectiveTopicConfig& config, const BrokerOptions& broker,
                   int16_t version, protocol::RecordBatchView* out, protocol::RecordVerdict* verdict,
                   std::string* message) {
  const int32_t max_message_bytes = config.max_message_bytes;
  if (records.empty()) {
    *message = "Produce request carries no record batch";
    return ErrorCode::kInvalidRecord;
  }
  if (records.size() > static_cast<size_t>(max_message_bytes)) {
    *message = "The batch of " + std::to_string(records.size()) + " bytes exceeds max.message.bytes (" +
               std::to_string(max_message_bytes) + ")";
    return ErrorCode::kMessageTooLarge;
  }
  protocol::RecordBatchView batch;
  protocol::BatchError e = protocol::RecordBatchView::parse(records, &batch);
  if (e != protocol::BatchError::kOk) return refuse_unparsed(records, e, version, message);
  if (batch.size() != records.size()) {
    *message = "Produce requests must carry exactly one record batch per partition";
    return ErrorCode::kInvalidRecord;
  }
  if (batch.base_offset() != 0) {
    // As Kafka's LogValidator: a client's batch starts at offset 0.
    *message = "The baseOffset of the record batch should be 0, but it is " + std::to_string(batch.base_offset());
    return ErrorCode::kInvalidRecord;
  }
  if (!batch.crc_matches()) {
    *message = "Record is corrupt (CRC-32C mismatch)";
    return ErrorCode::kCorruptMessage;
  }
  if (batch.is_empty()) {
    // As Kafka's LogValidator.validateBatch: an empty batch is a leader's
    // to write (RecordBatchView::parse), never a client's.
    *message = "Invalid reported count for record batch: 0";
    return ErrorCode::kInvalidRecord;
  }
  if (batch.is_control()) {
    // As Kafka's LogValidator: markers are the coordinator's to write.
    *message = "Clients are not allowed to write control records";
    return ErrorCode::kInvalidRecord;
  }
  if (batch.is_transactional() && batch.producer_id() < 0) {
    *message = "A transactional record batch must carry a producer id";
    return ErrorCode::kInvalidRecord;
  }
  if (batch.producer_id() >= 0 && batch.base_sequence() < 0) {
    *message = "Invalid sequence number " + std::to_string(batch.base_sequence()) +
               " in record batch with producerId " + std::to_string(batch.producer_id());
    return ErrorCode::kInvalidRecord;
  }
  protocol::RecordRules rules;
  rules.topic_timestamp_type = config.log.timestamp_type;
  rules.now_ms = port::wall_clock_millis();
  rules.timestamp_before_max_ms = config.timestamp_before_max_ms;
  rules.timestamp_after_max_ms = config.timestamp_after_max_ms;
  rules.max_decompressed_record_bytes = config.max_decompressed_record_bytes;
  rules.max_decompressed_batch_bytes = broker.max_decompressed_batch_bytes;
  rules.validate_compressed = broker.validate_compressed_records;
  rules.open_stream = &broker.open_record_stream;
  *verdict = protocol::validate_batch_records(batch, rules);
  if (verdict->error != ErrorCode::kNone) {
    *message = verdict->message;
    return verdict->error;
  }
  // A compressed batch not walked (no codec, or validation off): its
  // newest timestamp still bounds every record's from above.
  if (!verdict->walked && config.log.timestamp_type == protocol::TimestampType::kCreateTime &&
      batch.max_timestamp() >= 0) {
    const int64_t now = rules.now_ms;
    if (batch.max_timestamp() > now && batch.max_timestamp() - now > config.timestamp_after_max_ms) {
      *message = "Timestamp " + std::to_string(batch.max_timestamp()) +
                 " of message is out of range. The timestamp should be no later than " +
                 std::to_string(now + config.timestamp_after_max_ms) + " (message.timestamp.after.max.ms=" +
                 std::to_string(config.timestamp_after_max_ms) + ")";
      return ErrorCode::kInvalidTimestamp;
    }
  }
  *out = batch;
  return ErrorCode::kNone;
}

// A duplicate older than the cached batches (after a restart the state of a
// snapshotted producer holds its last batch's sequence and offset only):
// when the batch ending at last_offset is exactly this one, its base offset,
// so that the retry gets the answer the original got. -1 otherwise.
int64_t find_written_batch(storage::PartitionLog* log, int64_t last_offset, const protocol::RecordBatchView& retry) {
  if (last_offset < log->log_start_offset() || last_offset >= log->log_end_offset()) return -1;
  std::vector<uint8_t> bytes;
  int64_t next = 0;
  if (!log->read_copy(last_offset, 1, log->log_end_offset(), &bytes, &next).ok()) return -1;
  protocol::RecordBatchView written;
  if (protocol::RecordBatchView::parse(bytes, &written) != protocol::BatchError::kOk) return -1;
  if (written.last_offset() != last_offset || written.producer_id() != retry.producer_id() ||
      written.producer_epoch() != retry.producer_epoch() || written.base_sequence() != retry.base_sequence() ||
      written.record_count() != retry.record_count()) {
    return -1;
  }
  return written.base_offset();
}

}  // namespace

void Broker::handle_produce(RequestPtr request) {
  ProduceRequest body;
  if (!decode(*request, &body)) return;
  ProduceResponse response;
  if (body.transactional_id.has_value() &&
      !authorized(*request, security::AclOperation::kWrite, security::ResourceType::kTransactionalId,
                  *body.transactional_id)) {
    // As Kafka: the whole request is refused.
    for (const auto& topic_data : body.topic_data) {
      auto& rt = response.responses.emplace_back();
      rt.name = topic_data.name;
      for (const auto& p : topic_data.partition_data) {
        auto& rp = rt.partition_responses.emplace_back();
        rp.index = p.index;
        rp.base_offset = -1;
        rp.error_code = protocol::to_int(ErrorCode::kTransactionalIdAuthorizationFailed);
      }
    }
    if (body.acks == 0) {
      note_errors(*request, response);
      request->reply->send_nothing();
    } else {
      respond(*request, response);
    }
    return;
  }
  ProduceWaiter waiter;
  for (size_t t = 0; t < body.topic_data.size(); ++t) {
    auto& topic_data = body.topic_data[t];
    ProduceResponse::TopicProduceResponse topic_response;
    topic_response.name = topic_data.name;
    Topic* topic = topics_.find(topic_data.name);
    const bool may_write = authorized(*request, security::AclOperation::kWrite, security::ResourceType::kTopic,
                                      topic_data.name);
    for (size_t p = 0; p < topic_data.partition_data.size(); ++p) {
      ProduceSlot slot{t, p, topic_data.name, topic_data.partition_data[p].index, topic, nullptr, may_write};
      topic_response.partition_responses.push_back(
          produce_partition(*request, body.acks, slot, topic_data.partition_data[p], &waiter));
    }
    response.responses.push_back(std::move(topic_response));
  }

  if (request->version() >= 10) {
    // KIP-951: where the partitions that refused went to.
    std::set<int32_t> leaders;
    for (const auto& topic_response : response.responses) {
      for (const auto& p : topic_response.partition_responses) {
        if (p.current_leader.leader_id >= 0) leaders.insert(p.current_leader.leader_id);
      }
    }
    add_leader_endpoints(request->client.listener, leaders, &response.node_endpoints);
  }
  if (body.acks == 0) {
    note_errors(*request, response);
    request->reply->send_nothing();
    return;
  }
  if (waiter.pending.empty()) {
    respond(*request, response);
    return;
  }
  // Every batch is in its log (the page cache) or refused, and the answer
  // holds copies: what waits for the sync needs none of the frame.
  request->release_frame();
  waiter.request = std::move(request);
  waiter.response = std::move(response);
  produce_waiters_.push_back(std::move(waiter));
  auto it = std::prev(produce_waiters_.end());
  int64_t timeout = body.timeout_ms > 0 ? body.timeout_ms : 0;
  it->timer = executor_.schedule_after(timeout, [this, it] { finish_produce_waiter(it, true); });
}

ProduceResponse::PartitionProduceResponse Broker::produce_partition(const Request& request, int16_t acks,
                                                                    ProduceSlot& slot,
                                                                    ProduceRequest::PartitionProduceData& data,
                                                                    ProduceWaiter* waiter) {
  ProduceResponse::PartitionProduceResponse out;
  out.index = slot.partition;
  out.base_offset = -1;
  std::string message;
  ErrorCode code = ErrorCode::kNone;
  if (acks != 0 && acks != 1 && acks != -1) {
    code = ErrorCode::kInvalidRequiredAcks;
  } else if (!slot.may_write) {
    code = ErrorCode::kTopicAuthorizationFailed;  // before existence, as Kafka: no probing for names
  } else if (slot.topic == nullptr || slot.topic->local(slot.partition) == nullptr) {
    code = partition_error(slot.topic, slot.partition);
  } else {
    slot.log = slot.topic->local(slot.partition);
    const ReplicaStatus status = replica_status(*slot.topic, slot.partition, slot.log);
    if (status.replicated) code = check_replicated_produce(request, acks, slot, status, &out, &message);
    if (code == ErrorCode::kNone) {
      std::span<const uint8_t> records;
      if (data.records) records = data.records->bytes;
      code = produce_batch(request, acks, slot, records, &out, waiter, &message);
      out.log_start_offset = slot.log->log_start_offset();
    }
  }
  out.error_code = protocol::to_int(code);
  if (code != ErrorCode::kNone) {
    if (!message.empty()) out.error_message = message;
    EDDY_LOG_DEBUG("produce from {} to {}-{}: {} {}", request.client.peer, slot.topic_name,
                   slot.partition, protocol::error_name(code), message);
  }
  return out;
}

ErrorCode Broker::check_replicated_produce(const Request& request, int16_t acks, ProduceSlot& slot,
                                          const ReplicaStatus& status, ProduceResponse::PartitionProduceResponse* out,
                                          std::string* message) {
  // Produce carries no leader epoch: only leadership is checked.
  const ErrorCode code = leader_error(status, -1);
  if (code != ErrorCode::kNone) {
    *message = status.leader_id == options_.node_id
                   ? std::string("This node leads the partition but has no commit index of its group yet")
                   : "This node does not lead the partition (leader " + std::to_string(status.leader_id) +
                         ", epoch " + std::to_string(status.leader_epoch) + ")";
    LeaderHint hint;
    if (request.version() >= 10 && leader_hint(status, code, options_.node_id, &hint)) {
      out->current_leader.leader_id = hint.leader_id;
      out->current_leader.leader_epoch = hint.leader_epoch;
    }
    return code;
  }
  if (status.without_majority) {
    // Nothing can be committed, whatever acks asks: Kafka's answer for a
    // leader alone in its ISR.
    *message = "The partition's leader (this node) reaches no majority of its replicas: nothing can be "
               "replicated until they return";
    return ErrorCode::kNotEnoughReplicas;
  }
  const int32_t min_insync = slot.topic->config.min_insync_replicas;
  if (acks == -1 && !enough_in_sync(status, min_insync)) {
    *message = not_enough_replicas_message(slot.topic_name, slot.partition, status, min_insync);
    return ErrorCode::kNotEnoughReplicas;
  }
  slot.replicated = true;
  slot.leader_epoch = status.leader_epoch;
  return ErrorCode::kNone;
}

ErrorCode Broker::produce_batch(const Request& request, int16_t acks, const ProduceSlot& slot,
                                std::span<const uint8_t> records, ProduceResponse::PartitionProduceResponse* out,
                                ProduceWaiter* waiter, std::string* message) {
  protocol::RecordBatchView batch;
  protocol::RecordVerdict verdict;
  ErrorCode code = precheck(records, slot.topic->config, options_, request.version(), &batch, &verdict, message);
  for (const protocol::RecordError& r : verdict.record_errors) {
    ProduceResponse::BatchIndexAndErrorMessage e;
    e.batch_index = r.index;
    e.batch_index_error_message = r.message;
    out->record_errors.push_back(std::move(e));
  }
  if (code != ErrorCode::kNone) {
    if (code != ErrorCode::kUnknownTopicOrPartition) {
      note_refused_batch(request, slot.topic_name, slot.partition, code, *message);
    }
    return code;
  }
  code = check_transaction_of(slot, batch, message);
  if (code != ErrorCode::kNone) {
    note_refused_batch(request, slot.topic_name, slot.partition, code, *message);
    return code;
  }
  PartitionProducers* producers = batch.producer_id() >= 0 ? producer_state_.find(slot.log) : nullptr;
  SequenceCheck sequence;
  if (producers != nullptr) {
    sequence = producers->check(batch.producer_id(), batch.producer_epoch(), batch.base_sequence(),
                                batch.record_count());
  }
  switch (sequence.action) {
    case SequenceCheck::Action::kReject:
      *message = sequence.message;
      return sequence.error;
    case SequenceCheck::Action::kDuplicate:
      return answer_duplicate(request, acks, slot, batch, sequence, out, waiter, message);
    case SequenceCheck::Action::kAppend: break;
  }
  // The frame belongs to this request: the storage patches baseOffset
  // (and, for LogAppendTime, the timestamp and CRC) in place.
  std::span<uint8_t> writable(const_cast<uint8_t*>(records.data()), records.size());
  storage::PartitionLog* log = slot.log;
  if (verdict.walked && log->config().timestamp_type == protocol::TimestampType::kCreateTime &&
      verdict.max_timestamp != batch.max_timestamp()) {
    // As Kafka: the batch's maxTimestamp is its newest record's.
    protocol::set_max_timestamp(writable, verdict.max_timestamp);
  }
  storage::AppendResult result;
  Status s;
  if (slot.replicated) {
    // The group keeps the bytes as given, on every replica: the append time
    // is stamped here, once.
    int64_t log_append_time = -1;
    if (log->config().timestamp_type == protocol::TimestampType::kLogAppendTime) {
      log_append_time = port::wall_clock_millis();
      protocol::set_log_append_time(writable, log_append_time);
    }
    s = replication_->append(log, writable, &result);
    result.log_append_time_ms = log_append_time;
  } else {
    storage::AppendOptions append;
    append.crc_verified = true;
    s = log->append(writable, append, &result);
  }
  code = error_for(s, request.version());
  if (code != ErrorCode::kNone) {
    *message = s.code() == Status::Code::kLogFull
                   ? "The partition's disk budget is full of data not yet forwarded (eddy.full.policy=reject)"
                   : std::string("append failed: ") + s.to_string();
    return code;
  }
  if (producers != nullptr) {
    const int64_t now = port::wall_clock_millis();
    producers->record(batch.producer_id(), batch.producer_epoch(), batch.base_sequence(), batch.record_count(),
                      result.base_offset, result.last_offset, now);
    producer_state_.saw_producer(batch.producer_id(), batch.producer_epoch(), now);
  }
  slot.topic->traffic.bytes_in += records.size();
  slot.topic->traffic.messages_in += static_cast<uint64_t>(result.last_offset - result.base_offset + 1);
  out->base_offset = result.base_offset;
  out->log_append_time_ms = result.log_append_time_ms;
  out->log_start_offset = result.log_start_offset;
  wait_for_durability(acks, slot, result.last_offset, waiter);
  // A replicated partition's readers wait for its high watermark instead
  // (on_replicated_high_watermark).
  if (!slot.replicated) wake_fetch_waiters(slot.topic_name, slot.partition);
  return ErrorCode::kNone;
}

ErrorCode Broker::check_transaction_of(const ProduceSlot& slot, const protocol::RecordBatchView& batch,
                                       std::string* message) {
  if (batch.is_transactional()) return verify_transactional_batch(slot, batch, message);
  if (batch.producer_id() < 0 || slot.log->transactions().ongoing_count() == 0 ||
      slot.log->transactions().ongoing_first_offset(batch.producer_id()) < 0) {
    return ErrorCode::kNone;
  }
  // Kafka's ProducerAppendInfo: a producer with a transaction open in this
  // partition may not write outside it.
  *message = "Expected transactional write from producer " + std::to_string(batch.producer_id()) +
             ", which has a transaction open in this partition";
  return ErrorCode::kInvalidTxnState;
}

// Kafka's produce verification (KIP-890 part 1, which Kafka 4 applies to
// every client): the batch's producer id and epoch are the ones the
// transaction coordinator handed out and its open transaction added this
// partition. Errors as Kafka maps them for producers.
ErrorCode Broker::verify_transactional_batch(const ProduceSlot& slot, const protocol::RecordBatchView& batch,
                                             std::string* message) {
  const ErrorCode code = txn_->verify_produce(batch.producer_id(), batch.producer_epoch(),
                                              txn::PartitionRef{slot.topic_name, slot.partition});
  switch (code) {
    case ErrorCode::kNone: break;
    case ErrorCode::kInvalidProducerIdMapping:
      *message = "Producer " + std::to_string(batch.producer_id()) + " belongs to no transactional id";
      break;
    case ErrorCode::kInvalidProducerEpoch:
      *message = "Producer " + std::to_string(batch.producer_id()) + " epoch " +
                 std::to_string(batch.producer_epoch()) + " is not the transactional id's current epoch";
      break;
    case ErrorCode::kInvalidTxnState: *message = "Partition was not added to the transaction"; break;
    default:
      *message = std::string("Unable to verify the partition has been added to the transaction: ") +
                 protocol::error_name(code);
      break;
  }
  return code;
}

// Written before: nothing is appended; acks=-1 still waits until the
// original is durable.
ErrorCode Broker::answer_duplicate(const Request& request, int16_t acks, const ProduceSlot& slot,
                                   const protocol::RecordBatchView& batch, const SequenceCheck& sequence,
                                   ProduceResponse::PartitionProduceResponse* out, ProduceWaiter* waiter,
                                   std::string* message) {
  ErrorCode code = sequence.error;
  *message = sequence.message;
  out->base_offset = sequence.duplicate_base_offset;
  if (code == ErrorCode::kDuplicateSequenceNumber) {
    int64_t base = find_written_batch(slot.log, sequence.duplicate_last_offset, batch);
    if (base >= 0) {
      code = ErrorCode::kNone;
      message->clear();
      out->base_offset = base;
    }
  }
  if (code == ErrorCode::kNone) {
    EDDY_LOG_DEBUG("produce from {} to {}-{}: duplicate batch (producer {} epoch {} sequence {}) not "
                   "written again; it is at offset {}",
                   request.client.peer, slot.topic_name, slot.partition,
                   batch.producer_id(), batch.producer_epoch(), batch.base_sequence(),
                   out->base_offset);
  }
  wait_for_durability(acks, slot, sequence.duplicate_last_offset, waiter);
  return code;
}

void Broker::wait_for_durability(int16_t acks, const ProduceSlot& slot, int64_t last_offset,
                                 ProduceWaiter* waiter) {
  if (acks != -1) return;
  if (slot.replicated) {
    // Whatever eddy.acks.all.waits.for says: the group's commit index is a
    // majority's durable log (raft/README.md).
    if (slot.log->high_watermark() <= last_offset) {
      waiter->pending.push_back({slot.topic_index, slot.partition_index, slot.topic->name, slot.partition,
                                 last_offset + 1, true, slot.leader_epoch});
    }
    return;
  }
  if (slot.log->config().acks_all_waits_for == storage::AcksAllWaitsFor::kDisk &&
      slot.log->durable_offset() <= last_offset) {
    waiter->pending.push_back({slot.topic_index, slot.partition_index, slot.topic->name, slot.partition,
                               last_offset + 1});
  }
}

bool Broker::produce_pending_done(const ProduceWaiter::Pending& pending, ProduceResponse::PartitionProduceResponse* out) {
  auto fail = [out](ErrorCode code, std::optional<std::string> message) {
    out->error_code = protocol::to_int(code);
    out->error_message = std::move(message);
    out->base_offset = -1;
    return true;
  };
  Topic* topic = topics_.find(pending.topic);
  storage::PartitionLog* log = topic == nullptr ? nullptr : topic->local(pending.partition);
  if (log == nullptr) return fail(ErrorCode::kUnknownTopicOrPartition, std::nullopt);
  if (!pending.replicated) return log->durable_offset() >= pending.needed;
  // Committed in the epoch it was appended in, while this node still leads
  // it: a high watermark that passed the batch after the epoch changed may
  // cover another leader's batch at its offsets (Kafka answers
  // NOT_LEADER_OR_FOLLOWER once the leader moved; the producer retries).
  const ReplicaStatus status = replica_status(*topic, pending.partition, log);
  if (!status.replicated || !status.leader || status.leader_epoch != pending.leader_epoch) {
    return fail(ErrorCode::kNotLeaderOrFollower,
                "This node no longer leads the partition in the epoch the batch was appended in");
  }
  if (log->high_watermark() < pending.needed) return false;
  const int32_t min_insync = topic->config.min_insync_replicas;
  if (!enough_in_sync(status, min_insync)) {
    // As Kafka's DelayedProduce: written and committed, but the ISR shrank
    // below min.insync.replicas meanwhile.
    return fail(ErrorCode::kNotEnoughReplicasAfterAppend,
                not_enough_replicas_message(pending.topic, pending.partition, status, min_insync));
  }
  return true;
}

void Broker::complete_produce_waiters(bool) {
  for (auto it = produce_waiters_.begin(); it != produce_waiters_.end();) {
    auto next = std::next(it);
    auto& pending = it->pending;
    for (size_t i = 0; i < pending.size();) {
      auto& out = it->response.responses[pending[i].topic_index].partition_responses[pending[i].partition_index];
      if (produce_pending_done(pending[i], &out)) {
        pending[i] = pending.back();
        pending.pop_back();
      } else {
        ++i;
      }
    }
    if (pending.empty()) {
      executor_.cancel(it->timer);
      finish_produce_waiter(it, false);
    }
    it = next;
  }
}

void Broker::finish_produce_waiter(std::list<ProduceWaiter>::iterator it, bool timed_out) {
  if (timed_out) {
    for (const auto& p : it->pending) {
      auto& out = it->response.responses[p.topic_index].partition_responses[p.partition_index];
      out.error_code = protocol::to_int(ErrorCode::kRequestTimedOut);
      out.error_message = p.replicated ? "The batch was written on the leader but is not yet replicated to a "
                                         "majority of the partition's replicas"
                                       : "The batch was written but is not yet durable (eddy.acks.all.waits.for=disk)";
    }
  }
  if (!it->request->reply->connection_closed()) respond(*it->request, it->response);
  else it->request->reply->send_nothing();
  produce_waiters_.erase(it);
}

void Broker::snapshot_producer_state(bool sync) {
  const int64_t started = port::monotonic_millis();
  auto current_log = [this](const std::string& name, int32_t partition) -> storage::PartitionLog* {
    Topic* topic = topics_.find(name);
    return topic == nullptr ? nullptr : topic->local(partition);
  };
  // A replicated partition is snapshotted at most at its group's commit
  // index (the table bounds every point by the high watermark), and not
  // before the group has told it one (its log would answer by the local rule).
  auto bound = [this](const storage::PartitionLog* log) -> int64_t {
    if (replication_ == nullptr || log->replicated()) return INT64_MAX;
    auto it = partition_names_.find(log);
    const Topic* topic = it == partition_names_.end() ? nullptr : topics_.find(it->second.first);
    const auto p = it == partition_names_.end() ? size_t{0} : static_cast<size_t>(it->second.second);
    const bool several_replicas = topic != nullptr && p < topic->replicas.size() && topic->replicas[p].size() > 1;
    return several_replicas ? -1 : INT64_MAX;
  };
  size_t written = producer_state_.snapshot(current_log, port::wall_clock_millis(), sync, bound);
  if (written > 0) {
    EDDY_LOG_DEBUG("producer state of {} partitions saved in {} ms", written,
                   port::monotonic_millis() - started);
  }
}

void Broker::schedule_producer_snapshots() {
  std::weak_ptr<bool> alive = alive_;
  executor_.schedule_after(options_.producer_snapshot_interval_ms, [this, alive] {
    auto a = alive.lock();
    if (!a || !*a) return;
    snapshot_producer_state(false);
    schedule_producer_snapshots();
  });
}

}  // namespace eddy::broker
