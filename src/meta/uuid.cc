#include "meta/uuid.h"

#include <sqlite3.h>

namespace eddy::meta {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int decode_char(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-') return 62;
  if (c == '_') return 63;
  return -1;
}

bool is_metadata_topic_id(const Uuid& id) {
  for (size_t i = 0; i + 1 < id.bytes.size(); ++i) {
    if (id.bytes[i] != 0) return false;
  }
  return id.bytes[15] == 1;
}

}  // namespace

Uuid Uuid::random() {
  Uuid id;
  do {
    sqlite3_randomness(static_cast<int>(id.bytes.size()), id.bytes.data());
    id.bytes[6] = static_cast<uint8_t>((id.bytes[6] & 0x0f) | 0x40);  // version 4
    id.bytes[8] = static_cast<uint8_t>((id.bytes[8] & 0x3f) | 0x80);  // IETF variant
  } while (id.is_zero() || is_metadata_topic_id(id) || id.to_string()[0] == '-');
  return id;
}

bool Uuid::is_zero() const {
  for (uint8_t b : bytes) {
    if (b != 0) return false;
  }
  return true;
}

std::string Uuid::to_string() const {
  std::string out;
  out.reserve(22);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = (uint32_t{bytes[i]} << 16) | (uint32_t{bytes[i + 1]} << 8) | bytes[i + 2];
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  // 16 = 5 * 3 + 1: one byte left, two characters, no padding.
  uint32_t v = uint32_t{bytes[i]} << 16;
  out += kAlphabet[(v >> 18) & 63];
  out += kAlphabet[(v >> 12) & 63];
  return out;
}

bool Uuid::parse(std::string_view text, Uuid* out) {
  if (text.size() != 22) return false;
  int values[22];
  for (size_t i = 0; i < text.size(); ++i) {
    values[i] = decode_char(text[i]);
    if (values[i] < 0) return false;
  }
  if ((values[21] & 0x0f) != 0) return false;  // non-canonical: stray low bits
  Uuid id;
  size_t byte = 0;
  for (size_t i = 0; i < 20; i += 4) {
    uint32_t v = (uint32_t(values[i]) << 18) | (uint32_t(values[i + 1]) << 12) | (uint32_t(values[i + 2]) << 6) |
                 uint32_t(values[i + 3]);
    id.bytes[byte++] = static_cast<uint8_t>(v >> 16);
    id.bytes[byte++] = static_cast<uint8_t>(v >> 8);
    id.bytes[byte++] = static_cast<uint8_t>(v);
  }
  id.bytes[byte] = static_cast<uint8_t>((values[20] << 2) | (values[21] >> 4));
  *out = id;
  return true;
}

}  // namespace eddy::meta
