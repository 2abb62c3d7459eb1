// Durability: the flusher thread runs fdatasync for every partition, with
// group commit (whatever was appended before a sync starts is covered by it,
// however many appends that is), and tells each partition how far its data
// is durable.
//
// Threads. A partition's owner thread (the reactor) appends to the page cache
// and records what it wrote in the partition's SyncState. The flusher thread
// is the only one that calls sync_data()/sync_directory() while a partition
// is registered. SyncState is the whole of what the two threads share; it is
// guarded by its mutex, except durable_offset which is an atomic written
// under the mutex (by the flusher, and by a truncation that lowers it).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "metrics/histogram.h"
#include "port/mutex.h"
#include "port/status.h"
#include "port/thread_annotations.h"
#include "storage/segment.h"
#include "storage/segment_index.h"

namespace eddy::storage {

// Called on the FLUSHER thread after each sync round of the partition (and
// once with an error status if a sync fails): every offset below
// durable_offset is on disk. Must be quick and thread-safe; the broker posts
// it to its reactor. PartitionLog::close() makes its final call on the
// closing thread.
using DurabilityListener = std::function<void(int64_t durable_offset, Status status)>;

class SyncState {
 public:
  SyncState(std::string directory, int64_t durable_offset);

  // ---- Owner thread ----
  // Data up to end_offset (exclusive) was written to the segment file with
  // base segment_base. urgent: sync as soon as possible (group commit);
  // otherwise only when flush.ms has passed since the first unsynced append.
  // Returns true when the flusher must be woken (urgent, or a flush.ms
  // deadline starts).
  bool note_append(const std::shared_ptr<SegmentFile>& file, int64_t segment_base, int64_t end_offset,
                   int64_t now_ms, bool urgent) EXCLUDES(mu_);
  // The segment segment_base receives no more appends. Once its data is
  // durable the flusher writes index (immutable from now on) to index_path.
  void note_sealed(int64_t segment_base, std::shared_ptr<const SegmentIndex> index, std::string index_path)
      EXCLUDES(mu_);
  // Segments below base are gone (recycled or dropped) and the owner is about
  // to remove their index files: one the flusher writes for them afterwards
  // is removed again, so that no stale index file outlives its segment.
  // base never decreases.
  void note_retired_below(int64_t base) EXCLUDES(mu_);
  // The log was truncated to end_offset, which lies in the segment
  // segment_base, the active one again: later segments are gone, that one
  // is no longer sealed, and nothing at or after end_offset is durable any
  // more (durable_offset() drops to at most end_offset). Work the flusher
  // took before this call raises the durable offset no further than
  // end_offset, and an index file it writes from that work for a segment
  // at or after segment_base is removed again (durably): the owner removes
  // those index files right after this call.
  void note_truncated(int64_t segment_base, int64_t end_offset) EXCLUDES(mu_);
  // The segment segment_base now lives in file (a truncation copied it away
  // from a file a reader holds): what is still to be synced of it is
  // synced there.
  void note_file_replaced(int64_t segment_base, const std::shared_ptr<SegmentFile>& file) EXCLUDES(mu_);
  // A file was created or renamed in the directory: sync it before the next
  // durability report.
  void note_directory_changed() EXCLUDES(mu_);
  // Asks for a sync of everything appended so far.
  void request_sync() EXCLUDES(mu_);
  void set_flush_interval_ms(int64_t interval_ms) EXCLUDES(mu_);
  // Syncs everything still unsynced on the calling thread. REQUIRES the state
  // is not registered with a running flusher (clean shutdown).
  Status sync_now() EXCLUDES(mu_);

  // ---- Any thread ----
  int64_t durable_offset() const { return durable_offset_.load(std::memory_order_acquire); }
  // kIOError after a failed sync; the partition then refuses appends.
  Status failure() const { return failed_.load(std::memory_order_acquire) ? Status::io_error("a sync failed") : Status(); }
  // Blocks until durable_offset() >= offset or the timeout; false on timeout
  // or failure. Not for the reactor: tests, tools, shutdown.
  bool wait_durable(int64_t offset, int64_t timeout_ms) EXCLUDES(mu_);
  void set_listener(DurabilityListener listener) EXCLUDES(mu_);
  // fdatasync calls made for this partition.
  uint64_t syncs() const { return syncs_.load(std::memory_order_relaxed); }

 private:
  friend class Flusher;

  struct Unsynced {
    std::shared_ptr<SegmentFile> file;
    int64_t segment_base;
    int64_t end_offset;
    std::shared_ptr<const SegmentIndex> sealed_index;  // set once sealed
    std::string index_path;
  };
  struct Work {
    std::vector<Unsynced> segments;
    bool directory = false;
    int64_t taken_ms = 0;
    uint64_t truncations = 0;  // truncations_ when taken
  };

  // Flusher side. run_work times each fdatasync into fsync_latency when
  // given (the flusher's histogram; nullptr from sync_now, whose thread is
  // not that histogram's writer).
  bool due(int64_t now_ms, int64_t* next_deadline_ms) EXCLUDES(mu_);
  bool take_work(Work* work) EXCLUDES(mu_);
  Status run_work(const Work& work, metrics::LatencyHistogram* fsync_latency) EXCLUDES(mu_);
  // After run_work synced work: the index files of the sealed segments in it.
  void write_sealed_indexes(const Work& work) EXCLUDES(mu_);

  const std::string directory_;
  mutable port::Mutex mu_;
  std::condition_variable durable_cv_;
  // Guarded by mu_. Invariant: every segment holding an offset in
  // [durable_offset, last appended offset] appears in unsynced_, in offset
  // order, with the end of what was appended to it; the flusher removes an
  // entry only after syncing it up to that end.
  std::deque<Unsynced> unsynced_ GUARDED_BY(mu_);
  bool directory_dirty_ GUARDED_BY(mu_) = false;
  bool urgent_ GUARDED_BY(mu_) = false;
  // Index files of segments with a smaller base are stale.
  int64_t retired_below_ GUARDED_BY(mu_) = std::numeric_limits<int64_t>::min();
  int64_t first_unsynced_ms_ GUARDED_BY(mu_) = -1;  // -1: nothing unsynced
  // note_truncated calls so far, and the smallest end offset and segment
  // base they named since the last take_work (at most one work is in
  // flight: the flusher's, or sync_now's once the state is removed).
  uint64_t truncations_ GUARDED_BY(mu_) = 0;
  int64_t truncated_end_ GUARDED_BY(mu_) = std::numeric_limits<int64_t>::max();
  int64_t truncated_segment_ GUARDED_BY(mu_) = std::numeric_limits<int64_t>::max();
  int64_t flush_interval_ms_ GUARDED_BY(mu_);
  std::shared_ptr<const DurabilityListener> listener_ GUARDED_BY(mu_);

  // Written by the flusher and, lowering it, by note_truncated, both under
  // mu_; read by anyone.
  std::atomic<int64_t> durable_offset_;
  std::atomic<bool> failed_{false};
  std::atomic<uint64_t> syncs_{0};
};

class Flusher {
 public:
  Flusher();
  ~Flusher();  // stop()
  Flusher(const Flusher&) = delete;
  Flusher& operator=(const Flusher&) = delete;

  void start() EXCLUDES(mu_);
  // Syncs what is pending, then joins the thread. Idempotent.
  void stop() EXCLUDES(mu_);

  void add(std::shared_ptr<SyncState> state) EXCLUDES(mu_);
  // After remove() returns the flusher no longer touches state (an ongoing
  // flush of it is waited for).
  void remove(const std::shared_ptr<SyncState>& state) EXCLUDES(mu_);
  // An urgent sync was requested (SyncState::note_append/request_sync call
  // this through the owner).
  void wake() EXCLUDES(mu_);

  uint64_t rounds() const { return rounds_.load(std::memory_order_relaxed); }
  // How long each fdatasync of a segment took (written by the flusher
  // thread only; any thread may read it).
  const metrics::LatencyHistogram& fsync_latency() const { return fsync_latency_; }

 private:
  void run() EXCLUDES(mu_);
  // Whether state is still added (not removed while another was synced).
  bool is_added(const SyncState* state) const REQUIRES(mu_);

  // Lock order: Flusher::mu_ before any SyncState::mu_ (run() asks each
  // state whether it is due while holding mu_); no SyncState method calls
  // into the Flusher with its own mutex held (PartitionLog calls wake()
  // after they return). Clang's acquired_before cannot name "every
  // SyncState's mu_", so this order is stated here, not checked.
  mutable port::Mutex mu_;
  std::condition_variable wake_cv_;
  std::condition_variable idle_cv_;
  // Guarded by mu_.
  std::vector<std::shared_ptr<SyncState>> states_ GUARDED_BY(mu_);
  const SyncState* busy_ GUARDED_BY(mu_) = nullptr;  // being flushed, outside mu_
  bool woken_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;
  std::atomic<uint64_t> rounds_{0};
  metrics::LatencyHistogram fsync_latency_;
};

}  // namespace eddy::storage
