#include "forward/read_ahead.h"

namespace eddy::forward {

ReadAhead::Result ReadAhead::next(LocalStore* store, const std::string& topic, int32_t partition, int64_t offset,
                                  size_t read_bytes, protocol::RecordBatchView* batch, int64_t* log_start_offset,
                                  std::string* error) {
  if (empty()) {
    buffer_.clear();
    aborted_.clear();
    pos_ = 0;
    LocalRead r;
    if (!store->read(topic, partition, offset, read_bytes, &r)) return Result::kStopping;
    if (!r.exists) return Result::kNone;
    if (r.status.code() == Status::Code::kOutOfRange && offset < r.log_start_offset) {
      *log_start_offset = r.log_start_offset;
      return Result::kDropped;
    }
    if (!r.status.ok()) {
      *error = std::string("local read: ") + r.status.to_string();
      return Result::kReadError;
    }
    if (r.bytes.empty()) return Result::kNone;
    buffer_ = std::move(r.bytes);
    aborted_ = std::move(r.aborted);
  }
  std::span<const uint8_t> rest(buffer_.data() + pos_, buffer_.size() - pos_);
  if (protocol::RecordBatchView::parse(rest, batch) != protocol::BatchError::kOk) {
    // Stored batches were validated on append; a broken one here means the
    // read raced a recycle. Drop the read-ahead and read again.
    buffer_.clear();
    pos_ = 0;
    return Result::kRaced;
  }
  return Result::kBatch;
}

std::span<uint8_t> ReadAhead::mutable_bytes(const protocol::RecordBatchView& batch) {
  const size_t at = static_cast<size_t>(batch.bytes().data() - buffer_.data());
  return std::span<uint8_t>(buffer_.data() + at, batch.size());
}

void ReadAhead::clear() {
  buffer_.clear();
  buffer_.shrink_to_fit();
  aborted_.clear();
  aborted_.shrink_to_fit();
  pos_ = 0;
}

bool ReadAhead::in_aborted_transaction(const protocol::RecordBatchView& batch) const {
  if (!batch.is_transactional()) return false;
  for (const storage::AbortedTransaction& a : aborted_) {
    if (a.producer_id == batch.producer_id() && a.first_offset <= batch.base_offset() &&
        batch.base_offset() < a.last_offset) {
      return true;
    }
  }
  return false;
}

}  // namespace eddy::forward
