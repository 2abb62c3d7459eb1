#include "raft/memory_log.h"

#include <algorithm>
#include <string>

namespace eddy::raft {

EpochEndOffset MemoryLog::end_offset_for_epoch(Epoch epoch) const {
  // The first entry whose epoch is larger than epoch ends the answer.
  auto after = std::upper_bound(entries_.begin(), entries_.end(), epoch,
                                [](Epoch e, const Entry& entry) { return e < entry.epoch; });
  if (after == entries_.begin()) {
    // No entry of the log answers: the start does when its epoch is small enough.
    if (start_.empty() || start_.epoch > epoch) return {0, 0};
    return {start_.epoch, start_.end_offset};
  }
  return {std::prev(after)->epoch, start_.end_offset + static_cast<Offset>(after - entries_.begin())};
}

Status MemoryLog::read(Offset offset, size_t max_entries, std::vector<Entry>* out) const {
  out->clear();
  if (offset < 0) return Status();
  if (offset < start_.end_offset) return Status::out_of_range("raft log: offset below the log start");
  for (size_t i = index(offset); i < entries_.size() && out->size() < max_entries; ++i) {
    out->push_back(entries_[i]);
  }
  return Status();
}

Status MemoryLog::append(const std::vector<Entry>& entries) {
  Status s = check_appendable(last_epoch(), entries);
  if (!s.ok()) return s;
  entries_.insert(entries_.end(), entries.begin(), entries.end());
  return Status();
}

Status MemoryLog::truncate_to(Offset offset) {
  if (offset < start_.end_offset || offset > end_offset()) {
    return Status::out_of_range("raft log: truncate to " + std::to_string(offset) + " outside [" +
                                std::to_string(start_.end_offset) + ", " + std::to_string(end_offset()) + "]");
  }
  entries_.resize(index(offset));
  durable_ = std::min(durable_, offset);
  flush_target_ = std::min(flush_target_, offset);
  return Status();
}

Status MemoryLog::flush() {
  if (async_flush_) {
    flush_target_ = end_offset();
  } else {
    durable_ = end_offset();
  }
  return Status();
}

void MemoryLog::complete_flush() { durable_ = std::max(durable_, std::min(flush_target_, end_offset())); }

Status MemoryLog::delete_before(SnapshotId id) {
  if (Status s = check_deletable(*this, id); !s.ok()) return s;
  entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(index(id.end_offset)));
  start_ = id;
  durable_ = std::max(durable_, id.end_offset);
  flush_target_ = std::max(flush_target_, id.end_offset);
  return Status();
}

Status MemoryLog::reset_to(SnapshotId id) {
  if (id.empty() || id.epoch < 1) return Status::invalid_argument("raft log: reset to an empty snapshot id");
  entries_.clear();
  start_ = id;
  durable_ = id.end_offset;
  flush_target_ = id.end_offset;
  return Status();
}

void MemoryLog::crash() { entries_.resize(index(std::max(durable_, start_.end_offset))); }

}  // namespace eddy::raft
