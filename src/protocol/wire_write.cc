// Writer and TaggedFieldsWriter: Kafka's primitive types written for a
// negotiated version; a value the version cannot carry is recorded, not
// written (wire.h).
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <limits>

#include "protocol/big_endian.h"
#include "protocol/wire.h"

namespace eddy::protocol {

// ---------------------------------------------------------------------------
// Writer
// ---------------------------------------------------------------------------

void Writer::write_int16(int16_t v) { write_uint16(static_cast<uint16_t>(v)); }

void Writer::write_uint16(uint16_t v) {
  uint8_t b[2];
  store_be16(b, v);
  put(b, 2);
}

void Writer::write_int32(int32_t v) { write_uint32(static_cast<uint32_t>(v)); }

void Writer::write_uint32(uint32_t v) {
  uint8_t b[4];
  store_be32(b, v);
  put(b, 4);
}

void Writer::write_int64(int64_t v) {
  uint8_t b[8];
  store_be64(b, static_cast<uint64_t>(v));
  put(b, 8);
}

void Writer::write_float64(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  uint8_t b[8];
  store_be64(b, bits);
  put(b, 8);
}

void Writer::write_uvarint(uint32_t v) {
  uint8_t b[5];
  size_t n = 0;
  while (v >= 0x80) {
    b[n++] = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  b[n++] = static_cast<uint8_t>(v);
  put(b, n);
}

void Writer::write_uvarlong(uint64_t v) {
  uint8_t b[10];
  size_t n = 0;
  while (v >= 0x80) {
    b[n++] = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  b[n++] = static_cast<uint8_t>(v);
  put(b, n);
}

void Writer::write_varint(int32_t v) {
  uint32_t u = static_cast<uint32_t>(v);
  write_uvarint((u << 1) ^ (v < 0 ? 0xffffffffu : 0u));
}

void Writer::write_varlong(int64_t v) {
  uint64_t u = static_cast<uint64_t>(v);
  write_uvarlong((u << 1) ^ (v < 0 ? ~uint64_t{0} : uint64_t{0}));
}

void Writer::write_string(std::string_view s, bool compact) {
  if (compact) {
    if (s.size() >= std::numeric_limits<uint32_t>::max()) {
      record_error("string of " + std::to_string(s.size()) + " bytes is too long to encode");
      write_uvarint(1);
      return;
    }
    write_uvarint(static_cast<uint32_t>(s.size() + 1));
  } else {
    if (s.size() > static_cast<size_t>(std::numeric_limits<int16_t>::max())) {
      record_error("string of " + std::to_string(s.size()) + " bytes is too long for an int16 length");
      write_int16(0);
      return;
    }
    write_int16(static_cast<int16_t>(s.size()));
  }
  put(s.data(), s.size());
}

void Writer::write_nullable_string(const std::optional<std::string>& s, bool compact, bool nullable,
                                   const char* field) {
  if (s) {
    write_string(*s, compact);
    return;
  }
  if (!nullable) {
    record_error(std::string(field ? field : "string field") + " is null in a version where it is not nullable");
    write_string({}, compact);
    return;
  }
  if (compact) {
    write_uvarint(0);
  } else {
    write_int16(-1);
  }
}

void Writer::write_bytes(std::span<const uint8_t> b, bool compact) {
  if (b.size() >= static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    record_error("bytes of " + std::to_string(b.size()) + " bytes are too long to encode");
    b = {};
  }
  if (compact) {
    write_uvarint(static_cast<uint32_t>(b.size() + 1));
  } else {
    write_int32(static_cast<int32_t>(b.size()));
  }
  put(b.data(), b.size());
}

void Writer::write_nullable_bytes(const std::optional<std::vector<uint8_t>>& b, bool compact, bool nullable,
                                  const char* field) {
  if (b) {
    write_bytes(*b, compact);
    return;
  }
  if (!nullable) {
    record_error(std::string(field ? field : "bytes field") + " is null in a version where it is not nullable");
    write_bytes({}, compact);
    return;
  }
  if (compact) {
    write_uvarint(0);
  } else {
    write_int32(-1);
  }
}

void Writer::write_records(const Records& records, bool compact) {
  uint64_t size = records.size();
  if (size >= static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
    record_error("records of " + std::to_string(size) + " bytes are too long to encode");
    write_bytes({}, compact);
    return;
  }
  if (compact) {
    write_uvarint(static_cast<uint32_t>(size + 1));
  } else {
    write_int32(static_cast<int32_t>(size));
  }
  put(records.bytes.data(), records.bytes.size());
  for (const FileRegion& region : records.file_regions) out_->append_file(region);
}

void Writer::write_nullable_records(const std::optional<Records>& records, bool compact, bool nullable,
                                    const char* field) {
  if (records) {
    write_records(*records, compact);
    return;
  }
  if (!nullable) {
    record_error(std::string(field ? field : "records field") + " is null in a version where it is not nullable");
    write_bytes({}, compact);
    return;
  }
  if (compact) {
    write_uvarint(0);
  } else {
    write_int32(-1);
  }
}

void Writer::write_array_length(size_t count, bool compact) {
  if (count >= static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    record_error("array of " + std::to_string(count) + " elements is too long to encode");
  }
  if (compact) {
    write_uvarint(static_cast<uint32_t>(count + 1));
  } else {
    write_int32(static_cast<int32_t>(count));
  }
}

void Writer::write_null_array(bool compact, bool nullable, const char* field) {
  if (!nullable) {
    record_error(std::string(field ? field : "array field") + " is null in a version where it is not nullable");
    write_array_length(0, compact);
    return;
  }
  if (compact) {
    write_uvarint(0);
  } else {
    write_int32(-1);
  }
}

void Writer::write_struct_marker(bool present, bool nullable, const char* field) {
  if (!present && !nullable) {
    record_error(std::string(field ? field : "struct field") + " is null in a version where it is not nullable");
  }
  write_int8(present ? 1 : -1);
}

void Writer::write_tagged_fields(const std::vector<TaggedField>& unknown) {
  if (unknown.empty()) {
    write_uvarint(0);
    return;
  }
  TaggedFieldsWriter tags(*this, unknown);
  tags.finish();
}

void Writer::not_representable(const char* field, int16_t version) {
  record_error(std::string(field) + " has a non-default value that version " + std::to_string(version) +
               " cannot carry");
}

void Writer::record_error(std::string message) {
  if (error_.empty()) error_ = std::move(message);
}

// ---------------------------------------------------------------------------
// TaggedFieldsWriter
// ---------------------------------------------------------------------------

Writer& TaggedFieldsWriter::add(uint32_t tag) {
  if (current_ && !current_->ok()) w_.record_error(current_->error());
  current_.reset();
  known_.push_back(Entry{tag, OutputBuffer()});
  current_.emplace(&known_.back().value);
  return *current_;
}

void TaggedFieldsWriter::finish() {
  if (current_ && !current_->ok()) w_.record_error(current_->error());
  current_.reset();

  // Merge known and unknown fields by tag (stable: known first on a tie,
  // which only a caller bug could produce).
  struct Item {
    uint32_t tag;
    const OutputBuffer* known;
    const TaggedField* unknown;
  };
  std::vector<Item> items;
  items.reserve(known_.size() + unknown_.size());
  for (const Entry& e : known_) items.push_back({e.tag, &e.value, nullptr});
  for (const TaggedField& f : unknown_) items.push_back({f.tag, nullptr, &f});
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.tag < b.tag; });

  w_.write_uvarint(static_cast<uint32_t>(items.size()));
  for (const Item& item : items) {
    w_.write_uvarint(item.tag);
    if (item.known) {
      w_.write_uvarint(static_cast<uint32_t>(item.known->size()));
      w_.out()->append(*item.known);
    } else {
      w_.write_uvarint(static_cast<uint32_t>(item.unknown->data.size()));
      w_.out()->append(item.unknown->data.data(), item.unknown->data.size());
    }
  }
}

}  // namespace eddy::protocol
