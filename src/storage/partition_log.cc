#include "storage/partition_log.h"

#include <algorithm>
#include <limits>

#include "port/check.h"
#include "port/log.h"
#include "port/port.h"
#include "protocol/big_endian.h"
#include "protocol/control_batch.h"
#include "protocol/record_batch.h"
#include "storage/checkpoint.h"

namespace eddy::storage {

using protocol::BatchError;
using protocol::RecordBatchView;

namespace {

bool ends_with(const std::string& s, const char* suffix) {
  size_t n = std::char_traits<char>::length(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

std::string parent_directory(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

Status status_from_batch_error(BatchError e) {
  switch (e) {
    case BatchError::kOk: return Status();
    case BatchError::kUnsupportedMagic: return Status::not_supported("unsupported magic (0/1)");
    case BatchError::kCrcMismatch: return Status::corruption("corrupt batch: CRC-32C mismatch");
    case BatchError::kTruncated:
    case BatchError::kInvalid: return Status::corruption("invalid batch");
  }
  return Status::corruption("invalid batch");
}

}  // namespace

PartitionLog::PartitionLog(std::string directory, const LogConfig& config, Flusher* flusher)
    : directory_(std::move(directory)), config_(config), flusher_(flusher) {}

PartitionLog::~PartitionLog() {
  if (!closed_ && sync_ != nullptr) flusher_->remove(sync_);
  if (budget_ != nullptr) budget_->recharge(charged_bytes_, 0);
}

void PartitionLog::check_owner_thread() const {
  if (owner_ != nullptr) EDDY_DCHECK_ON_LOOP(*owner_);
}

std::string PartitionLog::segment_path(int64_t base) const { return directory_ + "/" + segment_file_name(base); }
std::string PartitionLog::index_path(int64_t base) const { return directory_ + "/" + index_file_name(base); }

// ---------------------------------------------------------------------------
// Open and recovery
// ---------------------------------------------------------------------------

Status PartitionLog::open(const std::string& directory, const LogConfig& config, Flusher* flusher,
                          std::unique_ptr<PartitionLog>* out) {
  Status s = validate(config);
  if (!s.ok()) return s;
  const bool created = !port::is_directory(directory);
  std::error_code ec = port::make_directories(directory);
  // A new partition directory must survive a power cut like its segments.
  if (!ec && created) ec = port::sync_directory(parent_directory(directory));
  std::vector<std::string> names;
  if (!ec) ec = port::list_directory(directory, &names);
  if (ec) {
    EDDY_LOG_ERROR("cannot open partition directory {}: {}", directory, port::error_message(ec));
    return Status::from_error_code(ec);
  }
  int64_t started = port::monotonic_nanos();
  std::vector<int64_t> bases;
  std::vector<int64_t> index_bases;
  for (const std::string& name : names) {
    int64_t base = 0;
    if (parse_offset_file_name(name, ".log", &base)) {
      bases.push_back(base);
    } else if (parse_offset_file_name(name, ".index", &base)) {
      index_bases.push_back(base);
    } else if (ends_with(name, ".tmp")) {
      port::remove_file(directory + "/" + name);  // an interrupted checkpoint
    }
  }
  std::sort(bases.begin(), bases.end());
  for (int64_t base : index_bases) {
    // An index without its segment (the segment was recycled or discarded).
    if (!std::binary_search(bases.begin(), bases.end(), base)) port::remove_file(directory + "/" + index_file_name(base));
  }

  std::unique_ptr<PartitionLog> log(new PartitionLog(directory, config, flusher));
  for (int64_t base : bases) {
    std::unique_ptr<Segment> segment;
    s = Segment::open(log->segment_path(base), base, config.index_interval_bytes, &segment);
    if (!s.ok()) return s;
    log->segments_.push_back(std::move(segment));
  }
  CleanShutdown clean;
  bool have_clean = read_clean_shutdown(directory, &clean);
  int64_t persisted_log_start = -1;
  read_log_start_offset(directory, &persisted_log_start);
  if (have_clean) persisted_log_start = std::max(persisted_log_start, clean.log_start_offset);
  s = log->recover(have_clean ? &clean : nullptr, persisted_log_start);
  if (!s.ok()) return s;
  s = log->load_transactions();
  if (!s.ok()) return s;
  s = log->load_epochs();
  if (!s.ok()) return s;
  log->recovery_.micros = (port::monotonic_nanos() - started) / 1000;
  log->recharge();

  log->sync_ = std::make_shared<SyncState>(directory, log->log_end_offset());
  log->sync_->set_flush_interval_ms(config.flush_interval_ms);
  flusher->add(log->sync_);
  EDDY_LOG_DEBUG("{}: opened, offsets {}..{}, {} segments, {}, scanned {} bytes in {}"
                 " us",
                 directory, log->log_start_offset_, log->log_end_offset(), log->segments_.size(),
                 log->recovery_.clean ? "clean" : "recovered", log->recovery_.bytes_scanned, log->recovery_.micros);
  *out = std::move(log);
  return Status();
}

Status PartitionLog::close() {
  check_owner_thread();
  if (closed_) return Status();
  closed_ = true;
  flusher_->remove(sync_);
  // The flusher no longer touches this partition: sync here.
  Status s = sync_->sync_now();
  if (!s.ok()) return s;
  if (write_failed_) return Status::io_error("an earlier write failed");  // no checkpoint: the next open rescans
  Segment& active = *segments_.back();
  if (first_transactional_offset_ >= 0) {
    // Everything is durable: every decided transaction is stable.
    transactions_.settle(active.next_offset());
    std::vector<uint8_t> state;
    transactions_.encode(&state);
    s = write_transactions_snapshot(directory_, active.next_offset(), state);
    if (!s.ok()) return s;
  }
  if (epochs_trimmed_) {
    s = persist_epochs(epochs_);
    if (!s.ok()) return s;
  }
  s = write_index_file(index_path(active.base_offset()), active.index());
  if (!s.ok()) return s;
  return write_clean_shutdown(directory_,
                              CleanShutdown{active.base_offset(), active.next_offset(),
                                            static_cast<int64_t>(active.end_position()), log_start_offset_});
}

// ---------------------------------------------------------------------------
// Append, roll, recycle
// ---------------------------------------------------------------------------

Status PartitionLog::append(std::span<uint8_t> batch, const AppendOptions& options, AppendResult* result) {
  check_owner_thread();
  if (closed_ || write_failed_ || !sync_->failure().ok()) return Status::io_error("the log is closed or failed");
  RecordBatchView view;
  BatchError e = RecordBatchView::parse(batch, &view);
  if (e != BatchError::kOk) return status_from_batch_error(e);
  if (view.size() != batch.size()) return Status::corruption("invalid batch");
  if (!options.crc_verified && !view.crc_matches()) return Status::corruption("corrupt batch: CRC-32C mismatch");
  if (batch.size() > config_.segment_bytes) return Status::too_large("batch larger than a segment");
  Status s = ensure_room(batch.size());
  if (!s.ok()) return s;

  Segment& active = *segments_.back();
  const int64_t base = active.next_offset();
  // Control batches other than COMMIT/ABORT markers (Raft's LeaderChange)
  // are no transaction's business.
  const bool transactional = (view.attributes() & protocol::batch_attributes::kTransactional) != 0 ||
                             (view.is_control() && protocol::control_type(view).has_value());
  if (transactional && first_transactional_offset_ < 0) {
    // Durable before the batch can be: an open after a power cut must know
    // to look for transactions. Once per partition, on the owner thread.
    s = write_first_transactional_offset(directory_, base);
    if (!s.ok()) return s;
    first_transactional_offset_ = base;
  }
  const bool new_epoch = epochs_.starts_epoch(options.leader_epoch);
  if (new_epoch) {
    // The same rule for epochs (epoch_index.h): once per epoch.
    EpochIndex next = epochs_;
    next.add(options.leader_epoch, base);
    s = persist_epochs(next);
    if (!s.ok()) return s;
  }
  BatchInfo info{base, base + view.last_offset_delta(), view.max_timestamp(), static_cast<uint32_t>(batch.size())};
  protocol::set_base_offset(batch, base);
  protocol::set_partition_leader_epoch(batch, options.leader_epoch);
  result->log_append_time_ms = -1;
  if (config_.timestamp_type == protocol::TimestampType::kLogAppendTime && !options.keep_timestamps) {
    int64_t now = options.now_ms >= 0 ? options.now_ms : port::wall_clock_millis();
    protocol::set_log_append_time(batch, now);
    info.max_timestamp = now;
    result->log_append_time_ms = now;
  }
  s = active.append(batch, info);
  if (!s.ok()) {
    // Part of the batch may have reached the file; refuse further appends
    // until a reopen has recovered the partition.
    write_failed_ = true;
    return s;
  }

  if (new_epoch) epochs_.add(options.leader_epoch, base);
  if (transactional) note_transactional_batch(view, base);
  if (!transactions_.all_stable()) transactions_.settle(high_watermark());

  unsynced_records_ += view.record_count();
  bool urgent = config_.acks_all_waits_for == AcksAllWaitsFor::kDisk ||
                unsynced_records_ >= config_.flush_interval_messages;
  if (urgent) unsynced_records_ = 0;
  if (sync_->note_append(active.file(), active.base_offset(), info.last_offset + 1, port::monotonic_millis(), urgent)) {
    flusher_->wake();
  }
  result->base_offset = base;
  result->last_offset = info.last_offset;
  result->log_start_offset = log_start_offset_;
  if (transactional && view.is_control() && stable_offset_listener_) stable_offset_listener_();
  return Status();
}

Status PartitionLog::persist_epochs(const EpochIndex& epochs) {
  Status s = write_leader_epochs(directory_, epochs.to_fields());
  if (s.ok()) epochs_trimmed_ = false;
  return s;
}

void PartitionLog::note_transactional_batch(const RecordBatchView& view, int64_t base) {
  if (!view.is_control()) {
    transactions_.on_data_batch(view.producer_id(), base);
  } else if (auto type = protocol::control_type(view)) {
    transactions_.on_marker(view.producer_id(), *type, base);
  }
}

Status PartitionLog::ensure_room(uint64_t size) {
  if (segments_.back()->has_room(size)) return Status();
  if (segments_.back()->empty()) return Status::too_large("batch larger than a segment");
  Status s = roll();
  if (!s.ok()) return s;
  return segments_.back()->has_room(size) ? Status() : Status::too_large("batch larger than a segment");
}

bool PartitionLog::pinned(const Segment& segment) const {
  return pin_ >= 0 && segment.next_offset() > pin_ && segment.next_offset() > log_start_offset_;
}

Status PartitionLog::roll() {
  Segment& active = *segments_.back();
  const int64_t new_base = active.next_offset();
  const uint64_t ring = ring_segments(config_);
  const bool oldest_dead = segments_.size() >= 2 && segments_.front()->next_offset() <= log_start_offset_;
  // Full: the ring holds its N segments, or the disk budget has no room for
  // another file (a ring without retention.bytes, or files larger than the
  // reservation after segment.bytes was lowered).
  const bool ring_full = ring != 0 && segments_.size() >= ring;
  const bool budget_full = !ring_full && !budget_allows_new_segment();
  const bool full = ring_full || budget_full;
  if (budget_full && !capped_by_budget_logged_) {
    capped_by_budget_logged_ = true;
    EDDY_LOG_INFO("{}: the disk budget (eddy.disk.budget.bytes, {} bytes free) holds no further segment: "
                  "the partition keeps its {} segments and recycles the oldest",
                  directory_, budget_->free_bytes(), segments_.size());
  }
  if (!oldest_dead && full && pinned(*segments_.front())) {
    const std::string what = ring_full ? "budget of " + std::to_string(ring) + " segments (retention.bytes)"
                                       : "disk budget (eddy.disk.budget.bytes)";
    if (config_.full_policy == FullPolicy::kReject) {
      if (stats_.appends_rejected_full++ == 0 || stats_.appends_rejected_full % 10000 == 0) {
        EDDY_LOG_WARN("{}: {} full and offsets from {}"
                      " are pinned: rejecting appends (eddy.full.policy=reject, {} so far)",
                      directory_, what, pin_, stats_.appends_rejected_full);
      }
      return Status::log_full("the disk budget is full of data not yet forwarded");
    }
    ++stats_.pinned_segments_dropped;
    EDDY_LOG_WARN("{}: {} full: dropping segment {}..{} although offsets from {}"
                  " are pinned (eddy.full.policy=drop-oldest)",
                  directory_, what, segments_.front()->base_offset(),
                  segments_.front()->next_offset() - 1, pin_);
  }

  std::unique_ptr<Segment> next;
  Status s;
  if (oldest_dead || full) {
    s = recycle_oldest(new_base, &next);
  } else {
    s = Segment::create(segment_path(new_base), new_base, config_.segment_bytes, config_.index_interval_bytes, &next);
    if (s.ok()) sync_->note_directory_changed();
  }
  if (!s.ok()) return s;

  // Seal the active segment: the flusher syncs it and then writes its index.
  Segment& sealed = *segments_.back();
  sealed.shrink_index();
  sync_->note_sealed(sealed.base_offset(), std::make_shared<const SegmentIndex>(sealed.index()),
                     index_path(sealed.base_offset()));
  segments_.push_back(std::move(next));
  ++stats_.rolls;
  drop_extra_segments();
  recharge();
  flusher_->wake();
  return Status();
}

bool PartitionLog::budget_allows_new_segment() const {
  if (budget_ == nullptr || segments_.size() < kMinRingSegments) return true;
  const uint64_t after = std::max(partition_reservation_bytes(config_),
                                  footprint_bytes() + segment_footprint_bytes(config_.segment_bytes,
                                                                              config_.index_interval_bytes));
  return after <= charged_bytes_ || budget_->has_room(after - charged_bytes_);
}

Status PartitionLog::recycle_oldest(int64_t new_base, std::unique_ptr<Segment>* out) {
  Segment& oldest = *segments_.front();
  const std::string new_path = segment_path(new_base);
  sync_->note_retired_below(segments_[1]->base_offset());
  port::remove_file(index_path(oldest.base_offset()));  // missing is fine
  port::remove_file(index_path(new_base));
  if (oldest.has_readers()) {
    // A reader is still sending from this file: leave its bytes alone (the
    // open descriptor keeps the unlinked file alive) and use a fresh file.
    // The budget is exceeded by one segment until that reader is done.
    Status s = Segment::create(new_path, new_base, config_.segment_bytes, config_.index_interval_bytes, out);
    if (!s.ok()) return s;
    port::remove_file(oldest.path());
    sync_->note_directory_changed();
  } else {
    std::error_code ec = port::rename_file(oldest.path(), new_path);
    // The rename must be durable before new batches land in the file: if a
    // power cut kept the old name, they would sit in the oldest segment.
    // This directory sync is the one sync the owner thread does (once per
    // roll of a full ring).
    if (!ec) ec = port::sync_directory(directory_);
    if (ec) {
      EDDY_LOG_ERROR("{}: cannot recycle segment {}: {}", directory_, oldest.path(),
                     port::error_message(ec));
      write_failed_ = true;
      return Status::from_error_code(ec);
    }
    *out = Segment::reuse(std::move(segments_.front()), new_path, new_base, config_.index_interval_bytes);
  }
  segments_.pop_front();
  ++stats_.segments_recycled;
  advance_log_start(segments_.front()->base_offset());
  return Status();
}

void PartitionLog::drop_extra_segments() {
  // Only after retention.bytes was lowered: more files than the budget.
  const uint64_t ring = ring_segments(config_);
  while (ring != 0 && segments_.size() > ring) {
    Segment& oldest = *segments_.front();
    if (pinned(oldest)) {
      if (config_.full_policy == FullPolicy::kReject) return;
      ++stats_.pinned_segments_dropped;
    }
    sync_->note_retired_below(segments_[1]->base_offset());
    port::remove_file(index_path(oldest.base_offset()));
    port::remove_file(oldest.path());
    segments_.pop_front();
    advance_log_start(segments_.front()->base_offset());
    sync_->note_directory_changed();
  }
}

// ---------------------------------------------------------------------------
// Reads and lookups
// ---------------------------------------------------------------------------

int64_t PartitionLog::high_watermark() const {
  check_owner_thread();
  int64_t end = log_end_offset();
  int64_t hw = 0;
  if (replicated()) {
    hw = std::min(replicated_high_watermark_, end);
  } else {
    hw = config_.acks_all_waits_for == AcksAllWaitsFor::kDisk ? std::min(durable_offset(), end) : end;
  }
  return std::max(hw, log_start_offset_);
}

void PartitionLog::set_replicated_high_watermark(int64_t hw) {
  check_owner_thread();
  const bool first = !replicated();
  const int64_t next = std::min(std::max<int64_t>(hw, 0), log_end_offset());
  if (!first && next <= replicated_high_watermark_) return;
  const int64_t stable_before = last_stable_offset();
  replicated_high_watermark_ = first ? next : std::max(replicated_high_watermark_, next);
  if (!transactions_.all_stable()) transactions_.settle(high_watermark());
  if (last_stable_offset() != stable_before && stable_offset_listener_) stable_offset_listener_();
}

int32_t PartitionLog::epoch_at(int64_t offset) const {
  if (offset < log_start_offset_ || offset >= log_end_offset()) return kNoLeaderEpoch;
  return epochs_.epoch_at(offset);
}

int64_t PartitionLog::last_stable_offset() const {
  const int64_t hw = high_watermark();
  if (transactions_.all_stable()) return hw;
  const int64_t first = transactions_.first_unstable_offset(hw);
  return first < 0 ? hw : std::max(std::min(first, hw), log_start_offset_);
}

size_t PartitionLog::segment_for(int64_t offset) const {
  auto it = std::upper_bound(segments_.begin(), segments_.end(), offset,
                             [](int64_t o, const std::unique_ptr<Segment>& s) { return o < s->base_offset(); });
  return static_cast<size_t>(it - segments_.begin()) - 1;
}

template <typename Visit>
Status PartitionLog::collect(int64_t offset, size_t max_bytes, int64_t upper_offset, int64_t* next_offset,
                             Visit visit) {
  const int64_t end = log_end_offset();
  if (offset < log_start_offset_ || offset > end) return Status::out_of_range("offset out of range");
  const int64_t bound = upper_offset < 0 ? high_watermark() : std::min(upper_offset, end);
  *next_offset = offset;
  if (offset >= bound) return Status();

  size_t i = segment_for(offset);
  uint64_t position = 0;
  bool hinted = false;
  for (const ReadHint& hint : hints_) {
    if (hint.offset == offset && hint.segment_base == segments_[i]->base_offset()) {
      position = hint.position;
      hinted = true;
      break;
    }
  }
  if (!hinted) {
    BatchPosition batch;
    Status s = segments_[i]->locate(offset, &batch);
    if (!s.ok()) return s;
    position = batch.position;
  }

  uint64_t remaining = max_bytes;
  bool first = true;
  for (; i < segments_.size(); ++i, position = 0) {
    Segment& segment = *segments_[i];
    uint64_t limit = remaining > std::numeric_limits<uint64_t>::max() - position ? std::numeric_limits<uint64_t>::max()
                                                                                 : position + remaining;
    uint64_t stop = position;
    Status s = segment.read_end(position, limit, bound, first, &stop, next_offset);
    if (!s.ok()) return s;
    if (stop > position) {
      s = visit(segment, position, stop - position);
      if (!s.ok()) return s;
      remaining -= std::min(remaining, stop - position);
      first = false;
    }
    if (*next_offset >= bound || stop < segment.end_position()) {
      hints_[next_hint_] = ReadHint{*next_offset, segment.base_offset(), stop};
      next_hint_ = (next_hint_ + 1) % std::size(hints_);
      break;
    }
  }
  return Status();
}

Status PartitionLog::read(int64_t offset, size_t max_bytes, int64_t upper_offset, ReadResult* result) {
  check_owner_thread();
  result->regions.clear();
  result->bytes = 0;
  return collect(offset, max_bytes, upper_offset, &result->next_offset,
                 [&](const Segment& segment, uint64_t position, uint64_t length) {
                   result->regions.push_back(segment.region(position, length));
                   result->bytes += length;
                   return Status();
                 });
}

Status PartitionLog::read_copy(int64_t offset, size_t max_bytes, int64_t upper_offset, std::vector<uint8_t>* bytes,
                               int64_t* next_offset) {
  check_owner_thread();
  bytes->clear();
  return collect(offset, max_bytes, upper_offset, next_offset,
                 [&](const Segment& segment, uint64_t position, uint64_t length) {
                   // length <= max_bytes (an int32): fits size_t on 32-bit boards too.
                   const size_t at = bytes->size();
                   bytes->resize(at + static_cast<size_t>(length));
                   return segment.read(position, bytes->data() + at, static_cast<size_t>(length));
                 });
}

Status PartitionLog::visit_headers(int64_t offset, int64_t upper_offset, const Segment::HeaderVisitor& each) {
  check_owner_thread();
  const int64_t end = log_end_offset();
  if (offset < log_start_offset_ || offset > end) return Status::out_of_range("offset out of range");
  const int64_t bound = std::min(upper_offset, end);
  bool stopped = false;
  for (size_t i = segment_for(offset); offset < bound && i < segments_.size() && !stopped; ++i) {
    const Segment& segment = *segments_[i];
    const int64_t from = std::max(offset, segment.base_offset());
    if (segment.next_offset() <= from) continue;  // empty, or below offset
    Status s = segment.visit_headers(from,
                                     [&](const BatchPosition& batch, std::span<const uint8_t> header, bool* stop) {
                                       if (batch.info.base_offset >= bound) {
                                         *stop = stopped = true;
                                         return Status();
                                       }
                                       Status v = each(batch, header, stop);
                                       stopped = *stop;
                                       return v;
                                     });
    if (!s.ok()) return s;
  }
  return Status();
}

Status PartitionLog::lookup(int64_t offset, BatchLocation* location) {
  check_owner_thread();
  if (offset < log_start_offset_ || offset >= log_end_offset()) return Status::out_of_range("offset out of range");
  const Segment& segment = *segments_[segment_for(offset)];
  location->segment_base_offset = segment.base_offset();
  return segment.locate(offset, &location->batch);
}

Status PartitionLog::find_offset_by_timestamp(int64_t timestamp, TimestampLookup* lookup,
                                              const RecordsDecompressor* decompress) {
  check_owner_thread();
  *lookup = TimestampLookup{};
  const int64_t bound = high_watermark();
  for (const auto& segment : segments_) {
    if (segment->next_offset() <= log_start_offset_ || segment->max_timestamp() < timestamp) continue;
    BatchPosition position;
    bool found = false;
    Status s = segment->find_timestamp(timestamp, log_start_offset_, &position, &found);
    if (!s.ok()) return s;
    if (!found) continue;
    if (position.info.base_offset >= bound) return Status();

    std::vector<uint8_t> bytes(position.info.size);
    s = segment->read(position.position, bytes.data(), bytes.size());
    if (!s.ok()) return s;
    RecordBatchView view;
    if (RecordBatchView::parse(bytes, &view) != BatchError::kOk) return Status::io_error("a stored batch does not parse");
    lookup->found = true;
    lookup->offset = std::max(view.base_offset(), log_start_offset_);
    lookup->timestamp = view.max_timestamp();
    if (view.timestamp_type() == protocol::TimestampType::kLogAppendTime) return Status();
    if (view.compression() != protocol::Compression::kNone) {
      // The same header over the decompressed records, marked uncompressed,
      // for the record iterator (the CRC is not looked at again).
      std::vector<uint8_t> records;
      if (decompress == nullptr || !*decompress || !(*decompress)(view.compression(), view.records_bytes(), &records) ||
          records.size() > static_cast<size_t>(INT32_MAX) - protocol::batch_layout::kHeaderSize) {
        return Status();
      }
      const auto attributes =
          static_cast<uint16_t>(view.attributes() & ~protocol::batch_attributes::kCompressionMask);
      bytes.resize(protocol::batch_layout::kHeaderSize);
      bytes.insert(bytes.end(), records.begin(), records.end());
      protocol::store_be16(bytes.data() + protocol::batch_layout::kAttributes, attributes);
      protocol::store_be32(bytes.data() + protocol::batch_layout::kBatchLength,
                           static_cast<uint32_t>(bytes.size() - protocol::batch_layout::kLogOverhead));
      if (RecordBatchView::parse(bytes, &view) != BatchError::kOk) return Status();
    }
    protocol::RecordIterator records(view);
    protocol::Record record;
    while (records.next(&record)) {
      int64_t record_offset = view.base_offset() + record.offset_delta;
      int64_t record_timestamp = view.base_timestamp() + record.timestamp_delta;
      if (record_offset >= log_start_offset_ && record_timestamp >= timestamp) {
        lookup->offset = record_offset;
        lookup->timestamp = record_timestamp;
        return Status();
      }
    }
    return Status();
  }
  return Status();
}

Status PartitionLog::find_max_timestamp(TimestampLookup* lookup, const RecordsDecompressor* decompress) {
  check_owner_thread();
  int64_t max_timestamp = -1;
  for (const auto& segment : segments_) {
    if (segment->next_offset() > log_start_offset_) max_timestamp = std::max(max_timestamp, segment->max_timestamp());
  }
  *lookup = TimestampLookup{};
  if (max_timestamp < 0) return Status();
  return find_offset_by_timestamp(max_timestamp, lookup, decompress);
}

// ---------------------------------------------------------------------------
// Retention, pins, configuration
// ---------------------------------------------------------------------------

void PartitionLog::advance_log_start(int64_t offset) {
  log_start_offset_ = std::max(log_start_offset_, offset);
  transactions_.trim_before(log_start_offset_);
  trim_epochs();
}

void PartitionLog::trim_epochs() {
  if (epochs_.trim_before(log_start_offset_)) epochs_trimmed_ = true;
  // No batch left: no epoch either (as a reopen would find).
  if (log_start_offset_ >= log_end_offset() && epochs_.truncate_from(log_start_offset_)) epochs_trimmed_ = true;
}

void PartitionLog::set_log_start(int64_t offset) {
  log_start_offset_ = offset;
  transactions_.trim_before(offset);
  trim_epochs();
  // Losing this file only makes deleted records readable again after a
  // crash (as with Kafka's periodic checkpoint); it is replaced atomically.
  // So a failure to write it is ignored on purpose.
  (void)write_log_start_offset(directory_, offset);
}

Status PartitionLog::delete_records_before(int64_t offset) {
  check_owner_thread();
  if (offset < 0 || offset > high_watermark()) return Status::out_of_range("offset out of range");
  if (offset > log_start_offset_) set_log_start(offset);
  return Status();
}

size_t PartitionLog::apply_retention(int64_t now_ms) {
  check_owner_thread();
  if (config_.retention_ms < 0) return 0;
  const int64_t limit = now_ms - config_.retention_ms;
  size_t dropped = 0;
  int64_t start = log_start_offset_;
  for (size_t i = 0; i + 1 < segments_.size(); ++i) {
    const Segment& segment = *segments_[i];
    if (segment.next_offset() <= start) continue;  // already dropped
    // Segments without timestamps (-1) never expire by time.
    if (segment.max_timestamp() < 0 || segment.max_timestamp() >= limit || pinned(segment)) break;
    start = segment.next_offset();
    ++dropped;
  }
  if (dropped > 0) {
    EDDY_LOG_INFO("{}: retention.ms dropped {} segments, log start {} -> {}", directory_,
                  dropped, log_start_offset_, start);
    set_log_start(start);
  }
  return dropped;
}

Status PartitionLog::update_config(const LogConfig& config) {
  check_owner_thread();
  Status s = validate(config);
  if (!s.ok()) return s;
  config_ = config;
  sync_->set_flush_interval_ms(config.flush_interval_ms);
  recharge();
  request_sync();
  return Status();
}

void PartitionLog::set_budget(DiskBudget* budget) {
  check_owner_thread();
  budget_ = budget;
  budget_->recharge(0, charged_bytes_);
}

uint64_t PartitionLog::footprint_bytes() const {
  check_owner_thread();
  uint64_t bytes = partition_overhead_bytes();
  for (const auto& segment : segments_) {
    bytes += segment_footprint_bytes(segment->capacity(), config_.index_interval_bytes);
  }
  return bytes;
}

uint64_t PartitionLog::budget_charge_for(const LogConfig& config) const {
  return std::max(partition_reservation_bytes(config), footprint_bytes());
}

void PartitionLog::recharge() {
  const uint64_t charge = budget_charge_for(config_);
  if (budget_ != nullptr) budget_->recharge(charged_bytes_, charge);
  charged_bytes_ = charge;
}

void PartitionLog::request_sync() {
  check_owner_thread();
  sync_->request_sync();
  flusher_->wake();
}

bool PartitionLog::wait_durable(int64_t offset, int64_t timeout_ms) {
  request_sync();
  return sync_->wait_durable(offset, timeout_ms);
}

PartitionStats PartitionLog::stats() const {
  check_owner_thread();
  PartitionStats stats = stats_;
  stats.segments = segments_.size();
  for (const auto& segment : segments_) {
    stats.disk_bytes += segment->capacity();
    if (segment->next_offset() > log_start_offset_) stats.log_bytes += segment->end_position();
    stats.index_memory_bytes += segment->index().memory_bytes();
  }
  return stats;
}

std::vector<SegmentInfo> PartitionLog::segments() const {
  check_owner_thread();
  std::vector<SegmentInfo> out;
  for (const auto& s : segments_) {
    out.push_back(SegmentInfo{s->base_offset(), s->next_offset(), s->end_position(), s->capacity(), s->max_timestamp()});
  }
  return out;
}

}  // namespace eddy::storage
