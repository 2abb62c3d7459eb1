#include <gtest/gtest.h>

#include "port/port.h"

namespace eddy::port {
namespace {

TEST(Clocks, MonotonicNeverGoesBackwards) {
  int64_t last = monotonic_nanos();
  for (int i = 0; i < 10000; ++i) {
    int64_t now = monotonic_nanos();
    ASSERT_GE(now, last);
    last = now;
  }
}

TEST(Clocks, WallClockIsUnixMillis) {
  int64_t now = wall_clock_millis();
  EXPECT_GT(now, 1700000000000LL);  // after Nov 2023
  EXPECT_LT(now, 4102444800000LL);  // before 2100
}

TEST(Process, PeakRssIsKnown) { EXPECT_GT(peak_rss_bytes(), 0u); }

}  // namespace
}  // namespace eddy::port
