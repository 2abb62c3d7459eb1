#include "raft/segment_log.h"

#include "raft/kafka_entries.h"

#include <algorithm>
#include <limits>
#include <string>

#include "port/port.h"
#include "protocol/control_batch.h"
#include "protocol/record_batch.h"
#include "storage/checkpoint.h"

namespace eddy::raft {

namespace {

Status corrupt_entry(int64_t offset, const char* what) {
  return Status::corruption("raft log: the batch at offset " + std::to_string(offset) + " " + what);
}

// The entry stored as view, which must lie at offset.
Status decode_entry(const protocol::RecordBatchView& view, Offset offset, Entry* entry) {
  if (view.base_offset() != offset) return corrupt_entry(offset, "has another base offset");
  if (view.record_count() != 1 || view.last_offset_delta() != 0) return corrupt_entry(offset, "holds not one record");
  if (view.partition_leader_epoch() <= 0) return corrupt_entry(offset, "has no leader epoch");
  entry->epoch = view.partition_leader_epoch();
  if (view.is_control()) {
    std::optional<std::span<const uint8_t>> value = protocol::leader_change_value(view);
    if (!value || !check_leader_change_message(*value).ok()) {
      return corrupt_entry(offset, "is a control batch but not a LeaderChange");
    }
    entry->kind = EntryKind::kLeaderChange;
    entry->payload.assign(value->begin(), value->end());
    return Status();
  }
  if (view.compression() != protocol::Compression::kNone) return corrupt_entry(offset, "is compressed");
  protocol::RecordIterator records(view);
  protocol::Record record;
  if (!records.next(&record) || !record.value.has_value()) return corrupt_entry(offset, "has no record value");
  entry->kind = EntryKind::kData;
  entry->payload.assign(record.value->begin(), record.value->end());
  return Status();
}

}  // namespace

Status SegmentLog::open(const std::string& directory, const storage::LogConfig& config, storage::Flusher* flusher,
                        SegmentLogOptions options, SnapshotId start, std::unique_ptr<SegmentLog>* out) {
  std::unique_ptr<SegmentLog> log(new SegmentLog(directory, config, flusher, std::move(options)));
  // What a reset interrupted by a crash left (see reset_to).
  for (const char* leftover : {".reset", ".old"}) {
    if (auto ec = port::remove_tree(directory + leftover)) return Status::from_error_code(ec, directory + leftover);
  }
  Status s = storage::PartitionLog::open(directory, config, flusher, &log->log_);
  if (!s.ok()) return s;
  s = log->start_at(start);
  if (!s.ok()) return s.with_context(directory);
  *out = std::move(log);
  return Status();
}

Status SegmentLog::start_at(SnapshotId start) {
  const Offset log_start = log_->log_start_offset();
  if (log_start > start.end_offset || (start.empty() && log_start != 0)) {
    return Status::corruption("raft log: starts at offset " + std::to_string(log_start) + ", past the latest "
                              "snapshot's end " + std::to_string(start.end_offset));
  }
  if (log_start == start.end_offset) {
    start_ = start;
    return Status();
  }
  // A crash between storing the snapshot and moving the start: finish it.
  const bool held = start.end_offset <= end_offset() && epoch_at(start.end_offset - 1) == start.epoch;
  start_ = SnapshotId{log_start, log_start > 0 ? epoch_at(log_start) : 0};  // below every question asked
  return held ? delete_before(start) : reset_to(start);
}

Offset SegmentLog::durable_offset() const {
  return std::max(start_.end_offset, std::min(log_->durable_offset(), log_->log_end_offset()));
}

Epoch SegmentLog::last_epoch() const {
  return end_offset() > start_.end_offset ? std::max<Epoch>(log_->last_epoch(), 0) : start_.epoch;
}

Epoch SegmentLog::epoch_at(Offset offset) const { return std::max<Epoch>(log_->epoch_at(offset), 0); }

EpochEndOffset SegmentLog::end_offset_for_epoch(Epoch epoch) const {
  storage::EpochEndOffset answer = log_->end_offset_for_epoch(epoch);
  if (answer.epoch <= 0 && answer.end_offset <= 0) {
    // No entry answers: the start does when its epoch is small enough.
    if (start_.empty() || start_.epoch > epoch) return {0, 0};
    return {start_.epoch, start_.end_offset};
  }
  return EpochEndOffset{answer.epoch, answer.end_offset};
}

Status SegmentLog::read(Offset offset, size_t max_entries, std::vector<Entry>* out) const {
  out->clear();
  const Offset end = end_offset();
  if (offset < 0 || offset >= end || max_entries == 0) return Status();
  // One batch per entry: the offset bound is the entry bound.
  const Offset upper =
      max_entries >= static_cast<uint64_t>(end - offset) ? end : offset + static_cast<Offset>(max_entries);
  std::vector<uint8_t> bytes;
  int64_t next = 0;
  Status s = log_->read_copy(offset, std::numeric_limits<size_t>::max(), upper, &bytes, &next);
  if (!s.ok()) return s;
  protocol::BatchIterator batches(bytes, /*verify_crc=*/true);
  protocol::RecordBatchView view;
  std::vector<Entry> entries;
  entries.reserve(static_cast<size_t>(upper - offset));
  while (batches.next(&view)) {
    Entry entry;
    s = decode_entry(view, offset + static_cast<Offset>(entries.size()), &entry);
    if (!s.ok()) return s;
    entries.push_back(std::move(entry));
  }
  const Offset at = offset + static_cast<Offset>(entries.size());
  if (batches.error() != protocol::BatchError::kOk) {
    return corrupt_entry(at, protocol::batch_error_name(batches.error()));
  }
  if (batches.position() != bytes.size() || at != upper) return corrupt_entry(at, "is missing or cut short");
  *out = std::move(entries);
  return Status();
}

Status SegmentLog::encode_entry(const Entry& entry, int64_t timestamp_ms, std::vector<uint8_t>* batch) const {
  const auto* payload = reinterpret_cast<const uint8_t*>(entry.payload.data());
  if (entry.kind == EntryKind::kData) {
    protocol::RecordInput record;
    record.value = std::span<const uint8_t>(payload, entry.payload.size());
    record.timestamp = timestamp_ms;
    *batch = protocol::RecordBatchBuilder().add(record).build();
    return Status();
  }
  if (entry.payload.empty()) {
    const std::vector<uint8_t> value = leader_change_message(options_.local_id, options_.voters);
    *batch = protocol::build_leader_change_batch(value, timestamp_ms);
    return Status();
  }
  Status s = check_leader_change_message({payload, entry.payload.size()});
  if (!s.ok()) return Status::invalid_argument("raft log: a leader-change payload: " + s.message());
  *batch = protocol::build_leader_change_batch({payload, entry.payload.size()}, timestamp_ms);
  return Status();
}

Status SegmentLog::append(const std::vector<Entry>& entries) {
  Status s = check_appendable(last_epoch(), entries);
  if (!s.ok()) return s;
  for (const Entry& entry : entries) {
    // One record per entry: the controller log's entries cover one offset.
    if (entry.offsets != 1) return Status::invalid_argument("raft log: a SegmentLog entry covers one offset");
  }
  const Offset start = end_offset();
  for (const Entry& entry : entries) {
    const int64_t now = options_.clock ? options_.clock() : port::wall_clock_millis();
    std::vector<uint8_t> batch;
    s = encode_entry(entry, now, &batch);
    storage::AppendResult result;
    if (s.ok()) {
      s = log_->append(batch, storage::AppendOptions{.leader_epoch = entry.epoch, .now_ms = now, .crc_verified = true},
                       &result);
    }
    if (!s.ok()) {
      if (end_offset() > start) (void)log_->truncate_to(start);
      return s;
    }
  }
  return Status();
}

Status SegmentLog::truncate_to(Offset offset) {
  if (offset < start_.end_offset) return Status::out_of_range("raft log: truncate below the log start");
  return log_->truncate_to(offset);
}

Status SegmentLog::flush() {
  const Offset end = end_offset();
  if (log_->durable_offset() >= end) return Status();
  if (!log_->wait_durable(end, options_.flush_timeout_ms)) {
    return Status::io_error("raft log: " + log_->directory() + " not durable up to " + std::to_string(end) +
                            " (the sync failed or timed out)");
  }
  return Status();
}

Status SegmentLog::delete_before(SnapshotId id) {
  if (Status s = check_deletable(*this, id); !s.ok()) return s;
  if (Status s = flush(); !s.ok()) return s;
  if (Status s = log_->delete_records_before(id.end_offset); !s.ok()) return s.with_context("raft log");
  start_ = id;
  return Status();
}

Status SegmentLog::reset_to(SnapshotId id) {
  if (id.empty() || id.epoch < 1) return Status::invalid_argument("raft log: reset to an empty snapshot id");
  // A new, empty directory whose log starts at id; the old one goes. A crash
  // before the rename keeps the old log (open() resets again: the snapshot
  // is stored before this is called), after it the new one.
  const std::string fresh = directory_ + ".reset";
  if (auto ec = port::remove_tree(fresh)) return Status::from_error_code(ec, fresh);
  if (auto ec = port::make_directories(fresh)) return Status::from_error_code(ec, fresh);
  if (Status s = storage::write_log_start_offset(fresh, id.end_offset); !s.ok()) return s.with_context(fresh);
  if (auto ec = port::sync_directory(fresh)) return Status::from_error_code(ec, fresh);
  (void)log_->close();
  log_.reset();
  const std::string old = directory_ + ".old";
  if (auto ec = port::remove_tree(old)) return Status::from_error_code(ec, old);
  if (auto ec = port::rename_file(directory_, old)) return Status::from_error_code(ec, directory_);
  if (auto ec = port::rename_file(fresh, directory_)) return Status::from_error_code(ec, fresh);
  const std::string parent = directory_.substr(0, directory_.find_last_of('/') + 1);
  if (auto ec = port::sync_directory(parent.empty() ? "." : parent)) return Status::from_error_code(ec, parent);
  (void)port::remove_tree(old);
  Status s = storage::PartitionLog::open(directory_, config_, flusher_, &log_);
  if (!s.ok()) return s.with_context(directory_);
  if (log_->log_start_offset() != id.end_offset || log_->log_end_offset() != id.end_offset) {
    return Status::corruption("raft log: " + directory_ + " reopened at " + std::to_string(log_->log_start_offset()) +
                              " after a reset to " + std::to_string(id.end_offset));
  }
  start_ = id;
  return Status();
}

}  // namespace eddy::raft
