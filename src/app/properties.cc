#include "app/properties.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace eddy::app {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\f'; }

// Appends the UTF-8 encoding of code point cp.
void append_utf8(std::string* out, unsigned cp) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Decodes escapes of one logical line; stops at the first unescaped
// separator when is_key.
std::string unescape(const std::string& s, size_t* pos, bool is_key) {
  std::string out;
  size_t i = *pos;
  while (i < s.size()) {
    char c = s[i];
    if (is_key && (c == '=' || c == ':' || is_space(c))) break;
    if (c == '\\' && i + 1 < s.size()) {
      char e = s[i + 1];
      i += 2;
      switch (e) {
        case 't': out.push_back('\t'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 'f': out.push_back('\f'); break;
        case 'u': {
          unsigned cp = 0;
          int digits = 0;
          while (digits < 4 && i < s.size() && std::isxdigit(static_cast<unsigned char>(s[i]))) {
            char h = s[i++];
            cp = cp * 16 + static_cast<unsigned>(std::isdigit(static_cast<unsigned char>(h)) ? h - '0'
                                                                                            : (std::tolower(h) - 'a' + 10));
            ++digits;
          }
          append_utf8(&out, cp);
          break;
        }
        default: out.push_back(e);
      }
      continue;
    }
    out.push_back(c);
    ++i;
  }
  *pos = i;
  return out;
}

// True when the line ends in an odd number of backslashes (continues).
bool continues(const std::string& line) {
  size_t n = 0;
  for (size_t i = line.size(); i > 0 && line[i - 1] == '\\'; --i) ++n;
  return n % 2 == 1;
}

}  // namespace

std::vector<Property> parse_properties(const std::string& text, const std::string& source) {
  std::vector<Property> out;
  size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    // Gather one logical line.
    std::string logical;
    int first_line = 0;
    bool more = true;
    while (more && pos <= text.size()) {
      size_t end = text.find('\n', pos);
      if (end == std::string::npos) end = text.size();
      std::string raw = text.substr(pos, end - pos);
      if (!raw.empty() && raw.back() == '\r') raw.pop_back();
      pos = end + 1;
      ++line_no;
      size_t start = 0;
      while (start < raw.size() && is_space(raw[start])) ++start;
      if (logical.empty() && first_line == 0) {
        if (start == raw.size() || raw[start] == '#' || raw[start] == '!') {
          if (pos > text.size()) break;
          continue;  // blank or comment
        }
        first_line = line_no;
      }
      raw = raw.substr(start);
      more = continues(raw);
      if (more) raw.pop_back();
      logical += raw;
      if (pos > text.size()) break;
    }
    if (first_line == 0) continue;
    size_t i = 0;
    Property p;
    p.key = unescape(logical, &i, true);
    while (i < logical.size() && is_space(logical[i])) ++i;
    if (i < logical.size() && (logical[i] == '=' || logical[i] == ':')) ++i;
    while (i < logical.size() && is_space(logical[i])) ++i;
    p.value = unescape(logical, &i, false);
    while (!p.value.empty() && is_space(p.value.back())) p.value.pop_back();
    p.source = source;
    p.line = first_line;
    out.push_back(std::move(p));
  }
  return out;
}

Status read_properties_file(const std::string& path, std::vector<Property>* out) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return Status::io_error(path + ": cannot read: " + std::strerror(errno));
  }
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, n);
  bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) {
    return Status::io_error(path + ": cannot read: I/O error");
  }
  *out = parse_properties(text, path);
  return Status();
}

std::string describe_property_error(const Property& p, const std::string& why) {
  std::string out = p.source;
  if (p.line > 0) {
    out += ':';
    out += std::to_string(p.line);
  }
  out += ": ";
  out += p.key;
  out += ": ";
  out += why;
  return out;
}

}  // namespace eddy::app
