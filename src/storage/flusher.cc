#include "storage/flusher.h"

#include <algorithm>
#include <chrono>

#include "port/log.h"
#include "port/port.h"
#include "storage/log_config.h"

namespace eddy::storage {

// ---------------------------------------------------------------------------
// SyncState
// ---------------------------------------------------------------------------

SyncState::SyncState(std::string directory, int64_t durable_offset)
    : directory_(std::move(directory)), flush_interval_ms_(kNever), durable_offset_(durable_offset) {}

bool SyncState::note_append(const std::shared_ptr<SegmentFile>& file, int64_t segment_base, int64_t end_offset,
                            int64_t now_ms, bool urgent) {
  port::MutexLock lock(mu_);
  if (unsynced_.empty() || unsynced_.back().segment_base != segment_base) {
    unsynced_.push_back(Unsynced{file, segment_base, end_offset, nullptr, {}});
  } else {
    unsynced_.back().end_offset = end_offset;
  }
  bool deadline_starts = false;
  if (first_unsynced_ms_ < 0) {
    first_unsynced_ms_ = now_ms;
    deadline_starts = flush_interval_ms_ != kNever;
  }
  urgent_ = urgent_ || urgent;
  return urgent || deadline_starts;
}

void SyncState::note_sealed(int64_t segment_base, std::shared_ptr<const SegmentIndex> index, std::string index_path) {
  port::MutexLock lock(mu_);
  for (Unsynced& u : unsynced_) {
    if (u.segment_base == segment_base) {
      u.sealed_index = std::move(index);
      u.index_path = std::move(index_path);
      urgent_ = true;
      return;
    }
  }
  // Already durable: only the index file remains to be written. An entry
  // with end_offset at the durable point makes the flusher write it.
  unsynced_.push_front(Unsynced{nullptr, segment_base, durable_offset(), std::move(index), std::move(index_path)});
  urgent_ = true;
}

void SyncState::note_retired_below(int64_t base) {
  port::MutexLock lock(mu_);
  retired_below_ = std::max(retired_below_, base);
}

void SyncState::note_truncated(int64_t segment_base, int64_t end_offset) {
  port::MutexLock lock(mu_);
  std::erase_if(unsynced_, [&](const Unsynced& u) {
    // Later segments are gone; an index-only entry of this one is stale.
    return u.segment_base > segment_base || (u.segment_base == segment_base && u.file == nullptr);
  });
  for (Unsynced& u : unsynced_) {
    if (u.segment_base != segment_base) continue;
    u.end_offset = std::min(u.end_offset, end_offset);
    u.sealed_index = nullptr;
    u.index_path.clear();
  }
  if (unsynced_.empty()) first_unsynced_ms_ = -1;
  ++truncations_;
  truncated_end_ = std::min(truncated_end_, end_offset);
  truncated_segment_ = std::min(truncated_segment_, segment_base);
  durable_offset_.store(std::min(durable_offset(), end_offset), std::memory_order_release);
}

void SyncState::note_file_replaced(int64_t segment_base, const std::shared_ptr<SegmentFile>& file) {
  port::MutexLock lock(mu_);
  for (Unsynced& u : unsynced_) {
    if (u.segment_base == segment_base && u.file != nullptr) u.file = file;
  }
}

void SyncState::note_directory_changed() {
  port::MutexLock lock(mu_);
  directory_dirty_ = true;
}

void SyncState::request_sync() {
  port::MutexLock lock(mu_);
  urgent_ = true;
}

void SyncState::set_flush_interval_ms(int64_t interval_ms) {
  port::MutexLock lock(mu_);
  flush_interval_ms_ = interval_ms;
}

void SyncState::set_listener(DurabilityListener listener) {
  auto shared = listener ? std::make_shared<const DurabilityListener>(std::move(listener)) : nullptr;
  port::MutexLock lock(mu_);
  listener_ = std::move(shared);
}

bool SyncState::wait_durable(int64_t offset, int64_t timeout_ms) {
  port::MutexLock lock(mu_);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (durable_offset() < offset && !failed_.load(std::memory_order_acquire)) {
    if (lock.wait_until(durable_cv_, deadline) == std::cv_status::timeout) break;
  }
  return durable_offset() >= offset;
}

bool SyncState::due(int64_t now_ms, int64_t* next_deadline_ms) {
  port::MutexLock lock(mu_);
  if (urgent_) return true;
  if (directory_dirty_ && unsynced_.empty()) return true;
  if (first_unsynced_ms_ < 0 || flush_interval_ms_ >= kNever - first_unsynced_ms_) return false;
  int64_t deadline = first_unsynced_ms_ + flush_interval_ms_;
  if (deadline <= now_ms) return true;
  *next_deadline_ms = std::min(*next_deadline_ms, deadline);
  return false;
}

bool SyncState::take_work(Work* work) {
  port::MutexLock lock(mu_);
  work->segments.assign(unsynced_.begin(), unsynced_.end());
  work->directory = directory_dirty_;
  work->taken_ms = port::monotonic_millis();
  work->truncations = truncations_;
  truncated_end_ = std::numeric_limits<int64_t>::max();
  truncated_segment_ = std::numeric_limits<int64_t>::max();
  directory_dirty_ = false;
  urgent_ = false;
  return !work->segments.empty() || work->directory;
}

Status SyncState::run_work(const Work& work, metrics::LatencyHistogram* fsync_latency) {
  if (failed_.load(std::memory_order_acquire)) return Status::io_error("an earlier sync of " + directory_ + " failed");
  Status status;
  if (work.directory) {
    std::error_code ec = port::sync_directory(directory_);
    if (ec) {
      EDDY_LOG_ERROR("sync of directory {} failed: {}", directory_, port::error_message(ec));
      status = Status::from_error_code(ec, "sync of directory " + directory_);
    }
  }
  for (const Unsynced& u : work.segments) {
    if (!status.ok() || u.file == nullptr) continue;
    const int64_t started = port::monotonic_nanos();
    std::error_code ec = u.file->file.sync_data();
    if (fsync_latency != nullptr) fsync_latency->observe_nanos(port::monotonic_nanos() - started);
    syncs_.fetch_add(1, std::memory_order_relaxed);
    if (ec) {
      EDDY_LOG_ERROR("fdatasync of segment {} in {} failed: {}", u.segment_base, directory_,
                     port::error_message(ec));
      status = Status::from_error_code(ec, "fdatasync of a segment in " + directory_);
    }
  }

  std::shared_ptr<const DurabilityListener> listener;
  int64_t durable = 0;
  bool truncated = false;
  {
    port::MutexLock lock(mu_);
    listener = listener_;
    // Read under mu_: a truncation may have lowered it meanwhile.
    durable = durable_offset();
    truncated = truncations_ != work.truncations;
    if (!status.ok()) {
      failed_.store(true, std::memory_order_release);
    } else if (truncated) {
      // What this work synced below the truncation point is durable; the
      // entries stay (what was appended since is not covered by this work).
      if (!work.segments.empty()) {
        durable = std::max(durable, std::min(work.segments.back().end_offset, truncated_end_));
      }
      durable_offset_.store(durable, std::memory_order_release);
    } else if (!work.segments.empty()) {
      // Drop the entries synced up to their end. An entry the owner extended
      // meanwhile (same segment, larger end) stays, with its new end.
      // An entry sealed meanwhile stays too, so that its index gets written.
      for (const Unsynced& done : work.segments) {
        if (unsynced_.empty() || unsynced_.front().segment_base != done.segment_base) break;
        if (unsynced_.front().end_offset != done.end_offset) break;
        if (unsynced_.front().sealed_index != done.sealed_index) break;
        unsynced_.pop_front();
      }
      first_unsynced_ms_ = unsynced_.empty() ? -1 : work.taken_ms;
      durable = std::max(durable, work.segments.back().end_offset);
      durable_offset_.store(durable, std::memory_order_release);
    }
  }
  durable_cv_.notify_all();

  if (status.ok()) write_sealed_indexes(work);
  if (listener) (*listener)(durable, status);
  return status;
}

void SyncState::write_sealed_indexes(const Work& work) {
  // The sealed segments' data is durable: their index files may now be
  // trusted by recovery.
  for (const Unsynced& u : work.segments) {
    if (u.sealed_index == nullptr) continue;
    Status s = write_index_file(u.index_path, *u.sealed_index);
    if (!s.ok()) {
      // Not fatal: without its index file the segment is rescanned.
      EDDY_LOG_WARN("cannot write index file {}: {}", u.index_path, s.to_string());
    }
    // Checked after the write: the owner raises retired_below_ before it
    // removes the index files of retired segments, so a file written too
    // late is always caught here.
    bool retired = false;
    bool truncated_away = false;
    {
      port::MutexLock lock(mu_);
      retired = u.segment_base < retired_below_;
      truncated_away = truncations_ != work.truncations && u.segment_base >= truncated_segment_;
    }
    if (retired || truncated_away) port::remove_file(u.index_path);
    // The segment holds other batches now: its old index must not come
    // back after a power cut (the owner synced its own removal already).
    if (truncated_away) (void)port::sync_directory(directory_);
  }
}

Status SyncState::sync_now() {
  Work work;
  if (!take_work(&work)) return failure();
  return run_work(work, nullptr);
}

// ---------------------------------------------------------------------------
// Flusher
// ---------------------------------------------------------------------------

Flusher::Flusher() = default;

Flusher::~Flusher() { stop(); }

void Flusher::start() {
  port::MutexLock lock(mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void Flusher::stop() {
  {
    port::MutexLock lock(mu_);
    if (!thread_.joinable()) return;
    stopping_ = true;
  }
  wake_cv_.notify_all();
  thread_.join();
}

void Flusher::add(std::shared_ptr<SyncState> state) {
  {
    port::MutexLock lock(mu_);
    states_.push_back(std::move(state));
    woken_ = true;
  }
  wake_cv_.notify_one();
}

void Flusher::remove(const std::shared_ptr<SyncState>& state) {
  port::MutexLock lock(mu_);
  while (busy_ == state.get()) lock.wait(idle_cv_);
  states_.erase(std::remove(states_.begin(), states_.end(), state), states_.end());
}

void Flusher::wake() {
  {
    port::MutexLock lock(mu_);
    if (woken_) return;
    woken_ = true;
  }
  wake_cv_.notify_one();
}

bool Flusher::is_added(const SyncState* state) const {
  // Linear: a gateway has tens of partitions, and this runs once per
  // partition per round.
  return std::any_of(states_.begin(), states_.end(), [state](const auto& s) { return s.get() == state; });
}

void Flusher::run() {
  port::MutexLock lock(mu_);
  for (;;) {
    bool stopping = stopping_;
    woken_ = false;
    int64_t now = port::monotonic_millis();
    int64_t next_deadline = kNever;
    // A round: every partition that is due (or, when stopping, that has
    // anything pending) gets one sync covering all it appended so far.
    std::vector<std::shared_ptr<SyncState>> round = states_;
    for (const std::shared_ptr<SyncState>& state : round) {
      if (!is_added(state.get())) continue;  // removed while we were syncing another
      if (!stopping && !state->due(now, &next_deadline)) continue;
      SyncState::Work work;
      if (!state->take_work(&work)) continue;
      busy_ = state.get();
      lock.unlock();
      // Ignored on purpose: run_work hands its status to the partition's
      // durability listener and marks the partition failed; only sync_now's
      // caller wants it returned as well.
      (void)state->run_work(work, &fsync_latency_);
      lock.lock();
      busy_ = nullptr;
      idle_cv_.notify_all();
    }
    rounds_.fetch_add(1, std::memory_order_relaxed);
    if (stopping) return;
    if (woken_ || stopping_) continue;
    if (next_deadline == kNever) {
      while (!woken_ && !stopping_) lock.wait(wake_cv_);
    } else {
      auto wait = std::chrono::milliseconds(std::max<int64_t>(next_deadline - port::monotonic_millis(), 1));
      const auto until = std::chrono::steady_clock::now() + wait;
      while (!woken_ && !stopping_) {
        if (lock.wait_until(wake_cv_, until) == std::cv_status::timeout) break;
      }
    }
  }
}

}  // namespace eddy::storage
