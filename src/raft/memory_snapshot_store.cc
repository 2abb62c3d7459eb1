#include "raft/memory_snapshot_store.h"

#include <algorithm>

namespace eddy::raft {

Status MemorySnapshotStore::read(SnapshotId id, int64_t position, size_t max_bytes, std::string* out) const {
  out->clear();
  if (id_.empty() || id != id_) return Status::not_found("raft snapshot: no such snapshot");
  if (position < 0 || position > latest_size()) return Status::out_of_range("raft snapshot: position out of range");
  const size_t from = static_cast<size_t>(position);
  out->assign(bytes_, from, std::min(max_bytes, bytes_.size() - from));
  return Status();
}

Status MemorySnapshotStore::store(SnapshotId id, const std::string& bytes) {
  if (Status s = check_storable(id_, id); !s.ok()) return s;
  id_ = id;
  bytes_ = bytes;
  return Status();
}

}  // namespace eddy::raft
