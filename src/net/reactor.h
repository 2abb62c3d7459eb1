// The reactor: one event loop (an asio::io_context) run by one thread, which
// owns all broker state. Other rooms see it as a port::Executor; this header
// does not include Asio, so they compile without it.
//
//   net::Reactor reactor;
//   ... create the Server and the broker on it ...
//   reactor.run();   // returns after stop()
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>

#include "port/executor.h"

namespace asio {
class io_context;
}

namespace eddy::net {

class Reactor final : public port::Executor {
 public:
  Reactor();
  ~Reactor() override;
  Reactor(const Reactor&) = delete;
  Reactor& operator=(const Reactor&) = delete;

  // Runs the event loop on the calling thread, which becomes the reactor
  // thread, until stop() is called. Returns at once when stop() was called
  // before. May be called again after it returned (a new run).
  void run();
  // Makes run() return soon; handlers not yet run stay queued for a later
  // run() or are destroyed with the Reactor. Thread-safe.
  void stop();
  // True on the thread currently inside run().
  bool in_reactor_thread() const;

  // port::Executor. post() is thread-safe; schedule_after() and cancel()
  // REQUIRE the reactor thread (or no thread inside run()).
  void post(std::function<void()> fn) override;
  TimerId schedule_after(int64_t delay_ms, std::function<void()> fn) override;
  void cancel(TimerId id) override;
  int64_t now_ms() override;
  bool on_loop_thread() const override;
  // How many times the underlying clock wait was (re)armed, for tests of
  // the lazy arming in reactor.cc. Reactor thread (or none running).
  uint64_t timer_arms() const;

  // For src/net/ only: the underlying context.
  asio::io_context& io_context();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<std::thread::id> running_thread_{};
};

}  // namespace eddy::net
