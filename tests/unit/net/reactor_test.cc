#include "net/reactor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>
#include <vector>

namespace eddy::net {
namespace {

using namespace std::chrono_literals;

TEST(Reactor, PostFromOtherThreadsRunsOnTheReactorThread) {
  Reactor reactor;
  std::thread runner([&] { reactor.run(); });
  std::promise<std::thread::id> ran_on;
  std::promise<bool> in_reactor;
  std::thread poster([&] {
    reactor.post([&] {
      ran_on.set_value(std::this_thread::get_id());
      in_reactor.set_value(reactor.in_reactor_thread());
    });
  });
  poster.join();
  auto id_future = ran_on.get_future();
  ASSERT_EQ(id_future.wait_for(20s), std::future_status::ready);
  EXPECT_EQ(id_future.get(), runner.get_id());
  EXPECT_TRUE(in_reactor.get_future().get());
  EXPECT_FALSE(reactor.in_reactor_thread());
  reactor.stop();
  runner.join();
}

TEST(Reactor, OnLoopThreadWhileNobodyRunsItAndOnlyOnTheRunnerWhileOneDoes) {
  Reactor reactor;
  EXPECT_TRUE(reactor.on_loop_thread());  // set-up: no thread inside run()
  std::thread runner([&] { reactor.run(); });
  std::promise<bool> on_runner;
  reactor.post([&] { on_runner.set_value(reactor.on_loop_thread()); });
  auto f = on_runner.get_future();
  ASSERT_EQ(f.wait_for(20s), std::future_status::ready);
  EXPECT_TRUE(f.get());
  EXPECT_FALSE(reactor.on_loop_thread());  // this thread, while the runner runs it
  reactor.stop();
  runner.join();
  EXPECT_TRUE(reactor.on_loop_thread());  // tear-down
}

#if EDDY_CHECKED
// Checked builds (make asan): reactor-only calls from another thread abort.
TEST(ReactorDeathTest, TimersOffTheLoopThreadAbortInCheckedBuilds) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        Reactor reactor;
        std::thread runner([&] { reactor.run(); });
        std::promise<void> running;
        reactor.post([&] { running.set_value(); });
        running.get_future().wait();
        reactor.schedule_after(1000, [] {});
      },
      "reactor-only code called on another thread");
}
#endif

TEST(Reactor, TimersFireInDeadlineOrderAndCancelledOnesDoNot) {
  Reactor reactor;
  std::vector<int> fired;
  std::vector<Reactor::TimerId> ids;
  // Scheduled before run(): allowed while no thread is inside run(). The
  // gaps (100 ms) are far wider than the time between two schedule calls,
  // even under qemu: the 400 ms timer, scheduled first, is due last but one.
  ids.push_back(reactor.schedule_after(400, [&] { fired.push_back(400); }));
  ids.push_back(reactor.schedule_after(0, [&] { fired.push_back(0); }));
  Reactor::TimerId cancelled = reactor.schedule_after(200, [&] { fired.push_back(-200); });
  ids.push_back(reactor.schedule_after(300, [&] { fired.push_back(300); }));
  reactor.cancel(cancelled);
  reactor.cancel(cancelled);  // no-op
  ids.push_back(reactor.schedule_after(600, [&] {
    fired.push_back(600);
    reactor.stop();
  }));
  reactor.run();
  EXPECT_EQ(fired, (std::vector<int>{0, 300, 400, 600}));
  // Ids are distinct and never reused.
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_NE(ids[i], cancelled);
    for (size_t j = i + 1; j < ids.size(); ++j) EXPECT_NE(ids[i], ids[j]);
  }
  // Cancelling a timer that already ran is a no-op.
  reactor.cancel(ids[0]);
}

TEST(Reactor, TimerCallbacksMayScheduleAndCancel) {
  Reactor reactor;
  std::vector<std::string> events;
  Reactor::TimerId later = 0;
  reactor.schedule_after(5, [&] {
    events.push_back("first");
    reactor.cancel(later);
    reactor.schedule_after(1, [&] {
      events.push_back("nested");
      reactor.stop();
    });
  });
  later = reactor.schedule_after(10, [&] { events.push_back("cancelled"); });
  reactor.run();
  EXPECT_EQ(events, (std::vector<std::string>{"first", "nested"}));
}

TEST(Reactor, EarlierTimerRearmsTheWait) {
  Reactor reactor;
  std::vector<int> fired;
  std::thread runner([&] { reactor.run(); });
  std::promise<void> done;
  reactor.post([&] {
    // A far timer first, then a near one: the near one must not wait for
    // the far one.
    Reactor::TimerId far = reactor.schedule_after(60000, [&] { fired.push_back(2); });
    reactor.schedule_after(1, [&, far] {
      fired.push_back(1);
      reactor.cancel(far);
      done.set_value();
    });
  });
  ASSERT_EQ(done.get_future().wait_for(20s), std::future_status::ready);
  reactor.stop();
  runner.join();
  EXPECT_EQ(fired, std::vector<int>{1});
}

TEST(Reactor, LongPollsScheduledAndCancelledInTurnArmTheClockOnce) {
  // A tailing consumer: each record answers the long poll waiting for it
  // (its timer cancelled) and the next poll schedules a timer a little
  // later than the last. Neither may re-arm the clock's wait.
  Reactor reactor;
  std::vector<int> fired;
  std::thread runner([&] { reactor.run(); });
  std::promise<uint64_t> arms;
  reactor.post([&] {
    const uint64_t before = reactor.timer_arms();
    for (int i = 0; i < 1000; ++i) reactor.cancel(reactor.schedule_after(500, [&] { fired.push_back(-1); }));
    // The last one is not cancelled: it fires after the stale wakes of the
    // cancelled ones, which find nothing due.
    reactor.schedule_after(50, [&, before] {
      fired.push_back(1);
      arms.set_value(reactor.timer_arms() - before);
    });
  });
  auto future = arms.get_future();
  ASSERT_EQ(future.wait_for(20s), std::future_status::ready);
  const uint64_t armed = future.get();
  reactor.stop();
  runner.join();
  EXPECT_EQ(fired, std::vector<int>{1});
  // The first 500 ms timer armed the clock and the 50 ms one (earlier)
  // armed it again; nothing else did.
  EXPECT_EQ(armed, 2u);
}

TEST(Reactor, ATimerBehindACancelledOneStillFires) {
  Reactor reactor;
  std::vector<int> fired;
  Reactor::TimerId first = reactor.schedule_after(10, [&] { fired.push_back(-1); });
  reactor.schedule_after(40, [&] {
    fired.push_back(2);
    reactor.stop();
  });
  reactor.cancel(first);  // the clock stays armed for 10 ms; that wake finds nothing due
  reactor.run();
  EXPECT_EQ(fired, std::vector<int>{2});
}

TEST(Reactor, RunAgainAfterStop) {
  Reactor reactor;
  int runs = 0;
  reactor.post([&] {
    ++runs;
    reactor.stop();
  });
  reactor.run();
  reactor.post([&] {
    ++runs;
    reactor.stop();
  });
  reactor.run();
  EXPECT_EQ(runs, 2);
}

}  // namespace
}  // namespace eddy::net
