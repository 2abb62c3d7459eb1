#include "storage/transaction_index.h"

#include <algorithm>

#include "protocol/big_endian.h"
#include "protocol/record_batch.h"
#include "storage/segment.h"

namespace eddy::storage {

namespace L = protocol::batch_layout;
namespace A = protocol::batch_attributes;

void TransactionIndex::on_data_batch(int64_t producer_id, int64_t base_offset) {
  for (const Open& open : ongoing_) {
    if (open.producer_id == producer_id) return;  // its transaction goes on
  }
  ongoing_.push_back(Open{producer_id, base_offset});
}

void TransactionIndex::on_marker(int64_t producer_id, protocol::ControlType type, int64_t offset) {
  int64_t first = offset;
  for (auto it = ongoing_.begin(); it != ongoing_.end(); ++it) {
    if (it->producer_id == producer_id) {
      first = it->first_offset;
      ongoing_.erase(it);
      break;
    }
  }
  decided_.push_back(Decided{first, offset});
  if (type == protocol::ControlType::kAbort) {
    aborted_.push_back(AbortedTransaction{producer_id, first, offset});
    max_aborted_span_ = std::max(max_aborted_span_, offset - first);
  }
}

int64_t TransactionIndex::first_unstable_offset(int64_t high_watermark) const {
  int64_t first = -1;
  auto consider = [&](int64_t offset) {
    if (first < 0 || offset < first) first = offset;
  };
  for (const Open& open : ongoing_) consider(open.first_offset);
  for (const Decided& decided : decided_) {
    if (decided.marker_offset >= high_watermark) consider(decided.first_offset);
  }
  return first;
}

void TransactionIndex::settle(int64_t high_watermark) {
  std::erase_if(decided_, [&](const Decided& d) { return d.marker_offset < high_watermark; });
}

void TransactionIndex::trim_before(int64_t log_start_offset) {
  while (!aborted_.empty() && aborted_.front().last_offset < log_start_offset) aborted_.pop_front();
}

int64_t TransactionIndex::ongoing_first_offset(int64_t producer_id) const {
  for (const Open& open : ongoing_) {
    if (open.producer_id == producer_id) return open.first_offset;
  }
  return -1;
}

void TransactionIndex::encode(std::vector<uint8_t>* out) const {
  out->resize(4 + ongoing_.size() * 16 + 4 + 8 + aborted_.size() * 24);
  uint8_t* p = out->data();
  auto put64 = [&p](int64_t v) {
    protocol::store_be64(p, static_cast<uint64_t>(v));
    p += 8;
  };
  protocol::store_be32(p, static_cast<uint32_t>(ongoing_.size()));
  p += 4;
  for (const Open& open : ongoing_) {
    put64(open.producer_id);
    put64(open.first_offset);
  }
  protocol::store_be32(p, static_cast<uint32_t>(aborted_.size()));
  p += 4;
  put64(max_aborted_span_);
  for (const AbortedTransaction& a : aborted_) {
    put64(a.producer_id);
    put64(a.first_offset);
    put64(a.last_offset);
  }
}

bool TransactionIndex::decode(std::span<const uint8_t> bytes) {
  size_t at = 0;
  auto take = [&](size_t n) -> const uint8_t* {
    if (bytes.size() - at < n) return nullptr;
    at += n;
    return bytes.data() + at - n;
  };
  auto get64 = [](const uint8_t* p) { return static_cast<int64_t>(protocol::load_be64(p)); };
  const uint8_t* p = take(4);
  if (p == nullptr) return false;
  const uint32_t open_count = protocol::load_be32(p);
  if (open_count > (bytes.size() - at) / 16) return false;
  std::vector<Open> ongoing(open_count);
  for (Open& open : ongoing) {
    p = take(16);
    open = Open{get64(p), get64(p + 8)};
  }
  p = take(12);
  if (p == nullptr) return false;
  const uint32_t aborted_count = protocol::load_be32(p);
  const int64_t max_span = get64(p + 4);
  if (aborted_count != (bytes.size() - at) / 24 || (bytes.size() - at) % 24 != 0) return false;
  std::deque<AbortedTransaction> aborted;
  for (uint32_t i = 0; i < aborted_count; ++i) {
    p = take(24);
    aborted.push_back(AbortedTransaction{get64(p), get64(p + 8), get64(p + 16)});
  }
  ongoing_ = std::move(ongoing);
  decided_.clear();
  aborted_ = std::move(aborted);
  max_aborted_span_ = max_span;
  return true;
}

namespace {

constexpr size_t kScanChunk = 4 << 10;

// Feeds one control batch, read whole (it holds one small record).
Status feed_control_batch(const Segment& segment, uint64_t position, size_t size, int64_t producer_id,
                          int64_t base_offset, TransactionIndex* index, uint64_t* bytes_read) {
  std::vector<uint8_t> bytes(size);
  Status s = segment.read(position, bytes.data(), size);
  if (!s.ok()) return s;
  *bytes_read += size;
  protocol::RecordBatchView view;
  if (protocol::RecordBatchView::parse(bytes, &view) != protocol::BatchError::kOk) {
    return Status::corruption("a stored control batch does not parse");
  }
  // Kafka ignores control batches of types it does not know; so does this.
  if (auto type = protocol::control_type(view)) index->on_marker(producer_id, *type, base_offset);
  return Status();
}

}  // namespace

Status scan_transactions(const Segment& segment, TransactionIndex* index, uint64_t* bytes_read) {
  std::vector<uint8_t> chunk;
  uint64_t chunk_start = 0;
  const uint64_t end = segment.end_position();
  for (uint64_t position = 0; position + L::kHeaderSize <= end;) {
    if (chunk.empty() || position < chunk_start || position + L::kHeaderSize > chunk_start + chunk.size()) {
      chunk.resize(static_cast<size_t>(std::min<uint64_t>(kScanChunk, end - position)));
      Status s = segment.read(position, chunk.data(), chunk.size());
      if (!s.ok()) return s;
      *bytes_read += chunk.size();
      chunk_start = position;
    }
    const uint8_t* header = chunk.data() + (position - chunk_start);
    const size_t size = L::kLogOverhead + protocol::load_be32(header + L::kBatchLength);
    const int16_t attributes = static_cast<int16_t>(protocol::load_be16(header + L::kAttributes));
    if (size < L::kHeaderSize || position + size > end) return Status::corruption("a stored batch header is invalid");
    if ((attributes & (A::kTransactional | A::kControl)) != 0) {
      const auto base_offset = static_cast<int64_t>(protocol::load_be64(header + L::kBaseOffset));
      const auto producer_id = static_cast<int64_t>(protocol::load_be64(header + L::kProducerId));
      if ((attributes & A::kControl) == 0) {
        index->on_data_batch(producer_id, base_offset);
      } else {
        Status s = feed_control_batch(segment, position, size, producer_id, base_offset, index, bytes_read);
        if (!s.ok()) return s;
      }
    }
    position += size;
  }
  return Status();
}

}  // namespace eddy::storage
