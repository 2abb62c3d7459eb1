// The reactor as seen by rooms that must not include Asio: run work on the
// reactor thread and schedule timers. Implemented by net::Reactor (Asio).
#pragma once

#include <cstdint>
#include <functional>

#include "port/check.h"

namespace eddy::broker {

class Executor {
 public:
  using TimerId = uint64_t;
  virtual ~Executor() = default;

  // Runs fn on the reactor thread, after the current handler returns.
  // Thread-safe: may be called from any thread (e.g. the flusher).
  virtual void post(std::function<void()> fn) = 0;

  // Runs fn on the reactor thread after delay_ms, unless cancelled first.
  // REQUIRES: called on the reactor thread. Ids are never reused.
  virtual TimerId schedule_after(int64_t delay_ms, std::function<void()> fn) = 0;
  // Cancelling a timer that already ran or was cancelled is a no-op.
  virtual void cancel(TimerId id) = 0;

  // True on the thread running the loop, and on any thread while no thread
  // runs it (set-up before, tear-down after): where reactor-only code may
  // run. Thread-safe.
  virtual bool on_loop_thread() const = 0;
};

// In checked builds (port/check.h): aborts when reactor-only code runs on
// another thread.
#define EDDY_DCHECK_ON_LOOP(executor) \
  EDDY_DCHECK((executor).on_loop_thread(), "reactor-only code called on another thread")

}  // namespace eddy::broker
