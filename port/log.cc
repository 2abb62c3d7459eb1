#include "port/log.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <exception>

#include "port/port.h"

namespace eddy::port {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
const char* const kNames[] = {"DEBUG", "INFO", "WARN", "ERROR", "OFF"};
}  // namespace

void set_log_level(LogLevel level) { g_level.store(static_cast<int>(level), std::memory_order_relaxed); }
LogLevel log_level() { return static_cast<LogLevel>(g_level.load(std::memory_order_relaxed)); }

bool parse_log_level(const char* text, LogLevel* out) {
  static const char* const kLower[] = {"debug", "info", "warn", "error", "off"};
  for (int i = 0; i < 5; ++i) {
    if (std::strcmp(text, kLower[i]) == 0) {
      *out = static_cast<LogLevel>(i);
      return true;
    }
  }
  return false;
}

size_t escape_control_characters(const char* in, size_t length, char* out, size_t capacity) {
  size_t n = 0;
  for (size_t i = 0; i < length; ++i) {
    const unsigned char c = static_cast<unsigned char>(in[i]);
    char escaped[5] = {c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : '\0'};
    size_t width = 1;
    if (c < 0x20 || c == 0x7f) {
      if (escaped[0] == '\0') std::snprintf(escaped, sizeof escaped, "x%02x", c);
      width = 1 + std::strlen(escaped);
    }
    if (n + width > capacity) break;
    if (width == 1) {
      out[n++] = static_cast<char>(c);
    } else {
      out[n++] = '\\';
      std::memcpy(out + n, escaped, width - 1);
      n += width - 1;
    }
  }
  return n;
}

std::string printable(std::string_view in) {
  std::string out(in.size() * 4, '\0');
  out.resize(escape_control_characters(in.data(), in.size(), out.data(), out.size()));
  return out;
}

void vlog_line(LogLevel level, fmt::string_view format, fmt::format_args args) {
  char message[2048];
  char line[2048];
  int64_t now = wall_clock_millis();
  time_t seconds = static_cast<time_t>(now / 1000);
  struct tm tm;
  gmtime_r(&seconds, &tm);
  int n = std::snprintf(line, sizeof(line), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ %-5s ", tm.tm_year + 1900,
                        tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(now % 1000),
                        kNames[static_cast<int>(level)]);
  // Straight into the stack buffer, no allocation: what does not fit is
  // counted but not written, so a long message is cut (at 2047 bytes, as
  // with vsnprintf before). The format string was checked at compile time;
  // what is left to fail is an argument (a null const char*).
  size_t length;
  try {
    length = std::min(fmt::vformat_to_n(message, sizeof(message) - 1, format, args).size, sizeof(message) - 1);
  } catch (const std::exception& e) {
    length = std::min(static_cast<size_t>(std::snprintf(message, sizeof(message), "unformattable log message "
                                                        "\"%.*s\": %s", static_cast<int>(format.size()),
                                                        format.data(), e.what())),
                      sizeof(message) - 1);
  }
  // Messages carry strings from clients (client ids, group and member ids,
  // topic names): whatever they hold, one call is one line.
  size_t len = static_cast<size_t>(n) + escape_control_characters(message, length, line + n, sizeof(line) - n - 1);
  line[len++] = '\n';
  ssize_t ignored = ::write(2, line, len);
  (void)ignored;
}

}  // namespace eddy::port
