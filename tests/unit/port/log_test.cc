// port/log.h: whatever a message holds (client ids, group ids, topic names
// from the network), one log call is one line.
#include "port/log.h"

#include <gtest/gtest.h>

#include <string>

namespace eddy::port {
namespace {

std::string escaped(const std::string& in, size_t capacity = 256) {
  std::string out(capacity, '\0');
  out.resize(escape_control_characters(in.data(), in.size(), out.data(), capacity));
  return out;
}

TEST(Log, ControlCharactersAreEscaped) {
  EXPECT_EQ(escaped("plain text, UTF-8 \xc3\xa9 kept"), "plain text, UTF-8 \xc3\xa9 kept");
  EXPECT_EQ(escaped("x\n2026-12-01T00:00:00.000Z ERROR forged"), "x\\n2026-12-01T00:00:00.000Z ERROR forged");
  EXPECT_EQ(escaped("a\rb\tc"), "a\\rb\\tc");
  EXPECT_EQ(escaped(std::string("\x1b[31m\x7f\0z", 8)), "\\x1b[31m\\x7f\\x00z");
}

TEST(Log, AnEscapeThatDoesNotFitIsLeftOutWithWhatFollows) {
  EXPECT_EQ(escaped("ab\ncd", 3), "ab");
  EXPECT_EQ(escaped("ab\ncd", 4), "ab\\n");
  EXPECT_EQ(escaped("abc", 2), "ab");
}

}  // namespace
}  // namespace eddy::port
