#include "net/reactor.h"

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <chrono>
#include <map>
#include <unordered_map>
#include <utility>

#include "port/port.h"

namespace eddy::net {

// Timers: one asio timer armed for the earliest deadline of an ordered map,
// rather than one asio timer per id (fetch long-polls create many).
// Invariants: by_deadline_ and deadline_of_ hold the same set of ids; while
// by_deadline is not empty the asio timer is armed at or before its earliest
// deadline. Arming is lazy: a cancel never re-arms, and a new timer re-arms
// only when it is due before the armed wake. A wake that finds nothing due
// (its timer was cancelled) arms for the earliest deadline then. A tailing
// consumer's long poll is scheduled and cancelled once per record, each
// later than the one before: this keeps both off the clock's syscalls.
struct Reactor::Impl {
  using Clock = std::chrono::steady_clock;
  using Key = std::pair<Clock::time_point, TimerId>;

  Impl() : io(1), work(asio::make_work_guard(io)), timer(io) {}

  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work;
  asio::steady_timer timer;
  TimerId next_id = 1;
  // Incremented on every arm; a wait completion for an older generation is
  // stale (superseded) and does nothing.
  uint64_t generation = 0;
  uint64_t arms = 0;
  bool armed = false;
  Clock::time_point armed_at{};
  std::map<Key, std::function<void()>> by_deadline;
  std::unordered_map<TimerId, Clock::time_point> deadline_of;

  // A timer is due at deadline: wake no later than that.
  void arm_for(Clock::time_point deadline) {
    if (armed && armed_at <= deadline) return;
    ++generation;
    ++arms;
    armed = true;
    armed_at = deadline;
    timer.expires_at(deadline);
    uint64_t my_generation = generation;
    timer.async_wait([this, my_generation](const std::error_code&) {
      if (my_generation != generation) return;
      armed = false;
      fire_due();
    });
  }

  void fire_due() {
    // Each callback may schedule or cancel timers: take one entry at a time.
    while (!by_deadline.empty()) {
      auto it = by_deadline.begin();
      if (it->first.first > Clock::now()) break;
      std::function<void()> fn = std::move(it->second);
      deadline_of.erase(it->first.second);
      by_deadline.erase(it);
      fn();
    }
    if (!by_deadline.empty()) arm_for(by_deadline.begin()->first.first);
  }
};

Reactor::Reactor() : impl_(std::make_unique<Impl>()) {}

Reactor::~Reactor() = default;

void Reactor::run() {
  if (impl_->io.stopped()) impl_->io.restart();
  running_thread_.store(std::this_thread::get_id());
  impl_->io.run();
  running_thread_.store(std::thread::id());
}

void Reactor::stop() { impl_->io.stop(); }

bool Reactor::in_reactor_thread() const { return running_thread_.load() == std::this_thread::get_id(); }

int64_t Reactor::now_ms() { return port::wall_clock_millis(); }

bool Reactor::on_loop_thread() const {
  const std::thread::id running = running_thread_.load();
  return running == std::thread::id() || running == std::this_thread::get_id();
}

void Reactor::post(std::function<void()> fn) { asio::post(impl_->io, std::move(fn)); }

Reactor::TimerId Reactor::schedule_after(int64_t delay_ms, std::function<void()> fn) {
  EDDY_DCHECK_ON_LOOP(*this);
  if (delay_ms < 0) delay_ms = 0;
  TimerId id = impl_->next_id++;
  Impl::Clock::time_point deadline = Impl::Clock::now() + std::chrono::milliseconds(delay_ms);
  impl_->by_deadline.emplace(Impl::Key(deadline, id), std::move(fn));
  impl_->deadline_of.emplace(id, deadline);
  impl_->arm_for(deadline);
  return id;
}

void Reactor::cancel(TimerId id) {
  EDDY_DCHECK_ON_LOOP(*this);
  auto it = impl_->deadline_of.find(id);
  if (it == impl_->deadline_of.end()) return;
  impl_->by_deadline.erase(Impl::Key(it->second, id));
  impl_->deadline_of.erase(it);
}

uint64_t Reactor::timer_arms() const { return impl_->arms; }

asio::io_context& Reactor::io_context() { return impl_->io; }

}  // namespace eddy::net
