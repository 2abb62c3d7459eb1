#include "forward/token_bucket.h"

#include <gtest/gtest.h>

namespace eddy::forward {
namespace {

TEST(TokenBucket, UnlimitedNeverWaits) {
  TokenBucket b(0);
  b.take(0, 1 << 30);
  EXPECT_EQ(b.wait_ms(0), 0);
}

TEST(TokenBucket, SustainedRateIsTheCap) {
  // Sending 1000-byte batches as fast as allowed for 10 simulated seconds at
  // 100 kB/s moves 1 MB (+ the initial 0.1 s burst, + at most one batch).
  TokenBucket b(100000);
  int64_t now = 0;
  int64_t sent = 0;
  while (now < 10000) {
    int64_t wait = b.wait_ms(now);
    if (wait > 0) {
      now += wait;
      continue;
    }
    b.take(now, 1000);
    sent += 1000;
  }
  EXPECT_GE(sent, 1000000);
  EXPECT_LE(sent, 1000000 + 10000 + 1000 + 1000);
}

TEST(TokenBucket, ABatchLargerThanTheBurstGoesThenPaysBack) {
  TokenBucket b(1000);  // burst 100 bytes
  EXPECT_EQ(b.wait_ms(0), 0);
  b.take(0, 5000);           // 5 s of debt
  EXPECT_GE(b.wait_ms(0), 4900);
  EXPECT_EQ(b.wait_ms(5000), 0);
}

TEST(TokenBucket, IdleTimeDoesNotAccumulateBeyondTheBurst) {
  TokenBucket b(1000);
  b.take(0, 100);
  EXPECT_EQ(b.wait_ms(60000), 0);
  b.take(60000, 101);  // the burst (100) was all that accrued in a minute
  EXPECT_GT(b.wait_ms(60000), 0);
}

}  // namespace
}  // namespace eddy::forward
