// Writes the Prometheus text exposition format, version 0.0.4
// (Content-Type: text/plain; version=0.0.4; charset=utf-8):
//
//   # HELP eddy_topic_bytes_in_total Record batch bytes appended by Produce.
//   # TYPE eddy_topic_bytes_in_total counter
//   eddy_topic_bytes_in_total{topic="sensors"} 1234
//
// Label values are escaped as the format requires (backslash, double quote,
// newline), so client-chosen names (topics, groups) cannot break a line or
// forge a sample. Metric and label names are the caller's constants.
//
//   PrometheusText out;
//   out.family("eddy_connections", "gauge", "Open Kafka client connections.");
//   out.sample("eddy_connections", {}, 3);
//   std::string body = out.take();
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "metrics/histogram.h"

namespace eddy::metrics {

using Label = std::pair<std::string_view, std::string_view>;

// value escaped for a label value (without the surrounding quotes).
void append_escaped_label_value(std::string* out, std::string_view value);

class PrometheusText {
 public:
  // The HELP and TYPE lines of a family; its samples follow. type: "counter",
  // "gauge" or "histogram".
  void family(std::string_view name, std::string_view type, std::string_view help);
  void sample(std::string_view name, std::initializer_list<Label> labels, uint64_t value);
  void sample(std::string_view name, std::initializer_list<Label> labels, int64_t value);
  void sample(std::string_view name, std::initializer_list<Label> labels, double value);
  void sample(std::string_view name, std::initializer_list<Label> labels, int value) {
    sample(name, labels, static_cast<int64_t>(value));
  }
  // name_bucket{...,le="..."} (cumulative), name_sum (seconds), name_count.
  void histogram_seconds(std::string_view name, std::initializer_list<Label> labels, const HistogramSnapshot& h);

  const std::string& text() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  void begin_sample(std::string_view name, std::initializer_list<Label> labels, const Label* extra = nullptr);

  std::string out_;
};

}  // namespace eddy::metrics
