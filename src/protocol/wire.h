// Kafka wire primitives: the Reader and Writer that generated message codecs
// (src/protocol/generated/) are written against, and the value types that
// appear in messages (Uuid, Records, unknown tagged fields).
//
// Error handling: no exceptions. A Reader that meets malformed input records
// the first error (what primitive, at which byte, in which field) and from
// then on every read returns a zero/empty value without touching the input,
// so decoding runs to the end quickly and the caller checks ok() once. A
// Writer never fails on output; a value that the requested version cannot
// carry (null where the version forbids null, a non-default value of a field
// the version lacks) is a programming error that the Writer records as its
// first error while still producing well-formed bytes.
//
// Use the entry points in protocol/codec.h (decode/encode of a whole
// message) and protocol/headers.h (frames); the Reader/Writer member
// functions are the vocabulary of the generated code.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "port/status.h"
#include "protocol/output_buffer.h"

namespace eddy::protocol {

// A 128-bit UUID (topic ids). All zeros is Kafka's "no id".
struct Uuid {
  std::array<uint8_t, 16> bytes{};

  bool is_zero() const;
  bool operator==(const Uuid&) const = default;
};

// A tagged field the codec does not know (another version, another client).
// Kept by decode and written back by encode, so a message re-encodes to the
// same bytes.
struct TaggedField {
  uint32_t tag = 0;
  std::vector<uint8_t> data;

  bool operator==(const TaggedField&) const = default;
};

// The value of a `records` field.
//
// Decoding never copies: `bytes` points into the buffer that was decoded,
// which must outlive this value. Encoding writes `bytes` followed by every
// element of `file_regions` (appended to the OutputBuffer as file chunks, so
// the record batches can go out with sendfile and never enter user space).
// The encoded length prefix is size().
struct Records {
  std::span<const uint8_t> bytes;
  std::vector<FileRegion> file_regions;

  uint64_t size() const;
  bool empty() const { return size() == 0; }
  // Equal when the memory bytes have equal contents and the file regions
  // name the same (fd, offset, length) ranges.
  bool operator==(const Records& other) const;
};

// Reads Kafka primitives from a byte span, bounds-checked, big-endian.
class Reader {
 public:
  // message_name prefixes error messages ("ProduceRequest.topic_data[0]...").
  // base_offset is added to positions in error messages, so that they count
  // from the start of the frame rather than from the start of data.
  Reader(std::span<const uint8_t> data, const char* message_name, size_t base_offset = 0);

  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  bool ok() const { return !failed_; }
  // The first error: "<message>.<field path>: <what> at byte <offset>".
  const std::string& error() const { return error_; }
  // Bytes consumed so far (relative to data, not base_offset).
  size_t position() const { return pos_; }
  size_t remaining() const { return end_ - pos_; }

  // --- Field path (for error messages) ---------------------------------
  // Names the field about to be read at the current nesting depth.
  void field(const char* name) {
    path_[depth_].name = name;
    path_[depth_].index = -1;
  }
  // Enters element `index` of the array named by the last field() call.
  void enter(int32_t index);
  void leave();

  // --- Fixed-width integers -------------------------------------------
  int8_t read_int8();
  int16_t read_int16();
  uint16_t read_uint16();
  int32_t read_int32();
  uint32_t read_uint32();
  int64_t read_int64();
  double read_float64();
  bool read_bool();  // any non-zero byte is true
  Uuid read_uuid();

  // --- Variable-length integers ---------------------------------------
  uint32_t read_uvarint();   // unsigned LEB128, at most 5 bytes
  uint64_t read_uvarlong();  // unsigned LEB128, at most 10 bytes
  int32_t read_varint();     // zigzag
  int64_t read_varlong();    // zigzag

  // --- Strings, bytes, records ------------------------------------------
  // compact: length is an unsigned varint N meaning N-1 (0 = null);
  // otherwise int16 (strings) or int32 (bytes, records), -1 = null.
  // The non-nullable forms report null as an error. In the nullable forms,
  // `nullable` says whether this version allows null; when it does not, a
  // null is reported as an error.
  std::string read_string(bool compact);
  std::optional<std::string> read_nullable_string(bool compact, bool nullable);
  // A view of the bytes of a string/bytes field, without copying.
  std::span<const uint8_t> read_bytes_view(bool compact, bool* is_null);
  std::vector<uint8_t> read_bytes(bool compact);
  std::optional<std::vector<uint8_t>> read_nullable_bytes(bool compact, bool nullable);
  Records read_records(bool compact);
  std::optional<Records> read_nullable_records(bool compact, bool nullable);

  // --- Arrays and nullable structs --------------------------------------
  // Returns the element count, or -1 for a null array (an error unless
  // nullable). Before returning, checks that count * min_element_size bytes
  // remain, so that a huge count is an error before anything is allocated.
  // REQUIRES: min_element_size >= 1.
  int32_t read_array_length(bool compact, size_t min_element_size, bool nullable = false);
  // The int8 marker of a nullable struct field: false for null (-1).
  bool read_struct_marker(bool nullable);

  // --- Tagged fields ----------------------------------------------------
  // A tagged-field section: a count, then (tag, size, value) entries whose
  // tags must strictly ascend (so that a message has one encoding and
  // re-encodes to the same bytes).
  struct TagSection {
    uint32_t count = 0;
    int64_t last_tag = -1;
  };
  struct Tag {
    uint32_t tag = 0;
    size_t end = 0;        // position where the field's value ends
    size_t outer_end = 0;  // the end to restore afterwards
  };
  TagSection read_tag_section();
  // Reads a tag header (tag, size) and limits reading to the field's value
  // until end_tag(). The caller then decodes a known field, or calls
  // read_unknown_tag to keep the value as raw bytes.
  Tag begin_tag(TagSection* section);
  void read_unknown_tag(const Tag& tag, std::vector<TaggedField>* unknown);
  // Checks that the value was consumed exactly and restores the outer limit.
  void end_tag(const Tag& tag);
  // A whole tagged-field section of a struct without known tagged fields.
  void read_tagged_fields(std::vector<TaggedField>* unknown);

  // Records an error (the first one wins) and stops further reading.
  void fail(const char* format, ...) __attribute__((format(printf, 2, 3)));

 private:
  // Fails unless n bytes remain; what names the primitive being read.
  bool need(size_t n, const char* what);
  int64_t read_length(bool compact, bool wide, const char* what);

  struct PathEntry {
    const char* name = nullptr;
    int32_t index = -1;
  };
  static constexpr int kMaxDepth = 12;

  std::span<const uint8_t> data_;
  size_t pos_ = 0;
  size_t end_ = 0;
  size_t base_offset_ = 0;
  const char* message_name_;
  PathEntry path_[kMaxDepth];
  int depth_ = 0;
  int overflow_depth_ = 0;  // nesting beyond kMaxDepth (not named in errors)
  bool failed_ = false;
  std::string error_;
};

// Writes Kafka primitives into an OutputBuffer.
class Writer {
 public:
  explicit Writer(OutputBuffer* out) : out_(out) {}

  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  OutputBuffer* out() const { return out_; }
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  void write_int8(int8_t v) { put(&v, 1); }
  void write_int16(int16_t v);
  void write_uint16(uint16_t v);
  void write_int32(int32_t v);
  void write_uint32(uint32_t v);
  void write_int64(int64_t v);
  void write_float64(double v);
  void write_bool(bool v) { write_int8(v ? 1 : 0); }
  void write_uuid(const Uuid& v) { put(v.bytes.data(), v.bytes.size()); }

  void write_uvarint(uint32_t v);
  void write_uvarlong(uint64_t v);
  void write_varint(int32_t v);
  void write_varlong(int64_t v);

  // Strings and bytes; see Reader for the encodings. In the nullable forms,
  // a null value in a version that does not allow null (nullable == false)
  // is recorded as an error naming `field` and written as empty.
  void write_string(std::string_view s, bool compact);
  void write_nullable_string(const std::optional<std::string>& s, bool compact, bool nullable,
                             const char* field = nullptr);
  void write_bytes(std::span<const uint8_t> b, bool compact);
  void write_nullable_bytes(const std::optional<std::vector<uint8_t>>& b, bool compact, bool nullable,
                            const char* field = nullptr);
  void write_records(const Records& records, bool compact);
  void write_nullable_records(const std::optional<Records>& records, bool compact, bool nullable,
                              const char* field = nullptr);

  void write_array_length(size_t count, bool compact);
  void write_null_array(bool compact, bool nullable, const char* field = nullptr);
  void write_struct_marker(bool present, bool nullable, const char* field = nullptr);

  // The tagged-field section of a struct without known tagged fields.
  void write_tagged_fields(const std::vector<TaggedField>& unknown);

  // Records that `field` holds a value the version being written cannot
  // carry (the field is absent from that version and is not ignorable).
  void not_representable(const char* field, int16_t version);
  // Records an error (the first one wins).
  void record_error(std::string message);

 private:
  void put(const void* data, size_t length) { out_->append(data, length); }

  OutputBuffer* out_;
  std::string error_;
};

// Builds the tagged-field section of a struct with known tagged fields:
// add() each present known field in any order, encoding its value into the
// returned Writer, then finish() writes the count and every field (known and
// unknown) in ascending tag order.
class TaggedFieldsWriter {
 public:
  TaggedFieldsWriter(Writer& w, const std::vector<TaggedField>& unknown) : w_(w), unknown_(unknown) {}

  Writer& add(uint32_t tag);
  void finish();

 private:
  struct Entry {
    uint32_t tag;
    OutputBuffer value;
  };
  Writer& w_;
  const std::vector<TaggedField>& unknown_;
  std::vector<Entry> known_;
  std::optional<Writer> current_;
};

}  // namespace eddy::protocol
