// Whole stored batches of one forwarded partition, read ahead of the send
// window: one LocalStore read (enough for a full request, not more) fills a
// buffer, and the link takes its batches one by one, sending them in place
// (the uplink producer rewrites their header in the buffer).
//
// Invariant: buffer[pos..] are whole stored batches continuing at the
// offset the link asks for next; the link drops the buffer (clear()) when it
// rewinds to an offset the buffer does not continue.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "forward/local_store.h"
#include "protocol/record_batch.h"

namespace eddy::forward {

class ReadAhead {
 public:
  enum class Result {
    kBatch,      // *batch: the next stored batch
    kStopping,   // the store is stopping
    kNone,       // nothing at offset now (at the log end, or the partition is gone)
    kDropped,    // offset is below the log start (*log_start_offset): data dropped locally
    kReadError,  // the local read failed (*error)
    kRaced,      // a stored batch does not parse (the read raced a recycle): read again later
  };

  bool empty() const { return pos_ >= buffer_.size(); }
  // The next batch at offset: from the buffer, or read with one
  // store->read of read_bytes when the buffer is empty. The batch is a view
  // into the buffer, valid until the next call.
  Result next(LocalStore* store, const std::string& topic, int32_t partition, int64_t offset, size_t read_bytes,
              protocol::RecordBatchView* batch, int64_t* log_start_offset, std::string* error);
  // The batch next() returned (of that many bytes) is taken, sent or
  // skipped; its bytes stay valid until the buffer is refilled or cleared.
  void consume(size_t batch_bytes) { pos_ += batch_bytes; }
  // Mutable bytes of a batch next() returned (sent in place).
  std::span<uint8_t> mutable_bytes(const protocol::RecordBatchView& batch);
  // Drops the buffer and its memory.
  void clear();
  // Whether batch (from next()) is data of a transaction that was aborted.
  bool in_aborted_transaction(const protocol::RecordBatchView& batch) const;

 private:
  std::vector<uint8_t> buffer_;
  // The aborted transactions the read that filled buffer_ overlaps.
  std::vector<storage::AbortedTransaction> aborted_;
  size_t pos_ = 0;
};

}  // namespace eddy::forward
