// Record validation (protocol/record_validator.h): each fault of the
// integration test's list, in place and through a stream that hands out
// one byte at a time (every field split at every boundary), the
// decompressed-size bound, timestamps, and what is not walked.
#include "protocol/record_validator.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "port/port.h"
#include "protocol/big_endian.h"

namespace eddy::protocol {
namespace {

std::vector<uint8_t> varint(int64_t v) {
  std::vector<uint8_t> out;
  uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  while (z >= 0x80) {
    out.push_back(static_cast<uint8_t>(z | 0x80));
    z >>= 7;
  }
  out.push_back(static_cast<uint8_t>(z));
  return out;
}

void append(std::vector<uint8_t>* out, const std::vector<uint8_t>& more) {
  out->insert(out->end(), more.begin(), more.end());
}

// One record: attributes 0, the given timestamp and offset deltas, key "k",
// value `value`, no headers.
std::vector<uint8_t> record(int32_t offset_delta, int64_t timestamp_delta = 0, const std::string& value = "v") {
  std::vector<uint8_t> body{0};
  append(&body, varint(timestamp_delta));
  append(&body, varint(offset_delta));
  append(&body, varint(1));
  body.push_back('k');
  append(&body, varint(static_cast<int64_t>(value.size())));
  body.insert(body.end(), value.begin(), value.end());
  append(&body, varint(0));
  std::vector<uint8_t> out = varint(static_cast<int64_t>(body.size()));
  append(&out, body);
  return out;
}

// A batch header (CRC set) around records, which are stored as given (a
// "compressed" batch here just carries the codec bit; the test stream
// hands out the bytes as they are).
std::vector<uint8_t> batch(const std::vector<uint8_t>& records, int32_t count, int16_t attributes = 0,
                           int64_t base_timestamp = 1000) {
  namespace L = batch_layout;
  std::vector<uint8_t> b(L::kHeaderSize + records.size());
  if (!records.empty()) std::memcpy(b.data() + L::kHeaderSize, records.data(), records.size());
  store_be32(b.data() + L::kBatchLength, static_cast<uint32_t>(b.size() - L::kLogOverhead));
  b[L::kMagic] = 2;
  store_be16(b.data() + L::kAttributes, static_cast<uint16_t>(attributes));
  store_be32(b.data() + L::kLastOffsetDelta, static_cast<uint32_t>(count - 1));
  store_be64(b.data() + L::kBaseTimestamp, static_cast<uint64_t>(base_timestamp));
  store_be64(b.data() + L::kMaxTimestamp, static_cast<uint64_t>(base_timestamp));
  store_be64(b.data() + L::kProducerId, static_cast<uint64_t>(-1));
  store_be16(b.data() + L::kProducerEpoch, static_cast<uint16_t>(-1));
  store_be32(b.data() + L::kBaseSequence, static_cast<uint32_t>(-1));
  store_be32(b.data() + L::kRecordCount, static_cast<uint32_t>(count));
  update_crc(b);
  return b;
}

// Serves the records section as it is, one byte per read (or all of it).
class ByteStream final : public RecordStream {
 public:
  ByteStream(std::span<const uint8_t> bytes, size_t step) : bytes_(bytes), step_(step) {}
  Result read(std::span<uint8_t> into, size_t* got, std::string*) override {
    *got = std::min({into.size(), step_, bytes_.size() - pos_});
    std::memcpy(into.data(), bytes_.data() + pos_, *got);
    pos_ += *got;
    return Result::kOk;
  }

 private:
  std::span<const uint8_t> bytes_;
  size_t step_;
  size_t pos_ = 0;
};

struct Rig {
  RecordStreamFactory factory;
  RecordRules rules;
  explicit Rig(size_t step) {
    factory = [step](Compression, std::span<const uint8_t> compressed) {
      return std::make_unique<ByteStream>(compressed, step);
    };
    rules.open_stream = &factory;
    rules.now_ms = 1000;
  }
};

RecordVerdict check(const std::vector<uint8_t>& bytes, const RecordRules& rules) {
  RecordBatchView view;
  EXPECT_EQ(RecordBatchView::parse(bytes, &view), BatchError::kOk);
  return validate_batch_records(view, rules);
}

constexpr int16_t kZstd = static_cast<int16_t>(Compression::kZstd);

TEST(RecordValidator, GoodBatchesPassInPlaceAndThroughAStreamOfSingleBytes) {
  std::vector<uint8_t> records;
  for (int i = 0; i < 5; ++i) append(&records, record(i, i, std::string(300, 'x')));
  for (size_t step : {size_t{1}, size_t{7}, size_t{1} << 20}) {
    Rig s(step);
    for (int16_t attributes : {int16_t{0}, kZstd}) {
      RecordVerdict v = check(batch(records, 5, attributes), s.rules);
      EXPECT_EQ(v.error, ErrorCode::kNone) << v.message;
      EXPECT_TRUE(v.walked);
      EXPECT_EQ(v.max_timestamp, 1004);
    }
  }
}

TEST(RecordValidator, EachFaultIsInvalidRecordWhereverTheStreamSplitsIt) {
  std::vector<uint8_t> two = record(0);
  append(&two, record(1));
  std::vector<uint8_t> gap = record(0);
  append(&gap, record(2));
  std::vector<uint8_t> trailing = record(0);
  trailing.push_back(0);
  std::vector<uint8_t> negative_headers{0, 0, 0, 2, 'k', 2, 'v', 1};  // header count -1
  negative_headers.insert(negative_headers.begin(), static_cast<uint8_t>(negative_headers.size() * 2));
  struct Fault {
    const char* name;
    std::vector<uint8_t> records;
    int32_t count;
  } faults[] = {
      {"garbage", std::vector<uint8_t>(24, 0xff), 1},
      {"fewer records than the count", record(0), 2},
      {"more records than the count", two, 1},
      {"bytes after the last record", trailing, 1},
      {"offset deltas 0, 2", gap, 2},
      {"negative header count", negative_headers, 1},
      {"value past the end", std::vector<uint8_t>{18, 0, 0, 0, 2, 'k', 100, 'v', 0}, 1},
  };
  for (const Fault& f : faults) {
    for (size_t step : {size_t{1}, size_t{3}, size_t{1} << 20}) {
      Rig s(step);
      for (int16_t attributes : {int16_t{0}, kZstd}) {
        RecordVerdict v = check(batch(f.records, f.count, attributes), s.rules);
        EXPECT_EQ(v.error, ErrorCode::kInvalidRecord) << f.name << " step " << step << " attributes " << attributes;
        EXPECT_FALSE(v.message.empty()) << f.name;
      }
    }
  }
}

TEST(RecordValidator, DecompressedBatchBoundIsMessageTooLargeExactBoundIsFine) {
  std::vector<uint8_t> records = record(0, 0, std::string(1000, 'x'));
  Rig s(64);
  s.rules.max_decompressed_batch_bytes = records.size();
  EXPECT_EQ(check(batch(records, 1, kZstd), s.rules).error, ErrorCode::kNone);
  s.rules.max_decompressed_batch_bytes = records.size() - 1;
  RecordVerdict v = check(batch(records, 1, kZstd), s.rules);
  EXPECT_EQ(v.error, ErrorCode::kMessageTooLarge);
  EXPECT_NE(v.message.find("eddy.max.decompressed.batch.bytes"), std::string::npos);
  // In place, an uncompressed batch is bounded by max.message.bytes only.
  EXPECT_EQ(check(batch(records, 1), s.rules).error, ErrorCode::kNone);
}

TEST(RecordValidator, RecordBoundAppliesToCompressedRecordsOnly) {
  std::vector<uint8_t> records = record(0, 0, std::string(200, 'x'));
  Rig s(1 << 20);
  s.rules.max_decompressed_record_bytes = 100;
  EXPECT_EQ(check(batch(records, 1, kZstd), s.rules).error, ErrorCode::kInvalidRecord);
  EXPECT_EQ(check(batch(records, 1), s.rules).error, ErrorCode::kNone);
}

TEST(RecordValidator, TimestampsOutOfBoundsListEachBadRecord) {
  std::vector<uint8_t> records;
  const int64_t deltas[] = {0, -5000, 10, 7000};  // base 10000, now 10000
  for (int i = 0; i < 4; ++i) append(&records, record(i, deltas[i]));
  Rig s(1 << 20);
  s.rules.now_ms = 10000;
  s.rules.timestamp_before_max_ms = 1000;
  s.rules.timestamp_after_max_ms = 1000;
  RecordVerdict v = check(batch(records, 4, 0, 10000), s.rules);
  EXPECT_EQ(v.error, ErrorCode::kInvalidTimestamp);
  ASSERT_EQ(v.record_errors.size(), 2u);
  EXPECT_EQ(v.record_errors[0].index, 1);
  EXPECT_EQ(v.record_errors[1].index, 3);
  EXPECT_NE(v.record_errors[0].message.find("out of range"), std::string::npos);
  // A structural fault wins over timestamps (and clears them).
  append(&records, std::vector<uint8_t>{0xff});
  v = check(batch(records, 4, 0, 10000), s.rules);
  EXPECT_EQ(v.error, ErrorCode::kInvalidRecord);
  EXPECT_TRUE(v.record_errors.empty());
  // LogAppendTime topics take no timestamps from producers' records.
  s.rules.topic_timestamp_type = TimestampType::kLogAppendTime;
  records.pop_back();
  EXPECT_EQ(check(batch(records, 4, 0, 10000), s.rules).error, ErrorCode::kNone);
  // ... nor a batch a producer marked LogAppendTime.
  EXPECT_EQ(check(batch(records, 4, batch_attributes::kLogAppendTime, 10000), s.rules).error,
            ErrorCode::kInvalidTimestamp);
}

// Found by fuzz_record_validator: base + delta past INT64_MAX was signed
// overflow. It wraps as Java's long does, and the wrapped timestamp is
// judged like any other (far in the past here).
TEST(RecordValidator, TimestampSumsWrapAsKafkasLongsDo) {
  std::vector<uint8_t> records;
  append(&records, record(0, 1000));
  Rig s(1 << 20);
  s.rules.now_ms = 10000;
  s.rules.timestamp_before_max_ms = 1000;
  RecordVerdict v = check(batch(records, 1, 0, INT64_MAX - 10), s.rules);
  EXPECT_EQ(v.error, ErrorCode::kInvalidTimestamp);
  ASSERT_EQ(v.record_errors.size(), 1u);
  EXPECT_NE(v.record_errors[0].message.find(std::to_string(INT64_MIN + 989)), std::string::npos)
      << v.record_errors[0].message;
  // The base alone, at the top of the range, is far in the future.
  s.rules.timestamp_after_max_ms = 1000;
  std::vector<uint8_t> at_base;
  append(&at_base, record(0, 0));
  EXPECT_EQ(check(batch(at_base, 1, 0, INT64_MAX), s.rules).error, ErrorCode::kInvalidTimestamp);
}

// Every varint width, and one byte too many, reads alike in place and split
// at any point across a stream's chunks (timestamp deltas from 1 to 10
// bytes, a value length of 3 bytes).
TEST(RecordValidator, VarintsOfEveryWidthReadAlikeInPlaceAndAcrossChunkEdges) {
  std::vector<uint8_t> records;
  int64_t max_delta = 0;
  for (int width = 1; width <= 10; ++width) {
    // The largest zigzag value of `width` bytes is 2^(7 width) - 1; as a
    // varlong that is a positive delta of half of it.
    const int64_t delta = width == 10 ? INT64_MAX : static_cast<int64_t>((uint64_t{1} << (7 * width - 1)) - 1);
    ASSERT_EQ(varint(delta).size(), static_cast<size_t>(width));
    append(&records, record(width - 1, delta, std::string(width == 3 ? 20000 : 5, 'x')));
    max_delta = std::max(max_delta, delta);
  }
  for (size_t step : {size_t{1}, size_t{3}, size_t{9}, size_t{11}, size_t{1} << 20}) {
    Rig s(step);
    s.rules.topic_timestamp_type = TimestampType::kLogAppendTime;  // no bound on the deltas
    for (int16_t attributes : {int16_t{0}, kZstd}) {
      RecordVerdict v = check(batch(records, 10, attributes, 0), s.rules);
      EXPECT_EQ(v.error, ErrorCode::kNone) << v.message << " step " << step;
      EXPECT_EQ(v.max_timestamp, max_delta) << "step " << step;
    }
  }
  // An 11-byte timestamp delta (10 continuation bytes) is too long wherever
  // the chunk ends.
  std::vector<uint8_t> body{0};
  body.insert(body.end(), 10, 0x80);
  body.push_back(0);
  append(&body, varint(0));  // offset delta
  std::vector<uint8_t> too_long = varint(static_cast<int64_t>(body.size()));
  append(&too_long, body);
  for (size_t step : {size_t{1}, size_t{4}, size_t{1} << 20}) {
    Rig s(step);
    for (int16_t attributes : {int16_t{0}, kZstd}) {
      RecordVerdict v = check(batch(too_long, 1, attributes), s.rules);
      EXPECT_EQ(v.error, ErrorCode::kInvalidRecord) << "step " << step;
      EXPECT_NE(v.message.find("varint too long"), std::string::npos) << v.message;
    }
  }
}

TEST(RecordValidator, CompressedBatchesAreNotWalkedWithoutACodecOrWhenTurnedOff) {
  std::vector<uint8_t> garbage(24, 0xff);
  Rig s(1 << 20);
  s.rules.validate_compressed = false;
  RecordVerdict v = check(batch(garbage, 1, kZstd), s.rules);
  EXPECT_EQ(v.error, ErrorCode::kNone);
  EXPECT_FALSE(v.walked);
  RecordStreamFactory none = [](Compression, std::span<const uint8_t>) { return std::unique_ptr<RecordStream>(); };
  s.rules.validate_compressed = true;
  s.rules.open_stream = &none;
  EXPECT_FALSE(check(batch(garbage, 1, kZstd), s.rules).walked);
  // Uncompressed batches are always walked.
  EXPECT_EQ(check(batch(garbage, 1), s.rules).error, ErrorCode::kInvalidRecord);
  // Codec ids past zstd are refused.
  EXPECT_EQ(check(batch(record(0), 1, 5), s.rules).error, ErrorCode::kInvalidRecord);
}

}  // namespace
}  // namespace eddy::protocol
