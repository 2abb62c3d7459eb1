// raft/kafka_entries.h — log entries as the Records of a Kafka Fetch
// response: one uncompressed RecordBatch v2 per entry, as a Kafka leader
// sends its log.
//
//   every batch: baseOffset = the entry's offset, partitionLeaderEpoch = the
//     entry's epoch, exactly one record (offset delta 0), producer id -1,
//     timestamps EntryEncoding::timestamp_ms.
//   kData: the record's key is null, its value is the payload.
//   kLeaderChange: a control batch (attribute bit 0x20, not transactional)
//     holding Kafka's LeaderChange control record: key = version 0 (i16),
//     type 2 (i16); value = LeaderChangeMessage v0 with LeaderId = the
//     leader of that epoch when known (the answering leader's own epoch),
//     else -1, Voters = EntryEncoding::voters, GrantingVoters empty, when
//     the entry's payload is empty (what the core appends); otherwise the
//     payload is that message already (read back from a log, SegmentLog
//     too) and is sent as it is. Decoding checks the message and makes it
//     the entry's payload, so that a follower stores what the leader wrote.
//
// A partition group's entries (EntryForm::kBatch, raft/batch_log.h) are
// record batches already: they travel as they are, as a Kafka leader sends
// its log to its followers. Decoding checks every CRC-32C, offsets
// contiguous from the expected base (a batch covers lastOffsetDelta + 1),
// epoch >= 1; compression, producers, transactions and control batches
// are the producers' business and pass.
//
// Decoding the one-record form is strict: every batch's CRC-32C, magic 2, offsets contiguous
// from the expected base, exactly one record, uncompressed, not
// transactional, epoch >= 1, a control batch only of type LeaderChange with a
// LeaderChangeMessage that decodes, a data record with a value. Any
// violation, and bytes that end inside a batch, is a non-ok Status naming
// the batch offset and byte position; nothing is allocated from a length
// before the bytes it claims were found present.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "port/status.h"
#include "raft/types.h"

namespace eddy::raft {

// LeaderChange control record key type (Kafka's ControlRecordType).
inline constexpr int16_t kLeaderChangeControlType = 2;

// How a group's entries travel: one record per batch (the controller log)
// or each entry a producer's record batch (a partition group).
enum class EntryForm : uint8_t { kRecord, kBatch };

struct EntryEncoding {
  std::vector<NodeId> voters;  // the group's voters, for LeaderChange records
  int64_t timestamp_ms = 0;    // batch timestamps (the core keeps none)
};

// LeaderChangeMessage v0 (the generated codec): leader_id, voters, no
// granting voters.
std::vector<uint8_t> leader_change_message(NodeId leader_id, const std::vector<NodeId>& voters);
// kCorruption unless value is a LeaderChangeMessage (of any version Kafka
// writes; a newer one is read as the newest this codec knows).
Status check_leader_change_message(std::span<const uint8_t> value);

// Appends entries (the first at base_offset) to *out. leader_epoch and
// leader_id: the answering leader, written as LeaderId into the
// LeaderChange record of its own epoch when the entry carries no message.
// Fails (corruption) for a kLeaderChange payload that is not a
// LeaderChangeMessage; *out then holds the entries before it. kBatch: each
// payload is appended as it is, and must be one batch at its offset in its
// epoch covering entry.offsets (invalid argument otherwise).
Status encode_entries(Offset base_offset, std::span<const Entry> entries, Epoch leader_epoch, NodeId leader_id,
                      const EntryEncoding& encoding, std::vector<uint8_t>* out, EntryForm form = EntryForm::kRecord);

// Replaces *out with the entries of records, which must start at
// expected_base. Empty records are no entries. On failure *out is empty.
Status decode_entries(std::span<const uint8_t> records, Offset expected_base, std::vector<Entry>* out,
                      EntryForm form = EntryForm::kRecord);

}  // namespace eddy::raft
