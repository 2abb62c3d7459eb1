// Internal to src/net/: queued.max.request.bytes, the broker-wide bound on
// memory held by large request frames (those that do not fit a
// connection's staging buffer): a frame's whole size is taken before its
// first byte is kept, as Kafka's memory pool does (so every frame that
// started can finish; half-read frames never wait for each other), and given
// back when its request is answered, or earlier when the handler frees the
// frame first (ResponseSlot::frame_released: a produce waiting for its sync
// or its replicas). A connection that would exceed it stops reading (TCP
// backpressure on that client) and is resumed when memory is given back.
// Small frames are not counted (each connection's staging buffer bounds
// them), so clients with small requests are never held up by large ones.
//
// After a spike (held() back at 0 once it reached kTrimAfterBytes) the
// freed frames go back to the system: frame_memory's cache of large blocks
// is emptied and the allocator is asked to give its free pages back (glibc
// otherwise keeps them in its heap), so that a burst of large produces does
// not raise RSS for good.
//
// Invariant: held() <= limit() (when the limit is 0: no bound).
// Threading: reactor thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "port/port.h"
#include "protocol/frame_memory.h"

namespace eddy::net {

class RequestMemory {
 public:
  explicit RequestMemory(uint64_t limit) : limit_(limit) {}

  uint64_t limit() const { return limit_; }
  uint64_t held() const { return held_; }

  // Takes bytes when they fit; false (nothing taken) otherwise.
  bool try_take(uint64_t bytes) {
    if (limit_ != 0 && bytes > limit_ - held_) return false;
    held_ += bytes;
    if (held_ > peak_since_trim_) peak_since_trim_ = held_;
    return true;
  }

  // Gives bytes back and resumes the connections waiting (each tries again
  // and may wait again).
  void give_back(uint64_t bytes) {
    held_ -= bytes < held_ ? bytes : held_;
    if (held_ == 0 && peak_since_trim_ >= kTrimAfterBytes) {
      peak_since_trim_ = 0;
      ++trims_;
      if (defer_) {
        defer_([] { release_all(); });
      } else {
        release_all();
      }
    }
    if (waiters_.empty() || bytes == 0) return;
    std::vector<std::function<void()>> resume;
    resume.swap(waiters_);
    for (auto& w : resume) w();
  }

  // Calls resume once, after the next give_back.
  void wait(std::function<void()> resume) { waiters_.push_back(std::move(resume)); }

  // How the give-back after a spike runs: defer(fn) runs fn later on the
  // reactor, once the frames given back now (still owned by their
  // requests' handlers) are freed. Unset: at once.
  void set_deferral(std::function<void(std::function<void()>)> defer) { defer_ = std::move(defer); }

  // Times memory was given back to the system after a spike.
  uint64_t trims() const { return trims_; }

  static constexpr uint64_t kTrimAfterBytes = uint64_t{8} << 20;

 private:
  static void release_all() {
    protocol::frame_memory::release_cached();
    port::release_free_memory();
  }

  uint64_t limit_;
  uint64_t held_ = 0;
  uint64_t peak_since_trim_ = 0;
  uint64_t trims_ = 0;
  std::function<void(std::function<void()>)> defer_;
  std::vector<std::function<void()>> waiters_;
};

}  // namespace eddy::net
