#include "raft/batch_log.h"

#include <algorithm>
#include <charconv>
#include <string_view>

#include "port/port.h"
#include "port/replace_file.h"
#include "protocol/record_batch.h"

namespace eddy::raft {

namespace {

constexpr std::string_view kStartHeader = "eddy-raft-log-start 1";

std::string start_file_path(const storage::PartitionLog& partition) {
  return partition.directory() + "/" + BatchLog::kStartFileName;
}

std::string format_start(SnapshotId id) {
  return std::string(kStartHeader) + "\nend_offset=" + std::to_string(id.end_offset) +
         "\nepoch=" + std::to_string(id.epoch) + "\n";
}

// "key=value\n" at the front of *rest into *value.
bool take_line(std::string_view* rest, std::string_view key, int64_t* value) {
  const size_t nl = rest->find('\n');
  if (nl == std::string_view::npos) return false;
  std::string_view line = rest->substr(0, nl);
  rest->remove_prefix(nl + 1);
  if (line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != '=') return false;
  line.remove_prefix(key.size() + 1);
  auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), *value);
  return ec == std::errc() && end == line.data() + line.size();
}

Status parse_start(std::string_view text, SnapshotId* id) {
  int64_t end_offset = 0, epoch = 0;
  if (text.substr(0, kStartHeader.size()) != kStartHeader || text.size() == kStartHeader.size() ||
      text[kStartHeader.size()] != '\n') {
    return Status::corruption("not a raft log start");
  }
  text.remove_prefix(kStartHeader.size() + 1);
  if (!take_line(&text, "end_offset", &end_offset) || !take_line(&text, "epoch", &epoch) || !text.empty() ||
      end_offset < 1 || epoch < 1 || epoch > INT32_MAX) {
    return Status::corruption("not a raft log start");
  }
  *id = SnapshotId{end_offset, static_cast<Epoch>(epoch)};
  return Status();
}

Status invalid_entry(Offset offset, const std::string& what) {
  return Status::invalid_argument("raft batch log: the entry at " + std::to_string(offset) + " " + what);
}

Status corrupt_batch(Offset offset, const std::string& what) {
  return Status::corruption("raft batch log: the batch at offset " + std::to_string(offset) + " " + what);
}

}  // namespace

EntryKind batch_entry_kind(const protocol::RecordBatchView& view) {
  return view.is_empty() && view.producer_id() < 0 && !view.is_control() ? EntryKind::kLeaderChange
                                                                           : EntryKind::kData;
}

Status BatchLog::open(storage::PartitionLog* partition, BatchLogOptions options, std::unique_ptr<BatchLog>* out) {
  std::unique_ptr<BatchLog> log(new BatchLog(partition, std::move(options)));
  Status s = log->read_start_file(&log->recorded_start_);
  if (!s.ok()) return s;
  *out = std::move(log);
  return Status();
}

Status BatchLog::read_start_file(SnapshotId* id) const {
  *id = SnapshotId{};
  const std::string path = start_file_path(*partition_);
  if (!port::path_exists(path)) return Status();
  port::File file;
  if (auto ec = port::File::open(path, port::OpenMode::kReadOnly, &file)) return Status::from_error_code(ec, path);
  char text[128];
  size_t got = 0;
  if (auto ec = file.read_at(0, text, sizeof text, &got)) return Status::from_error_code(ec, path);
  return parse_start(std::string_view(text, got), id).with_context(path);
}

SnapshotId BatchLog::start() const {
  const Offset log_start = partition_->log_start_offset();
  if (log_start == 0) return SnapshotId{};
  if (log_start == recorded_start_.end_offset) return recorded_start_;
  // Moved by the partition itself (the ring, retention): the first kept
  // batch's epoch, at least the true one (see the header); none kept: the
  // epoch is not known, and 0 makes the start older than any entry.
  return SnapshotId{log_start, log_start < end_offset() ? epoch_at(log_start) : 0};
}

Offset BatchLog::durable_offset() const {
  return std::max(start().end_offset, std::min(partition_->durable_offset(), partition_->log_end_offset()));
}

Epoch BatchLog::last_epoch() const {
  const SnapshotId first = start();
  return end_offset() > first.end_offset ? std::max<Epoch>(partition_->last_epoch(), 0) : first.epoch;
}

Epoch BatchLog::epoch_at(Offset offset) const { return std::max<Epoch>(partition_->epoch_at(offset), 0); }

Offset BatchLog::boundary_at_or_below(Offset offset) const {
  const Offset first = start().end_offset;
  if (offset <= first || offset >= end_offset()) return offset;
  storage::BatchLocation location;
  if (!partition_->lookup(offset, &location).ok()) return offset;
  return std::max(first, location.batch.info.base_offset);
}

EpochEndOffset BatchLog::end_offset_for_epoch(Epoch epoch) const {
  const storage::EpochEndOffset answer = partition_->end_offset_for_epoch(epoch);
  if (answer.epoch <= 0 && answer.end_offset <= 0) {
    // No batch answers: the start does when its epoch is small enough.
    const SnapshotId first = start();
    if (first.empty() || first.epoch > epoch) return {0, 0};
    return {first.epoch, first.end_offset};
  }
  return EpochEndOffset{answer.epoch, answer.end_offset};
}

Status BatchLog::read(Offset offset, size_t max_entries, std::vector<Entry>* out) const {
  out->clear();
  const Offset end = end_offset();
  if (offset < 0 || offset >= end || max_entries == 0) return Status();
  if (offset < start().end_offset) {
    return Status::out_of_range("raft batch log: offset " + std::to_string(offset) + " is below the log start");
  }
  std::vector<uint8_t> bytes;
  int64_t next = 0;
  Status s = partition_->read_copy(offset, options_.max_read_bytes, end, &bytes, &next);
  if (!s.ok()) return s;
  protocol::BatchIterator batches(bytes, /*verify_crc=*/true);
  protocol::RecordBatchView view;
  std::vector<Entry> entries;
  Offset at = offset;
  while (entries.size() < max_entries && batches.next(&view)) {
    if (view.base_offset() != at) {
      if (at == offset && view.base_offset() < offset) {
        return Status::invalid_argument("raft batch log: offset " + std::to_string(offset) + " is inside a batch");
      }
      return corrupt_batch(at, "has base offset " + std::to_string(view.base_offset()));
    }
    if (view.partition_leader_epoch() <= 0) return corrupt_batch(at, "has no leader epoch");
    Entry entry;
    entry.epoch = view.partition_leader_epoch();
    entry.kind = batch_entry_kind(view);
    entry.offsets = view.last_offset_delta() + 1;
    entry.payload.assign(reinterpret_cast<const char*>(view.bytes().data()), view.size());
    at += entry.offsets;
    entries.push_back(std::move(entry));
  }
  if (entries.size() < max_entries && batches.error() != protocol::BatchError::kOk) {
    return corrupt_batch(at, protocol::batch_error_name(batches.error()));
  }
  if (entries.empty()) return corrupt_batch(at, "is missing");
  *out = std::move(entries);
  return Status();
}

Status BatchLog::encode_entry(const Entry& entry, std::vector<uint8_t>* batch) const {
  const Offset at = end_offset();
  if (entry.kind == EntryKind::kLeaderChange && entry.payload.empty()) {
    *batch = protocol::build_empty_batch(options_.clock ? options_.clock() : port::wall_clock_millis());
    return Status();
  }
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(entry.payload.data()), entry.payload.size());
  protocol::RecordBatchView view;
  const protocol::BatchError e = protocol::RecordBatchView::parse(bytes, &view);
  if (e != protocol::BatchError::kOk) return invalid_entry(at, std::string("is not a batch: ") + protocol::batch_error_name(e));
  if (view.size() != bytes.size()) return invalid_entry(at, "is not one whole batch");
  if (view.last_offset_delta() + 1 != entry.offsets) {
    return invalid_entry(at, "covers " + std::to_string(entry.offsets) + " offsets, its batch " +
                                 std::to_string(view.last_offset_delta() + 1));
  }
  if (batch_entry_kind(view) != entry.kind) {
    return invalid_entry(at, entry.kind == EntryKind::kLeaderChange ? "is a leader change but not an empty batch"
                                                                    : "is data but an empty batch");
  }
  if (!view.crc_matches()) return Status::corruption("raft batch log: the entry at " + std::to_string(at) +
                                                     ": CRC-32C mismatch");
  batch->assign(bytes.begin(), bytes.end());
  return Status();
}

Status BatchLog::append(const std::vector<Entry>& entries) {
  Status s = check_appendable(last_epoch(), entries);
  if (!s.ok()) return s;
  const Offset first = end_offset();
  std::vector<uint8_t> batch;
  for (const Entry& entry : entries) {
    s = encode_entry(entry, &batch);
    storage::AppendResult result;
    if (s.ok()) {
      s = partition_->append(
          batch, storage::AppendOptions{.leader_epoch = entry.epoch, .crc_verified = true, .keep_timestamps = true},
          &result);
    }
    if (!s.ok()) {
      if (end_offset() > first) (void)partition_->truncate_to(first);
      return s;
    }
  }
  return Status();
}

Status BatchLog::truncate_to(Offset offset) {
  if (offset < start().end_offset) return Status::out_of_range("raft batch log: truncate below the log start");
  return partition_->truncate_to(offset);
}

Status BatchLog::flush() {
  if (partition_->durable_offset() < end_offset()) partition_->request_sync();
  return Status();
}

Status BatchLog::delete_before(SnapshotId id) {
  if (Status s = check_deletable(*this, id); !s.ok()) return s;
  if (recorded_start_ != id) {
    if (Status s = store(id, snapshot_bytes(id)); !s.ok()) return s;
  }
  // DeleteRecords stays below the partition's own high watermark, the
  // durable offset when acks wait for the disk.
  if (partition_->high_watermark() < id.end_offset && !partition_->wait_durable(id.end_offset, options_.flush_timeout_ms)) {
    return Status::io_error("raft batch log: " + partition_->directory() + " not durable up to " +
                            std::to_string(id.end_offset) + " (the sync failed or timed out)");
  }
  return partition_->delete_records_before(id.end_offset).with_context("raft batch log");
}

Status BatchLog::reset_to(SnapshotId id) {
  if (id.empty() || id.epoch < 1) return Status::invalid_argument("raft batch log: reset to an empty snapshot id");
  if (recorded_start_ != id) {
    if (id.end_offset <= recorded_start_.end_offset && !recorded_start_.empty()) {
      return Status::invalid_argument("raft batch log: reset to " + std::to_string(id.end_offset) +
                                      ", not past the recorded start " + std::to_string(recorded_start_.end_offset));
    }
    if (Status s = store(id, snapshot_bytes(id)); !s.ok()) return s;
  }
  return partition_->reset_to(id.end_offset).with_context("raft batch log");
}

SnapshotId BatchLog::latest() const {
  const SnapshotId first = start();
  return recorded_start_.end_offset > first.end_offset ? recorded_start_ : first;
}

int64_t BatchLog::latest_size() const {
  return latest().empty() ? 0 : static_cast<int64_t>(snapshot_bytes(latest()).size());
}

Status BatchLog::read(SnapshotId id, int64_t position, size_t max_bytes, std::string* out) const {
  out->clear();
  const SnapshotId current = latest();
  if (id.empty() || id != current) return Status::not_found("raft batch log: no snapshot " + std::to_string(id.end_offset));
  const std::string bytes = snapshot_bytes(current);
  if (position < 0 || position > static_cast<int64_t>(bytes.size())) {
    return Status::out_of_range("raft batch log: position " + std::to_string(position) + " outside the snapshot");
  }
  *out = bytes.substr(static_cast<size_t>(position), max_bytes);
  return Status();
}

Status BatchLog::store(SnapshotId id, const std::string& bytes) {
  if (Status s = check_storable(latest(), id); !s.ok()) return s;
  if (bytes != snapshot_bytes(id)) {
    return Status::invalid_argument("raft batch log: a partition's snapshot holds its start id, not " +
                                    std::to_string(bytes.size()) + " other bytes");
  }
  const std::string path = start_file_path(*partition_);
  const std::string text = format_start(id);
  if (auto ec = port::replace_file(path, text.data(), text.size(), /*durable=*/true)) {
    return Status::from_error_code(ec, path);
  }
  recorded_start_ = id;
  return Status();
}

std::string BatchLog::snapshot_bytes(SnapshotId id) {
  std::string bytes(12, '\0');
  for (int i = 0; i < 8; ++i) bytes[static_cast<size_t>(i)] = static_cast<char>(id.end_offset >> (56 - 8 * i));
  for (int i = 0; i < 4; ++i) bytes[static_cast<size_t>(8 + i)] = static_cast<char>(id.epoch >> (24 - 8 * i));
  return bytes;
}

}  // namespace eddy::raft
