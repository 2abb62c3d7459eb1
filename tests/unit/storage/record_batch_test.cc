#include "protocol/record_batch.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "port/port.h"

namespace eddy::protocol {
namespace {

namespace L = batch_layout;

std::vector<uint8_t> sample_batch() {
  RecordBatchBuilder builder;
  builder.producer(77, 3, 10).partition_leader_epoch(5);
  builder.add("k1", "value-1", 1000);
  builder.add("k2", "value-22", 1005);
  RecordInput third;
  third.timestamp = 990;  // older than the first: negative delta
  third.headers.push_back({"h", std::span<const uint8_t>(reinterpret_cast<const uint8_t*>("hv"), 2)});
  third.headers.push_back({"null-header", std::nullopt});
  builder.add(third);  // null key and value
  return builder.build();
}

std::string str(const std::optional<std::span<const uint8_t>>& bytes) {
  return bytes ? std::string(reinterpret_cast<const char*>(bytes->data()), bytes->size()) : "<null>";
}

// A magic 0/1 message: offset, size, crc, magic, attributes, [timestamp],
// key, value.
std::vector<uint8_t> legacy_message(int8_t magic) {
  std::vector<uint8_t> m(magic == 0 ? 26 : 34, 0);
  store_be32(m.data() + 8, static_cast<uint32_t>(m.size() - 12));
  m[16] = static_cast<uint8_t>(magic);
  store_be32(m.data() + m.size() - 8, 0xffffffff);  // null key
  store_be32(m.data() + m.size() - 4, 0);           // empty value
  return m;
}

TEST(RecordBatchTest, BuilderProducesValidHeader) {
  std::vector<uint8_t> bytes = sample_batch();
  RecordBatchView view;
  ASSERT_EQ(RecordBatchView::parse(bytes, &view), BatchError::kOk);
  EXPECT_EQ(view.size(), bytes.size());
  EXPECT_EQ(view.batch_length(), static_cast<int32_t>(bytes.size() - 12));
  EXPECT_EQ(view.magic(), 2);
  EXPECT_EQ(view.base_offset(), 0);
  EXPECT_EQ(view.partition_leader_epoch(), 5);
  EXPECT_EQ(view.record_count(), 3);
  EXPECT_EQ(view.last_offset_delta(), 2);
  EXPECT_EQ(view.base_timestamp(), 1000);
  EXPECT_EQ(view.max_timestamp(), 1005);
  EXPECT_EQ(view.producer_id(), 77);
  EXPECT_EQ(view.producer_epoch(), 3);
  EXPECT_EQ(view.base_sequence(), 10);
  EXPECT_EQ(view.compression(), Compression::kNone);
  EXPECT_EQ(view.timestamp_type(), TimestampType::kCreateTime);
  EXPECT_FALSE(view.is_transactional());
  EXPECT_FALSE(view.is_control());
  EXPECT_TRUE(view.crc_matches());
  EXPECT_EQ(view.crc(), port::crc32c(0, bytes.data() + 21, bytes.size() - 21));
}

TEST(RecordBatchTest, CrcDetectsEveryCoveredByte) {
  std::vector<uint8_t> bytes = sample_batch();
  for (size_t i = L::kAttributes; i < bytes.size(); ++i) {
    std::vector<uint8_t> copy = bytes;
    copy[i] ^= 0x01;
    RecordBatchView view;
    BatchError e = RecordBatchView::parse(copy, &view);
    if (e == BatchError::kOk) {
      EXPECT_FALSE(view.crc_matches()) << "byte " << i;
    }
  }
  // Bytes outside the CRC: baseOffset and partitionLeaderEpoch.
  std::vector<uint8_t> copy = bytes;
  copy[3] ^= 0x10;
  copy[13] ^= 0x10;
  RecordBatchView view;
  ASSERT_EQ(RecordBatchView::parse(copy, &view), BatchError::kOk);
  EXPECT_TRUE(view.crc_matches());
}

TEST(RecordBatchTest, PatchingOffsetAndEpochKeepsCrc) {
  std::vector<uint8_t> bytes = sample_batch();
  const uint32_t crc_before = load_be32(bytes.data() + L::kCrc);
  set_base_offset(bytes, 123456789012LL);
  set_partition_leader_epoch(bytes, 42);
  RecordBatchView view;
  ASSERT_EQ(RecordBatchView::parse(bytes, &view), BatchError::kOk);
  EXPECT_EQ(view.base_offset(), 123456789012LL);
  EXPECT_EQ(view.last_offset(), 123456789014LL);
  EXPECT_EQ(view.next_offset(), 123456789015LL);
  EXPECT_EQ(view.partition_leader_epoch(), 42);
  EXPECT_EQ(view.crc(), crc_before);
  EXPECT_TRUE(view.crc_matches());
}

TEST(RecordBatchTest, LogAppendTimeSetsTypeMaxTimestampAndCrc) {
  std::vector<uint8_t> bytes = sample_batch();
  set_log_append_time(bytes, 1700000000123LL);
  RecordBatchView view;
  ASSERT_EQ(RecordBatchView::parse(bytes, &view), BatchError::kOk);
  EXPECT_EQ(view.timestamp_type(), TimestampType::kLogAppendTime);
  EXPECT_EQ(view.max_timestamp(), 1700000000123LL);
  EXPECT_EQ(view.base_timestamp(), 1000);  // untouched, as Kafka does
  EXPECT_EQ(view.compression(), Compression::kNone);
  EXPECT_TRUE(view.crc_matches());
}

TEST(RecordBatchTest, RewriteProducerRecomputesCrc) {
  std::vector<uint8_t> bytes = sample_batch();
  rewrite_producer(bytes, 9001, 7, 12345);
  RecordBatchView view;
  ASSERT_EQ(RecordBatchView::parse(bytes, &view), BatchError::kOk);
  EXPECT_EQ(view.producer_id(), 9001);
  EXPECT_EQ(view.producer_epoch(), 7);
  EXPECT_EQ(view.base_sequence(), 12345);
  EXPECT_TRUE(view.crc_matches());
  // Writing the fields without the CRC update is caught.
  store_be64(bytes.data() + L::kProducerId, 1);
  ASSERT_EQ(RecordBatchView::parse(bytes, &view), BatchError::kOk);
  EXPECT_FALSE(view.crc_matches());
}

TEST(RecordBatchTest, MagicZeroAndOneAreUnsupportedNotMisparsed) {
  for (int8_t magic : {0, 1}) {
    std::vector<uint8_t> message = legacy_message(magic);
    RecordBatchView view;
    EXPECT_EQ(RecordBatchView::parse(message, &view), BatchError::kUnsupportedMagic) << int(magic);
    BatchIterator it(message);
    EXPECT_FALSE(it.next(&view));
    EXPECT_EQ(it.error(), BatchError::kUnsupportedMagic);
    EXPECT_EQ(validate_batches(message), BatchError::kUnsupportedMagic);
  }
  // A legacy message after a valid batch is reported at its position.
  std::vector<uint8_t> bytes = sample_batch();
  size_t first = bytes.size();
  std::vector<uint8_t> legacy = legacy_message(1);
  bytes.insert(bytes.end(), legacy.begin(), legacy.end());
  BatchIterator it(bytes);
  RecordBatchView view;
  EXPECT_TRUE(it.next(&view));
  EXPECT_FALSE(it.next(&view));
  EXPECT_EQ(it.error(), BatchError::kUnsupportedMagic);
  EXPECT_EQ(it.position(), first);
}

TEST(RecordBatchTest, OtherMagicValuesAreInvalid) {
  std::vector<uint8_t> bytes = sample_batch();
  bytes[L::kMagic] = 3;
  RecordBatchView view;
  EXPECT_EQ(RecordBatchView::parse(bytes, &view), BatchError::kInvalid);
  bytes[L::kMagic] = 0xff;
  EXPECT_EQ(RecordBatchView::parse(bytes, &view), BatchError::kInvalid);
}

TEST(RecordBatchTest, TruncationAtEveryLengthIsReported) {
  std::vector<uint8_t> bytes = sample_batch();
  for (size_t n = 0; n < bytes.size(); ++n) {
    RecordBatchView view;
    EXPECT_EQ(RecordBatchView::parse(std::span<const uint8_t>(bytes.data(), n), &view), BatchError::kTruncated) << n;
  }
}

TEST(RecordBatchTest, InconsistentHeadersAreInvalid) {
  RecordBatchView view;
  {
    std::vector<uint8_t> bytes = sample_batch();
    store_be32(bytes.data() + L::kLastOffsetDelta, 5);  // 3 records
    EXPECT_EQ(RecordBatchView::parse(bytes, &view), BatchError::kInvalid);
  }
  {
    std::vector<uint8_t> bytes = sample_batch();
    store_be32(bytes.data() + L::kRecordCount, 0);
    store_be32(bytes.data() + L::kLastOffsetDelta, static_cast<uint32_t>(-1));
    EXPECT_EQ(RecordBatchView::parse(bytes, &view), BatchError::kInvalid);
  }
  {
    std::vector<uint8_t> bytes = sample_batch();
    store_be32(bytes.data() + L::kRecordCount, 0);  // with lastOffsetDelta 2: no
    EXPECT_EQ(RecordBatchView::parse(bytes, &view), BatchError::kInvalid);
  }
  {
    std::vector<uint8_t> bytes = sample_batch();
    store_be32(bytes.data() + L::kBatchLength, 10);  // shorter than a header
    EXPECT_EQ(RecordBatchView::parse(bytes, &view), BatchError::kInvalid);
  }
  {
    std::vector<uint8_t> bytes = sample_batch();
    store_be32(bytes.data() + L::kBatchLength, 0x80000000u);  // negative
    EXPECT_EQ(RecordBatchView::parse(bytes, &view), BatchError::kInvalid);
  }
  {
    std::vector<uint8_t> bytes = sample_batch();
    store_be64(bytes.data() + L::kBaseOffset, static_cast<uint64_t>(-5));
    EXPECT_EQ(RecordBatchView::parse(bytes, &view), BatchError::kInvalid);
  }
}

TEST(RecordBatchTest, AnEmptyBatchSpansOneOffsetAndHoldsNoRecord) {
  std::vector<uint8_t> bytes = build_empty_batch(1234);
  set_base_offset(bytes, 50);
  RecordBatchView view;
  ASSERT_EQ(RecordBatchView::parse(bytes, &view), BatchError::kOk);
  EXPECT_TRUE(view.crc_matches());
  EXPECT_TRUE(view.is_empty());
  EXPECT_FALSE(view.is_control());
  EXPECT_EQ(view.last_offset(), 50);
  EXPECT_EQ(view.next_offset(), 51);
  EXPECT_EQ(view.max_timestamp(), 1234);
  EXPECT_EQ(view.producer_id(), -1);
  EXPECT_EQ(validate_records(view), BatchError::kOk);
  RecordIterator records(view);
  Record r;
  EXPECT_FALSE(records.next(&r));
  EXPECT_EQ(records.error(), BatchError::kOk);
}

TEST(RecordBatchTest, IteratorWalksConcatenatedBatchesAndNamesTheFirstError) {
  std::vector<uint8_t> a = sample_batch();
  RecordBatchBuilder b_builder;
  b_builder.add("x", "y", 5);
  std::vector<uint8_t> b = b_builder.build();
  std::vector<uint8_t> all = a;
  all.insert(all.end(), b.begin(), b.end());

  size_t count = 0;
  EXPECT_EQ(validate_batches(all, &count), BatchError::kOk);
  EXPECT_EQ(count, 2u);
  EXPECT_EQ(validate_batches({}), BatchError::kTruncated);  // no batch at all

  struct Case {
    const char* name;
    std::vector<uint8_t> bytes;
    BatchError expected;
  };
  std::vector<Case> cases;
  {
    std::vector<uint8_t> bytes = all;
    bytes.resize(bytes.size() - 3);
    cases.push_back({"truncated second", bytes, BatchError::kTruncated});
  }
  {
    std::vector<uint8_t> bytes = all;
    bytes[a.size() + L::kMagic] = 1;
    cases.push_back({"magic 1 second", bytes, BatchError::kUnsupportedMagic});
  }
  {
    std::vector<uint8_t> bytes = all;
    bytes.back() ^= 0x40;
    cases.push_back({"crc second", bytes, BatchError::kCrcMismatch});
  }
  {
    std::vector<uint8_t> bytes = all;
    store_be32(bytes.data() + a.size() + L::kRecordCount, 4);
    cases.push_back({"count second", bytes, BatchError::kInvalid});
  }
  for (const Case& c : cases) {
    BatchIterator it(c.bytes);
    RecordBatchView view;
    ASSERT_TRUE(it.next(&view)) << c.name;
    EXPECT_EQ(view.record_count(), 3) << c.name;
    EXPECT_FALSE(it.next(&view)) << c.name;
    EXPECT_EQ(it.error(), c.expected) << c.name;
    EXPECT_EQ(it.position(), a.size()) << c.name;
    EXPECT_EQ(validate_batches(c.bytes), c.expected) << c.name;
  }
  // Without CRC verification a bad CRC passes (the broker splitting
  // batches that the storage verifies anyway).
  BatchIterator unchecked(cases[2].bytes, /*verify_crc=*/false);
  RecordBatchView view;
  EXPECT_TRUE(unchecked.next(&view));
  EXPECT_TRUE(unchecked.next(&view));
  EXPECT_FALSE(unchecked.next(&view));
  EXPECT_EQ(unchecked.error(), BatchError::kOk);
}

TEST(RecordBatchTest, RecordIterationDecodesEveryField) {
  std::vector<uint8_t> bytes = sample_batch();
  RecordBatchView view;
  ASSERT_EQ(RecordBatchView::parse(bytes, &view), BatchError::kOk);
  RecordIterator it(view);
  Record r;
  ASSERT_TRUE(it.next(&r));
  EXPECT_EQ(r.offset_delta, 0);
  EXPECT_EQ(r.timestamp_delta, 0);
  EXPECT_EQ(str(r.key), "k1");
  EXPECT_EQ(str(r.value), "value-1");
  EXPECT_TRUE(r.headers.empty());
  ASSERT_TRUE(it.next(&r));
  EXPECT_EQ(r.offset_delta, 1);
  EXPECT_EQ(r.timestamp_delta, 5);
  EXPECT_EQ(str(r.value), "value-22");
  ASSERT_TRUE(it.next(&r));
  EXPECT_EQ(r.offset_delta, 2);
  EXPECT_EQ(r.timestamp_delta, -10);
  EXPECT_FALSE(r.key.has_value());
  EXPECT_FALSE(r.value.has_value());
  ASSERT_EQ(r.headers.size(), 2u);
  EXPECT_EQ(r.headers[0].key, "h");
  EXPECT_EQ(str(r.headers[0].value), "hv");
  EXPECT_EQ(r.headers[1].key, "null-header");
  EXPECT_FALSE(r.headers[1].value.has_value());
  EXPECT_FALSE(it.next(&r));
  EXPECT_EQ(it.error(), BatchError::kOk);
  EXPECT_EQ(validate_records(view), BatchError::kOk);
}

TEST(RecordBatchTest, MalformedRecordsAreInvalidNotOverread) {
  std::vector<uint8_t> good = sample_batch();
  // Flip every byte of the records section (and fix the CRC so only the
  // record parser can object): iteration must end without reading outside
  // the batch, and a change it cannot detect must still decode.
  size_t detected = 0;
  for (size_t i = L::kRecords; i < good.size(); ++i) {
    std::vector<uint8_t> bytes = good;
    bytes[i] ^= 0xff;
    update_crc(bytes);
    RecordBatchView view;
    ASSERT_EQ(RecordBatchView::parse(bytes, &view), BatchError::kOk);
    if (validate_records(view) != BatchError::kOk) ++detected;
  }
  EXPECT_GT(detected, 0u);

  // Trailing garbage after the last record.
  RecordBatchBuilder builder;
  builder.add("k", "v", 1);
  std::vector<uint8_t> bytes = builder.build();
  bytes.push_back(0);
  store_be32(bytes.data() + L::kBatchLength, static_cast<uint32_t>(bytes.size() - 12));
  update_crc(bytes);
  RecordBatchView view;
  ASSERT_EQ(RecordBatchView::parse(bytes, &view), BatchError::kOk);
  EXPECT_EQ(validate_records(view), BatchError::kInvalid);
}

TEST(RecordBatchTest, CompressedBatchesAreNotIterated) {
  std::vector<uint8_t> bytes = sample_batch();
  store_be16(bytes.data() + L::kAttributes, static_cast<uint16_t>(Compression::kZstd));
  update_crc(bytes);
  RecordBatchView view;
  ASSERT_EQ(RecordBatchView::parse(bytes, &view), BatchError::kOk);
  EXPECT_EQ(view.compression(), Compression::kZstd);
  RecordIterator it(view);
  Record r;
  EXPECT_FALSE(it.next(&r));
  EXPECT_EQ(it.error(), BatchError::kInvalid);
  EXPECT_EQ(validate_records(view), BatchError::kOk);  // not inspected
}

TEST(RecordBatchTest, LargeVarintsRoundTrip) {
  RecordBatchBuilder builder;
  std::string big(300000, 'z');  // length needs a 3-byte varint
  builder.add("", big, 1LL << 40);
  builder.add("k", "", (1LL << 40) - 123456789);
  std::vector<uint8_t> bytes = builder.build();
  RecordBatchView view;
  ASSERT_EQ(RecordBatchView::parse(bytes, &view), BatchError::kOk);
  RecordIterator it(view);
  Record r;
  ASSERT_TRUE(it.next(&r));
  EXPECT_EQ(r.value->size(), big.size());
  EXPECT_EQ(str(r.key), "");
  ASSERT_TRUE(it.next(&r));
  EXPECT_EQ(r.timestamp_delta, -123456789);
  EXPECT_EQ(view.max_timestamp(), 1LL << 40);
  EXPECT_FALSE(it.next(&r));
  EXPECT_EQ(it.error(), BatchError::kOk);
}

}  // namespace
}  // namespace eddy::protocol
