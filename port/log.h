// A small levelled logger: one line per call to stderr, with a UTC timestamp
// and the level. fmt-style formatting ("{}" placeholders), the format string
// checked against the arguments at compile time. Calls are thread-safe: each
// line is written with a single write(2).
#pragma once

#include <fmt/core.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace eddy::port {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };

void set_log_level(LogLevel level);
LogLevel log_level();
// Parses "debug", "info", "warn", "error", "off"; false when unknown.
bool parse_log_level(const char* text, LogLevel* out);

// Writes one line: control characters in the formatted message (newlines,
// carriage returns, escape sequences) are escaped as \n, \r, \t, \xNN. The
// message is formatted into a stack buffer (no allocation) and cut at 2047
// bytes. Only fmt/core.h is seen here: the formatting itself is compiled
// once, in log.cc and port/fmt.cc.
void vlog_line(LogLevel level, fmt::string_view format, fmt::format_args args);

template <typename... Args>
inline void log_line(LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
  vlog_line(level, format, fmt::make_format_args(args...));
}

// Copies in[0, length) to out (at most capacity bytes) with control
// characters escaped as log_line does; returns the bytes written (an escape
// that does not fit is left out with everything after it).
size_t escape_control_characters(const char* in, size_t length, char* out, size_t capacity);
// The same for a whole string (tools printing what clients chose: member
// and client ids, hosts, group ids).
std::string printable(std::string_view in);

}  // namespace eddy::port

#define EDDY_LOG_AT(level, ...)                                    \
  do {                                                             \
    if (static_cast<int>(level) >= static_cast<int>(::eddy::port::log_level())) \
      ::eddy::port::log_line(level, __VA_ARGS__);                  \
  } while (0)
#define EDDY_LOG_DEBUG(...) EDDY_LOG_AT(::eddy::port::LogLevel::kDebug, __VA_ARGS__)
#define EDDY_LOG_INFO(...) EDDY_LOG_AT(::eddy::port::LogLevel::kInfo, __VA_ARGS__)
#define EDDY_LOG_WARN(...) EDDY_LOG_AT(::eddy::port::LogLevel::kWarn, __VA_ARGS__)
#define EDDY_LOG_ERROR(...) EDDY_LOG_AT(::eddy::port::LogLevel::kError, __VA_ARGS__)
