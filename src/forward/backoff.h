// Exponential backoff with jitter (Kafka's retry.backoff.ms /
// retry.backoff.max.ms): the n-th consecutive failure waits
// min(max, base * 2^(n-1)) scaled by a random factor in [0.8, 1.2].
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>

namespace eddy::forward {

class Backoff {
 public:
  Backoff(int64_t base_ms, int64_t max_ms, uint64_t seed = std::random_device{}())
      : base_ms_(std::max<int64_t>(1, base_ms)), max_ms_(std::max(base_ms_, max_ms)), rng_(seed) {}

  // The wait after one more failure.
  int64_t next_ms() {
    int64_t wait = base_ms_;
    for (int i = 0; i < failures_ && wait < max_ms_; ++i) wait *= 2;
    ++failures_;
    wait = std::min(wait, max_ms_);
    std::uniform_real_distribution<double> jitter(0.8, 1.2);
    return std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(wait) * jitter(rng_)));
  }
  void reset() { failures_ = 0; }
  int failures() const { return failures_; }

 private:
  int64_t base_ms_;
  int64_t max_ms_;
  int failures_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace eddy::forward
