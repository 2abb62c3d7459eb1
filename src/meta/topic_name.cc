#include "meta/topic_name.h"

namespace eddy::meta {

namespace {

bool is_legal_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}

// The name as it may appear in a message: bytes from the wire that are not
// printable ASCII become '?', so the message stays valid UTF-8.
std::string printable(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (c < 0x20 || c > 0x7e) c = '?';
  }
  return out;
}

}  // namespace

std::string topic_name_error(std::string_view name) {
  const std::string prefix = "Topic name is invalid: ";
  if (name.empty()) return prefix + "the empty string is not allowed";
  if (name == ".") return prefix + "'.' is not allowed";
  if (name == "..") return prefix + "'..' is not allowed";
  if (name.size() > kMaxTopicNameLength) {
    return prefix + "the length of '" + printable(name) + "' is longer than the max allowed length " +
           std::to_string(kMaxTopicNameLength);
  }
  for (char c : name) {
    if (!is_legal_char(c)) {
      return prefix + "'" + printable(name) + "' contains one or more characters other than ASCII alphanumerics, " +
             "'.', '_' and '-'";
    }
  }
  return std::string();
}

bool topic_names_collide(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i] == '.' ? '_' : a[i];
    char y = b[i] == '.' ? '_' : b[i];
    if (x != y) return false;
  }
  return true;
}

}  // namespace eddy::meta
