// raft/snapshot_store.h — where a replica keeps snapshots of its group's
// state, as an interface the caller implements (FileSnapshotStore for a
// node, MemorySnapshotStore in tests). The bytes are the state machine's
// (opaque to the core); the core stores them, serves them to followers in
// chunks (FetchSnapshot) and installs the leader's.
//
// Invariants every implementation keeps:
//  - store() is atomic and durable: after a crash at any point the store
//    holds either the old latest snapshot or the new one, whole;
//  - latest() only grows: a snapshot with a smaller or equal end offset is
//    refused;
//  - only the latest snapshot is kept (the log starts at it).
#pragma once

#include <cstdint>
#include <string>

#include "port/status.h"
#include "raft/types.h"

namespace eddy::raft {

class SnapshotStore {
 public:
  virtual ~SnapshotStore() = default;

  // The newest stored snapshot; {0, 0} when none is.
  virtual SnapshotId latest() const = 0;
  // Its size in bytes; 0 when none is.
  virtual int64_t latest_size() const = 0;
  // Replaces *out with up to max_bytes of snapshot id from position.
  // kNotFound unless id == latest(); kOutOfRange for a position outside
  // [0, latest_size()].
  virtual Status read(SnapshotId id, int64_t position, size_t max_bytes, std::string* out) const = 0;
  // Stores bytes as snapshot id, which becomes latest(); the one before it
  // is removed. Fails (invalid argument, nothing changed) unless
  // id.end_offset > latest().end_offset and id.epoch >= latest().epoch and
  // id.epoch >= 1.
  virtual Status store(SnapshotId id, const std::string& bytes) = 0;
};

// Checks store()'s REQUIRES (shared by the implementations).
Status check_storable(SnapshotId latest, SnapshotId id);

}  // namespace eddy::raft
