// The group coordinator's clock and timers on the broker's Executor.
#pragma once

#include "broker/executor.h"
#include "group/timers.h"
#include "port/port.h"

namespace eddy::broker {

class ExecutorGroupTimers final : public group::Timers {
 public:
  explicit ExecutorGroupTimers(Executor& executor) : executor_(executor) {}
  Id schedule_after(int64_t delay_ms, std::function<void()> fn) override {
    return executor_.schedule_after(delay_ms, std::move(fn));
  }
  void cancel(Id id) override {
    if (id != 0) executor_.cancel(id);
  }
  int64_t now_ms() override { return port::wall_clock_millis(); }

 private:
  Executor& executor_;
};

}  // namespace eddy::broker
