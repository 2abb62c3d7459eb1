#include "storage/recovery.h"

#include <algorithm>
#include <vector>

#include <fmt/core.h>

#include "port/log.h"
#include "protocol/record_batch.h"
#include "protocol/record_validator.h"
#include "storage/segment.h"

namespace eddy::storage {

namespace L = protocol::batch_layout;
using protocol::BatchError;
using protocol::RecordBatchView;

namespace {

constexpr size_t kScanChunk = 1 << 20;
constexpr size_t kZeroChunk = 64 << 10;

// Reads one whole batch at position into *buffer (sized to it) and checks
// it; false when anything is wrong.
bool read_valid_batch(const port::File& file, uint64_t capacity, uint64_t position, std::vector<uint8_t>* buffer,
                      RecordBatchView* view) {
  uint8_t head[L::kLogOverhead];
  size_t got = 0;
  if (capacity - position < L::kHeaderSize) return false;
  if (file.read_at(position, head, sizeof(head), &got) || got != sizeof(head)) return false;
  size_t size = 0;
  if (protocol::peek_batch_size(head, &size) != BatchError::kOk || size > capacity - position) return false;
  buffer->resize(size);
  if (file.read_at(position, buffer->data(), size, &got) || got != size) return false;
  return RecordBatchView::parse(*buffer, view) == BatchError::kOk && view->crc_matches();
}

}  // namespace

Status scan_segment(const port::File& file, uint64_t capacity, SegmentIndex* index, ScanOutcome* out) {
  std::vector<uint8_t> buffer(static_cast<size_t>(std::min<uint64_t>(kScanChunk, std::max<uint64_t>(capacity, 1))));
  uint64_t buffer_start = 0;
  size_t buffer_length = 0;
  uint64_t position = 0;
  int64_t expected = index->base_offset();

  // Makes [position, position+length) available in buffer; false at end of
  // file.
  auto ensure = [&](size_t length) -> Status {
    if (position >= buffer_start && position + length <= buffer_start + buffer_length) return Status();
    if (length > buffer.size()) buffer.resize(length);
    size_t want = static_cast<size_t>(std::min<uint64_t>(buffer.size(), capacity - position));
    size_t got = 0;
    std::error_code ec = file.read_at(position, buffer.data(), want, &got);
    if (ec) return Status::from_error_code(ec);
    out->bytes_read += got;
    buffer_start = position;
    buffer_length = got;
    return Status();
  };
  auto available = [&] { return buffer_start + buffer_length - position; };

  for (;;) {
    if (capacity - position < L::kLogOverhead) break;
    Status s = ensure(L::kLogOverhead);
    if (!s.ok()) return s;
    if (available() < L::kLogOverhead) break;  // file shorter than it said
    const uint8_t* p = buffer.data() + (position - buffer_start);
    if (std::all_of(p, p + L::kLogOverhead, [](uint8_t b) { return b == 0; })) break;  // zeros: end of data
    size_t size = 0;
    if (protocol::peek_batch_size({p, L::kLogOverhead}, &size) != BatchError::kOk || size < L::kHeaderSize ||
        size > capacity - position) {
      out->stop_reason = "invalid batch length";
      break;
    }
    s = ensure(size);
    if (!s.ok()) return s;
    if (available() < size) {
      out->stop_reason = "truncated batch";
      break;
    }
    RecordBatchView view;
    BatchError e = RecordBatchView::parse({buffer.data() + (position - buffer_start), size}, &view);
    if (e != BatchError::kOk) {
      out->stop_reason = protocol::batch_error_name(e);
      break;
    }
    if (!view.crc_matches()) {
      out->stop_reason = protocol::batch_error_name(BatchError::kCrcMismatch);
      break;
    }
    if (view.base_offset() != expected) {
      // format_to_n, not fmt::format: the latter pulls 12 KiB more into the
      // static-libstdc++ ARM builds.
      char text[96];
      out->stop_reason.assign(
          text, fmt::format_to_n(text, sizeof(text), "batch offset {}, expected {}", view.base_offset(), expected).out);
      break;
    }
    if (view.compression() == protocol::Compression::kNone &&
        protocol::validate_batch_records(view, protocol::RecordRules{}).error != protocol::ErrorCode::kNone) {
      if (out->malformed_batches++ == 0) out->first_malformed_offset = view.base_offset();
    }
    index->add(position, BatchInfo{view.base_offset(), view.last_offset(), view.max_timestamp(),
                                   static_cast<uint32_t>(size)});
    expected = view.next_offset();
    position += size;
  }
  return Status();
}

Status zero_tail(port::File& file, uint64_t from, uint64_t capacity, uint64_t* dropped_bytes, uint64_t* bytes_read,
                 uint64_t* bytes_written) {
  *dropped_bytes = 0;
  std::vector<uint8_t> chunk(kZeroChunk);
  const std::vector<uint8_t> zeros(kZeroChunk, 0);
  for (uint64_t position = from; position < capacity;) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(kZeroChunk, capacity - position));
    size_t got = 0;
    std::error_code ec = file.read_at(position, chunk.data(), want, &got);
    if (ec) return Status::from_error_code(ec);
    *bytes_read += got;
    if (got == 0) break;
    auto first = std::find_if(chunk.begin(), chunk.begin() + static_cast<ptrdiff_t>(got), [](uint8_t b) { return b != 0; });
    if (first != chunk.begin() + static_cast<ptrdiff_t>(got)) {
      auto last = std::find_if(chunk.rbegin() + static_cast<ptrdiff_t>(kZeroChunk - got), chunk.rend(),
                               [](uint8_t b) { return b != 0; });
      size_t begin = static_cast<size_t>(first - chunk.begin());
      size_t end = static_cast<size_t>(chunk.rend() - last);
      ec = file.write_at(position + begin, zeros.data(), end - begin);
      if (ec) return Status::from_error_code(ec);
      *bytes_written += end - begin;
      *dropped_bytes = position + end - from;
    }
    position += got;
  }
  return Status();
}

bool verify_indexed_segment(const port::File& file, uint64_t capacity, const SegmentIndex& index) {
  if (index.end_position() > capacity) return false;
  if (index.empty()) return true;
  std::vector<uint8_t> buffer;
  RecordBatchView first;
  if (!read_valid_batch(file, capacity, 0, &buffer, &first) || first.base_offset() != index.base_offset()) {
    return false;
  }
  RecordBatchView last;
  if (!read_valid_batch(file, capacity, index.last_batch_position(), &buffer, &last)) return false;
  return last.next_offset() == index.next_offset() &&
         index.last_batch_position() + last.size() == index.end_position() &&
         (index.last_batch_position() != 0 || first.size() == last.size());
}

}  // namespace eddy::storage
