// The message syntax SCRAM's server (scram.h) and client (scram_client.h)
// share (RFC 5802 section 7).
#pragma once

#include <string_view>
#include <vector>

namespace eddy::security {

// The comma-separated attributes of a SCRAM message, as views into it (an
// empty message is one empty attribute).
inline std::vector<std::string_view> scram_attributes(std::string_view message) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t comma = message.find(',', start);
    parts.push_back(message.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) return parts;
    start = comma + 1;
  }
}

// A nonce: one or more RFC 5802 "printable" characters (%x21-2B / %x2D-7E,
// that is visible ASCII without ',').
inline bool valid_scram_nonce(std::string_view nonce) {
  if (nonce.empty()) return false;
  for (char c : nonce) {
    if (c < 0x21 || c > 0x7e || c == ',') return false;
  }
  return true;
}

}  // namespace eddy::security
