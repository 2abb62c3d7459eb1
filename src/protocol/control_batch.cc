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

std::optional<int32_t> marker_coordinator_epoch(const RecordBatchView& batch) {
  std::optional<ControlType> type = control_type(batch);
  if (!type) return std::nullopt;
  std::optional<Record> record = control_record(batch, static_cast<int16_t>(*type));
  if (!record || !record->value.has_value() || record->value->size() < kMarkerValueSize ||
      static_cast<int16_t>(load_be16(record->value->data())) != kMarkerVersion) {
    return std::nullopt;
  }
  return static_cast<int32_t>(load_be32(record->value->data() + 2));
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
