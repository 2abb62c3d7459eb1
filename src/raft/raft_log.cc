#include "raft/raft_log.h"

#include <string>

namespace eddy::raft {

Status check_appendable(Epoch last_epoch, const std::vector<Entry>& entries) {
  Epoch previous = last_epoch;
  for (const Entry& e : entries) {
    if (e.epoch <= 0) return Status::invalid_argument("raft log: an entry's epoch must be >= 1");
    if (e.offsets < 1) return Status::invalid_argument("raft log: an entry covers at least one offset");
    if (e.epoch < previous) {
      return Status::invalid_argument("raft log: entry epoch " + std::to_string(e.epoch) + " after epoch " +
                                      std::to_string(previous));
    }
    previous = e.epoch;
  }
  return Status();
}

Status check_deletable(const RaftLog& log, SnapshotId id) {
  const Offset start = log.start().end_offset;
  if (id.end_offset <= start || id.end_offset > log.end_offset() || log.epoch_at(id.end_offset - 1) != id.epoch) {
    return Status::invalid_argument("raft log: cannot start at snapshot " + std::to_string(id.end_offset) + "-" +
                                    std::to_string(id.epoch) + ": the log holds [" + std::to_string(start) + ", " +
                                    std::to_string(log.end_offset()) + ")" +
                                    (id.end_offset > start && id.end_offset <= log.end_offset()
                                         ? " with another epoch there"
                                         : ""));
  }
  return Status();
}

}  // namespace eddy::raft
