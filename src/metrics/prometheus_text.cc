#include "metrics/prometheus_text.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>

namespace eddy::metrics {

namespace {

// HELP text escapes backslash and newline only (the format's rule).
void append_escaped_help(std::string* out, std::string_view help) {
  for (char c : help) {
    if (c == '\\') {
      out->append("\\\\");
    } else if (c == '\n') {
      out->append("\\n");
    } else {
      out->push_back(c);
    }
  }
}

void append_double(std::string* out, double value) {
  if (std::isnan(value)) {
    out->append("NaN");
  } else if (std::isinf(value)) {
    out->append(value > 0 ? "+Inf" : "-Inf");
  } else {
    char buf[40];
    std::snprintf(buf, sizeof(buf), "%.15g", value);
    out->append(buf);
  }
}

}  // namespace

void append_escaped_label_value(std::string* out, std::string_view value) {
  for (char c : value) {
    if (c == '\\') {
      out->append("\\\\");
    } else if (c == '"') {
      out->append("\\\"");
    } else if (c == '\n') {
      out->append("\\n");
    } else {
      out->push_back(c);
    }
  }
}

void PrometheusText::family(std::string_view name, std::string_view type, std::string_view help) {
  out_.append("# HELP ").append(name).push_back(' ');
  append_escaped_help(&out_, help);
  out_.append("\n# TYPE ").append(name).push_back(' ');
  out_.append(type).push_back('\n');
}

void PrometheusText::begin_sample(std::string_view name, std::initializer_list<Label> labels, const Label* extra) {
  out_.append(name);
  if (labels.size() == 0 && extra == nullptr) {
    out_.push_back(' ');
    return;
  }
  out_.push_back('{');
  bool first = true;
  auto add = [&](const Label& label) {
    if (!first) out_.push_back(',');
    first = false;
    out_.append(label.first).append("=\"");
    append_escaped_label_value(&out_, label.second);
    out_.push_back('"');
  };
  for (const Label& label : labels) add(label);
  if (extra != nullptr) add(*extra);
  out_.append("} ");
}

void PrometheusText::sample(std::string_view name, std::initializer_list<Label> labels, uint64_t value) {
  begin_sample(name, labels);
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%" PRIu64 "\n", value);
  out_.append(buf);
}

void PrometheusText::sample(std::string_view name, std::initializer_list<Label> labels, int64_t value) {
  begin_sample(name, labels);
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%" PRId64 "\n", value);
  out_.append(buf);
}

void PrometheusText::sample(std::string_view name, std::initializer_list<Label> labels, double value) {
  begin_sample(name, labels);
  append_double(&out_, value);
  out_.push_back('\n');
}

void PrometheusText::histogram_seconds(std::string_view name, std::initializer_list<Label> labels,
                                       const HistogramSnapshot& h) {
  std::string metric(name);
  const size_t base = metric.size();
  metric.append("_bucket");
  uint64_t cumulative = 0;
  char le[32];
  for (size_t i = 0; i < kLatencyBuckets; ++i) {
    cumulative += h.buckets[i];
    if (i < kLatencyBucketNanos.size()) {
      std::snprintf(le, sizeof(le), "%g", static_cast<double>(kLatencyBucketNanos[i]) / 1e9);
    } else {
      std::snprintf(le, sizeof(le), "+Inf");
    }
    const Label extra{"le", le};
    begin_sample(metric, labels, &extra);
    char buf[24];
    // The +Inf bucket is the count, whatever a racing writer left in between.
    std::snprintf(buf, sizeof(buf), "%" PRIu64 "\n", i + 1 == kLatencyBuckets ? std::max(cumulative, h.count)
                                                                               : cumulative);
    out_.append(buf);
  }
  metric.resize(base);
  metric.append("_sum");
  sample(metric, labels, static_cast<double>(h.sum_nanos) / 1e9);
  metric.resize(base);
  metric.append("_count");
  sample(metric, labels, std::max(cumulative, h.count));
}

}  // namespace eddy::metrics
