// PartitionLog::reset_to: dropping the whole log and starting it afresh at
// an offset X (Kafka's truncateFullyAndStartAt).
//
// What a power cut leaves is what recovery (partition_log_recovery.cc) makes
// of the files: it takes the segment files in base-offset order from the
// smallest and follows them while each ends where the next begins; the
// first that does not ends the log, and every later file is deleted. With
// no segment file left it creates one at the persisted log start; and it
// moves the log start up to log-start-offset.checkpoint, but never past the
// log end. Hence:
//   - an EMPTY segment file at X that sorts before every other segment file
//     IS the new log: recovery ends the log in it and deletes the rest;
//   - while the old first segment (base b0 < X) is there, recovery follows
//     the old segments: the old log, or a prefix of it when one of them is
//     missing (a gap ends the log), or when the new segment at X sorts
//     among them (the segment before it does not end at X, or it does and
//     the new one, empty, ends the log there).
// The switch from one to the other is one durable directory change: the
// new segment appearing before every old one (X <= b0), or the removal of
// the old first segment after every other old one below X is durably gone
// (X > b0). The steps, in this order, with what a recovery finds after a
// power cut at any point of each:
//   1. the flusher lets go of the partition (Flusher::remove waits for a
//      sync of it in progress) and its SyncState forgets every old segment
//      (note_truncated below all of them): from now on nothing writes an
//      index file for an old segment, and durable_offset() <= X.
//      Recovery: the old log.
//   2. only when log-start-offset.checkpoint names an offset above X: it
//      must be gone before the new segment can be found (once appends
//      passed it, recovery would move the new log's start up to it,
//      mid-log). Without it the old log starts at its first segment's base
//      again, below where leader-epoch-checkpoint was trimmed: so first
//      leader-epoch-checkpoint is removed and the directory synced (open
//      then rebuilds the epochs from the batch headers), then
//      log-start-offset.checkpoint, and the directory synced.
//      Recovery: the old log; its start may fall back to the first
//      segment's base, as after losing that (unsynced) checkpoint.
//   3. the new segment is created, zeroed, as "<X>.log.tmp" (open removes a
//      leftover) and renamed to "<X>.log", over the old segment at X if
//      there is one; the old segments strictly between b0 and X and the
//      index files of every old segment at or below X are removed; the
//      directory is synced.
//      Recovery, when X > b0: b0's segment is still there, so the old log or
//      a prefix of it (at least [b0, the first removed or replaced base)),
//      never a batch from X on: the new segment is empty. When X <= b0 this
//      step is the switch: the new segment sorts first.
//   4. (X > b0) b0's segment is removed and the directory synced: the
//      switch. Before the sync the removal may be undone (the prefix of
//      step 3) or kept (the new segment, durable since step 3, now sorts
//      first: the empty log at X).
//      Recovery: the empty log at X.
//   5. the old segments above X, their index files, transactions.checkpoint
//      and log-start-offset.checkpoint (now <= X: ignored) are removed and
//      the directory synced; leader-epoch-checkpoint is rewritten empty
//      (durably).
//      Recovery: the empty log at X already, whatever of this survived: the
//      later files are deleted by recovery, epochs at or past the log end
//      are dropped at open, a stale transactions.checkpoint only makes open
//      read an empty log. But appends after reset_to would change that (a
//      batch ending where a leftover later segment begins would continue
//      into it; a leftover epoch below the new log end would stay), so all
//      of it is durable before reset_to returns.
//   6. in memory: the new segment is the only one, the log starts at X, no
//      epoch, no transaction; the SyncState syncs the new segment (its
//      preallocated size) on this thread (SyncState::sync_now), which makes
//      the durable offset X and tells the durability listener; the flusher
//      takes the partition back.
//
// Readers: a FileRegion keeps its segment file open (Segment::region's
// lease). No step writes, truncates or reuses an old file: they are only
// unlinked (by remove, or by the rename over the segment at X), so a reader
// holding one reads the bytes it was given until it releases the region;
// the unlinked file's blocks are freed then (the disk briefly holds more
// than the budget charges, as when recycling skips a held file).
//
// Why a fresh file, not the ring's rename of an old one: a recycled file
// keeps its stale bytes, which recovery rejects because they carry offsets
// below the segment's base. Renamed to a base X below them (a reset below or
// inside the log), that no longer holds: a stale batch could continue the
// new log after a crash. A reset is rare; its one preallocation is not.

#include <algorithm>
#include <limits>

#include "port/log.h"
#include "port/port.h"
#include "storage/checkpoint.h"
#include "storage/partition_log.h"

namespace eddy::storage {

namespace {

// Removes path; a file already missing is fine.
Status remove_if_present(const std::string& path) {
  std::error_code ec = port::remove_file(path);
  if (!ec || ec == std::errc::no_such_file_or_directory) return Status();
  return Status::from_error_code(ec, "removal of " + path);
}

Status sync_directory(const std::string& directory) {
  std::error_code ec = port::sync_directory(directory);
  return ec ? Status::from_error_code(ec, "sync of directory " + directory) : Status();
}

}  // namespace

Status PartitionLog::reset_to(int64_t offset) {
  check_owner_thread();
  if (closed_ || write_failed_ || !sync_->failure().ok()) return Status::io_error("the log is closed or failed");
  if (offset < 0) return Status::invalid_argument("reset to offset " + std::to_string(offset) + ": below 0");
  const int64_t old_start = log_start_offset_;
  const int64_t old_end = log_end_offset();

  // Step 1. Removed from the flusher, the SyncState is this thread's alone
  // until it is added back (also after an error). A truncation "to offset
  // in a segment below every segment": every entry goes (no data to sync,
  // no index file to write), and the durable offset drops to at most offset.
  flusher_->remove(sync_);
  sync_->note_truncated(std::numeric_limits<int64_t>::min(), offset);
  std::unique_ptr<Segment> fresh;
  Status s = reset_files(offset, &fresh);
  if (s.ok()) s = after_reset(offset, std::move(fresh));
  flusher_->add(sync_);
  if (!s.ok()) {
    // The files may hold the old log, a prefix of it or the new one: a
    // reopen recovers whichever it is.
    write_failed_ = true;
    EDDY_LOG_ERROR("{}: reset to offset {} failed: {}", directory_, offset, s.to_string());
    return s;
  }
  ++stats_.resets;
  EDDY_LOG_INFO("{}: reset to offset {} (the log held {}..{})", directory_, offset, old_start, old_end);
  return Status();
}

Status PartitionLog::reset_files(int64_t offset, std::unique_ptr<Segment>* fresh) {
  // Step 2. A file that cannot be read now counts as above offset: a later
  // open may read it.
  const std::string log_start_file = directory_ + "/" + kLogStartOffsetFile;
  int64_t persisted_start = -1;
  if (port::path_exists(log_start_file) &&
      (!read_log_start_offset(directory_, &persisted_start) || persisted_start > offset)) {
    Status s = remove_if_present(directory_ + "/" + kLeaderEpochFile);
    if (s.ok()) s = sync_directory(directory_);
    if (s.ok()) s = remove_if_present(log_start_file);
    if (s.ok()) s = sync_directory(directory_);
    if (!s.ok()) return s;
  }

  // Step 3.
  const std::string path = segment_path(offset);
  const std::string temporary = path + ".tmp";
  std::unique_ptr<Segment> created;
  Status s = Segment::create(temporary, offset, config_.segment_bytes, config_.index_interval_bytes, &created);
  if (!s.ok()) return s;
  if (std::error_code ec = port::rename_file(temporary, path)) {
    port::remove_file(temporary);
    return Status::from_error_code(ec, "rename of " + temporary);
  }
  *fresh = Segment::reuse(std::move(created), path, offset, config_.index_interval_bytes);
  s = remove_if_present(index_path(offset));
  if (!s.ok()) return s;
  const int64_t first_base = segments_.front()->base_offset();
  for (const auto& segment : segments_) {
    const int64_t base = segment->base_offset();
    if (base > offset) break;
    s = remove_if_present(index_path(base));
    if (s.ok() && base > first_base && base < offset) s = remove_if_present(segment->path());
    if (!s.ok()) return s;
  }
  s = sync_directory(directory_);
  if (!s.ok()) return s;

  // Step 4.
  if (first_base < offset) {
    s = remove_if_present(segments_.front()->path());
    if (s.ok()) s = sync_directory(directory_);
    if (!s.ok()) return s;
  }

  // Step 5.
  for (const auto& segment : segments_) {
    const int64_t base = segment->base_offset();
    if (base <= offset) continue;
    s = remove_if_present(index_path(base));
    if (s.ok()) s = remove_if_present(segment->path());
    if (!s.ok()) return s;
  }
  for (const char* name : {kTransactionsFile, kLogStartOffsetFile}) {
    s = remove_if_present(directory_ + "/" + name);
    if (!s.ok()) return s;
  }
  s = sync_directory(directory_);
  if (!s.ok()) return s;
  return persist_epochs(EpochIndex());
}

Status PartitionLog::after_reset(int64_t offset, std::unique_ptr<Segment> fresh) {
  // Step 6. Destroying the old segments closes their files, except those a
  // reader's region still holds open.
  segments_.clear();
  segments_.push_back(std::move(fresh));
  log_start_offset_ = offset;
  // The replicated high watermark never exceeds the LEO (now offset).
  if (replicated()) replicated_high_watermark_ = std::min(replicated_high_watermark_, offset);
  for (ReadHint& hint : hints_) hint = ReadHint{};
  unsynced_records_ = 0;
  epochs_.clear();
  epochs_trimmed_ = false;
  transactions_ = TransactionIndex();
  first_transactional_offset_ = -1;
  recharge();

  // An entry for the new segment ending at offset: syncing it (its
  // preallocated size; the file's name is durable since step 3) raises the
  // durable offset to offset, from wherever note_truncated left it.
  const Segment& active = *segments_.back();
  sync_->note_append(active.file(), active.base_offset(), offset, port::monotonic_millis(), /*urgent=*/true);
  Status s = sync_->sync_now();
  // The last stable offset moved (to offset) without the high watermark
  // necessarily moving with it.
  if (stable_offset_listener_) stable_offset_listener_();
  return s;
}

}  // namespace eddy::storage
