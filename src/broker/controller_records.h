// The entries of a cluster's controller log: what every node must agree on,
// as Eddy's own records (their definitions: src/protocol/records/*.json,
// generated into protocol/generated/controller_records.h).
//
// An entry's payload is [type: int8][version: int16][the record, in that
// version], nothing after it. Types are never reused; a newer binary adds
// types and versions, and an older one refuses what it does not know (a
// node never skips an entry it cannot apply).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "port/status.h"
#include "protocol/generated/controller_records.h"

namespace eddy::broker {

enum class ControllerRecordType : int8_t {
  kClusterId = 1,
  kRegisterBroker = 2,
  kTopic = 3,
  kRemoveTopic = 4,
  kPartitionsAdded = 5,
  kTopicConfigs = 6,
  kGroupOffsets = 7,
  kGroupDeleted = 8,
  kOffsetsDeleted = 9,
  kProducerIds = 10,
  kStaticMember = 11,
  kStaticMemberRemoved = 12,
  kForwardCursors = 13,
  kPartitionLeaders = 14,
  kNodeFencing = 15,
  kTransactionState = 16,
  kTxnOffsetsStaged = 17,
};

// In ControllerRecordType's order (index + 1 = type).
using ControllerRecord =
    std::variant<protocol::ClusterIdRecord, protocol::RegisterBrokerRecord, protocol::TopicRecord,
                 protocol::RemoveTopicRecord, protocol::PartitionsAddedRecord, protocol::TopicConfigsRecord,
                 protocol::GroupOffsetsRecord, protocol::GroupDeletedRecord, protocol::OffsetsDeletedRecord,
                 protocol::ProducerIdsRecord, protocol::StaticMemberRecord, protocol::StaticMemberRemovedRecord,
                 protocol::ForwardCursorsRecord, protocol::PartitionLeadersRecord,
                 protocol::NodeFencingRecord, protocol::TransactionStateRecord,
                 protocol::TxnOffsetsStagedRecord>;

// The payload of record, in the newest version of its type.
std::string encode_controller_record(const ControllerRecord& record);

// Strict: an unknown type or version, a truncated record or bytes after it
// are kCorruption (naming what was found).
Status decode_controller_record(std::string_view payload, ControllerRecord* out);

// "TopicRecord" and so on, for log lines.
const char* controller_record_name(const ControllerRecord& record);

// A snapshot of the controller state (raft::SnapshotStore's bytes): the
// records that rebuild it, as
//   "EDDYCS01" [count: uint32] count x ([size: uint32][payload, as above])
//   [CRC-32C of everything before it: uint32]
// big-endian. Decoding is strict (kCorruption for a bad magic, CRC, count,
// size, a record that does not decode, or bytes after the CRC).
std::string encode_controller_snapshot(const std::vector<ControllerRecord>& records);
Status decode_controller_snapshot(std::string_view bytes, std::vector<ControllerRecord>* out);

}  // namespace eddy::broker
