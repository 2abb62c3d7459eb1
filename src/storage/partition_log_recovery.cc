// PartitionLog::recover: how a partition's files become a log again when it
// is opened (README.md, "Recovery"). Per segment, oldest first: a sealed
// segment (or the active one after a clean shutdown) whose index file checks
// out is trusted as it is; any other is scanned batch by batch
// (recovery.h). The log ends in the first segment whose scan stops short
// of the next segment's base offset: what follows its last valid batch is
// zeroed and the later segments are deleted.
//
// Invariant on success: every byte the log now holds is durable (scanned
// data is synced before it can be reported durable), no checkpoint or
// active-segment index file survives that appends would make stale, and
// the directory entries are durable.

#include "port/log.h"
#include "port/port.h"
#include "storage/checkpoint.h"
#include "storage/partition_log.h"
#include "storage/recovery.h"

namespace eddy::storage {

struct PartitionLog::RecoveryWork {
  std::vector<Segment*> scanned;         // their data must be made durable
  std::vector<Segment*> sealed_scanned;  // and their index files written
  bool directory_changed = false;
};

Status PartitionLog::recover(const CleanShutdown* clean, int64_t persisted_log_start) {
  recovery_.clean = clean != nullptr;
  RecoveryWork work;
  for (size_t i = 0; i < segments_.size(); ++i) {
    if (trust_index_file(i, clean)) continue;
    if (i + 1 == segments_.size()) recovery_.clean = false;
    bool log_ends_here = false;
    Status s = scan_for_recovery(i, &work, &log_ends_here);
    if (!s.ok()) return s;
    if (log_ends_here) break;
  }
  return finish_recovery(persisted_log_start, &work);
}

bool PartitionLog::trust_index_file(size_t i, const CleanShutdown* clean) {
  Segment& segment = *segments_[i];
  const bool last = i + 1 == segments_.size();
  if (last && clean == nullptr) return false;
  // Sealed segments (and the active one after a clean shutdown) have an
  // index file written after their data was durable.
  const int64_t base = segment.base_offset();
  const uint32_t interval = config_.index_interval_bytes;
  SegmentIndex index(base, interval);
  if (!read_index_file(index_path(base), base, interval, &index) ||
      !verify_indexed_segment(segment.file()->file, segment.capacity(), index)) {
    return false;
  }
  const bool fits = last ? clean->active_base_offset == base && clean->next_offset == index.next_offset() &&
                               static_cast<uint64_t>(clean->end_position) == index.end_position()
                         : index.next_offset() == segments_[i + 1]->base_offset();
  if (!fits) return false;
  segment.set_index(std::move(index));
  ++recovery_.segments_trusted;
  return true;
}

Status PartitionLog::scan_for_recovery(size_t i, RecoveryWork* work, bool* log_ends_here) {
  Segment& segment = *segments_[i];
  const int64_t base = segment.base_offset();
  SegmentIndex index(base, config_.index_interval_bytes);
  ScanOutcome outcome;
  Status s = scan_segment(segment.file()->file, segment.capacity(), &index, &outcome);
  if (!s.ok()) return s;
  recovery_.bytes_scanned += outcome.bytes_read;
  ++recovery_.segments_scanned;
  if (outcome.malformed_batches > 0) {
    EDDY_LOG_WARN("{}: segment {} holds {} batches with malformed records (the first at offset {}"
                  "), stored before record validation: consumers may fail on them; the forwarder skips them",
                  directory_, segment_file_name(base), outcome.malformed_batches,
                  outcome.first_malformed_offset);
  }
  segment.set_index(std::move(index));
  work->scanned.push_back(&segment);
  if (i + 1 < segments_.size() && segment.next_offset() == segments_[i + 1]->base_offset()) {
    work->sealed_scanned.push_back(&segment);
    return Status();
  }
  *log_ends_here = true;
  return end_log_in(i, outcome, work);
}

Status PartitionLog::end_log_in(size_t i, const ScanOutcome& outcome, RecoveryWork* work) {
  // Zero what follows the last valid batch, so that nothing there can ever
  // be taken for data (a batch written later at this position may be
  // shorter than what it overwrites), and delete the segments after it.
  Segment& segment = *segments_[i];
  uint64_t dropped = 0;
  Status s = zero_tail(segment.file()->file, segment.end_position(), segment.capacity(), &dropped,
                       &recovery_.bytes_zero_checked, &recovery_.bytes_zeroed);
  if (!s.ok()) return s;
  recovery_.bytes_dropped += dropped;
  const size_t discarded = segments_.size() - i - 1;
  uint64_t discarded_bytes = 0;
  for (size_t j = i + 1; j < segments_.size(); ++j) {
    discarded_bytes += segments_[j]->capacity();
    port::remove_file(segments_[j]->path());
    port::remove_file(index_path(segments_[j]->base_offset()));
  }
  if (discarded > 0) {
    segments_.erase(segments_.begin() + static_cast<ptrdiff_t>(i) + 1, segments_.end());
    work->directory_changed = true;
    recovery_.segments_discarded = discarded;
  }
  if (dropped > 0 || discarded > 0) {
    EDDY_LOG_WARN("{}: recovery dropped {} bytes after offset {} in segment {} at position {}"
                  " ({}); {} later segment files ({} bytes) discarded",
                  directory_, dropped, segment.next_offset(), segment_file_name(segment.base_offset()),
                  segment.end_position(),
                  outcome.stop_reason.empty() ? "zeros, then non-zero bytes" : outcome.stop_reason.c_str(), discarded,
                  discarded_bytes);
  }
  return Status();
}

Status PartitionLog::finish_recovery(int64_t persisted_log_start, RecoveryWork* work) {
  if (segments_.empty()) {
    int64_t base = std::max<int64_t>(0, persisted_log_start);
    std::unique_ptr<Segment> segment;
    Status s = Segment::create(segment_path(base), base, config_.segment_bytes, config_.index_interval_bytes,
                               &segment);
    if (!s.ok()) return s;
    segments_.push_back(std::move(segment));
    work->directory_changed = true;
  }
  Segment& active = *segments_.back();
  if (active.capacity() < config_.segment_bytes) {
    Status s = active.grow_to(config_.segment_bytes);
    if (!s.ok()) return s;
  }

  // What the scan accepted may still sit only in the page cache (after a
  // process crash): make it durable before it is reported durable.
  for (Segment* segment : work->scanned) {
    std::error_code ec = segment->file()->file.sync_data();
    if (ec) {
      EDDY_LOG_ERROR("{}: sync during recovery failed: {}", directory_, port::error_message(ec));
      return Status::from_error_code(ec);
    }
  }
  // Ignored on purpose, as in the flusher: without its index file a segment
  // is rescanned at the next open.
  for (Segment* segment : work->sealed_scanned) {
    (void)write_index_file(index_path(segment->base_offset()), segment->index());
  }

  // The checkpoint and the active segment's index describe the log as it was
  // closed; once appends resume they would lie. Remove both durably first.
  for (const std::string& stale : {directory_ + "/" + kCleanShutdownFile, index_path(active.base_offset())}) {
    if (!port::path_exists(stale)) continue;
    port::remove_file(stale);
    work->directory_changed = true;
  }
  if (work->directory_changed) {
    std::error_code ec = port::sync_directory(directory_);
    if (ec) return Status::from_error_code(ec);
  }

  log_start_offset_ = segments_.front()->base_offset();
  if (persisted_log_start > log_start_offset_) log_start_offset_ = std::min(persisted_log_start, log_end_offset());
  return Status();
}

bool PartitionLog::load_transactions_snapshot() {
  const std::string path = directory_ + "/" + kTransactionsSnapshotFile;
  if (!port::path_exists(path)) return false;
  int64_t end = -1;
  std::vector<uint8_t> state;
  // Only a clean close writes it, just before its checkpoint; appends after
  // this open make it stale: removed (a copy a power cut brings back is
  // ignored for want of a clean-shutdown checkpoint that matches).
  const bool usable = recovery_.clean && read_transactions_snapshot(directory_, &end, &state) &&
                      end == log_end_offset() && transactions_.decode(state);
  port::remove_file(path);
  if (usable) transactions_.trim_before(log_start_offset_);
  return usable;
}

Status PartitionLog::load_transactions() {
  int64_t first = -1;
  if (!read_first_transactional_offset(directory_, &first)) {
    // Present but unreadable (it is replaced atomically, so only damage
    // does that): look everywhere rather than miss a transaction.
    if (!port::path_exists(directory_ + "/" + kTransactionsFile)) return Status();
    first = 0;
  }
  // A power cut took back the batch the checkpoint names (and all after it):
  // the log holds no transactional batch, and the next one appended
  // rewrites the checkpoint before it is written.
  if (first >= log_end_offset()) return Status();
  first_transactional_offset_ = first;
  if (load_transactions_snapshot()) return Status();
  Status s = scan_all_transactions();
  if (!s.ok()) return s;
  // Everything recovery kept is durable: the high watermark is the log end.
  transactions_.settle(log_end_offset());
  if (transactions_.ongoing_count() > 0 || transactions_.has_aborted()) {
    EDDY_LOG_INFO("{}: {} open transactions, {} aborted ones kept ({} bytes of batch headers read)", directory_,
                  transactions_.ongoing_count(), transactions_.aborted().size(),
                  recovery_.bytes_scanned_for_transactions);
  }
  return Status();
}

Status PartitionLog::scan_all_transactions() {
  for (const auto& segment : segments_) {
    if (segment->next_offset() <= first_transactional_offset_) continue;
    Status s = scan_transactions(*segment, &transactions_, &recovery_.bytes_scanned_for_transactions);
    if (s.code() == Status::Code::kCorruption) {
      // Inside a segment trusted by its index file (recovery checked its
      // first and last batches only): readers cannot get past that point
      // either. The rest of the partition still counts.
      EDDY_LOG_WARN("{}: segment {}: {}: transactions after that point in it are not known",
                    directory_, segment_file_name(segment->base_offset()), s.message());
    } else if (!s.ok()) {
      EDDY_LOG_ERROR("{}: cannot rebuild the transaction index from segment {}: {}", directory_,
                     segment_file_name(segment->base_offset()), s.to_string());
      return s;
    }
  }
  transactions_.trim_before(log_start_offset_);
  return Status();
}

Status PartitionLog::load_epochs() {
  std::vector<int64_t> fields;
  const bool from_file = read_leader_epochs(directory_, &fields) && epochs_.from_fields(fields);
  if (!from_file) {
    epochs_.clear();
    // An older version's partition (or a damaged file): the batch headers
    // say it. A partition without batches has nothing to say.
    for (const auto& segment : segments_) {
      if (segment->next_offset() <= log_start_offset_) continue;
      Status s = scan_epochs(*segment, &epochs_, &recovery_.bytes_scanned_for_epochs);
      if (s.code() == Status::Code::kCorruption) {
        // As for transactions: readers cannot get past that point either.
        EDDY_LOG_WARN("{}: segment {}: {}: leader epochs after that point in it are not known", directory_,
                      segment_file_name(segment->base_offset()), s.message());
      } else if (!s.ok()) {
        return s;
      }
    }
  }
  // Entries for batches a power cut took back, or below the log start.
  bool changed = epochs_.truncate_from(log_end_offset());
  changed |= epochs_.trim_before(log_start_offset_);
  if (log_start_offset_ >= log_end_offset()) changed |= epochs_.truncate_from(log_start_offset_);
  // Rewritten before anything is appended: a later batch of a smaller
  // epoch must not be taken for one of an epoch the file still lists.
  if (changed || (!from_file && !epochs_.entries().empty())) return persist_epochs(epochs_);
  return Status();
}

}  // namespace eddy::storage
