#include "raft/kafka_entries.h"

#include <algorithm>
#include <string>

#include "protocol/big_endian.h"
#include "protocol/codec.h"
#include "protocol/generated/leader_change_message.h"
#include "protocol/record_batch.h"
#include "raft/batch_log.h"

namespace eddy::raft {

namespace {

using protocol::RecordBatchView;

constexpr int16_t kControlKeyVersion = 0;
constexpr int16_t kLeaderChangeMessageVersion = 0;  // what Kafka writes

int16_t load_int16(const uint8_t* p) { return static_cast<int16_t>(protocol::load_be16(p)); }

std::span<const uint8_t> as_bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

void append(std::vector<uint8_t>* out, const std::vector<uint8_t>& bytes) {
  out->insert(out->end(), bytes.begin(), bytes.end());
}

}  // namespace

std::vector<uint8_t> leader_change_message(NodeId leader_id, const std::vector<NodeId>& voters) {
  protocol::LeaderChangeMessage message;
  message.version_ = kLeaderChangeMessageVersion;
  message.leader_id = leader_id;
  for (NodeId voter : voters) message.voters.push_back({voter, {}, {}});
  protocol::OutputBuffer buffer;
  // Cannot fail: every field exists in v0.
  (void)protocol::encode(message, kLeaderChangeMessageVersion, &buffer);
  return {buffer.memory(), buffer.memory() + buffer.memory_size()};
}

Status check_leader_change_message(std::span<const uint8_t> value) {
  if (value.size() < 2) return Status::corruption("LeaderChange record without a message");
  // The message starts with its own version (Kafka writes v0; read newer ones
  // as the newest this codec knows, ignoring what follows).
  const int16_t message_version = load_int16(value.data());
  if (message_version < protocol::LeaderChangeMessage::kMinVersion) {
    return Status::corruption("LeaderChangeMessage version " + std::to_string(message_version));
  }
  protocol::LeaderChangeMessage message;
  size_t consumed = 0;
  const int16_t as = std::min(message_version, protocol::LeaderChangeMessage::kMaxVersion);
  return protocol::decode_prefix(value, as, &message, &consumed);
}

namespace {

std::vector<uint8_t> encode_entry(Offset offset, const Entry& entry, NodeId leader_change_leader,
                                  const EntryEncoding& encoding) {
  protocol::RecordBatchBuilder builder;
  builder.base_offset(offset).partition_leader_epoch(entry.epoch);
  protocol::RecordInput record;
  record.timestamp = encoding.timestamp_ms;
  if (entry.kind == EntryKind::kData) {
    record.value = as_bytes(entry.payload);
    builder.add(record);
    return builder.build();
  }
  const uint8_t key[4] = {0, kControlKeyVersion, 0, kLeaderChangeControlType};
  const std::vector<uint8_t> value =
      entry.payload.empty() ? leader_change_message(leader_change_leader, encoding.voters)
                            : std::vector<uint8_t>(entry.payload.begin(), entry.payload.end());
  record.key = std::span<const uint8_t>(key);
  record.value = std::span<const uint8_t>(value);
  builder.attributes(protocol::batch_attributes::kControl).add(record);
  return builder.build();
}

Status bad_batch(const RecordBatchView& batch, size_t position, const std::string& what) {
  return Status::corruption("raft: Fetch records: batch at offset " + std::to_string(batch.base_offset()) +
                            " (byte " + std::to_string(position) + "): " + what);
}

Status check_leader_change(const protocol::Record& record) {
  if (!record.key || record.key->size() != 4) return Status::corruption("control record key is not 4 bytes");
  const int16_t version = load_int16(record.key->data());
  const int16_t type = load_int16(record.key->data() + 2);
  if (version != kControlKeyVersion || type != kLeaderChangeControlType) {
    return Status::corruption("control record of version " + std::to_string(version) + " type " +
                              std::to_string(type) + " (only LeaderChange, type 2, belongs in a Raft log)");
  }
  if (!record.value) return Status::corruption("LeaderChange record without a value");
  return check_leader_change_message(*record.value);
}

// The one record of batch as an entry. REQUIRES: batch parsed, CRC checked.
Status decode_entry(const RecordBatchView& batch, Entry* out) {
  if (batch.record_count() != 1) {
    return Status::corruption(std::to_string(batch.record_count()) + " records (one entry per batch)");
  }
  if (batch.compression() != protocol::Compression::kNone) return Status::corruption("compressed");
  if (batch.is_transactional()) return Status::corruption("transactional");
  if (batch.partition_leader_epoch() < 1) {
    return Status::corruption("partition leader epoch " + std::to_string(batch.partition_leader_epoch()));
  }
  protocol::RecordIterator records(batch);
  protocol::Record record;
  if (!records.next(&record) || record.offset_delta != 0) return Status::corruption("malformed record");
  protocol::Record extra;
  if (records.next(&extra) || records.error() != protocol::BatchError::kOk) {
    return Status::corruption("malformed records section");
  }
  out->epoch = batch.partition_leader_epoch();
  out->payload.clear();
  if (batch.is_control()) {
    out->kind = EntryKind::kLeaderChange;
    Status s = check_leader_change(record);
    if (s.ok()) out->payload.assign(reinterpret_cast<const char*>(record.value->data()), record.value->size());
    return s;
  }
  if (!record.value) return Status::corruption("data record with a null value");
  out->kind = EntryKind::kData;
  out->payload.assign(reinterpret_cast<const char*>(record.value->data()), record.value->size());
  return Status();
}

}  // namespace

namespace {

Status encode_batch_entries(Offset base_offset, std::span<const Entry> entries, std::vector<uint8_t>* out) {
  Offset offset = base_offset;
  for (const Entry& entry : entries) {
    const auto bytes = as_bytes(entry.payload);
    RecordBatchView view;
    if (RecordBatchView::parse(bytes, &view) != protocol::BatchError::kOk || view.size() != bytes.size() ||
        view.base_offset() != offset || view.partition_leader_epoch() != entry.epoch ||
        view.last_offset_delta() + 1 != entry.offsets) {
      return Status::invalid_argument("raft: the entry at offset " + std::to_string(offset) +
                                      " is not its batch as the log holds it");
    }
    out->insert(out->end(), bytes.begin(), bytes.end());
    offset += entry.offsets;
  }
  return Status();
}

Status decode_batch_entries(std::span<const uint8_t> records, Offset expected_base, std::vector<Entry>* out) {
  out->clear();
  protocol::BatchIterator batches(records, /*verify_crc=*/true);
  RecordBatchView batch;
  Offset expected = expected_base;
  size_t position = 0;
  while (batches.next(&batch)) {
    const char* wrong = batch.base_offset() != expected          ? "is not at the expected offset"
                        : batch.partition_leader_epoch() < 1 ? "has no leader epoch"
                                                                 : nullptr;
    if (wrong != nullptr) {
      out->clear();
      return Status::corruption("raft: Fetch records: the batch at byte " + std::to_string(position) + " (offset " +
                                std::to_string(batch.base_offset()) + ", expected " + std::to_string(expected) +
                                ") " + wrong);
    }
    Entry entry;
    entry.epoch = batch.partition_leader_epoch();
    entry.kind = batch_entry_kind(batch);
    entry.offsets = batch.last_offset_delta() + 1;
    entry.payload.assign(reinterpret_cast<const char*>(batch.bytes().data()), batch.size());
    expected += entry.offsets;
    out->push_back(std::move(entry));
    position = batches.position();
  }
  if (batches.error() != protocol::BatchError::kOk) {
    out->clear();
    return Status::corruption("raft: Fetch records: batch at byte " + std::to_string(batches.position()) + " of " +
                              std::to_string(records.size()) + ": " + protocol::batch_error_name(batches.error()));
  }
  return Status();
}

}  // namespace

Status encode_entries(Offset base_offset, std::span<const Entry> entries, Epoch leader_epoch, NodeId leader_id,
                      const EntryEncoding& encoding, std::vector<uint8_t>* out, EntryForm form) {
  if (form == EntryForm::kBatch) return encode_batch_entries(base_offset, entries, out);
  Offset offset = base_offset;
  for (const Entry& entry : entries) {
    if (entry.offsets != 1) {
      // One record per batch: what the controller log holds.
      return Status::invalid_argument("raft: the entry at offset " + std::to_string(offset) + " covers " +
                                      std::to_string(entry.offsets) + " offsets; KRaft entries cover one");
    }
    if (entry.kind == EntryKind::kLeaderChange && !entry.payload.empty()) {
      const auto* p = reinterpret_cast<const uint8_t*>(entry.payload.data());
      if (Status s = check_leader_change_message({p, entry.payload.size()}); !s.ok()) {
        return Status::corruption("raft: the leader-change entry at offset " + std::to_string(offset) + ": " +
                                  s.message());
      }
    }
    const NodeId leader = entry.epoch == leader_epoch ? leader_id : kNoNode;
    append(out, encode_entry(offset, entry, leader, encoding));
    ++offset;
  }
  return Status();
}

Status decode_entries(std::span<const uint8_t> records, Offset expected_base, std::vector<Entry>* out,
                      EntryForm form) {
  if (form == EntryForm::kBatch) return decode_batch_entries(records, expected_base, out);
  out->clear();
  protocol::BatchIterator batches(records);
  RecordBatchView batch;
  Offset expected = expected_base;
  size_t position = 0;
  while (batches.next(&batch)) {
    if (batch.base_offset() != expected) {
      out->clear();
      return bad_batch(batch, position, "expected offset " + std::to_string(expected) + " (entries are contiguous)");
    }
    Entry entry;
    Status s = decode_entry(batch, &entry);
    if (!s.ok()) {
      out->clear();
      return bad_batch(batch, position, s.message());
    }
    out->push_back(std::move(entry));
    ++expected;
    position = batches.position();
  }
  if (batches.error() != protocol::BatchError::kOk) {
    out->clear();
    return Status::corruption("raft: Fetch records: batch at byte " + std::to_string(batches.position()) +
                              " of " + std::to_string(records.size()) + ": " +
                              protocol::batch_error_name(batches.error()));
  }
  return Status();
}

}  // namespace eddy::raft
