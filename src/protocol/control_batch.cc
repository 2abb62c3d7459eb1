#include "protocol/control_batch.h"

#include <array>

#include "protocol/big_endian.h"
#include "protocol/output_buffer.h"
#include "protocol/wire.h"

namespace eddy::protocol {

namespace {

constexpr int16_t kMarkerVersion = 0;
constexpr size_t kMarkerKeySize = 4;    // version i16, type i16
constexpr size_t kMarkerValueSize = 6;  // version i16, coordinatorEpoch i32

constexpr int16_t kLeaderChangeVersion = 0;

void write_voters(Writer& w, const std::vector<int32_t>& voters) {
  w.write_array_length(voters.size(), /*compact=*/true);
  for (int32_t id : voters) {
    w.write_int32(id);
    w.write_uvarint(0);  // the Voter's tagged fields
  }
}

void read_voters(Reader& r, std::vector<int32_t>* voters) {
  // A voter takes at least 5 bytes (id, empty tagged fields).
  const int32_t count = r.read_array_length(/*compact=*/true, 5);
  voters->clear();
  for (int32_t i = 0; i < count && r.ok(); ++i) {
    r.enter(i);
    voters->push_back(r.read_int32());
    std::vector<TaggedField> unknown;
    r.read_tagged_fields(&unknown);
    r.leave();
  }
}

// The first record of a control batch whose key is (version 0, type).
std::optional<Record> control_record(const RecordBatchView& batch, int16_t type) {
  if (!batch.is_control() || batch.compression() != Compression::kNone) return std::nullopt;
  RecordIterator records(batch);
  Record first;
  if (!records.next(&first) || !first.key.has_value() || first.key->size() < kMarkerKeySize) return std::nullopt;
  if (static_cast<int16_t>(load_be16(first.key->data())) != kMarkerVersion ||
      static_cast<int16_t>(load_be16(first.key->data() + 2)) != type) {
    return std::nullopt;
  }
  return first;
}

}  // namespace

std::vector<uint8_t> build_control_batch(ControlType type, int64_t producer_id, int16_t producer_epoch,
                                         int32_t coordinator_epoch, int64_t timestamp_ms) {
  std::array<uint8_t, kMarkerKeySize> key{};
  store_be16(key.data(), static_cast<uint16_t>(kMarkerVersion));
  store_be16(key.data() + 2, static_cast<uint16_t>(type));
  std::array<uint8_t, kMarkerValueSize> value{};
  store_be16(value.data(), static_cast<uint16_t>(kMarkerVersion));
  store_be32(value.data() + 2, static_cast<uint32_t>(coordinator_epoch));
  RecordInput record;
  record.key = std::span<const uint8_t>(key);
  record.value = std::span<const uint8_t>(value);
  record.timestamp = timestamp_ms;
  RecordBatchBuilder builder;
  builder.producer(producer_id, producer_epoch, -1)
      .attributes(batch_attributes::kTransactional | batch_attributes::kControl)
      .add(record);
  return builder.build();
}

std::optional<ControlType> control_type(const RecordBatchView& batch) {
  if (!batch.is_control() || batch.compression() != Compression::kNone) return std::nullopt;
  RecordIterator records(batch);
  Record first;
  if (!records.next(&first) || !first.key.has_value() || first.key->size() < kMarkerKeySize) return std::nullopt;
  const int16_t version = static_cast<int16_t>(load_be16(first.key->data()));
  if (version != kMarkerVersion) return std::nullopt;
  const int16_t type = static_cast<int16_t>(load_be16(first.key->data() + 2));
  if (type == static_cast<int16_t>(ControlType::kAbort)) return ControlType::kAbort;
  if (type == static_cast<int16_t>(ControlType::kCommit)) return ControlType::kCommit;
  return std::nullopt;
}

std::vector<uint8_t> encode_leader_change(const LeaderChangeMessage& message) {
  OutputBuffer out;
  Writer w(&out);
  w.write_int16(kLeaderChangeVersion);
  w.write_int32(message.leader_id);
  write_voters(w, message.voters);
  write_voters(w, message.granting_voters);
  w.write_uvarint(0);  // tagged fields
  return std::vector<uint8_t>(out.memory(), out.memory() + out.memory_size());
}

Status decode_leader_change(std::span<const uint8_t> bytes, LeaderChangeMessage* message) {
  Reader r(bytes, "LeaderChangeMessage");
  r.field("version");
  const int16_t version = r.read_int16();
  if (r.ok() && version != kLeaderChangeVersion) {
    return Status::corruption("LeaderChangeMessage: version " + std::to_string(version) + ", expected 0");
  }
  LeaderChangeMessage decoded;
  r.field("leader_id");
  decoded.leader_id = r.read_int32();
  r.field("voters");
  read_voters(r, &decoded.voters);
  r.field("granting_voters");
  read_voters(r, &decoded.granting_voters);
  r.field("tagged_fields");
  std::vector<TaggedField> unknown;
  r.read_tagged_fields(&unknown);
  if (!r.ok()) return Status::corruption(r.error());
  if (r.remaining() != 0) return Status::corruption("LeaderChangeMessage: bytes after the message");
  *message = std::move(decoded);
  return Status();
}

std::vector<uint8_t> build_leader_change_batch(std::span<const uint8_t> value, int64_t timestamp_ms) {
  std::array<uint8_t, kMarkerKeySize> key{};
  store_be16(key.data(), static_cast<uint16_t>(kMarkerVersion));
  store_be16(key.data() + 2, static_cast<uint16_t>(kLeaderChangeControlType));
  RecordInput record;
  record.key = std::span<const uint8_t>(key);
  record.value = value;
  record.timestamp = timestamp_ms;
  RecordBatchBuilder builder;
  builder.attributes(batch_attributes::kControl).add(record);
  return builder.build();
}

std::optional<std::span<const uint8_t>> leader_change_value(const RecordBatchView& batch) {
  std::optional<Record> record = control_record(batch, kLeaderChangeControlType);
  if (!record || !record->value.has_value()) return std::nullopt;
  return *record->value;
}

}  // namespace eddy::protocol
