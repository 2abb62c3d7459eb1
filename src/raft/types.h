// raft/types.h — the vocabulary of Eddy's Raft core: ids, epochs, offsets,
// log entries. Offsets are Kafka's: the first entry is at offset 0, an
// entry covers Entry::offsets offsets (a record batch covers its records),
// a log's end offset is one past its last entry's last offset. Epoch 0 means "no epoch yet": every
// leader's epoch is >= 1, so a log entry's epoch is >= 1.
#pragma once

#include <cstdint>
#include <string>

namespace eddy::raft {

using NodeId = int32_t;
using Epoch = int32_t;
using Offset = int64_t;

inline constexpr NodeId kNoNode = -1;

// Kafka's NOT_LEADER_OR_FOLLOWER: the code of every "not the leader" Status.
inline constexpr int16_t kNotLeaderOrFollower = 6;

// What an entry is. A leader appends one kLeaderChange entry at the start of
// its epoch (Kafka's LeaderChange control batch, which every client skips):
// committing it commits every older entry below it, which is how a new
// leader satisfies Raft's "commit an entry of your own term first" rule.
enum class EntryKind : uint8_t { kData = 0, kLeaderChange = 1 };

struct Entry {
  Epoch epoch = 0;
  EntryKind kind = EntryKind::kData;
  std::string payload;  // opaque to the core
  // The offsets the entry covers, from its own: 1 in the controller log (one
  // record per batch), a record batch's lastOffsetDelta + 1 in a partition
  // group's log. >= 1; the leader-change entry covers 1.
  int32_t offsets = 1;

  friend bool operator==(const Entry&, const Entry&) = default;
};

// An epoch and the end offset of that epoch's entries in a log: Kafka's
// OffsetAndEpoch as answered by OffsetForLeaderEpoch / endOffsetForEpoch.
struct EpochEndOffset {
  Epoch epoch = 0;
  Offset end_offset = 0;

  friend bool operator==(const EpochEndOffset&, const EpochEndOffset&) = default;
};

// A snapshot of the state the entries below end_offset build, as Kafka's
// snapshot ids name it (OffsetAndEpoch): end_offset is the offset of the
// first entry it does not cover, epoch the epoch of the last one it covers.
// {0, 0}: no snapshot (a log that starts at offset 0).
struct SnapshotId {
  Offset end_offset = 0;
  Epoch epoch = 0;

  bool empty() const { return end_offset == 0; }
  friend bool operator==(const SnapshotId&, const SnapshotId&) = default;
};

}  // namespace eddy::raft
