#include <gtest/gtest.h>

#include "metrics/histogram.h"
#include "metrics/json_writer.h"
#include "metrics/prometheus_text.h"

namespace eddy::metrics {
namespace {

TEST(PrometheusText, FamilyAndSamples) {
  PrometheusText out;
  out.family("eddy_x_total", "counter", "Help with \\ and\nnewline.");
  out.sample("eddy_x_total", {}, uint64_t{7});
  out.sample("eddy_x_total", {{"topic", "a"}, {"partition", "0"}}, int64_t{-3});
  out.sample("eddy_x_total", {{"topic", "b"}}, 0.5);
  EXPECT_EQ(out.text(),
            "# HELP eddy_x_total Help with \\\\ and\\nnewline.\n"
            "# TYPE eddy_x_total counter\n"
            "eddy_x_total 7\n"
            "eddy_x_total{topic=\"a\",partition=\"0\"} -3\n"
            "eddy_x_total{topic=\"b\"} 0.5\n");
}

TEST(PrometheusText, LabelValuesAreEscaped) {
  PrometheusText out;
  out.sample("m", {{"group", "a\"b\\c\nd} 1\nforged 2"}}, uint64_t{1});
  EXPECT_EQ(out.text(), "m{group=\"a\\\"b\\\\c\\nd} 1\\nforged 2\"} 1\n");
}

TEST(PrometheusText, HistogramIsCumulativeWithInfEqualToCount) {
  LatencyHistogram h;
  h.observe_nanos(50'000);         // <= 100 us
  h.observe_nanos(1'000'000);      // <= 1 ms (bounds are inclusive)
  h.observe_nanos(20'000'000'000); // +Inf
  h.observe_nanos(-5);             // counts as 0
  PrometheusText out;
  out.histogram_seconds("d_seconds", {{"api", "Produce"}}, h.snapshot());
  const std::string& t = out.text();
  EXPECT_NE(t.find("d_seconds_bucket{api=\"Produce\",le=\"0.0001\"} 2\n"), std::string::npos) << t;
  EXPECT_NE(t.find("d_seconds_bucket{api=\"Produce\",le=\"0.001\"} 3\n"), std::string::npos) << t;
  EXPECT_NE(t.find("d_seconds_bucket{api=\"Produce\",le=\"10\"} 3\n"), std::string::npos) << t;
  EXPECT_NE(t.find("d_seconds_bucket{api=\"Produce\",le=\"+Inf\"} 4\n"), std::string::npos) << t;
  EXPECT_NE(t.find("d_seconds_count{api=\"Produce\"} 4\n"), std::string::npos) << t;
  EXPECT_NE(t.find("d_seconds_sum{api=\"Produce\"} 20.00105"), std::string::npos) << t;
}

TEST(JsonWriter, NestingCommasAndEscapes) {
  JsonWriter j;
  j.begin_object();
  j.field("name", std::string("<script>\"x\"\\\n\x01&"));
  j.field("n", int64_t{-1});
  j.field("u", uint64_t{18446744073709551615ull});
  j.key("a");
  j.begin_array();
  j.number(1);
  j.begin_array();
  j.end_array();
  j.boolean(false);
  j.null();
  j.number(1.0 / 0.0);
  j.end_array();
  j.end_object();
  EXPECT_EQ(j.take(),
            "{\"name\":\"\\u003cscript\\u003e\\\"x\\\"\\\\\\n\\u0001\\u0026\",\"n\":-1,"
            "\"u\":18446744073709551615,\"a\":[1,[],false,null,null]}");
}

}  // namespace
}  // namespace eddy::metrics
