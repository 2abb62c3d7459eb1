#include "storage/segment_index.h"

#include <algorithm>

#include "port/port.h"
#include "protocol/record_batch.h"

namespace eddy::storage {

using protocol::load_be32;
using protocol::load_be64;
using protocol::store_be32;
using protocol::store_be64;

namespace {
constexpr uint32_t kIndexMagic = 0x45444958;  // "EDIX"
constexpr uint32_t kIndexVersion = 1;
// magic, version, base, next, end, last batch, max ts, entries, samples
constexpr size_t kIndexHeaderSize = 4 + 4 + 8 + 8 + 8 + 8 + 8 + 4 + 4;
// Upper bound on the size of an index file we accept (a 2 GiB segment of
// minimal batches at a 1-byte interval would need more; such a file is
// rejected and the segment rescanned).
constexpr size_t kMaxIndexFileBytes = 256u << 20;
}  // namespace

SegmentIndex::SegmentIndex(int64_t base_offset, uint32_t interval_bytes)
    : base_offset_(base_offset), interval_bytes_(std::max<uint32_t>(interval_bytes, 1)), next_offset_(base_offset) {}

void SegmentIndex::add(uint64_t position, const BatchInfo& info) {
  if (entries_.empty() || position - last_entry_position_ >= interval_bytes_) {
    if (entries_.size() % kTimeSampleStride == 0) time_samples_.push_back(max_timestamp_);
    entries_.push_back(Entry{static_cast<uint32_t>(info.base_offset - base_offset_), static_cast<uint32_t>(position)});
    last_entry_position_ = position;
  }
  last_batch_position_ = position;
  end_position_ = position + info.size;
  next_offset_ = info.last_offset + 1;
  max_timestamp_ = std::max(max_timestamp_, info.max_timestamp);
}

SegmentIndex::Entry SegmentIndex::floor_offset(int64_t offset) const {
  uint64_t relative = static_cast<uint64_t>(offset - base_offset_);
  auto it = std::upper_bound(entries_.begin(), entries_.end(), relative,
                             [](uint64_t r, const Entry& e) { return r < e.relative_offset; });
  return it == entries_.begin() ? entries_.front() : *(it - 1);
}

SegmentIndex::Entry SegmentIndex::floor_position(uint64_t position) const {
  auto it = std::upper_bound(entries_.begin(), entries_.end(), position,
                             [](uint64_t p, const Entry& e) { return p < e.position; });
  return it == entries_.begin() ? entries_.front() : *(it - 1);
}

SegmentIndex::Entry SegmentIndex::floor_timestamp(int64_t timestamp) const {
  // Samples are non-decreasing. The last sample < timestamp marks an entry
  // before which every batch is older than timestamp.
  auto it = std::lower_bound(time_samples_.begin(), time_samples_.end(), timestamp);
  size_t k = it == time_samples_.begin() ? 0 : static_cast<size_t>(it - time_samples_.begin()) - 1;
  return entries_[k * kTimeSampleStride];
}

size_t SegmentIndex::memory_bytes() const {
  return entries_.capacity() * sizeof(Entry) + time_samples_.capacity() * sizeof(int64_t);
}

std::vector<uint8_t> SegmentIndex::encode() const {
  std::vector<uint8_t> out(kIndexHeaderSize + entries_.size() * 8 + time_samples_.size() * 8 + 4);
  uint8_t* p = out.data();
  store_be32(p, kIndexMagic);
  store_be32(p + 4, kIndexVersion);
  store_be64(p + 8, static_cast<uint64_t>(base_offset_));
  store_be64(p + 16, static_cast<uint64_t>(next_offset_));
  store_be64(p + 24, end_position_);
  store_be64(p + 32, last_batch_position_);
  store_be64(p + 40, static_cast<uint64_t>(max_timestamp_));
  store_be32(p + 48, static_cast<uint32_t>(entries_.size()));
  store_be32(p + 52, static_cast<uint32_t>(time_samples_.size()));
  p += kIndexHeaderSize;
  for (const Entry& e : entries_) {
    store_be32(p, e.relative_offset);
    store_be32(p + 4, e.position);
    p += 8;
  }
  for (int64_t t : time_samples_) {
    store_be64(p, static_cast<uint64_t>(t));
    p += 8;
  }
  store_be32(p, port::crc32c(0, out.data(), out.size() - 4));
  return out;
}

bool SegmentIndex::decode(std::span<const uint8_t> bytes, int64_t base_offset, uint32_t interval_bytes,
                          SegmentIndex* out) {
  if (bytes.size() < kIndexHeaderSize + 4) return false;
  const uint8_t* p = bytes.data();
  if (load_be32(p) != kIndexMagic || load_be32(p + 4) != kIndexVersion) return false;
  if (port::crc32c(0, p, bytes.size() - 4) != load_be32(p + bytes.size() - 4)) return false;
  if (static_cast<int64_t>(load_be64(p + 8)) != base_offset) return false;
  uint64_t entry_count = load_be32(p + 48);
  uint64_t sample_count = load_be32(p + 52);
  if (bytes.size() != kIndexHeaderSize + entry_count * 8 + sample_count * 8 + 4) return false;
  if (sample_count != (entry_count + kTimeSampleStride - 1) / kTimeSampleStride) return false;
  // Both counts are 64-bit so that the size check above cannot wrap on a
  // 32-bit board; having passed it they are below bytes.size() / 8.
  const auto entries = static_cast<size_t>(entry_count);
  const auto samples = static_cast<size_t>(sample_count);

  SegmentIndex index(base_offset, interval_bytes);
  index.next_offset_ = static_cast<int64_t>(load_be64(p + 16));
  index.end_position_ = load_be64(p + 24);
  index.last_batch_position_ = load_be64(p + 32);
  index.max_timestamp_ = static_cast<int64_t>(load_be64(p + 40));
  if (index.next_offset_ < base_offset) return false;
  if (index.end_position_ == 0) {
    if (entry_count != 0 || index.next_offset_ != base_offset) return false;
  } else if (entry_count == 0 || index.last_batch_position_ >= index.end_position_ ||
             index.next_offset_ == base_offset) {
    return false;
  }
  p += kIndexHeaderSize;
  index.entries_.resize(entries);
  for (size_t i = 0; i < entries; ++i, p += 8) {
    Entry e{load_be32(p), load_be32(p + 4)};
    // Entries strictly increase in both columns and lie inside the data.
    if (i == 0 ? (e.position != 0 || e.relative_offset != 0)
               : (e.position <= index.entries_[i - 1].position ||
                  e.relative_offset <= index.entries_[i - 1].relative_offset)) {
      return false;
    }
    if (e.position > index.last_batch_position_ ||
        static_cast<int64_t>(e.relative_offset) >= index.next_offset_ - base_offset) {
      return false;
    }
    index.entries_[i] = e;
  }
  index.time_samples_.resize(samples);
  for (size_t i = 0; i < samples; ++i, p += 8) {
    index.time_samples_[i] = static_cast<int64_t>(load_be64(p));
    if (i > 0 && index.time_samples_[i] < index.time_samples_[i - 1]) return false;
  }
  if (!index.entries_.empty()) index.last_entry_position_ = index.entries_.back().position;
  *out = std::move(index);
  return true;
}

Status write_index_file(const std::string& path, const SegmentIndex& index) {
  std::vector<uint8_t> bytes = index.encode();
  port::File file;
  std::error_code ec = port::File::open(path, port::OpenMode::kCreate, &file);
  if (!ec) ec = file.truncate(0);
  if (!ec) ec = file.write_at(0, bytes.data(), bytes.size());
  if (!ec) ec = file.close();
  if (ec) return Status::from_error_code(ec, path);
  return Status();
}

bool read_index_file(const std::string& path, int64_t base_offset, uint32_t interval_bytes, SegmentIndex* out) {
  port::File file;
  if (port::File::open(path, port::OpenMode::kReadOnly, &file)) return false;
  uint64_t size = 0;
  if (file.size(&size) || size > kMaxIndexFileBytes) return false;
  std::vector<uint8_t> bytes(static_cast<size_t>(size));  // <= kMaxIndexFileBytes
  size_t got = 0;
  if (file.read_at(0, bytes.data(), bytes.size(), &got) || got != size) return false;
  return SegmentIndex::decode(bytes, base_offset, interval_bytes, out);
}

}  // namespace eddy::storage
