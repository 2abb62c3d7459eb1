#include "protocol/wire.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

namespace eddy::protocol {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes memory_bytes(const OutputBuffer& out) { return Bytes(out.memory(), out.memory() + out.memory_size()); }

template <typename F>
Bytes write(F f) {
  OutputBuffer out;
  Writer w(&out);
  f(w);
  EXPECT_TRUE(w.ok()) << w.error();
  return memory_bytes(out);
}

TEST(Wire, FixedWidthIntegersAreBigEndian) {
  Bytes b = write([](Writer& w) {
    w.write_int8(-2);
    w.write_int16(0x1234);
    w.write_uint16(0xfedc);
    w.write_int32(-0x12345678);
    w.write_uint32(0xdeadbeef);
    w.write_int64(0x0102030405060708);
    w.write_bool(true);
    w.write_float64(1.5);
  });
  Bytes expected = {0xfe, 0x12, 0x34, 0xfe, 0xdc, 0xed, 0xcb, 0xa9, 0x88, 0xde, 0xad, 0xbe, 0xef,
                    1,    2,    3,    4,    5,    6,    7,    8,    1,    0x3f, 0xf8, 0,    0,
                    0,    0,    0,    0};
  EXPECT_EQ(b, expected);

  Reader r(b, "Test");
  EXPECT_EQ(r.read_int8(), -2);
  EXPECT_EQ(r.read_int16(), 0x1234);
  EXPECT_EQ(r.read_uint16(), 0xfedc);
  EXPECT_EQ(r.read_int32(), -0x12345678);
  EXPECT_EQ(r.read_uint32(), 0xdeadbeefu);
  EXPECT_EQ(r.read_int64(), 0x0102030405060708);
  EXPECT_TRUE(r.read_bool());
  EXPECT_EQ(r.read_float64(), 1.5);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.remaining(), 0u);
}

TEST(Wire, UnsignedVarintEncodings) {
  struct Case {
    uint32_t value;
    Bytes bytes;
  };
  const Case cases[] = {
      {0, {0x00}},
      {1, {0x01}},
      {127, {0x7f}},
      {128, {0x80, 0x01}},
      {300, {0xac, 0x02}},
      {16383, {0xff, 0x7f}},
      {16384, {0x80, 0x80, 0x01}},
      {0xffffffffu, {0xff, 0xff, 0xff, 0xff, 0x0f}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(write([&](Writer& w) { w.write_uvarint(c.value); }), c.bytes) << c.value;
    Reader r(c.bytes, "Test");
    EXPECT_EQ(r.read_uvarint(), c.value);
    EXPECT_TRUE(r.ok());
    EXPECT_EQ(r.remaining(), 0u);
  }
}

TEST(Wire, ZigzagVarints) {
  // Kafka's (protobuf's) zigzag: 0->0, -1->1, 1->2, -2->3.
  EXPECT_EQ(write([](Writer& w) { w.write_varint(0); }), Bytes{0x00});
  EXPECT_EQ(write([](Writer& w) { w.write_varint(-1); }), Bytes{0x01});
  EXPECT_EQ(write([](Writer& w) { w.write_varint(1); }), Bytes{0x02});
  EXPECT_EQ(write([](Writer& w) { w.write_varint(-2); }), Bytes{0x03});
  EXPECT_EQ(write([](Writer& w) { w.write_varint(-64); }), Bytes{0x7f});
  EXPECT_EQ(write([](Writer& w) { w.write_varint(64); }), (Bytes{0x80, 0x01}));

  const int32_t ints[] = {0, 1, -1, 63, -64, 64, 1000000, -1000000, std::numeric_limits<int32_t>::max(),
                          std::numeric_limits<int32_t>::min()};
  for (int32_t v : ints) {
    Bytes b = write([&](Writer& w) { w.write_varint(v); });
    Reader r(b, "Test");
    EXPECT_EQ(r.read_varint(), v);
    EXPECT_EQ(r.remaining(), 0u);
  }
  const int64_t longs[] = {0, -1, 1, std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
                           int64_t{1} << 40, -(int64_t{1} << 40)};
  for (int64_t v : longs) {
    Bytes b = write([&](Writer& w) { w.write_varlong(v); });
    Reader r(b, "Test");
    EXPECT_EQ(r.read_varlong(), v);
    EXPECT_EQ(r.remaining(), 0u);
  }
  EXPECT_EQ(write([](Writer& w) { w.write_varlong(std::numeric_limits<int64_t>::min()); }).size(), 10u);
}

TEST(Wire, VarintOverflowAndTruncationAreErrors) {
  Bytes too_long = {0xff, 0xff, 0xff, 0xff, 0x1f};  // 5th byte carries more than 32 bits
  Reader r1(too_long, "Test");
  r1.field("count");
  r1.read_uvarint();
  ASSERT_FALSE(r1.ok());
  EXPECT_NE(r1.error().find("does not fit in 32 bits"), std::string::npos) << r1.error();

  Bytes truncated = {0x80, 0x80};
  Reader r2(truncated, "Test");
  r2.read_uvarint();
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(r2.error().find("unsigned varint needs 1 bytes but 0 remain at byte 2"), std::string::npos)
      << r2.error();
}

TEST(Wire, StringsPlainCompactAndNullable) {
  EXPECT_EQ(write([](Writer& w) { w.write_string("abc", false); }), (Bytes{0, 3, 'a', 'b', 'c'}));
  EXPECT_EQ(write([](Writer& w) { w.write_string("abc", true); }), (Bytes{4, 'a', 'b', 'c'}));
  EXPECT_EQ(write([](Writer& w) { w.write_string("", true); }), (Bytes{1}));
  EXPECT_EQ(write([](Writer& w) { w.write_nullable_string(std::nullopt, false, true); }), (Bytes{0xff, 0xff}));
  EXPECT_EQ(write([](Writer& w) { w.write_nullable_string(std::nullopt, true, true); }), (Bytes{0}));

  Bytes b = {0, 3, 'a', 'b', 'c', 0xff, 0xff, 4, 'x', 'y', 'z', 0};
  Reader r(b, "Test");
  EXPECT_EQ(r.read_string(false), "abc");
  EXPECT_EQ(r.read_nullable_string(false, true), std::nullopt);
  EXPECT_EQ(r.read_nullable_string(true, true), std::optional<std::string>("xyz"));
  EXPECT_EQ(r.read_nullable_string(true, true), std::nullopt);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.remaining(), 0u);
}

TEST(Wire, NullWhereNotNullableIsAnError) {
  Bytes null_string = {0xff, 0xff};
  Reader r(null_string, "Test");
  r.field("name");
  r.read_string(false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "Test.name: null string in a non-nullable field at byte 2");

  Reader r2(null_string, "Test");
  r2.read_nullable_string(false, /*nullable=*/false);
  EXPECT_FALSE(r2.ok());

  OutputBuffer out;
  Writer w(&out);
  w.write_nullable_string(std::nullopt, false, /*nullable=*/false, "Msg.field");
  EXPECT_FALSE(w.ok());
  EXPECT_NE(w.error().find("Msg.field"), std::string::npos);
  EXPECT_EQ(memory_bytes(out), (Bytes{0, 0})) << "written as an empty string";
}

TEST(Wire, StringLengthBeyondTheInputNamesFieldAndOffset) {
  Bytes b = {0, 0, 0, 0, 0x01, 0x2c, 'a', 'b'};  // 4 bytes of padding, then length 300
  Reader r(b, "ProduceRequest", /*base_offset=*/29);
  r.field("topic_data");
  r.enter(0);
  r.read_int32();
  r.field("name");
  r.read_string(false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "ProduceRequest.topic_data[0].name: string length 300 exceeds remaining 2 bytes at byte 35");
}

TEST(Wire, NegativeLengthsAreErrors) {
  Bytes b = {0xff, 0xfe};
  Reader r(b, "Test");
  r.read_nullable_string(false, true);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("string length -2 is negative"), std::string::npos) << r.error();

  Bytes c = {0x80, 0, 0, 0};
  Reader r2(c, "Test");
  r2.read_array_length(false, 1);
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(r2.error().find("negative"), std::string::npos) << r2.error();
}

TEST(Wire, BytesAndRecordsViewTheInput) {
  Bytes b = {0, 0, 0, 3, 7, 8, 9, 4, 1, 2, 3};
  Reader r(b, "Test");
  std::optional<Records> records = r.read_nullable_records(false, true);
  ASSERT_TRUE(records.has_value());
  EXPECT_EQ(records->bytes.data(), b.data() + 4) << "records must point into the input";
  EXPECT_EQ(records->size(), 3u);
  bool is_null = true;
  std::span<const uint8_t> view = r.read_bytes_view(true, &is_null);
  EXPECT_FALSE(is_null);
  EXPECT_EQ(view.data(), b.data() + 8);
  EXPECT_EQ(view.size(), 3u);
  EXPECT_TRUE(r.ok());
}

TEST(Wire, RecordsEncodeMemoryThenFileRegions) {
  const uint8_t head[] = {0xaa, 0xbb};
  Records records;
  records.bytes = head;
  auto keep = std::make_shared<int>(1);
  records.file_regions.push_back(FileRegion{5, 100, 1000, keep});
  records.file_regions.push_back(FileRegion{6, 0, 24, keep});
  EXPECT_EQ(records.size(), 1026u);

  OutputBuffer out;
  Writer w(&out);
  w.write_int8(1);
  w.write_records(records, /*compact=*/true);
  w.write_int8(2);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(out.size(), 1u + 2u + 2u + 1024u + 1u);  // uvarint(1027) is 2 bytes
  const auto& chunks = out.chunks();
  ASSERT_EQ(chunks.size(), 4u);
  EXPECT_FALSE(chunks[0].is_file);
  EXPECT_EQ(memory_bytes(out).size(), 6u);
  EXPECT_EQ(Bytes(out.memory_of(chunks[0]).begin(), out.memory_of(chunks[0]).end()),
            (Bytes{1, 0x83, 0x08, 0xaa, 0xbb}));
  EXPECT_TRUE(chunks[1].is_file);
  EXPECT_EQ(chunks[1].file.fd, 5);
  EXPECT_EQ(chunks[1].file.offset, 100u);
  EXPECT_EQ(chunks[1].file.length, 1000u);
  EXPECT_TRUE(chunks[2].is_file);
  EXPECT_EQ(chunks[2].file.fd, 6);
  EXPECT_FALSE(chunks[3].is_file);
}

TEST(Wire, UuidRoundTrip) {
  Uuid u;
  for (size_t i = 0; i < 16; ++i) u.bytes[i] = static_cast<uint8_t>(0xf0 + i);
  EXPECT_FALSE(u.is_zero());
  EXPECT_TRUE(Uuid{}.is_zero());
  Bytes b = write([&](Writer& w) { w.write_uuid(u); });
  ASSERT_EQ(b.size(), 16u);
  Reader r(b, "Test");
  EXPECT_EQ(r.read_uuid(), u);
}

TEST(Wire, HugeArrayCountIsRejectedBeforeAllocating) {
  Bytes b = {0x7f, 0xff, 0xff, 0xff, 1, 2, 3, 4, 5, 6, 7, 8};
  Reader r(b, "Test");
  r.field("topics");
  EXPECT_EQ(r.read_array_length(false, 4), 0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(),
            "Test.topics: array count 2147483647 exceeds what the remaining 8 bytes can hold "
            "(at least 4 bytes per element) at byte 4");

  Bytes ok = {0, 0, 0, 2, 1, 2, 3, 4, 5, 6, 7, 8};
  Reader r2(ok, "Test");
  EXPECT_EQ(r2.read_array_length(false, 4), 2);
  EXPECT_TRUE(r2.ok());

  Bytes compact_null = {0};
  Reader r3(compact_null, "Test");
  EXPECT_EQ(r3.read_array_length(true, 1, /*nullable=*/true), -1);
  EXPECT_TRUE(r3.ok());
  Reader r4(compact_null, "Test");
  r4.read_array_length(true, 1, /*nullable=*/false);
  EXPECT_FALSE(r4.ok());
}

TEST(Wire, ReaderStopsAtTheFirstError) {
  Bytes b = {0, 1};
  Reader r(b, "Test");
  r.field("a");
  r.read_int32();
  ASSERT_FALSE(r.ok());
  std::string first = r.error();
  r.field("b");
  EXPECT_EQ(r.read_int8(), 0);
  EXPECT_EQ(r.read_string(true), "");
  EXPECT_EQ(r.read_array_length(true, 1), 0);
  EXPECT_EQ(r.error(), first);
  EXPECT_EQ(first, "Test.a: int32 needs 4 bytes but 2 remain at byte 0");
}

TEST(Wire, UnknownTaggedFieldsAreKeptAndWrittenInTagOrder) {
  // count 2; tag 3 size 2 {9, 9}; tag 10 size 0
  Bytes b = {2, 3, 2, 9, 9, 10, 0};
  Reader r(b, "Test");
  std::vector<TaggedField> unknown;
  r.read_tagged_fields(&unknown);
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(unknown.size(), 2u);
  EXPECT_EQ(unknown[0], (TaggedField{3, {9, 9}}));
  EXPECT_EQ(unknown[1], (TaggedField{10, {}}));
  EXPECT_EQ(write([&](Writer& w) { w.write_tagged_fields(unknown); }), b);

  // Known fields added out of order merge with the unknown ones by tag.
  Bytes merged = write([&](Writer& w) {
    TaggedFieldsWriter tags(w, unknown);
    tags.add(5).write_int8(42);
    tags.add(0).write_uvarint(1);
    tags.finish();
  });
  EXPECT_EQ(merged, (Bytes{4, 0, 1, 1, 3, 2, 9, 9, 5, 1, 42, 10, 0}));
}

TEST(Wire, TaggedFieldSizeMustMatchItsValue) {
  // One tagged field claiming 5 bytes when only 2 follow.
  Bytes too_big = {1, 0, 5, 1, 2};
  Reader r(too_big, "Test");
  std::vector<TaggedField> unknown;
  r.read_tagged_fields(&unknown);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("tagged field 0 size 5 exceeds remaining 2 bytes"), std::string::npos) << r.error();

  // A known field whose value is shorter than declared.
  Bytes loose = {1, 0, 3, 7, 0, 0};
  Reader r2(loose, "Test");
  Reader::TagSection section = r2.read_tag_section();
  ASSERT_EQ(section.count, 1u);
  Reader::Tag t = r2.begin_tag(&section);
  EXPECT_EQ(r2.read_int8(), 7);
  r2.end_tag(t);
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(r2.error().find("left 2 of its bytes unread"), std::string::npos) << r2.error();

  // A value cannot read past its declared size.
  Bytes tight = {1, 0, 1, 7, 8, 9, 10};
  Reader r3(tight, "Test");
  Reader::TagSection section3 = r3.read_tag_section();
  ASSERT_EQ(section3.count, 1u);
  Reader::Tag t3 = r3.begin_tag(&section3);
  r3.read_int32();
  r3.end_tag(t3);
  EXPECT_FALSE(r3.ok());
}

TEST(Wire, TagsMustAscend) {
  std::vector<TaggedField> unknown;
  Bytes descending = {2, 5, 0, 2, 0};
  Reader r(descending, "Test");
  r.read_tagged_fields(&unknown);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("tagged field 2 follows tag 5"), std::string::npos) << r.error();

  Bytes duplicate = {2, 1, 0, 1, 0};
  Reader r2(duplicate, "Test");
  r2.read_tagged_fields(&unknown);
  EXPECT_FALSE(r2.ok());
}

TEST(Wire, TaggedFieldCountBeyondTheInputIsAnError) {
  Bytes b = {0xff, 0xff, 0x03, 0, 0};
  Reader r(b, "Test");
  std::vector<TaggedField> unknown;
  r.read_tagged_fields(&unknown);
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(unknown.empty());
}

TEST(Wire, WriterFlagsValuesTooLongForTheirLength) {
  OutputBuffer out;
  Writer w(&out);
  w.write_string(std::string(40000, 'x'), /*compact=*/false);
  EXPECT_FALSE(w.ok());
  EXPECT_NE(w.error().find("too long"), std::string::npos);
  EXPECT_EQ(out.size(), 2u) << "written as an empty string";
}

}  // namespace
}  // namespace eddy::protocol
