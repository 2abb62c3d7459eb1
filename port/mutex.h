// port/mutex.h — std::mutex as a capability clang's -Wthread-safety checks
// (port/thread_annotations.h), and its scoped lock.
//
//   port::Mutex mu_;
//   int count_ GUARDED_BY(mu_) = 0;
//   std::condition_variable cv_;
//
//   void bump() EXCLUDES(mu_) {
//     port::MutexLock lock(mu_);
//     ++count_;
//     cv_.notify_all();
//   }
//   void wait_positive() EXCLUDES(mu_) {
//     port::MutexLock lock(mu_);
//     while (count_ <= 0) lock.wait(cv_);
//   }
//
// Waits are loops around lock.wait / wait_for / wait_until with the
// condition in the loop, not predicates in lambdas: the analysis checks the
// function it is in, and a lambda is another function that holds nothing.
// Same cost as std::mutex with std::unique_lock.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "port/thread_annotations.h"

namespace eddy::port {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }

 private:
  friend class MutexLock;
  std::mutex mu_;
};

// Holds mu from construction to destruction, except between unlock() and
// lock() and while waiting on a condition variable (which, as with
// std::condition_variable, returns with mu held again).
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : lock_(mu.mu_) {}
  ~MutexLock() RELEASE() {}
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void unlock() RELEASE() { lock_.unlock(); }
  void lock() ACQUIRE() { lock_.lock(); }

  void wait(std::condition_variable& cv) { cv.wait(lock_); }
  template <typename Rep, typename Period>
  std::cv_status wait_for(std::condition_variable& cv, const std::chrono::duration<Rep, Period>& timeout) {
    return cv.wait_for(lock_, timeout);
  }
  template <typename Clock, typename Duration>
  std::cv_status wait_until(std::condition_variable& cv, const std::chrono::time_point<Clock, Duration>& deadline) {
    return cv.wait_until(lock_, deadline);
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace eddy::port
