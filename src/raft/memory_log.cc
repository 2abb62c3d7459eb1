#include "raft/memory_log.h"

#include <algorithm>
#include <limits>
#include <string>

namespace eddy::raft {

size_t MemoryLog::covering(Offset offset) const {
  auto after = std::upper_bound(starts_.begin(), starts_.end(), offset);
  if (after == starts_.begin() || offset >= end_offset()) return entries_.size();
  return static_cast<size_t>(after - starts_.begin()) - 1;
}

bool MemoryLog::boundary(Offset offset, size_t* index) const {
  if (offset == end_offset()) {
    *index = entries_.size();
    return true;
  }
  auto at = std::lower_bound(starts_.begin(), starts_.end(), offset);
  *index = static_cast<size_t>(at - starts_.begin());
  return at != starts_.end() && *at == offset;
}

EpochEndOffset MemoryLog::end_offset_for_epoch(Epoch epoch) const {
  // The first entry whose epoch is larger than epoch ends the answer.
  auto after = std::upper_bound(entries_.begin(), entries_.end(), epoch,
                                [](Epoch e, const Entry& entry) { return e < entry.epoch; });
  if (after == entries_.begin()) {
    // No entry of the log answers: the start does when its epoch is small enough.
    if (start_.empty() || start_.epoch > epoch) return {0, 0};
    return {start_.epoch, start_.end_offset};
  }
  const auto next = static_cast<size_t>(after - entries_.begin());
  return {std::prev(after)->epoch, next < starts_.size() ? starts_[next] : end_offset()};
}

Status MemoryLog::read(Offset offset, size_t max_entries, std::vector<Entry>* out) const {
  out->clear();
  if (offset < 0) return Status();
  if (offset < start_.end_offset) return Status::out_of_range("raft log: offset below the log start");
  if (offset >= end_offset()) return Status();
  size_t i = 0;
  if (!boundary(offset, &i)) return Status::invalid_argument("raft log: offset " + std::to_string(offset) + " is inside an entry");
  for (; i < entries_.size() && out->size() < max_entries; ++i) out->push_back(entries_[i]);
  return Status();
}

Status MemoryLog::append(const std::vector<Entry>& entries) {
  Status s = check_appendable(last_epoch(), entries);
  if (!s.ok()) return s;
  Offset end = end_offset();
  for (const Entry& e : entries) {
    if (e.offsets > std::numeric_limits<Offset>::max() - end) return Status::invalid_argument("raft log: offsets overflow");
    end += e.offsets;
  }
  for (const Entry& e : entries) {
    starts_.push_back(end_offset());
    entries_.push_back(e);
  }
  return Status();
}

Status MemoryLog::truncate_to(Offset offset) {
  size_t keep = 0;
  if (offset < start_.end_offset || offset > end_offset() || !boundary(offset, &keep)) {
    return Status::out_of_range("raft log: truncate to " + std::to_string(offset) + ": not a boundary of [" +
                                std::to_string(start_.end_offset) + ", " + std::to_string(end_offset()) + "]");
  }
  entries_.resize(keep);
  starts_.resize(keep);
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
  size_t first = 0;
  if (!boundary(id.end_offset, &first)) {
    return Status::invalid_argument("raft log: cannot start at " + std::to_string(id.end_offset) +
                                    ": inside an entry");
  }
  entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(first));
  starts_.erase(starts_.begin(), starts_.begin() + static_cast<std::ptrdiff_t>(first));
  start_ = id;
  durable_ = std::max(durable_, id.end_offset);
  flush_target_ = std::max(flush_target_, id.end_offset);
  return Status();
}

Status MemoryLog::reset_to(SnapshotId id) {
  if (id.empty() || id.epoch < 1) return Status::invalid_argument("raft log: reset to an empty snapshot id");
  entries_.clear();
  starts_.clear();
  start_ = id;
  durable_ = id.end_offset;
  flush_target_ = id.end_offset;
  return Status();
}

void MemoryLog::crash() {
  const Offset keep = std::max(durable_, start_.end_offset);
  size_t first = 0;
  (void)boundary(keep, &first);  // durable_ is always a boundary (a flushed end)
  entries_.resize(first);
  starts_.resize(first);
}

}  // namespace eddy::raft
