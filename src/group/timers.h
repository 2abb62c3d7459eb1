// The clock and timers the group coordinator runs on. The broker adapts its
// Executor to this; unit tests drive a fake. Every call and every callback
// happens on one thread (the reactor thread).
#pragma once

#include <cstdint>
#include <functional>

namespace eddy::group {

class Timers {
 public:
  using Id = uint64_t;
  virtual ~Timers() = default;
  // Runs fn after delay_ms unless cancelled first. Ids are never 0 and never reused.
  virtual Id schedule_after(int64_t delay_ms, std::function<void()> fn) = 0;
  // Cancelling an id that already ran, was cancelled, or is 0 is a no-op.
  virtual void cancel(Id id) = 0;
  // Wall-clock milliseconds since the epoch (commit timestamps, expiry).
  virtual int64_t now_ms() = 0;
};

}  // namespace eddy::group
