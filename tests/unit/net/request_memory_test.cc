// net/request_memory.h: takes within the bound, gives back, wakes waiters once.
#include "net/request_memory.h"

#include <gtest/gtest.h>

#include <functional>
#include <vector>

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

TEST(RequestMemory, GivesMemoryBackToTheSystemOnceASpikeIsOver) {
  RequestMemory m(64 << 20);
  std::vector<std::function<void()>> deferred;
  m.set_deferral([&](std::function<void()> fn) { deferred.push_back(std::move(fn)); });
  // Large frames one after another, never 8 MiB at once: no give-back.
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(m.try_take(4 << 20));
    m.give_back(4 << 20);
  }
  EXPECT_EQ(m.trims(), 0u);
  // A spike: given back (later, on the reactor) only when all of it is.
  ASSERT_TRUE(m.try_take(6 << 20));
  ASSERT_TRUE(m.try_take(6 << 20));
  m.give_back(6 << 20);
  EXPECT_EQ(m.trims(), 0u);
  EXPECT_TRUE(deferred.empty());
  m.give_back(6 << 20);
  EXPECT_EQ(m.trims(), 1u);
  ASSERT_EQ(deferred.size(), 1u);
  deferred[0]();  // malloc_trim: harmless to run here
  // The next spike counts afresh.
  ASSERT_TRUE(m.try_take(1 << 20));
  m.give_back(1 << 20);
  EXPECT_EQ(m.trims(), 1u);
}

}  // namespace
}  // namespace eddy::net
