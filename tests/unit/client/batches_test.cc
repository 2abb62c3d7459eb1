// Produce batching, compression and fetch decoding, without I/O.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "client/compression.h"
#include "client/fetch_decoder.h"
#include "client/record_accumulator.h"
#include "client/record_stream.h"
#include "protocol/big_endian.h"
#include "protocol/record_batch.h"
#include "protocol/record_validator.h"

namespace eddy::client {
namespace {

using protocol::Compression;
using protocol::RecordBatchView;

std::span<const uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}
std::string text(const std::optional<std::span<const uint8_t>>& b) {
  return b ? std::string(reinterpret_cast<const char*>(b->data()), b->size()) : "<null>";
}

protocol::RecordInput record(const std::string& key, const std::string& value, int64_t ts = 1000) {
  protocol::RecordInput r;
  r.key = bytes_of(key);
  r.value = bytes_of(value);
  r.timestamp = ts;
  return r;
}

constexpr Compression kCodecs[] = {Compression::kGzip, Compression::kSnappy, Compression::kLz4, Compression::kZstd};

// Decodes every record of a buffer of batches.
struct Decoded {
  int64_t offset;
  int64_t timestamp;
  std::string key;
  std::string value;
};
Status decode_all(std::span<const uint8_t> records, int64_t position, std::vector<Decoded>* out,
                  int64_t* next = nullptr, size_t stop_after = SIZE_MAX) {
  FetchDecoder decoder;
  int64_t next_position = 0;
  Status s = decoder.decode(
      records, position,
      [&](const DecodedRecord& r) {
        out->push_back({r.offset, r.timestamp, text(r.record->key), text(r.record->value)});
        return out->size() < stop_after;
      },
      &next_position);
  if (next != nullptr) *next = next_position;
  return s;
}

TEST(RecordAccumulatorTest, SealsABatchWhenTheNextRecordWouldNotFit) {
  RecordAccumulator acc({200, Compression::kNone});
  TopicPartition tp{"t", 0};
  std::string value(60, 'v');
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(acc.append(tp, record("k", value)).ok());
  ASSERT_TRUE(acc.has_sealed());
  ASSERT_TRUE(acc.seal_all().ok());
  std::vector<SealedBatch> batches = acc.take_sealed();
  ASSERT_GE(batches.size(), 2u);
  int32_t total = 0;
  for (const auto& b : batches) {
    EXPECT_EQ(b.tp, tp);
    EXPECT_LE(b.bytes.size(), 200u);
    EXPECT_EQ(protocol::validate_batches(b.bytes), protocol::BatchError::kOk);
    total += b.record_count;
  }
  EXPECT_EQ(total, 5);
  EXPECT_TRUE(acc.empty());
}

TEST(RecordAccumulatorTest, ARecordLargerThanABatchGetsItsOwn) {
  RecordAccumulator acc({100, Compression::kNone});
  ASSERT_TRUE(acc.append({"t", 0}, record("a", "small")).ok());
  ASSERT_TRUE(acc.append({"t", 0}, record("b", std::string(500, 'x'))).ok());
  ASSERT_TRUE(acc.append({"t", 1}, record("c", "other partition")).ok());
  ASSERT_TRUE(acc.seal_all().ok());
  std::vector<SealedBatch> batches = acc.take_sealed();
  ASSERT_EQ(batches.size(), 3u);
  std::vector<Decoded> records;
  ASSERT_TRUE(decode_all(batches[1].bytes, 0, &records).ok());
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].value.size(), 500u);
}

TEST(RecordAccumulatorTest, BatchesDecodeBackToTheirRecords) {
  RecordAccumulator acc({1 << 20, Compression::kNone});
  ASSERT_TRUE(acc.append({"t", 0}, record("k1", "v1", 1000)).ok());
  const std::string v2 = "v2";
  protocol::RecordInput null_key;
  null_key.value = bytes_of(v2);
  null_key.timestamp = 1005;
  ASSERT_TRUE(acc.append({"t", 0}, null_key).ok());
  ASSERT_TRUE(acc.seal_all().ok());
  auto batches = acc.take_sealed();
  ASSERT_EQ(batches.size(), 1u);
  std::vector<Decoded> records;
  ASSERT_TRUE(decode_all(batches[0].bytes, 0, &records).ok());
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].key, "k1");
  EXPECT_EQ(records[1].key, "<null>");
  EXPECT_EQ(records[1].timestamp, 1005);
  EXPECT_EQ(records[1].offset, 1);
}

TEST(CompressionTest, NamesRoundTrip) {
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kSnappy, Compression::kLz4,
                        Compression::kZstd}) {
    Compression parsed;
    ASSERT_TRUE(parse_compression(compression_name(c), &parsed));
    EXPECT_EQ(parsed, c);
  }
  Compression parsed;
  EXPECT_FALSE(parse_compression("brotli", &parsed));
  EXPECT_TRUE(compression_available(Compression::kNone));
}

TEST(CompressionTest, EachBuiltInCodecRoundTripsAndRejectsCorruptInput) {
  std::string input;
  for (int i = 0; i < 5000; ++i) input += "record " + std::to_string(i % 97) + ";";
  for (Compression c : kCodecs) {
    SCOPED_TRACE(compression_name(c));
    std::vector<uint8_t> compressed, back;
    if (!compression_available(c)) {
      Status s = compress(c, bytes_of(input), &compressed);
      EXPECT_EQ(s.code(), Status::Code::kCodec);
      EXPECT_NE(s.message().find(compression_name(c)), std::string::npos) << s.message();
      continue;
    }
    ASSERT_TRUE(compress(c, bytes_of(input), &compressed).ok());
    EXPECT_LT(compressed.size(), input.size() / 4);
    ASSERT_TRUE(decompress(c, compressed, 1 << 20, &back).ok());
    EXPECT_EQ(std::string(back.begin(), back.end()), input);
    // The output limit holds.
    EXPECT_EQ(decompress(c, compressed, input.size() / 2, &back).code(), Status::Code::kCodec);
    // Truncated and corrupted inputs fail cleanly.
    std::vector<uint8_t> truncated(compressed.begin(), compressed.begin() + compressed.size() / 2);
    EXPECT_FALSE(decompress(c, truncated, 1 << 20, &back).ok());
    std::vector<uint8_t> garbage(64, 0x5a);
    EXPECT_FALSE(decompress(c, garbage, 1 << 20, &back).ok());
  }
}

TEST(CompressionTest, SnappyReadsXerialFraming) {
  if (!compression_available(Compression::kSnappy)) GTEST_SKIP() << "snappy not built in";
  // Kafka's Java client frames snappy as xerial: magic, version, compatible
  // version, then length-prefixed raw blocks.
  std::string a = "first block ", b = "second block";
  std::vector<uint8_t> raw_a, raw_b;
  ASSERT_TRUE(compress(Compression::kSnappy, bytes_of(a), &raw_a).ok());
  ASSERT_TRUE(compress(Compression::kSnappy, bytes_of(b), &raw_b).ok());
  std::vector<uint8_t> framed = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1};
  for (auto* block : {&raw_a, &raw_b}) {
    uint8_t len[4];
    protocol::store_be32(len, static_cast<uint32_t>(block->size()));
    framed.insert(framed.end(), len, len + 4);
    framed.insert(framed.end(), block->begin(), block->end());
  }
  std::vector<uint8_t> out;
  ASSERT_TRUE(decompress(Compression::kSnappy, framed, 1 << 20, &out).ok());
  EXPECT_EQ(std::string(out.begin(), out.end()), a + b);
}

TEST(CompressionTest, CompressedBatchesAreValidAndDecode) {
  for (Compression c : kCodecs) {
    SCOPED_TRACE(compression_name(c));
    RecordAccumulator acc({1 << 20, c});
    for (int i = 0; i < 100; ++i) {
      ASSERT_TRUE(acc.append({"t", 0}, record("key" + std::to_string(i), "value " + std::to_string(i), 5000 + i)).ok());
    }
    Status sealed = acc.seal_all();
    if (!compression_available(c)) {
      EXPECT_EQ(sealed.code(), Status::Code::kCodec);
      continue;
    }
    ASSERT_TRUE(sealed.ok());
    auto batches = acc.take_sealed();
    ASSERT_EQ(batches.size(), 1u);
    RecordBatchView view;
    ASSERT_EQ(RecordBatchView::parse(batches[0].bytes, &view), protocol::BatchError::kOk);
    EXPECT_EQ(view.compression(), c);
    EXPECT_TRUE(view.crc_matches());
    EXPECT_EQ(view.record_count(), 100);
    std::vector<Decoded> records;
    ASSERT_TRUE(decode_all(batches[0].bytes, 0, &records).ok());
    ASSERT_EQ(records.size(), 100u);
    EXPECT_EQ(records[99].key, "key99");
    EXPECT_EQ(records[99].timestamp, 5099);
    EXPECT_EQ(records[99].offset, 99);
  }
}

#if EDDY_TEST_EXPECT_CODECS
// A default build (EDDY_COMPRESSION=ON), the ARM cross builds included,
// has all four codecs: the broker must be able to walk every compressed
// batch it stores.
TEST(CompressionTest, ADefaultBuildHasEveryCodec) {
  for (Compression c : kCodecs) EXPECT_TRUE(compression_available(c)) << compression_name(c);
}
#endif

// The broker's record validation through the real decompressors (the
// factory serve builds): each codec's good batch is walked record by
// record, and the same records with one broken length are refused.
TEST(CompressionTest, TheValidatorWalksTheRecordsOfEachCodec) {
  protocol::RecordStreamFactory factory = [](Compression codec, std::span<const uint8_t> compressed) {
    return open_record_stream(codec, compressed, 1 << 20);
  };
  protocol::RecordRules rules;
  rules.open_stream = &factory;
  for (Compression c : kCodecs) {
    if (!compression_available(c)) continue;
    SCOPED_TRACE(compression_name(c));
    RecordAccumulator acc({1 << 20, c});
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(acc.append({"t", 0}, record("k", "value " + std::to_string(i))).ok());
    ASSERT_TRUE(acc.seal_all().ok());
    auto good = acc.take_sealed();
    ASSERT_EQ(good.size(), 1u);
    RecordBatchView view;
    ASSERT_EQ(RecordBatchView::parse(good[0].bytes, &view), protocol::BatchError::kOk);
    protocol::RecordVerdict verdict = protocol::validate_batch_records(view, rules);
    EXPECT_EQ(verdict.error, protocol::ErrorCode::kNone) << verdict.message;
    EXPECT_TRUE(verdict.walked);
    EXPECT_EQ(verdict.max_timestamp, 1000);

    // The same header over records whose first length says 30 bytes
    // more: recompressed, the CRC recomputed, the walk must find it.
    std::vector<uint8_t> raw;
    ASSERT_TRUE(decompress(c, view.records_bytes(), 1 << 20, &raw).ok());
    ASSERT_LT(raw[0], 0x80 - 60);                // a one-byte zigzag varint
    raw[0] = static_cast<uint8_t>(raw[0] + 60);  // still one byte: +30
    std::vector<uint8_t> recompressed;
    ASSERT_TRUE(compress(c, raw, &recompressed).ok());
    namespace L = protocol::batch_layout;
    std::vector<uint8_t> bad(good[0].bytes.begin(), good[0].bytes.begin() + L::kHeaderSize);
    bad.insert(bad.end(), recompressed.begin(), recompressed.end());
    protocol::store_be32(bad.data() + L::kBatchLength, static_cast<uint32_t>(bad.size() - L::kLogOverhead));
    protocol::update_crc(bad);
    ASSERT_EQ(RecordBatchView::parse(bad, &view), protocol::BatchError::kOk);
    verdict = protocol::validate_batch_records(view, rules);
    EXPECT_EQ(verdict.error, protocol::ErrorCode::kInvalidRecord);
    EXPECT_FALSE(verdict.message.empty());
  }
}

// Batches as a broker returns them: consecutive base offsets.
std::vector<uint8_t> log_of(const std::vector<std::vector<std::string>>& batches, int64_t first_offset = 0,
                            int16_t attributes = 0) {
  std::vector<uint8_t> out;
  int64_t offset = first_offset;
  for (const auto& values : batches) {
    protocol::RecordBatchBuilder builder;
    builder.base_offset(offset).attributes(attributes);
    for (const auto& v : values) builder.add("k", v, 100);
    auto bytes = builder.build();
    out.insert(out.end(), bytes.begin(), bytes.end());
    offset += static_cast<int64_t>(values.size());
  }
  return out;
}

TEST(FetchDecoderTest, DeliversFromThePositionOnAndStopsOnRequest) {
  auto records = log_of({{"a", "b", "c"}, {"d", "e"}}, 10);
  std::vector<Decoded> out;
  int64_t next = 0;
  ASSERT_TRUE(decode_all(records, 11, &out, &next).ok());
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].value, "b");
  EXPECT_EQ(out[0].offset, 11);
  EXPECT_EQ(next, 15);

  out.clear();
  ASSERT_TRUE(decode_all(records, 10, &out, &next, 2).ok());
  EXPECT_EQ(out.size(), 2u);
  EXPECT_EQ(next, 12);  // after the last record delivered
}

TEST(FetchDecoderTest, SkipsControlBatchesAndToleratesACutOffTail) {
  auto data = log_of({{"a"}});
  auto control = log_of({{"marker"}}, 1, protocol::batch_attributes::kControl | protocol::batch_attributes::kTransactional);
  auto tail = log_of({{"b", "c"}}, 2);
  data.insert(data.end(), control.begin(), control.end());
  data.insert(data.end(), tail.begin(), tail.end() - 5);  // the last batch is cut off
  std::vector<Decoded> out;
  int64_t next = 0;
  ASSERT_TRUE(decode_all(data, 0, &out, &next).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].value, "a");
  EXPECT_EQ(next, 2);  // past the control batch, at the cut-off batch
}

TEST(FetchDecoderTest, ReportsCorruptionAndAnOversizedFirstBatch) {
  auto data = log_of({{"a"}, {"b"}});
  data[data.size() - 1] ^= 0xff;  // corrupt the second batch
  std::vector<Decoded> out;
  Status s = decode_all(data, 0, &out);
  EXPECT_EQ(s.code(), Status::Code::kProtocol);
  EXPECT_NE(s.message().find("CRC"), std::string::npos) << s.message();
  EXPECT_EQ(out.size(), 1u);

  auto big = log_of({{"a"}});
  big.resize(big.size() - 1);
  out.clear();
  s = decode_all(big, 0, &out);
  EXPECT_EQ(s.code(), Status::Code::kProtocol);
  EXPECT_NE(s.message().find("cut off"), std::string::npos) << s.message();
}

TEST(FetchDecoderTest, AnUnreadableCompressedBatchNamesTheCodec) {
  // Well-formed batches whose attributes claim a codec their records are not
  // in: a build without the codec says so, a build with it finds them corrupt.
  auto plain = log_of({{"a"}});
  for (Compression c : kCodecs) {
    SCOPED_TRACE(compression_name(c));
    std::vector<uint8_t> batch = plain;
    protocol::store_be16(batch.data() + protocol::batch_layout::kAttributes, static_cast<uint16_t>(c));
    protocol::update_crc(batch);
    std::vector<Decoded> out;
    Status s = decode_all(batch, 0, &out);
    EXPECT_EQ(s.code(), Status::Code::kCodec);
    EXPECT_NE(s.message().find(compression_name(c)), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(compression_available(c) ? "corrupt" : "not built"), std::string::npos)
        << s.message();
    EXPECT_TRUE(out.empty());
  }
}

}  // namespace
}  // namespace eddy::client
