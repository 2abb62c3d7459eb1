// Control batches: the transaction markers (COMMIT / ABORT) a transaction
// coordinator writes into every partition a transaction touched.
//
// Wire form (Kafka's EndTransactionMarker, KIP-98): a magic-2 batch with the
// transactional and control attribute bits set, the transaction's producer
// id and epoch, baseSequence -1, and exactly one record whose
//   key   = version i16 (0), type i16 (0 = ABORT, 1 = COMMIT)
//   value = version i16 (0), coordinatorEpoch i32
// Clients skip control batches when they hand records to the application;
// read_committed consumers use them to end a transaction's range.
//
// Also KRaft's LeaderChange control batch (KIP-595), which a Raft leader
// writes at the start of its epoch: the control bit alone (not
// transactional), producer id -1, one record whose
//   key   = version i16 (0), type i16 (2 = LEADER_CHANGE)
//   value = LeaderChangeMessage v0 (LeaderChangeMessage.json: flexible,
//           compact arrays, tagged-field sections)
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "protocol/record_batch.h"

namespace eddy::protocol {

enum class ControlType : int16_t { kAbort = 0, kCommit = 1 };

// The batch (base offset 0, CRC set) of one COMMIT or ABORT marker.
std::vector<uint8_t> build_control_batch(ControlType type, int64_t producer_id, int16_t producer_epoch,
                                         int32_t coordinator_epoch, int64_t timestamp_ms);

// The marker type of a control batch; nullopt when `batch` is not a control
// batch, is compressed, or its first record's key is not a marker key of a
// known version (Kafka ignores control types it does not know).
std::optional<ControlType> control_type(const RecordBatchView& batch);

// The coordinator epoch a COMMIT or ABORT marker carries (its record's
// value); nullopt when control_type(batch) is nullopt or the value is not a
// version 0 value of at least 6 bytes.
std::optional<int32_t> marker_coordinator_epoch(const RecordBatchView& batch);

// Kafka's ControlRecordType.LEADER_CHANGE.
inline constexpr int16_t kLeaderChangeControlType = 2;

// The batch (base offset 0, CRC set) of one LeaderChange record whose value
// is value (a LeaderChangeMessage: protocol/generated/leader_change_message.h;
// raft/kafka_entries.h builds and checks it).
std::vector<uint8_t> build_leader_change_batch(std::span<const uint8_t> value, int64_t timestamp_ms);

// The record value of a LeaderChange control batch; nullopt when batch is
// not one (not a control batch, compressed, or another control type).
std::optional<std::span<const uint8_t>> leader_change_value(const RecordBatchView& batch);

}  // namespace eddy::protocol
