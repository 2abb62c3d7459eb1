#include "forward/backoff.h"

#include <gtest/gtest.h>

namespace eddy::forward {
namespace {

TEST(Backoff, DoublesWithJitterUpToTheMaximum) {
  Backoff b(100, 1000, /*seed=*/42);
  const int64_t nominal[] = {100, 200, 400, 800, 1000, 1000};
  for (int64_t n : nominal) {
    int64_t w = b.next_ms();
    EXPECT_GE(w, n * 8 / 10);
    EXPECT_LE(w, n * 12 / 10);
  }
  b.reset();
  EXPECT_LE(b.next_ms(), 120);
}

TEST(Backoff, JitterSpreadsTheWaits) {
  Backoff a(1000, 1000, 1), b(1000, 1000, 2);
  bool differ = false;
  for (int i = 0; i < 5; ++i) differ |= a.next_ms() != b.next_ms();
  EXPECT_TRUE(differ);
}

}  // namespace
}  // namespace eddy::forward
