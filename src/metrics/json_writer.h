// Why not nlohmann::json (Debian's nlohmann-json3-dev), measured on Debian 12
// (nlohmann 3.11.2, gcc 12, the gateway build, -Os) for the forward status
// (StatusBoard::render_json, src/forward/link_status.cc) rewritten on
// nlohmann::ordered_json: the stripped eddy grew by 32 768 bytes on x86-64
// (1 695 200 -> 1 727 968), 65 536 on aarch64 (2 297 456 -> 2 362 992) and
// 20 480 on armhf (1 431 816 -> 1 452 296), text + data by 29 142, 41 237
// and 19 105 bytes, for that one writer (this one would stay for
// /status.json); link_status.cc took 9.3 s of CPU to compile instead of
// 2.6 s. It would also change the output: no \u escapes for '<', '>' and
// '&' (which keep the text safe inside HTML), and invalid UTF-8 throws
// unless replaced. So the writer below stays.
//
// A small streaming JSON writer for /status.json: objects, arrays, strings
// (escaped per RFC 8259; control characters, quotes and backslashes, and
// '<', '>' and '&' as \u escapes so that the text is also safe inside HTML)
// and numbers. The caller keeps the nesting balanced; commas are placed here.
//
//   JsonWriter j;
//   j.begin_object();
//   j.key("topics"); j.begin_array(); ... j.end_array();
//   j.end_object();
//   std::string text = j.take();
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace eddy::metrics {

// value as a JSON string literal, quotes included.
void append_json_string(std::string* out, std::string_view value);

class JsonWriter {
 public:
  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  // The next value belongs to this key. REQUIRES: inside an object.
  void key(std::string_view name);
  void string(std::string_view value);
  void number(int64_t value);
  void number(uint64_t value);
  void number(int value) { number(static_cast<int64_t>(value)); }
  // Non-finite values are written as null.
  void number(double value);
  void boolean(bool value);
  void null();

  // Shorthands for key(name) then the value.
  template <typename T>
  void field(std::string_view name, T value) {
    key(name);
    write(value);
  }

  std::string take() { return std::move(out_); }

 private:
  void write(std::string_view v) { string(v); }
  void write(const std::string& v) { string(v); }
  void write(const char* v) { string(v); }
  void write(bool v) { boolean(v); }
  void write(int v) { number(v); }
  void write(int64_t v) { number(v); }
  void write(uint64_t v) { number(v); }
  void write(double v) { number(v); }
  // Before any value: a comma unless it is the first in its container or
  // follows its key.
  void separate();

  std::string out_;
  std::vector<bool> first_;  // per open container: nothing written in it yet
  bool after_key_ = false;
};

}  // namespace eddy::metrics
