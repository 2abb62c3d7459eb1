// net/request_memory.h: takes within the bound, gives back, wakes waiters once.
#include "net/request_memory.h"

#include <gtest/gtest.h>

namespace eddy::net {
namespace {

TEST(RequestMemory, TakesWithinTheBoundAndWakesWaitersOnceOnGiveBack) {
  RequestMemory m(100);
  EXPECT_TRUE(m.try_take(60));
  EXPECT_FALSE(m.try_take(41));
  EXPECT_EQ(m.held(), 60u);
  int woken = 0;
  m.wait([&] { ++woken; });
  m.wait([&] { ++woken; });
  m.give_back(0);
  EXPECT_EQ(woken, 0);
  m.give_back(60);
  EXPECT_EQ(woken, 2);
  EXPECT_EQ(m.held(), 0u);
  m.give_back(10);  // nothing waits any more
  EXPECT_EQ(woken, 2);
  EXPECT_TRUE(m.try_take(100));
}

TEST(RequestMemory, ZeroIsNoBound) {
  RequestMemory m(0);
  EXPECT_TRUE(m.try_take(uint64_t{1} << 40));
}

}  // namespace
}  // namespace eddy::net
