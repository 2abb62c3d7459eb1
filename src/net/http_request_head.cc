#include "net/http_request_head.h"

namespace eddy::net {

namespace {

bool is_token_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '.' || c == '!' || c == '~' || c == '*' || c == '\'' || c == '+' || c == '#' || c == '$' ||
         c == '%' || c == '&' || c == '^' || c == '`' || c == '|';
}

// A request target's bytes: visible ASCII only (RFC 3986 characters, and
// more; the handler compares paths exactly).
bool is_target_char(char c) { return c > 0x20 && c < 0x7f; }

}  // namespace

size_t find_request_head_end(std::string_view bytes) {
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] != '\n') continue;
    if (i + 1 < bytes.size() && bytes[i + 1] == '\n') return i + 2;
    if (i + 2 < bytes.size() && bytes[i + 1] == '\r' && bytes[i + 2] == '\n') return i + 3;
  }
  return 0;
}

int parse_request_head(std::string_view head, HttpRequest* out) {
  const size_t line_end = head.find('\n');
  if (line_end == std::string_view::npos) return 400;
  std::string_view line = head.substr(0, line_end);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const size_t sp1 = line.find(' ');
  if (sp1 == std::string_view::npos || sp1 == 0) return 400;
  const size_t sp2 = line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || sp2 == sp1 + 1) return 400;
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  for (char c : method) {
    if (!is_token_char(c)) return 400;
  }
  for (char c : target) {
    if (!is_target_char(c)) return 400;
  }
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || version[6] != '.' || version[5] < '0' ||
      version[5] > '9' || version[7] < '0' || version[7] > '9') {
    return 400;
  }
  if (version[5] != '1') return 505;
  for (char c : head.substr(line_end + 1)) {
    // Header lines: no NUL or other control bytes but tab, CR and LF.
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7f) return 400;
  }
  if (method != "GET" && method != "HEAD") return 405;
  if (target.empty() || target[0] != '/') return 400;
  const size_t q = target.find('?');
  out->method = std::string(method);
  out->path = std::string(target.substr(0, q));
  out->query = q == std::string_view::npos ? std::string() : std::string(target.substr(q + 1));
  return 0;
}

}  // namespace eddy::net
