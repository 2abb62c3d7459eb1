// The wire's value types (Uuid, Records) and Reader: Kafka's primitive
// types read from a request or response body with bounds checks; the first
// failure sticks and names the field path (wire.h).
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <limits>

#include "protocol/big_endian.h"
#include "protocol/wire.h"

namespace eddy::protocol {

// ---------------------------------------------------------------------------
// Value types
// ---------------------------------------------------------------------------

bool Uuid::is_zero() const {
  for (uint8_t b : bytes) {
    if (b != 0) return false;
  }
  return true;
}

uint64_t Records::size() const {
  uint64_t total = bytes.size();
  for (const FileRegion& r : file_regions) total += r.length;
  return total;
}

bool Records::operator==(const Records& other) const {
  if (bytes.size() != other.bytes.size()) return false;
  if (!bytes.empty() && std::memcmp(bytes.data(), other.bytes.data(), bytes.size()) != 0) return false;
  if (file_regions.size() != other.file_regions.size()) return false;
  for (size_t i = 0; i < file_regions.size(); ++i) {
    const FileRegion& a = file_regions[i];
    const FileRegion& b = other.file_regions[i];
    if (a.fd != b.fd || a.offset != b.offset || a.length != b.length) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Reader
// ---------------------------------------------------------------------------

Reader::Reader(std::span<const uint8_t> data, const char* message_name, size_t base_offset)
    : data_(data), end_(data.size()), base_offset_(base_offset), message_name_(message_name) {}

void Reader::enter(int32_t index) {
  if (depth_ + 1 >= kMaxDepth) {
    ++overflow_depth_;
    return;
  }
  path_[depth_].index = index;
  ++depth_;
  path_[depth_] = PathEntry{};
}

void Reader::leave() {
  if (overflow_depth_ > 0) {
    --overflow_depth_;
    return;
  }
  if (depth_ > 0) --depth_;
}

void Reader::fail(const char* format, ...) {
  if (failed_) return;
  failed_ = true;
  std::string where = message_name_ ? message_name_ : "message";
  for (int d = 0; d <= depth_; ++d) {
    if (path_[d].name == nullptr) break;
    where += '.';
    where += path_[d].name;
    if (d < depth_ && path_[d].index >= 0) {
      where += '[';
      where += std::to_string(path_[d].index);
      where += ']';
    }
  }
  char what[256];
  va_list args;
  va_start(args, format);
  std::vsnprintf(what, sizeof(what), format, args);
  va_end(args);
  error_ = where + ": " + what + " at byte " + std::to_string(base_offset_ + pos_);
}

bool Reader::need(size_t n, const char* what) {
  if (failed_) return false;
  if (end_ - pos_ < n) {
    fail("%s needs %zu bytes but %zu remain", what, n, end_ - pos_);
    return false;
  }
  return true;
}

int8_t Reader::read_int8() {
  if (!need(1, "int8")) return 0;
  return static_cast<int8_t>(data_[pos_++]);
}

int16_t Reader::read_int16() {
  if (!need(2, "int16")) return 0;
  int16_t v = static_cast<int16_t>(load_be16(&data_[pos_]));
  pos_ += 2;
  return v;
}

uint16_t Reader::read_uint16() {
  if (!need(2, "uint16")) return 0;
  uint16_t v = load_be16(&data_[pos_]);
  pos_ += 2;
  return v;
}

int32_t Reader::read_int32() {
  if (!need(4, "int32")) return 0;
  int32_t v = static_cast<int32_t>(load_be32(&data_[pos_]));
  pos_ += 4;
  return v;
}

uint32_t Reader::read_uint32() {
  if (!need(4, "uint32")) return 0;
  uint32_t v = load_be32(&data_[pos_]);
  pos_ += 4;
  return v;
}

int64_t Reader::read_int64() {
  if (!need(8, "int64")) return 0;
  int64_t v = static_cast<int64_t>(load_be64(&data_[pos_]));
  pos_ += 8;
  return v;
}

double Reader::read_float64() {
  if (!need(8, "float64")) return 0;
  uint64_t bits = load_be64(&data_[pos_]);
  pos_ += 8;
  double v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

bool Reader::read_bool() {
  if (!need(1, "bool")) return false;
  return data_[pos_++] != 0;
}

Uuid Reader::read_uuid() {
  Uuid u;
  if (!need(16, "uuid")) return u;
  std::memcpy(u.bytes.data(), &data_[pos_], 16);
  pos_ += 16;
  return u;
}

uint32_t Reader::read_uvarint() {
  uint32_t value = 0;
  for (int i = 0; i < 5; ++i) {
    if (!need(1, "unsigned varint")) return 0;
    uint8_t b = data_[pos_++];
    if (i == 4 && (b & 0xf0) != 0) {
      fail("unsigned varint does not fit in 32 bits");
      return 0;
    }
    value |= uint32_t{b & 0x7fu} << (7 * i);
    if ((b & 0x80) == 0) return value;
  }
  return value;  // unreachable: the 5th byte has its high bit clear
}

uint64_t Reader::read_uvarlong() {
  uint64_t value = 0;
  for (int i = 0; i < 10; ++i) {
    if (!need(1, "unsigned varlong")) return 0;
    uint8_t b = data_[pos_++];
    if (i == 9 && (b & 0xfe) != 0) {
      fail("unsigned varlong does not fit in 64 bits");
      return 0;
    }
    value |= uint64_t{b & 0x7fu} << (7 * i);
    if ((b & 0x80) == 0) return value;
  }
  return value;
}

int32_t Reader::read_varint() {
  uint32_t v = read_uvarint();
  return static_cast<int32_t>((v >> 1) ^ (~(v & 1) + 1));
}

int64_t Reader::read_varlong() {
  uint64_t v = read_uvarlong();
  return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1));
}

// Reads a length prefix: compact (unsigned varint N meaning N-1), int16
// (strings) or int32 (wide: bytes, records). Returns -1 for null, -2 after
// an error. A non-null length is checked against the remaining bytes.
int64_t Reader::read_length(bool compact, bool wide, const char* what) {
  if (failed_) return -2;
  int64_t length;
  if (compact) {
    length = static_cast<int64_t>(read_uvarint()) - 1;
  } else if (wide) {
    length = read_int32();
  } else {
    length = read_int16();
  }
  if (failed_) return -2;
  if (length < -1) {
    fail("%s length %lld is negative", what, static_cast<long long>(length));
    return -2;
  }
  if (length >= 0 && static_cast<uint64_t>(length) > end_ - pos_) {
    fail("%s length %lld exceeds remaining %zu bytes", what, static_cast<long long>(length), end_ - pos_);
    return -2;
  }
  return length;
}

std::string Reader::read_string(bool compact) {
  int64_t length = read_length(compact, false, "string");
  if (length == -1) {
    fail("null string in a non-nullable field");
    return {};
  }
  if (length < 0) return {};
  std::string s(reinterpret_cast<const char*>(&data_[pos_]), static_cast<size_t>(length));
  pos_ += static_cast<size_t>(length);
  return s;
}

std::optional<std::string> Reader::read_nullable_string(bool compact, bool nullable) {
  int64_t length = read_length(compact, false, "string");
  if (length == -1) {
    if (!nullable) fail("null string in a version where the field is not nullable");
    return std::nullopt;
  }
  if (length < 0) return std::nullopt;
  std::string s(reinterpret_cast<const char*>(&data_[pos_]), static_cast<size_t>(length));
  pos_ += static_cast<size_t>(length);
  return s;
}

std::span<const uint8_t> Reader::read_bytes_view(bool compact, bool* is_null) {
  *is_null = false;
  int64_t length = read_length(compact, true, "bytes");
  if (length == -1) {
    *is_null = true;
    return {};
  }
  if (length < 0) return {};
  std::span<const uint8_t> view = data_.subspan(pos_, static_cast<size_t>(length));
  pos_ += static_cast<size_t>(length);
  return view;
}

std::vector<uint8_t> Reader::read_bytes(bool compact) {
  bool is_null;
  std::span<const uint8_t> view = read_bytes_view(compact, &is_null);
  if (is_null) fail("null bytes in a non-nullable field");
  return std::vector<uint8_t>(view.begin(), view.end());
}

std::optional<std::vector<uint8_t>> Reader::read_nullable_bytes(bool compact, bool nullable) {
  bool is_null;
  std::span<const uint8_t> view = read_bytes_view(compact, &is_null);
  if (is_null) {
    if (!nullable) fail("null bytes in a version where the field is not nullable");
    return std::nullopt;
  }
  if (failed_) return std::nullopt;
  return std::vector<uint8_t>(view.begin(), view.end());
}

Records Reader::read_records(bool compact) {
  int64_t length = read_length(compact, true, "records");
  Records records;
  if (length == -1) {
    fail("null records in a non-nullable field");
    return records;
  }
  if (length < 0) return records;
  records.bytes = data_.subspan(pos_, static_cast<size_t>(length));
  pos_ += static_cast<size_t>(length);
  return records;
}

std::optional<Records> Reader::read_nullable_records(bool compact, bool nullable) {
  int64_t length = read_length(compact, true, "records");
  if (length == -1) {
    if (!nullable) fail("null records in a version where the field is not nullable");
    return std::nullopt;
  }
  if (length < 0) return std::nullopt;
  Records records;
  records.bytes = data_.subspan(pos_, static_cast<size_t>(length));
  pos_ += static_cast<size_t>(length);
  return records;
}

int32_t Reader::read_array_length(bool compact, size_t min_element_size, bool nullable) {
  if (failed_) return 0;
  int64_t count = compact ? static_cast<int64_t>(read_uvarint()) - 1 : read_int32();
  if (failed_) return 0;
  if (count == -1) {
    if (!nullable) {
      fail("null array in a non-nullable field");
      return 0;
    }
    return -1;
  }
  if (count < 0) {
    fail("array count %lld is negative", static_cast<long long>(count));
    return 0;
  }
  size_t remaining = end_ - pos_;
  if (static_cast<uint64_t>(count) > remaining / min_element_size) {
    fail("array count %lld exceeds what the remaining %zu bytes can hold (at least %zu bytes per element)",
         static_cast<long long>(count), remaining, min_element_size);
    return 0;
  }
  return static_cast<int32_t>(count);
}

bool Reader::read_struct_marker(bool nullable) {
  int8_t marker = read_int8();
  if (failed_) return false;
  if (marker < 0) {
    if (!nullable) fail("null struct in a version where the field is not nullable");
    return false;
  }
  return true;
}

Reader::TagSection Reader::read_tag_section() {
  TagSection section;
  uint32_t count = read_uvarint();
  if (failed_) return section;
  // Each tagged field takes at least two bytes (tag, size).
  if (count > (end_ - pos_) / 2) {
    fail("tagged field count %u exceeds what the remaining %zu bytes can hold", count, end_ - pos_);
    return section;
  }
  section.count = count;
  return section;
}

Reader::Tag Reader::begin_tag(TagSection* section) {
  Tag t;
  t.outer_end = end_;
  t.tag = read_uvarint();
  uint32_t size = read_uvarint();
  if (failed_) {
    t.end = end_;
    return t;
  }
  if (static_cast<int64_t>(t.tag) <= section->last_tag) {
    fail("tagged field %u follows tag %lld (tags must ascend)", t.tag, static_cast<long long>(section->last_tag));
    t.end = end_;
    return t;
  }
  section->last_tag = t.tag;
  if (size > end_ - pos_) {
    fail("tagged field %u size %u exceeds remaining %zu bytes", t.tag, size, end_ - pos_);
    t.end = end_;
    return t;
  }
  t.end = pos_ + size;
  end_ = t.end;
  return t;
}

void Reader::read_unknown_tag(const Tag& tag, std::vector<TaggedField>* unknown) {
  if (failed_) return;
  TaggedField f;
  f.tag = tag.tag;
  f.data.assign(data_.begin() + static_cast<ptrdiff_t>(pos_), data_.begin() + static_cast<ptrdiff_t>(tag.end));
  pos_ = tag.end;
  unknown->push_back(std::move(f));
}

void Reader::end_tag(const Tag& tag) {
  // pos_ cannot pass tag.end: begin_tag narrowed end_ to it.
  if (!failed_ && pos_ != tag.end) {
    fail("the value of tagged field %u left %zu of its bytes unread", tag.tag, tag.end - pos_);
  }
  end_ = tag.outer_end;
}

void Reader::read_tagged_fields(std::vector<TaggedField>* unknown) {
  TagSection section = read_tag_section();
  for (uint32_t i = 0; i < section.count && !failed_; ++i) {
    Tag t = begin_tag(&section);
    read_unknown_tag(t, unknown);
    end_tag(t);
  }
}

}  // namespace eddy::protocol
