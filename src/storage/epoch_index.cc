#include "storage/epoch_index.h"

#include <algorithm>

#include "protocol/big_endian.h"
#include "protocol/record_batch.h"
#include "storage/segment.h"

namespace eddy::storage {

namespace L = protocol::batch_layout;

namespace {

// The first entry starting after offset.
std::vector<EpochStart>::const_iterator first_after(const std::vector<EpochStart>& entries, int64_t offset) {
  return std::upper_bound(entries.begin(), entries.end(), offset,
                          [](int64_t o, const EpochStart& e) { return o < e.start_offset; });
}

}  // namespace

int32_t EpochIndex::epoch_at(int64_t offset) const {
  auto after = first_after(entries_, offset);
  return after == entries_.begin() ? kNoLeaderEpoch : std::prev(after)->epoch;
}

EpochEndOffset EpochIndex::end_offset_for_epoch(int32_t epoch, int64_t log_end_offset) const {
  auto after = std::upper_bound(entries_.begin(), entries_.end(), epoch,
                                [](int32_t e, const EpochStart& entry) { return e < entry.epoch; });
  if (after == entries_.begin()) return {0, 0};
  return {std::prev(after)->epoch, after == entries_.end() ? log_end_offset : after->start_offset};
}

bool EpochIndex::truncate_from(int64_t offset) {
  auto from = std::lower_bound(entries_.begin(), entries_.end(), offset,
                               [](const EpochStart& e, int64_t o) { return e.start_offset < o; });
  if (from == entries_.end()) return false;
  entries_.erase(from, entries_.end());
  return true;
}

bool EpochIndex::trim_before(int64_t offset) {
  const auto after = first_after(entries_, offset);
  if (after == entries_.begin()) return false;
  const auto holding = entries_.begin() + (after - entries_.begin()) - 1;
  if (holding == entries_.begin() && holding->start_offset == offset) return false;
  holding->start_offset = offset;
  entries_.erase(entries_.begin(), holding);
  return true;
}

std::vector<int64_t> EpochIndex::to_fields() const {
  std::vector<int64_t> fields;
  fields.reserve(entries_.size() * 2);
  for (const EpochStart& e : entries_) {
    fields.push_back(e.epoch);
    fields.push_back(e.start_offset);
  }
  return fields;
}

bool EpochIndex::from_fields(std::span<const int64_t> fields) {
  if (fields.size() % 2 != 0) return false;
  std::vector<EpochStart> entries;
  entries.reserve(fields.size() / 2);
  for (size_t i = 0; i < fields.size(); i += 2) {
    const int64_t epoch = fields[i];
    const int64_t start = fields[i + 1];
    if (epoch < 0 || epoch > INT32_MAX || start < 0) return false;
    if (!entries.empty() && (epoch <= entries.back().epoch || start <= entries.back().start_offset)) return false;
    entries.push_back(EpochStart{static_cast<int32_t>(epoch), start});
  }
  entries_ = std::move(entries);
  return true;
}

Status scan_epochs(const Segment& segment, EpochIndex* index, uint64_t* bytes_read) {
  constexpr size_t kScanChunk = 4 << 10;
  std::vector<uint8_t> chunk;
  uint64_t chunk_start = 0;
  const uint64_t end = segment.end_position();
  for (uint64_t position = 0; position < end;) {
    if (end - position < L::kHeaderSize) return Status::corruption("a stored batch header is cut short");
    if (chunk.empty() || position < chunk_start || position + L::kHeaderSize > chunk_start + chunk.size()) {
      chunk.resize(static_cast<size_t>(std::min<uint64_t>(kScanChunk, end - position)));
      Status s = segment.read(position, chunk.data(), chunk.size());
      if (!s.ok()) return s;
      *bytes_read += chunk.size();
      chunk_start = position;
    }
    const uint8_t* header = chunk.data() + (position - chunk_start);
    const uint64_t size = L::kLogOverhead + static_cast<uint64_t>(protocol::load_be32(header + L::kBatchLength));
    if (size < L::kHeaderSize || size > end - position) return Status::corruption("a stored batch header is invalid");
    index->note_batch(static_cast<int32_t>(protocol::load_be32(header + L::kPartitionLeaderEpoch)),
                      static_cast<int64_t>(protocol::load_be64(header + L::kBaseOffset)));
    position += size;
  }
  return Status();
}

}  // namespace eddy::storage
