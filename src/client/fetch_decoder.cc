#include "client/fetch_decoder.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>

#include "client/compression.h"

namespace eddy::client {

namespace L = protocol::batch_layout;
using protocol::BatchError;
using protocol::RecordBatchView;

Status FetchDecoder::inflate(const RecordBatchView& batch, RecordBatchView* out) {
  Status s = decompress(batch.compression(), batch.records_bytes(), max_decompressed_, &decompressed_);
  if (!s.ok()) return s.with_context("batch at offset " + std::to_string(batch.base_offset()));
  // The same header over the decompressed records, marked uncompressed, so
  // the record iterator of the protocol room reads it. The CRC is not
  // updated: it was verified on the original bytes.
  if (decompressed_.size() > static_cast<size_t>(INT32_MAX) - L::kHeaderSize) {
    return Status::error(Status::Code::kCodec, "decompressed batch too large");
  }
  scratch_.resize(L::kHeaderSize + decompressed_.size());
  std::memcpy(scratch_.data(), batch.bytes().data(), L::kHeaderSize);
  if (!decompressed_.empty()) std::memcpy(scratch_.data() + L::kHeaderSize, decompressed_.data(), decompressed_.size());
  uint16_t attributes = static_cast<uint16_t>(batch.attributes() & ~protocol::batch_attributes::kCompressionMask);
  protocol::store_be16(scratch_.data() + L::kAttributes, attributes);
  protocol::store_be32(scratch_.data() + L::kBatchLength, static_cast<uint32_t>(scratch_.size() - L::kLogOverhead));
  if (RecordBatchView::parse(scratch_, out) != BatchError::kOk) {
    return Status::error(Status::Code::kProtocol,
                         "batch at offset " + std::to_string(batch.base_offset()) + ": malformed after decompression");
  }
  return Status();
}

Status FetchDecoder::decode(std::span<const uint8_t> records, int64_t position, const DecodedRecordCallback& on_record,
                            int64_t* next_position) {
  *next_position = position;
  protocol::BatchIterator batches(records);
  RecordBatchView batch;
  bool any_batch = false;
  while (batches.next(&batch)) {
    any_batch = true;
    if (batch.next_offset() <= position) continue;  // entirely before the position
    if (batch.is_control()) {
      *next_position = batch.next_offset();
      continue;
    }
    RecordBatchView plain = batch;
    if (batch.compression() != protocol::Compression::kNone) {
      Status s = inflate(batch, &plain);
      if (!s.ok()) return s;
    }
    const bool log_append_time = batch.timestamp_type() == protocol::TimestampType::kLogAppendTime;
    protocol::RecordIterator it(plain);
    protocol::Record record;
    while (it.next(&record)) {
      DecodedRecord out;
      out.offset = batch.base_offset() + record.offset_delta;
      if (out.offset < *next_position) continue;
      out.timestamp = log_append_time ? batch.max_timestamp() : batch.base_timestamp() + record.timestamp_delta;
      out.timestamp_type = batch.timestamp_type();
      out.record = &record;
      *next_position = out.offset + 1;
      if (!on_record(out)) return Status();
    }
    if (it.error() != BatchError::kOk) {
      return Status::error(Status::Code::kProtocol, "batch at offset " + std::to_string(batch.base_offset()) +
                                                      ": malformed records");
    }
    *next_position = std::max(*next_position, batch.next_offset());
  }
  switch (batches.error()) {
    case BatchError::kOk:
      return Status();
    case BatchError::kTruncated:
      if (any_batch) return Status();
      return Status::error(Status::Code::kProtocol, "the first batch at offset " + std::to_string(position) +
                                                      " is cut off (" + std::to_string(records.size()) +
                                                      " bytes fetched); raise the fetch size");
    case BatchError::kUnsupportedMagic:
      return Status::error(Status::Code::kProtocol, "message format v0/v1 (magic < 2) is not supported");
    case BatchError::kCrcMismatch:
      return Status::error(Status::Code::kProtocol, "corrupt batch after offset " + std::to_string(*next_position) +
                                                      " (CRC mismatch)");
    case BatchError::kInvalid:
      break;
  }
  return Status::error(Status::Code::kProtocol, "malformed batch after offset " + std::to_string(*next_position));
}

}  // namespace eddy::client
