#include "raft/snapshot_store.h"

#include <string>

namespace eddy::raft {

Status check_storable(SnapshotId latest, SnapshotId id) {
  if (id.epoch < 1 || id.end_offset <= latest.end_offset || id.epoch < latest.epoch) {
    return Status::invalid_argument("raft snapshot: " + std::to_string(id.end_offset) + "-" +
                                    std::to_string(id.epoch) + " does not follow the latest, " +
                                    std::to_string(latest.end_offset) + "-" + std::to_string(latest.epoch));
  }
  return Status();
}

}  // namespace eddy::raft
