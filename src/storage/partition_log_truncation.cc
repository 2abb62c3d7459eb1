// PartitionLog::truncate_to: removing a suffix of the log (README.md,
// "Truncation"). The order of the steps is what makes it crash safe; at
// every point a recovery finds a prefix of the log as it was before, and
// after the last step the log as it is after:
//   1. the flusher is told (nothing at or after the cut is durable any more;
//      an index file it is about to write for the cut segment or a later
//      one is removed again);
//   2. the later segments' files and every index file from the cut segment
//      on are removed, then the directory is synced: no longer segment or
//      stale index can make recovery read past the cut;
//   3. the cut segment's bytes from the cut on are zeroed and the file
//      synced (or, while a reader holds the file, a copy of what precedes
//      the cut is synced and renamed over it): no batch appended later can
//      be followed by a removed one;
//   4. leader-epoch-checkpoint is rewritten (durably) without the epochs
//      that began at or after the cut, only now: before step 3 a recovery
//      could still find their batches.

#include <algorithm>

#include "port/log.h"
#include "port/port.h"
#include "storage/partition_log.h"

namespace eddy::storage {

Status PartitionLog::truncate_to(int64_t offset) {
  check_owner_thread();
  if (closed_ || write_failed_ || !sync_->failure().ok()) return Status::io_error("the log is closed or failed");
  const int64_t end = log_end_offset();
  if (offset < log_start_offset_ || offset > end) {
    return Status::out_of_range("truncate to " + std::to_string(offset) + " outside [" +
                                std::to_string(log_start_offset_) + ", " + std::to_string(end) + "]");
  }
  if (offset == end) return Status();
  const size_t i = segment_for(offset);
  BatchPosition batch;
  Status s = segments_[i]->locate(offset, &batch);
  if (!s.ok()) return s;
  if (batch.info.base_offset != offset) {
    return Status::invalid_argument("truncate to " + std::to_string(offset) + ": inside the batch " +
                                    std::to_string(batch.info.base_offset) + ".." +
                                    std::to_string(batch.info.last_offset));
  }
  s = cut_segments(i, offset, batch.position);
  if (s.ok()) s = after_truncation(offset);
  if (!s.ok()) {
    // The files and the in-memory state may disagree: a reopen recovers.
    write_failed_ = true;
    EDDY_LOG_ERROR("{}: truncation to {} failed: {}", directory_, offset, s.to_string());
    return s;
  }
  ++stats_.truncations;
  EDDY_LOG_INFO("{}: truncated to offset {} (log end was {})", directory_, offset, end);
  return Status();
}

Status PartitionLog::cut_segments(size_t i, int64_t offset, uint64_t position) {
  Segment& cut = *segments_[i];
  sync_->note_truncated(cut.base_offset(), offset);
  bool directory_changed = false;
  for (size_t j = segments_.size(); j-- > i + 1;) {
    port::remove_file(index_path(segments_[j]->base_offset()));
    port::remove_file(segments_[j]->path());  // a reader keeps its open file
    directory_changed = true;
  }
  const std::string cut_index = index_path(cut.base_offset());
  if (port::path_exists(cut_index)) {
    port::remove_file(cut_index);
    directory_changed = true;
  }
  if (directory_changed) {
    std::error_code ec = port::sync_directory(directory_);
    if (ec) return Status::from_error_code(ec, "sync of directory " + directory_);
  }
  segments_.erase(segments_.begin() + static_cast<ptrdiff_t>(i) + 1, segments_.end());

  if (cut.has_readers()) return copy_held_segment(i, position);
  Status s = cut.truncate(position);
  if (!s.ok()) return s;
  std::error_code ec = cut.file()->file.sync_data();
  return ec ? Status::from_error_code(ec, "sync of " + cut.path()) : Status();
}

Status PartitionLog::copy_held_segment(size_t i, uint64_t position) {
  const Segment& held = *segments_[i];
  const std::string copy_path = held.path() + ".tmp";  // removed by open if left over
  std::unique_ptr<Segment> copy;
  Status s = Segment::create(copy_path, held.base_offset(), held.capacity(), config_.index_interval_bytes, &copy);
  if (!s.ok()) return s;
  std::vector<uint8_t> chunk(64 << 10);
  std::error_code ec;
  for (uint64_t at = 0; at < position && s.ok() && !ec;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk.size(), position - at));
    s = held.read(at, chunk.data(), n);
    if (s.ok()) ec = copy->file()->file.write_at(at, chunk.data(), n);
    at += n;
  }
  if (s.ok() && !ec) ec = copy->file()->file.sync_data();
  if (s.ok() && !ec) ec = port::rename_file(copy_path, held.path());
  if (s.ok() && !ec) ec = port::sync_directory(directory_);
  if (s.ok() && ec) s = Status::from_error_code(ec, "copy of " + held.path());
  if (!s.ok()) {
    port::remove_file(copy_path);
    return s;
  }
  std::unique_ptr<Segment> fresh =
      Segment::reuse(std::move(copy), held.path(), held.base_offset(), config_.index_interval_bytes);
  s = fresh->truncate(position);  // indexes the copied batches
  if (!s.ok()) return s;
  sync_->note_file_replaced(fresh->base_offset(), fresh->file());
  segments_[i] = std::move(fresh);
  return Status();
}

Status PartitionLog::after_truncation(int64_t offset) {
  // The replicated high watermark never exceeds the LEO.
  if (replicated()) replicated_high_watermark_ = std::min(replicated_high_watermark_, offset);
  Segment& active = *segments_.back();
  if (active.capacity() < config_.segment_bytes) {
    Status s = active.grow_to(config_.segment_bytes);
    if (!s.ok()) return s;
  }
  for (ReadHint& hint : hints_) hint = ReadHint{};
  recharge();

  if (epochs_.truncate_from(offset)) {
    Status s = persist_epochs(epochs_);
    if (!s.ok()) return s;
  }

  if (first_transactional_offset_ >= offset) {
    // Every transactional batch is gone; the next one rewrites the checkpoint.
    transactions_ = TransactionIndex();
    first_transactional_offset_ = -1;
  } else if (first_transactional_offset_ >= 0) {
    // A marker removed reopens its transaction: only the batches know where
    // it began.
    transactions_ = TransactionIndex();
    Status s = scan_all_transactions();
    if (!s.ok()) return s;
    transactions_.settle(high_watermark());
  }
  if (stable_offset_listener_) stable_offset_listener_();
  return Status();
}

}  // namespace eddy::storage
