// raft/memory_log.h — a RaftLog in memory, for tests and the simulation.
// crash() models a power cut: the entries that were never flushed vanish.
#pragma once

#include "raft/raft_log.h"

namespace eddy::raft {

class MemoryLog final : public RaftLog {
 public:
  SnapshotId start() const override { return start_; }
  Offset end_offset() const override {
    return entries_.empty() ? start_.end_offset : starts_.back() + entries_.back().offsets;
  }
  Offset durable_offset() const override { return durable_; }
  Epoch last_epoch() const override { return entries_.empty() ? start_.epoch : entries_.back().epoch; }
  Epoch epoch_at(Offset offset) const override { return entry_at(offset).epoch; }
  Offset boundary_at_or_below(Offset offset) const override {
    return offset >= end_offset() ? end_offset() : starts_.at(covering(offset));
  }
  EpochEndOffset end_offset_for_epoch(Epoch epoch) const override;
  Status read(Offset offset, size_t max_entries, std::vector<Entry>* out) const override;

  Status append(const std::vector<Entry>& entries) override;
  Status truncate_to(Offset offset) override;
  Status flush() override;
  Status delete_before(SnapshotId id) override;
  Status reset_to(SnapshotId id) override;

  // Drops every entry at or after durable_offset() (a power cut).
  void crash();
  // Asynchronous flushes: flush() only asks, complete_flush() makes what
  // the last flush() asked for durable (the simulation's slow disk).
  void set_async_flush(bool async) { async_flush_ = async; }
  void complete_flush();
  // The entries from start().end_offset on.
  const std::vector<Entry>& entries() const { return entries_; }
  // The entry covering offset. REQUIRES: start().end_offset <= offset <
  // end_offset().
  const Entry& entry_at(Offset offset) const { return entries_.at(covering(offset)); }

 private:
  // Index of the entry covering offset (entries_.size() past the end).
  size_t covering(Offset offset) const;
  // Index of the entry starting at offset, entries_.size() for the end;
  // false when offset is not a boundary.
  bool boundary(Offset offset, size_t* index) const;

  SnapshotId start_;
  std::vector<Entry> entries_;  // from start_.end_offset on
  std::vector<Offset> starts_;  // starts_[i]: the offset entries_[i] starts at
  // Entries below this offset are durable. Truncation lowers it too: the
  // truncation of a real log is itself written durably before it matters.
  Offset durable_ = 0;
  bool async_flush_ = false;
  // Asynchronous: what the last flush() asked for (lowered by truncation
  // like durable_, so that it never covers entries appended after it).
  Offset flush_target_ = 0;
};

}  // namespace eddy::raft
