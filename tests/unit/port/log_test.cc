// port/log.h: whatever a message holds (client ids, group ids, topic names
// from the network), one log call is one line.
#include "port/log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <functional>
#include <regex>
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

// What fn writes to file descriptor 2.
std::string captured_stderr(const std::function<void()>& fn) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  int saved = ::dup(2);
  ::dup2(fds[1], 2);
  fn();
  ::dup2(saved, 2);
  ::close(saved);
  ::close(fds[1]);
  std::string out;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) out.append(buffer, static_cast<size_t>(n));
  ::close(fds[0]);
  return out;
}

TEST(Log, OneLineWithTimestampLevelAndTheEscapedMessage) {
  std::string out = captured_stderr([] {
    EDDY_LOG_WARN("client {} sent {} bytes ({}), {}", std::string("a\nb"), int64_t{-42}, uint64_t{18446744073709551615u},
                  "done");
  });
  EXPECT_TRUE(std::regex_match(out, std::regex("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z WARN  "
                                               "client a\\\\nb sent -42 bytes \\(18446744073709551615\\), done\n")))
      << out;
}

TEST(Log, BelowTheLevelNothingIsFormattedOrWritten) {
  int evaluated = 0;
  auto argument = [&evaluated] { return ++evaluated; };
  set_log_level(LogLevel::kWarn);
  std::string out = captured_stderr([&] { EDDY_LOG_INFO("not shown {}", argument()); });
  set_log_level(LogLevel::kInfo);
  EXPECT_EQ(out, "");
  EXPECT_EQ(evaluated, 0);
}

TEST(Log, ALongMessageIsCutToOneLineOf2048Bytes) {
  std::string out = captured_stderr([] { EDDY_LOG_ERROR("{}", std::string(5000, 'x')); });
  EXPECT_EQ(out.size(), 2048u);
  EXPECT_EQ(out.back(), '\n');
  EXPECT_EQ(out.find('\n'), out.size() - 1);
}

TEST(Log, AnArgumentFmtRefusesIsReportedNotThrown) {
  const char* missing = nullptr;
  std::string out = captured_stderr([&] { EDDY_LOG_ERROR("name {}", missing); });
  EXPECT_NE(out.find("ERROR unformattable log message \"name {}\""), std::string::npos) << out;
}

}  // namespace
}  // namespace eddy::port
