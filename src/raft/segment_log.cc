#include "raft/segment_log.h"

#include "raft/kafka_entries.h"

#include <algorithm>
#include <limits>
#include <string>

#include "port/port.h"
#include "protocol/control_batch.h"
#include "protocol/record_batch.h"

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

Status SegmentLog::open(storage::PartitionLog* log, SegmentLogOptions options, std::unique_ptr<SegmentLog>* out) {
  if (log->log_start_offset() != 0) {
    return Status::not_supported("raft log: " + log->directory() + " starts at offset " +
                                 std::to_string(log->log_start_offset()) + " (no snapshots yet)");
  }
  out->reset(new SegmentLog(log, std::move(options)));
  return Status();
}

Offset SegmentLog::durable_offset() const { return std::min(log_->durable_offset(), log_->log_end_offset()); }

Epoch SegmentLog::last_epoch() const { return std::max<Epoch>(log_->last_epoch(), 0); }

Epoch SegmentLog::epoch_at(Offset offset) const { return std::max<Epoch>(log_->epoch_at(offset), 0); }

EpochEndOffset SegmentLog::end_offset_for_epoch(Epoch epoch) const {
  storage::EpochEndOffset answer = log_->end_offset_for_epoch(epoch);
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

Status SegmentLog::truncate_to(Offset offset) { return log_->truncate_to(offset); }

Status SegmentLog::flush() {
  const Offset end = end_offset();
  if (log_->durable_offset() >= end) return Status();
  if (!log_->wait_durable(end, options_.flush_timeout_ms)) {
    return Status::io_error("raft log: " + log_->directory() + " not durable up to " + std::to_string(end) +
                            " (the sync failed or timed out)");
  }
  return Status();
}

}  // namespace eddy::raft
