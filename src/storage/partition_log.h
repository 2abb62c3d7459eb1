// The log of one partition: a ring of fixed-size segment files inside the
// partition's disk budget.
//
// Offsets: log_start_offset() <= high_watermark() <= log_end_offset().
//   log end offset (LEO)  next offset append() assigns.
//   durable offset        every offset below it is on disk (fdatasync).
//   high watermark (HW)   what consumers may read: the durable offset when
//                         eddy.acks.all.waits.for=disk, the LEO when
//                         page-cache (clamped to >= log start); for a
//                         replicated partition (set_replicated_high_watermark)
//                         its Raft group's commit index instead.
//   log start offset      first readable offset; advanced by recycling the
//                         oldest segment, by retention.ms, by DeleteRecords;
//                         set anywhere by reset_to.
//   last stable offset    what read_committed consumers may read: below the
//                         earliest transaction not yet decided (LSO <= HW);
//                         see transaction_index.h.
// Leader epochs: every batch carries the partitionLeaderEpoch its appender
// gave it (AppendOptions::leader_epoch); the epoch index (epoch_index.h)
// answers which epoch holds an offset and where each epoch ends, for Raft
// (raft/segment_log.h) and OffsetForLeaderEpoch.
//
// Threading: every method except the durability ones marked "any thread"
// must be called from the single owner thread (the reactor). The flusher
// thread syncs in the background through the partition's SyncState; see
// flusher.h for what the two share. Once set_owner() names the loop that
// owns the log, checked builds (port/check.h) abort when an owner-thread
// method runs on another thread.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "port/executor.h"
#include "port/status.h"
#include "protocol/output_buffer.h"
#include "storage/checkpoint.h"
#include "storage/disk_budget.h"
#include "storage/epoch_index.h"
#include "storage/flusher.h"
#include "storage/log_config.h"
#include "storage/segment.h"
#include "storage/transaction_index.h"

namespace eddy::storage {

struct ScanOutcome;

struct AppendOptions {
  // Stored in the batch's partitionLeaderEpoch field.
  int32_t leader_epoch = 0;
  // Wall-clock milliseconds for LogAppendTime; -1: port::wall_clock_millis().
  int64_t now_ms = -1;
  // The caller has verified the batch's CRC-32C (the broker does, before it
  // validates the records): append does not compute it again.
  bool crc_verified = false;
  // The batch is a replica's copy of its leader's (raft/batch_log.h): its
  // timestamps stay as the leader wrote them, also on a LogAppendTime
  // topic, so that the copies are byte-identical.
  bool keep_timestamps = false;
};

struct AppendResult {
  int64_t base_offset = -1;
  int64_t last_offset = -1;
  int64_t log_append_time_ms = -1;  // the stamped time for LogAppendTime topics
  int64_t log_start_offset = 0;
};

struct ReadResult {
  // Whole batches in offset order, as zero-copy regions of segment files.
  // Each region keeps its file open (and its bytes unchanged: a segment with
  // live regions is never reused) until released.
  std::vector<protocol::FileRegion> regions;
  uint64_t bytes = 0;
  // Offset after the last batch returned (the requested offset when empty).
  int64_t next_offset = 0;
};

// Decompresses the records of a compressed batch into *out; false when it
// cannot (codec not built in, corrupt input, output over its bound). The
// codecs live in the client room; the app hands them to the broker, which
// passes them here for the timestamp lookups that need to look inside.
using RecordsDecompressor =
    std::function<bool(protocol::Compression codec, std::span<const uint8_t> compressed, std::vector<uint8_t>* out)>;

struct TimestampLookup {
  bool found = false;
  int64_t offset = -1;
  int64_t timestamp = -1;
};

struct BatchLocation {
  int64_t segment_base_offset = 0;
  BatchPosition batch;
};

struct SegmentInfo {
  int64_t base_offset;
  int64_t next_offset;
  uint64_t end_position;
  uint64_t capacity;
  int64_t max_timestamp;
};

struct RecoveryStats {
  bool clean = false;               // reopened from a clean-shutdown checkpoint
  uint64_t bytes_scanned = 0;       // segment bytes read by validation scans
  uint64_t segments_scanned = 0;
  uint64_t segments_trusted = 0;    // loaded from their index file
  uint64_t bytes_zero_checked = 0;  // bytes read after the end of data
  uint64_t bytes_zeroed = 0;        // bytes overwritten with zeros
  uint64_t bytes_dropped = 0;       // extent of non-zero bytes after the end
  uint64_t segments_discarded = 0;  // later segments deleted after a break
  uint64_t bytes_scanned_for_transactions = 0;  // batch headers read to rebuild the transaction index
  uint64_t bytes_scanned_for_epochs = 0;        // batch headers read to rebuild the epoch index
  int64_t micros = 0;
};

struct PartitionStats {
  uint64_t segments = 0;
  uint64_t disk_bytes = 0;            // sum of segment file sizes
  uint64_t log_bytes = 0;             // bytes of batches from the log start segment on
  uint64_t index_memory_bytes = 0;
  uint64_t rolls = 0;
  uint64_t segments_recycled = 0;
  uint64_t pinned_segments_dropped = 0;  // drop-oldest overrode a pin
  uint64_t appends_rejected_full = 0;    // kLogFull answers
  uint64_t truncations = 0;              // truncate_to calls that removed batches
  uint64_t resets = 0;                   // reset_to calls that succeeded
};

class PartitionLog {
 public:
  // Opens (creating when missing) the partition in directory and recovers
  // it: from a clean-shutdown checkpoint without scanning, otherwise by
  // trusting sealed segments whose index files check out and scanning the
  // rest (see README.md). May write and sync (recovery zeroing); call it
  // before the partition is served. REQUIRES flusher outlives the log and is
  // started.
  static Status open(const std::string& directory, const LogConfig& config, Flusher* flusher,
                     std::unique_ptr<PartitionLog>* out);
  // Without close(): unregisters from the flusher and leaves the files as a
  // crash would (what was written stays in the page cache).
  ~PartitionLog();
  // Clean shutdown: syncs everything, writes the active segment's index
  // file and the clean-shutdown checkpoint. Further calls do nothing.
  Status close();

  // Appends one batch (a Produce request's batches are appended one by one).
  // Validates it (length == batch.size(), magic 2, consistent header, CRC),
  // rolls to a new segment when it does not fit, then patches baseOffset,
  // partitionLeaderEpoch and, for LogAppendTime topics, maxTimestamp, the
  // timestamp-type bit and the CRC, in place in batch, and writes it to the
  // page cache. The first batch of a leader epoch larger than last_epoch()
  // first writes and syncs leader-epoch-checkpoint (epoch_index.h).
  // Status codes: kOk, kCorruption (CRC mismatch or malformed
  // batch), kNotSupported (magic 0/1), kTooLarge, kLogFull, kNoSpace, kIOError
  // (also after close()). On any error the log and batch are unchanged, except
  // kIOError from the write itself (the partition then refuses appends).
  Status append(std::span<uint8_t> batch, const AppendOptions& options, AppendResult* result);

  // Batches from the one containing offset, whole, up to max_bytes (the first
  // batch is returned even when larger, as Kafka does), not beyond
  // upper_offset (-1: the high watermark). kOutOfRange when offset is
  // below the log start or above the log end; empty at or above the bound.
  Status read(int64_t offset, size_t max_bytes, int64_t upper_offset, ReadResult* result);
  // Same, copying the bytes (tools, tests).
  Status read_copy(int64_t offset, size_t max_bytes, int64_t upper_offset, std::vector<uint8_t>* bytes,
                   int64_t* next_offset);

  // Calls each(batch, header, &stop) for the batches from the one holding
  // offset up to upper_offset (exclusive: batches that start at or past it
  // are not visited), in offset order, with each batch's fixed fields only
  // (Segment::visit_headers: the records are never read), until each sets
  // stop or fails. For what needs only those fields (producer state
  // following a replica's log). kOutOfRange as read().
  Status visit_headers(int64_t offset, int64_t upper_offset, const Segment::HeaderVisitor& each);

  // Where the batch holding offset lies. kOutOfRange outside
  // [log start, LEO).
  Status lookup(int64_t offset, BatchLocation* location);
  // The first offset at or above the log start, below the high watermark,
  // whose record timestamp is >= timestamp (Kafka ListOffsets by time).
  // Exact for CreateTime batches (compressed ones are decompressed with
  // decompress; without it, or when it fails, the batch's base offset and
  // newest timestamp); for LogAppendTime batches the base offset with the
  // batch's append time.
  Status find_offset_by_timestamp(int64_t timestamp, TimestampLookup* lookup,
                                  const RecordsDecompressor* decompress = nullptr);
  // The first record with the largest timestamp (ListOffsets -3), as
  // find_offset_by_timestamp finds it; found=false when empty.
  Status find_max_timestamp(TimestampLookup* lookup, const RecordsDecompressor* decompress = nullptr);

  // Removes every batch whose base offset is >= offset (Kafka's
  // Log.truncateTo; a Raft follower dropping a diverging suffix). REQUIRES
  // log start <= offset <= LEO (kOutOfRange otherwise) and offset is a batch
  // boundary: a batch's base offset or the LEO (kInvalidArgument
  // otherwise). The partition's own high watermark is not consulted: a
  // replicated partition's is decided by its Raft group, whose rules keep
  // truncation above it (should it not be, the replicated high watermark is
  // lowered to offset).
  // Durable when it returns OK: the removed batches never come back after a
  // power cut, and no crash at any point leaves a removed batch and one
  // appended after the truncation in the same log. Blocks for a few syncs
  // (the cut segment, the directory, the epoch checkpoint); a segment still
  // read through a FileRegion keeps its bytes (the log moves to a copy).
  // Rebuilds the transaction index from the batch headers when the
  // partition holds transactional batches below offset. Any error leaves
  // the partition refusing appends until it is reopened.
  Status truncate_to(int64_t offset);

  // Drops every batch and starts the log afresh at offset, which may lie
  // below, inside or above the log (Kafka's truncateFullyAndStartAt; a Raft
  // follower whose leader no longer holds the entries it lacks continues at
  // the leader's log start). Afterwards log_start_offset() ==
  // log_end_offset() == durable_offset() == offset, reads below offset are
  // kOutOfRange, the next append lands at offset, the epoch index is empty,
  // no transaction is open or aborted, and the partition has one segment
  // file, empty, of segment.bytes, at offset. REQUIRES offset >= 0
  // (kInvalidArgument); kIOError after close() or a failed write.
  // Durable when it returns OK: a power cut afterwards reopens the empty log
  // at offset (plus what was appended since, as always). A power cut before
  // it returned reopens either that, or the old log or a prefix of it (what
  // a truncate_to(log start) cut short could leave), never old batches after
  // the new start. One weakening, only when offset lies below the persisted
  // log start: that old log may then start at its first segment's base, as
  // after losing log-start-offset.checkpoint. Blocks for about six syncs
  // (two more for an offset below the persisted log start)
  // (partition_log_reset.cc says which and why); calls the durability
  // listener once, on this thread, with offset. A segment still read
  // through a FileRegion keeps its bytes: old files are unlinked, never
  // written. Any error leaves the partition refusing appends until it is
  // reopened.
  Status reset_to(int64_t offset);

  // DeleteRecords: advances the log start offset to offset.
  // REQUIRES offset <= high watermark (kOutOfRange otherwise).
  Status delete_records_before(int64_t offset);
  // Time retention: drops whole segments (never the active one, never one
  // holding pinned offsets) whose newest timestamp is older than
  // now_ms - retention.ms. Returns how many were dropped.
  size_t apply_retention(int64_t now_ms);
  // Offsets >= pin must not be dropped (the forwarder pins what it has not
  // delivered). -1: no pin. When the budget is full and the oldest segment is
  // pinned, eddy.full.policy decides (see README.md).
  // The loop whose thread owns the log (the broker's reactor); nullptr (the
  // default: unit tests, tools) checks nothing. REQUIRES owner outlives the
  // log.
  void set_owner(const port::Executor* owner) { owner_ = owner; }
  void set_pin(int64_t pin_offset) { pin_ = pin_offset; }
  int64_t pin() const { return pin_; }

  Status update_config(const LogConfig& config);
  const LogConfig& config() const { return config_; }

  // ---- Disk budget (disk_budget.h) ----
  // From now on the partition is charged to budget (until it is destroyed)
  // and grows beyond its reservation only while budget has room.
  // REQUIRES: budget outlives the log; called once.
  void set_budget(DiskBudget* budget);
  // What the partition is charged: max(its reservation, footprint_bytes()).
  uint64_t budget_charge() const { return charged_bytes_; }
  // What it would be charged under config instead of config().
  uint64_t budget_charge_for(const LogConfig& config) const;
  // Its segment files, their index files (at their bound) and the
  // directory, in whole blocks.
  uint64_t footprint_bytes() const;

  int64_t log_start_offset() const { return log_start_offset_; }
  int64_t log_end_offset() const { return segments_.back()->next_offset(); }
  int64_t high_watermark() const;

  // ---- Replication (a partition of a Raft group: broker/partition_replication.h) ----
  // From the first call on the partition is replicated: high_watermark() is
  // the group's commit index as given here, clamped to [log start, LEO],
  // instead of the durable-offset / page-cache rule above. Invariants:
  //   - the stored value never exceeds the LEO: it is clamped to the LEO
  //     when given (a follower's commit index covers only what it holds),
  //     and lowered to the cut by truncate_to / reset_to;
  //   - it moves forward only through this call (a smaller hw is ignored),
  //     and backward only by those truncations.
  // When the high watermark moves, decided transactions below it settle and
  // the stable offset listener is called if the LSO moved, so that
  // read_committed consumers progress. The group should call it as soon as
  // it takes the log (with its commit index, or the log start while it has
  // none yet): before the first call the partition answers reads by the
  // local rule. The transaction index still settles at the LEO on open and
  // on close (as a single node's): after a restart, a transaction decided
  // by a marker the group had not committed yet counts as stable.
  void set_replicated_high_watermark(int64_t hw);
  bool replicated() const { return replicated_high_watermark_ >= 0; }

  // ---- Transactions (transaction_index.h) ----
  // Last stable offset: the first offset of the earliest transaction not yet
  // decided below the high watermark, capped by it (and at least the log
  // start): log start <= LSO <= HW; LSO == HW without open transactions.
  int64_t last_stable_offset() const;
  // Whether an aborted transaction ends at or above the log start.
  bool has_aborted_transactions() const { return transactions_.has_aborted(); }
  // Appends the aborted transactions overlapping [from, to) to *out.
  void collect_aborted_transactions(int64_t from, int64_t to, std::vector<AbortedTransaction>* out) const {
    transactions_.collect_aborted(from, to, out);
  }
  // Called on the owner thread after a COMMIT or ABORT marker was appended
  // (it may have moved the last stable offset without moving the high
  // watermark), after a truncation or reset, and when a replicated high
  // watermark moved the LSO; the broker wakes read_committed fetches
  // waiting for it.
  void set_stable_offset_listener(std::function<void()> listener) { stable_offset_listener_ = std::move(listener); }
  const TransactionIndex& transactions() const { return transactions_; }

  // ---- Leader epochs (epoch_index.h) ----
  // The epoch of the last batch; kNoLeaderEpoch (-1) for a log without one.
  int32_t last_epoch() const { return epochs_.last_epoch(); }
  // The epoch of the batch holding offset. REQUIRES log start <= offset <
  // LEO (kNoLeaderEpoch otherwise).
  int32_t epoch_at(int64_t offset) const;
  // raft::RaftLog::end_offset_for_epoch over the batches from the log start.
  EpochEndOffset end_offset_for_epoch(int32_t epoch) const {
    return epochs_.end_offset_for_epoch(epoch, log_end_offset());
  }
  const EpochIndex& epochs() const { return epochs_; }

  // ---- Durability (any thread) ----
  int64_t durable_offset() const { return sync_->durable_offset(); }
  // See DurabilityListener: called on the flusher thread.
  void set_durability_listener(DurabilityListener listener) { sync_->set_listener(std::move(listener)); }
  // Asks the flusher for a sync now (owner thread).
  void request_sync();
  // Blocks until durable_offset() >= offset (after asking for a sync). For
  // tests, tools and shutdown; the reactor uses the listener instead.
  bool wait_durable(int64_t offset, int64_t timeout_ms);
  uint64_t syncs() const { return sync_->syncs(); }

  const std::string& directory() const { return directory_; }
  const RecoveryStats& recovery_stats() const { return recovery_; }
  PartitionStats stats() const;
  std::vector<SegmentInfo> segments() const;

 private:
  PartitionLog(std::string directory, const LogConfig& config, Flusher* flusher);

  // Recovery on open (partition_log_recovery.cc).
  struct RecoveryWork;
  Status recover(const CleanShutdown* clean, int64_t persisted_log_start);
  // Segment i's index from its index file, when it checks out.
  bool trust_index_file(size_t i, const CleanShutdown* clean);
  Status scan_for_recovery(size_t i, RecoveryWork* work, bool* log_ends_here);
  Status end_log_in(size_t i, const ScanOutcome& outcome, RecoveryWork* work);
  Status finish_recovery(int64_t persisted_log_start, RecoveryWork* work);
  // Rebuilds transactions_ from the batch headers, when transactions.checkpoint
  // says transactional batches were ever appended.
  Status load_transactions();
  // From the clean close's transactions.snapshot, when it can be trusted.
  bool load_transactions_snapshot();
  // Loads the epoch index from leader-epoch-checkpoint, or rebuilds it from
  // the batch headers, and fits it to [log start, LEO).
  Status load_epochs();
  // Scans the batch headers for transactions from first_transactional_offset_.
  Status scan_all_transactions();
  // Writes leader-epoch-checkpoint (durably) for these entries.
  Status persist_epochs(const EpochIndex& epochs);
  // truncate_to's work on disk, in crash-safe order.
  Status cut_segments(size_t i, int64_t offset, uint64_t position);
  // Gives segment i a fresh file holding its bytes before position (a
  // reader holds the old one), synced and renamed into place.
  Status copy_held_segment(size_t i, uint64_t position);
  // The in-memory follow-ups of a truncation to offset.
  Status after_truncation(int64_t offset);
  // reset_to's work on disk, in crash-safe order: *fresh is the new, empty
  // segment at offset, in place of every old one.
  Status reset_files(int64_t offset, std::unique_ptr<Segment>* fresh);
  // reset_to's in-memory follow-ups: fresh becomes the only segment, and the
  // SyncState's durable offset offset. REQUIRES sync_ is not registered with
  // the flusher.
  Status after_reset(int64_t offset, std::unique_ptr<Segment> fresh);
  // Records a transactional or control batch just appended at base.
  void note_transactional_batch(const protocol::RecordBatchView& view, int64_t base);
  Status ensure_room(uint64_t size);
  Status roll();
  // Whether a new segment file keeps the charge within what it is now, or
  // the budget has room for the growth.
  bool budget_allows_new_segment() const;
  // Brings charged_bytes_ (and the budget) up to date after the files or the
  // config changed.
  void recharge();
  Status recycle_oldest(int64_t new_base, std::unique_ptr<Segment>* out);
  void drop_extra_segments();
  bool pinned(const Segment& segment) const;
  void set_log_start(int64_t offset);
  // Moves the log start up to offset (never down) and trims what lies below.
  void advance_log_start(int64_t offset);
  // Fits epochs_ to [log start, LEO) after the log start moved.
  void trim_epochs();
  std::string segment_path(int64_t base) const;
  std::string index_path(int64_t base) const;
  // Index into segments_ of the segment holding offset (the last with
  // base <= offset). REQUIRES offset >= segments_.front()->base_offset().
  size_t segment_for(int64_t offset) const;
  template <typename Visit>
  Status collect(int64_t offset, size_t max_bytes, int64_t upper_offset, int64_t* next_offset, Visit visit);

  // Checked builds: aborts unless called on the owner's loop thread.
  void check_owner_thread() const;

  const std::string directory_;
  LogConfig config_;
  Flusher* const flusher_;
  const port::Executor* owner_ = nullptr;
  std::shared_ptr<SyncState> sync_;
  // In offset order; back() is the active segment. Never empty once open.
  std::deque<std::unique_ptr<Segment>> segments_;
  int64_t log_start_offset_ = 0;
  int64_t pin_ = -1;
  DiskBudget* budget_ = nullptr;
  uint64_t charged_bytes_ = 0;
  // Logged once: the disk budget, not the ring, made the partition recycle.
  bool capped_by_budget_logged_ = false;
  int64_t unsynced_records_ = 0;
  bool write_failed_ = false;
  bool closed_ = false;

  // Where recent reads ended, so that a consumer reading on does not walk
  // the index again.
  struct ReadHint {
    int64_t offset = -1;
    int64_t segment_base = -1;
    uint64_t position = 0;
  };
  ReadHint hints_[4];
  size_t next_hint_ = 0;

  // The Raft group's commit index once replicated (<= LEO); -1: not
  // replicated (see set_replicated_high_watermark).
  int64_t replicated_high_watermark_ = -1;

  TransactionIndex transactions_;
  // The offset of the first transactional or control batch ever appended
  // (transactions.checkpoint); -1: none, and none may be in the log.
  int64_t first_transactional_offset_ = -1;
  std::function<void()> stable_offset_listener_;

  EpochIndex epochs_;
  // The log start trimmed epochs_ since leader-epoch-checkpoint was written
  // (close() rewrites it; the file is right either way, see epoch_index.h).
  bool epochs_trimmed_ = false;

  RecoveryStats recovery_;
  PartitionStats stats_;
};

}  // namespace eddy::storage
