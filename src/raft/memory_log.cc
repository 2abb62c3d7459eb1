#include "raft/memory_log.h"

#include <algorithm>
#include <string>

namespace eddy::raft {

Status check_appendable(Epoch last_epoch, const std::vector<Entry>& entries) {
  Epoch previous = last_epoch;
  for (const Entry& e : entries) {
    if (e.epoch <= 0) return Status::invalid_argument("raft log: an entry's epoch must be >= 1");
    if (e.epoch < previous) {
      return Status::invalid_argument("raft log: entry epoch " + std::to_string(e.epoch) + " after epoch " +
                                      std::to_string(previous));
    }
    previous = e.epoch;
  }
  return Status();
}

EpochEndOffset MemoryLog::end_offset_for_epoch(Epoch epoch) const {
  // The first entry whose epoch is larger than epoch ends the answer.
  auto after = std::upper_bound(entries_.begin(), entries_.end(), epoch,
                                [](Epoch e, const Entry& entry) { return e < entry.epoch; });
  if (after == entries_.begin()) return {0, 0};
  return {std::prev(after)->epoch, static_cast<Offset>(after - entries_.begin())};
}

Status MemoryLog::read(Offset offset, size_t max_entries, std::vector<Entry>* out) const {
  out->clear();
  if (offset < 0) return Status();
  for (size_t i = static_cast<size_t>(offset); i < entries_.size() && out->size() < max_entries; ++i) {
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
  if (offset < 0 || offset > end_offset()) {
    return Status::out_of_range("raft log: truncate to " + std::to_string(offset) + " outside [0, " +
                                std::to_string(end_offset()) + "]");
  }
  entries_.resize(static_cast<size_t>(offset));
  durable_ = std::min(durable_, offset);
  return Status();
}

Status MemoryLog::flush() {
  durable_ = end_offset();
  return Status();
}

void MemoryLog::crash() { entries_.resize(static_cast<size_t>(durable_)); }

}  // namespace eddy::raft
