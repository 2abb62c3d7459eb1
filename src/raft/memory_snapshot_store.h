// raft/memory_snapshot_store.h — a SnapshotStore in memory, for tests and the
// simulation. store() is atomic by construction, so a crash loses nothing.
#pragma once

#include "raft/snapshot_store.h"

namespace eddy::raft {

class MemorySnapshotStore final : public SnapshotStore {
 public:
  SnapshotId latest() const override { return id_; }
  int64_t latest_size() const override { return static_cast<int64_t>(bytes_.size()); }
  Status read(SnapshotId id, int64_t position, size_t max_bytes, std::string* out) const override;
  Status store(SnapshotId id, const std::string& bytes) override;

  const std::string& bytes() const { return bytes_; }

 private:
  SnapshotId id_;
  std::string bytes_;
};

}  // namespace eddy::raft
