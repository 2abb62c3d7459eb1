// The event loop as seen by code that must not include Asio: run work on the
// loop thread, schedule timers, read the clock the timers run on.
// Implemented by net::Reactor (Asio); unit tests implement it with a thread
// of their own (tests/unit/forward/local_side.h) or a hand-driven clock
// (tests/unit/group/coordinator_fixture.h).
//
// The broker, the group coordinator and the forwarder's local side all run
// on one Executor: everything they own is touched only on its loop thread.
#pragma once

#include <cstdint>
#include <functional>

#include "port/check.h"

namespace eddy::port {

class Executor {
 public:
  using TimerId = uint64_t;
  virtual ~Executor() = default;

  // Runs fn on the loop thread, after the current handler returns.
  // Thread-safe: may be called from any thread (e.g. the flusher).
  virtual void post(std::function<void()> fn) = 0;

  // Runs fn on the loop thread after delay_ms (a negative delay is 0),
  // unless cancelled first. REQUIRES: called on the loop thread. Ids are
  // never 0 and never reused, so 0 can mean "no timer".
  virtual TimerId schedule_after(int64_t delay_ms, std::function<void()> fn) = 0;
  // Cancelling 0, or a timer that already ran or was cancelled, is a no-op.
  // REQUIRES: called on the loop thread.
  virtual void cancel(TimerId id) = 0;

  // Wall-clock milliseconds since the epoch (commit timestamps, expiry).
  // The real loop answers port::wall_clock_millis(); a test's fake moves it
  // by hand together with its timers.
  virtual int64_t now_ms() = 0;

  // True on the thread running the loop, and on any thread while no thread
  // runs it (set-up before, tear-down after): where loop-only code may
  // run. Thread-safe.
  virtual bool on_loop_thread() const = 0;
};

// In checked builds (port/check.h): aborts when loop-only code runs on
// another thread.
#define EDDY_DCHECK_ON_LOOP(executor) \
  EDDY_DCHECK((executor).on_loop_thread(), "reactor-only code called on another thread")

}  // namespace eddy::port
