#include "raft/quorum_state_store.h"

namespace eddy::raft {

Status MemoryQuorumStateStore::read(QuorumState* out) {
  if (!present_) return Status::not_found("raft: no quorum state");
  *out = state_;
  return Status();
}

Status MemoryQuorumStateStore::write(const QuorumState& state) {
  state_ = state;
  present_ = true;
  return Status();
}

}  // namespace eddy::raft
