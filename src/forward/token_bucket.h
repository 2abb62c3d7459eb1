// A bandwidth cap: bytes per second with a burst of a tenth of a second (at
// least one maximal batch may always go, then the bucket runs into debt and
// the next send waits until it is paid back). Times are caller-supplied
// monotonic milliseconds, so the arithmetic is testable without sleeping.
#pragma once

#include <algorithm>
#include <cstdint>

namespace eddy::forward {

class TokenBucket {
 public:
  // rate 0: unlimited.
  explicit TokenBucket(int64_t bytes_per_sec = 0) { set_rate(bytes_per_sec); }

  void set_rate(int64_t bytes_per_sec) {
    rate_ = bytes_per_sec;
    burst_ = std::max<double>(1.0, static_cast<double>(rate_) / 10.0);
    tokens_ = burst_;
  }
  bool unlimited() const { return rate_ <= 0; }

  // Milliseconds to wait before bytes may be sent (0: now).
  int64_t wait_ms(int64_t now_ms) {
    if (unlimited()) return 0;
    refill(now_ms);
    if (tokens_ >= 0) return 0;
    return static_cast<int64_t>(-tokens_ * 1000.0 / static_cast<double>(rate_)) + 1;
  }
  // Takes bytes (may go into debt). REQUIRES wait_ms(now_ms) == 0.
  void take(int64_t now_ms, int64_t bytes) {
    if (unlimited()) return;
    refill(now_ms);
    tokens_ -= static_cast<double>(bytes);
  }

 private:
  void refill(int64_t now_ms) {
    if (last_ms_ >= 0 && now_ms > last_ms_) {
      tokens_ = std::min(burst_, tokens_ + static_cast<double>(now_ms - last_ms_) * static_cast<double>(rate_) / 1000.0);
    }
    last_ms_ = std::max(last_ms_, now_ms);
  }

  int64_t rate_ = 0;
  double burst_ = 1.0;
  double tokens_ = 1.0;
  int64_t last_ms_ = -1;
};

}  // namespace eddy::forward
