// libFuzzer target: arbitrary records into record validation on append
// (protocol/record_validator.h), in place and through each codec's
// streaming decompressor (client/record_stream.h).
//
// Input: byte 0 picks the path, bytes 1-2 the batch's recordCount (1..),
// the rest is the records section:
//   0      uncompressed, walked in place
//   1..4   taken as gzip/snappy/lz4/zstd data as it is (the decompressors
//          meet corrupt and hostile streams)
//   5..8   compressed here with gzip/snappy/lz4/zstd first (the walker meets
//          every record fault through each stream)
// Besides crashes and sanitizer reports, a finding is a verdict that breaks
// the validator's promises: a refusal without a reason, record errors on a
// batch that is not refused for its timestamps, a MESSAGE_TOO_LARGE under
// the bound's size.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "client/compression.h"
#include "client/record_stream.h"
#include "protocol/big_endian.h"
#include "protocol/record_batch.h"
#include "protocol/record_validator.h"

namespace P = eddy::protocol;

namespace {

constexpr size_t kBound = 1 << 20;

std::vector<uint8_t> batch_of(const uint8_t* records, size_t size, int32_t count, int16_t codec) {
  namespace L = P::batch_layout;
  std::vector<uint8_t> b(L::kHeaderSize + size);
  if (size != 0) std::memcpy(b.data() + L::kHeaderSize, records, size);
  P::store_be32(b.data() + L::kBatchLength, static_cast<uint32_t>(b.size() - L::kLogOverhead));
  b[L::kMagic] = 2;
  P::store_be16(b.data() + L::kAttributes, static_cast<uint16_t>(codec));
  P::store_be32(b.data() + L::kLastOffsetDelta, static_cast<uint32_t>(count - 1));
  P::store_be64(b.data() + L::kBaseTimestamp, 1000);
  P::store_be64(b.data() + L::kMaxTimestamp, 1000);
  P::store_be64(b.data() + L::kProducerId, static_cast<uint64_t>(-1));
  P::store_be32(b.data() + L::kRecordCount, static_cast<uint32_t>(count));
  P::update_crc(b);
  return b;
}

void fail(const char* what) {
  std::fprintf(stderr, "finding: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const int mode = data[0] % 9;
  const int32_t count = 1 + ((data[1] << 8 | data[2]) % 512);
  const uint8_t* records = data + 3;
  size_t length = size - 3;
  int16_t codec = static_cast<int16_t>(mode == 0 ? 0 : mode <= 4 ? mode : mode - 4);
  std::vector<uint8_t> compressed;
  if (mode >= 5) {
    auto c = static_cast<P::Compression>(codec);
    if (!eddy::client::compress(c, {records, length}, &compressed).ok()) return 0;
    records = compressed.data();
    length = compressed.size();
  }
  std::vector<uint8_t> bytes = batch_of(records, length, count, codec);
  P::RecordBatchView view;
  if (P::RecordBatchView::parse(bytes, &view) != P::BatchError::kOk) fail("the harness built an unparsable batch");
  P::RecordStreamFactory open = [](P::Compression c, std::span<const uint8_t> in) {
    return eddy::client::open_record_stream(c, in, kBound);
  };
  P::RecordRules rules;
  rules.now_ms = 1000;
  rules.timestamp_before_max_ms = 1 << 20;
  rules.timestamp_after_max_ms = 1 << 20;
  rules.max_decompressed_batch_bytes = kBound;
  rules.max_decompressed_record_bytes = 1 << 16;
  rules.open_stream = &open;
  P::RecordVerdict v = P::validate_batch_records(view, rules);
  if (v.error != P::ErrorCode::kNone && v.message.empty()) fail("a refusal without a reason");
  if (!v.record_errors.empty() && v.error != P::ErrorCode::kInvalidTimestamp) fail("record errors without a timestamp refusal");
  if (v.record_errors.size() > P::kMaxRecordErrors) fail("more record errors than kept");
  if (v.error == P::ErrorCode::kMessageTooLarge && mode == 0) fail("MESSAGE_TOO_LARGE for an uncompressed batch");
  return 0;
}
