#include "storage/segment.h"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <limits>

#include "port/log.h"
#include "protocol/record_batch.h"
#include "storage/log_config.h"
#include "storage/recovery.h"

namespace eddy::storage {

namespace L = protocol::batch_layout;

// Every position in a segment (< its capacity <= kMaxSegmentBytes) fits the
// index's entries.
static_assert(kMaxSegmentBytes <= std::numeric_limits<decltype(SegmentIndex::Entry::position)>::max());

std::string segment_file_name(int64_t base_offset) {
  char name[32];
  std::snprintf(name, sizeof(name), "%020" PRId64 ".log", base_offset);
  return name;
}

std::string index_file_name(int64_t base_offset) {
  char name[32];
  std::snprintf(name, sizeof(name), "%020" PRId64 ".index", base_offset);
  return name;
}

bool parse_offset_file_name(const std::string& name, const char* suffix, int64_t* base_offset) {
  size_t suffix_length = std::strlen(suffix);
  if (name.size() != 20 + suffix_length || name.compare(20, suffix_length, suffix) != 0) return false;
  uint64_t value = 0;
  for (size_t i = 0; i < 20; ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
    uint64_t digit = static_cast<uint64_t>(name[i] - '0');
    if (value > (static_cast<uint64_t>(INT64_MAX) - digit) / 10) return false;
    value = value * 10 + digit;
  }
  *base_offset = static_cast<int64_t>(value);
  return true;
}

namespace {

// Reads batch headers one after another from a known-good region of a
// segment ([position, end) holds batches written by us or validated by
// recovery), through a small buffer so that walking short batches costs one
// pread per buffer, not per batch.
class HeaderWalker {
 public:
  HeaderWalker(const port::File& file, uint64_t position, uint64_t end)
      : file_(file), position_(position), end_(end) {}

  uint64_t position() const { return position_; }

  // Reads the header at position() and advances past the batch. *done when
  // position() == end.
  Status next(BatchPosition* out, bool* done) {
    *done = position_ >= end_;
    if (*done) return Status();
    if (end_ - position_ < L::kHeaderSize) return corrupt("short tail");
    if (position_ < buffer_start_ || position_ + L::kHeaderSize > buffer_start_ + buffer_length_) {
      size_t want = static_cast<size_t>(std::min<uint64_t>(buffer_.size(), end_ - position_));
      size_t got = 0;
      std::error_code ec = file_.read_at(position_, buffer_.data(), want, &got);
      if (ec) {
        EDDY_LOG_ERROR("segment read at {} failed: {}", position_, port::error_message(ec));
        return Status::from_error_code(ec, "segment read");
      }
      if (got < L::kHeaderSize) return corrupt("file shorter than its index");
      buffer_start_ = position_;
      buffer_length_ = got;
    }
    const uint8_t* p = buffer_.data() + (position_ - buffer_start_);
    int32_t length = static_cast<int32_t>(protocol::load_be32(p + L::kBatchLength));
    if (length < static_cast<int32_t>(L::kHeaderSize - L::kLogOverhead) ||
        static_cast<uint64_t>(length) + L::kLogOverhead > end_ - position_) {
      return corrupt("bad batch length");
    }
    out->position = position_;
    out->info.base_offset = static_cast<int64_t>(protocol::load_be64(p + L::kBaseOffset));
    out->info.last_offset = out->info.base_offset + static_cast<int32_t>(protocol::load_be32(p + L::kLastOffsetDelta));
    out->info.max_timestamp = static_cast<int64_t>(protocol::load_be64(p + L::kMaxTimestamp));
    out->info.size = static_cast<uint32_t>(length) + L::kLogOverhead;
    position_ += out->info.size;
    header_ = p;
    return Status();
  }

  // The fixed fields of the batch next() last returned (until the next call).
  std::span<const uint8_t> header() const { return {header_, L::kHeaderSize}; }

 private:
  Status corrupt(const char* what) {
    EDDY_LOG_ERROR("segment data at {} does not match its index: {}", position_, what);
    return Status::io_error(std::string("segment data does not match its index: ") + what);
  }

  const port::File& file_;
  uint64_t position_;
  uint64_t end_;
  uint64_t buffer_start_ = 0;
  size_t buffer_length_ = 0;
  const uint8_t* header_ = nullptr;
  std::array<uint8_t, 8192> buffer_;
};

}  // namespace

Segment::Segment(std::string path, std::shared_ptr<SegmentFile> file, uint64_t capacity, int64_t base_offset,
                 uint32_t index_interval)
    : path_(std::move(path)),
      file_(std::move(file)),
      lease_(std::make_shared<Lease>(Lease{file_})),
      capacity_(capacity),
      index_(base_offset, index_interval) {}

Status Segment::create(const std::string& path, int64_t base_offset, uint64_t capacity, uint32_t index_interval,
                       std::unique_ptr<Segment>* out) {
  auto file = std::make_shared<SegmentFile>();
  std::error_code ec = port::File::open(path, port::OpenMode::kCreate, &file->file);
  // An existing file of that name can only be a leftover: empty it so that
  // none of its bytes can be mistaken for data.
  if (!ec) ec = file->file.truncate(0);
  if (!ec) ec = file->file.preallocate(0, capacity);
  if (ec) {
    EDDY_LOG_ERROR("cannot create segment {} ({} bytes): {}", path, capacity,
                   port::error_message(ec));
    file->file.close();
    port::remove_file(path);
    return Status::from_error_code(ec);
  }
  out->reset(new Segment(path, std::move(file), capacity, base_offset, index_interval));
  return Status();
}

Status Segment::open(const std::string& path, int64_t base_offset, uint32_t index_interval,
                     std::unique_ptr<Segment>* out) {
  auto file = std::make_shared<SegmentFile>();
  std::error_code ec = port::File::open(path, port::OpenMode::kReadWrite, &file->file);
  uint64_t size = 0;
  if (!ec) ec = file->file.size(&size);
  if (ec) {
    EDDY_LOG_ERROR("cannot open segment {}: {}", path, port::error_message(ec));
    return Status::from_error_code(ec);
  }
  if (size > kMaxSegmentBytes) {
    // Not written by Eddy (segment.bytes never allows it). Positions past the
    // limit would not fit the index: the segment ends there, what follows is
    // never read, zeroed or served.
    EDDY_LOG_WARN("segment {} has {} bytes, more than a segment can hold; using the first {}",
                  path, size, kMaxSegmentBytes);
    size = kMaxSegmentBytes;
  }
  out->reset(new Segment(path, std::move(file), size, base_offset, index_interval));
  return Status();
}

std::unique_ptr<Segment> Segment::reuse(std::unique_ptr<Segment> retired, const std::string& path,
                                        int64_t base_offset, uint32_t index_interval) {
  return std::unique_ptr<Segment>(
      new Segment(path, std::move(retired->file_), retired->capacity_, base_offset, index_interval));
}

Status Segment::append(std::span<const uint8_t> batch, const BatchInfo& info) {
  uint64_t position = index_.end_position();
  std::error_code ec = file_->file.write_at(position, batch.data(), batch.size());
  if (ec) {
    EDDY_LOG_ERROR("write to {} at {} failed: {}", path_, position, port::error_message(ec));
    return Status::from_error_code(ec);
  }
  index_.add(position, info);
  return Status();
}

Status Segment::truncate(uint64_t position) {
  SegmentIndex index(base_offset(), index_.interval_bytes());
  HeaderWalker walker(file_->file, 0, position);
  for (;;) {
    BatchPosition batch;
    bool done = false;
    Status s = walker.next(&batch, &done);
    if (!s.ok()) return s;
    if (done) break;
    index.add(batch.position, batch.info);
  }
  if (index_.end_position() > position) {
    uint64_t dropped = 0, read = 0, written = 0;
    Status s = zero_tail(file_->file, position, index_.end_position(), &dropped, &read, &written);
    if (!s.ok()) return s;
  }
  index_ = std::move(index);
  return Status();
}

Status Segment::read(uint64_t position, void* out, size_t length) const {
  size_t got = 0;
  std::error_code ec = file_->file.read_at(position, out, length, &got);
  if (ec) return Status::from_error_code(ec);
  return got == length ? Status() : Status::io_error("short read");
}

Status Segment::locate(int64_t offset, BatchPosition* out) const {
  if (offset < base_offset() || offset >= next_offset()) return Status::out_of_range("offset out of range");
  HeaderWalker walker(file_->file, index_.floor_offset(offset).position, index_.end_position());
  for (;;) {
    bool done = false;
    Status s = walker.next(out, &done);
    if (!s.ok()) return s;
    if (done) return Status::io_error("offset missing from its segment");  // the index promised the offset
    if (out->info.last_offset >= offset) return Status();
  }
}

Status Segment::visit_headers(int64_t offset, const HeaderVisitor& each) const {
  if (offset < base_offset() || offset >= next_offset()) return Status::out_of_range("offset out of range");
  HeaderWalker walker(file_->file, index_.floor_offset(offset).position, index_.end_position());
  for (;;) {
    BatchPosition batch;
    bool done = false;
    Status s = walker.next(&batch, &done);
    if (!s.ok() || done) return s;
    if (batch.info.last_offset < offset) continue;
    bool stop = false;
    s = each(batch, walker.header(), &stop);
    if (!s.ok() || stop) return s;
  }
}

Status Segment::read_end(uint64_t from, uint64_t limit, int64_t upper_offset, bool include_first, uint64_t* end,
                         int64_t* next_offset) const {
  *end = from;
  if (from >= index_.end_position()) return Status();
  if (upper_offset >= index_.next_offset() && limit >= index_.end_position()) {
    // Every batch from `from` on is below both bounds (a consumer at the
    // tail, every time): nothing to read from the file to know that.
    *end = index_.end_position();
    *next_offset = index_.next_offset();
    return Status();
  }
  // Batches before an index entry that lies below both bounds are all
  // included: start walking there.
  uint64_t start = from;
  if (limit > from) {
    uint64_t by_size = index_.floor_position(limit).position;
    uint64_t by_offset = upper_offset > base_offset() ? index_.floor_offset(upper_offset).position : 0;
    uint64_t jump = std::min(by_size, by_offset);
    if (jump > from) start = jump;
  }
  HeaderWalker walker(file_->file, start, index_.end_position());
  BatchPosition batch;
  bool first = include_first && start == from;
  bool jumped = start > from;
  for (;;) {
    bool done = false;
    Status s = walker.next(&batch, &done);
    if (!s.ok()) return s;
    if (done) break;
    if (jumped) {
      // Every batch in [from, start) is included.
      *end = start;
      *next_offset = batch.info.base_offset;
      jumped = false;
    }
    if (batch.info.base_offset >= upper_offset) break;
    if (!first && batch.position + batch.info.size > limit) break;
    first = false;
    *end = batch.position + batch.info.size;
    *next_offset = batch.info.last_offset + 1;
  }
  return Status();
}

Status Segment::find_timestamp(int64_t timestamp, int64_t min_offset, BatchPosition* out, bool* found) const {
  *found = false;
  if (index_.empty() || index_.max_timestamp() < timestamp || min_offset >= next_offset()) return Status();
  uint64_t start = index_.floor_timestamp(timestamp).position;
  if (min_offset > base_offset()) start = std::max<uint64_t>(start, index_.floor_offset(min_offset).position);
  HeaderWalker walker(file_->file, start, index_.end_position());
  for (;;) {
    bool done = false;
    Status s = walker.next(out, &done);
    if (!s.ok() || done) return s;
    if (out->info.last_offset >= min_offset && out->info.max_timestamp >= timestamp) {
      *found = true;
      return Status();
    }
  }
}

Status Segment::grow_to(uint64_t capacity) {
  if (capacity <= capacity_) return Status();
  std::error_code ec = file_->file.preallocate(capacity_, capacity - capacity_);
  if (ec) {
    EDDY_LOG_ERROR("cannot extend {} to {} bytes: {}", path_, capacity, port::error_message(ec));
    return Status::from_error_code(ec);
  }
  capacity_ = capacity;
  return Status();
}

protocol::FileRegion Segment::region(uint64_t position, uint64_t length) const {
  protocol::FileRegion region;
  region.fd = file_->file.fd();
  region.offset = position;
  region.length = length;
  region.keep_alive = lease_;
  return region;
}

}  // namespace eddy::storage
