#include "metrics/json_writer.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>

namespace eddy::metrics {

void append_json_string(std::string* out, std::string_view value) {
  out->push_back('"');
  for (unsigned char c : value) {
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      default:
        if (c < 0x20 || c == '<' || c == '>' || c == '&') {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out->append(buf);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
  }
  out->push_back('"');
}

void JsonWriter::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_.push_back(',');
    first_.back() = false;
  }
}

void JsonWriter::begin_object() {
  separate();
  out_.push_back('{');
  first_.push_back(true);
}

void JsonWriter::end_object() {
  out_.push_back('}');
  first_.pop_back();
}

void JsonWriter::begin_array() {
  separate();
  out_.push_back('[');
  first_.push_back(true);
}

void JsonWriter::end_array() {
  out_.push_back(']');
  first_.pop_back();
}

void JsonWriter::key(std::string_view name) {
  separate();
  append_json_string(&out_, name);
  out_.push_back(':');
  after_key_ = true;
}

void JsonWriter::string(std::string_view value) {
  separate();
  append_json_string(&out_, value);
}

void JsonWriter::number(int64_t value) {
  separate();
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%" PRId64, value);
  out_.append(buf);
}

void JsonWriter::number(uint64_t value) {
  separate();
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%" PRIu64, value);
  out_.append(buf);
}

void JsonWriter::number(double value) {
  separate();
  if (!std::isfinite(value)) {
    out_.append("null");
    return;
  }
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.6g", value);
  out_.append(buf);
}

void JsonWriter::boolean(bool value) {
  separate();
  out_.append(value ? "true" : "false");
}

void JsonWriter::null() {
  separate();
  out_.append("null");
}

}  // namespace eddy::metrics
