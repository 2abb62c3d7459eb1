// A latency histogram with fixed bucket bounds (Prometheus "histogram").
//
// Threading: exactly one writer thread per histogram (the reactor for request
// latencies, the flusher for fdatasync latencies); any thread may read. The
// counts are relaxed atomics that the single writer updates with a load and
// a store (no read-modify-write, no lock, no allocation), so observe() costs
// a bucket search over 16 bounds and three stores. A reader may see a bucket
// count and the total of one observation before the other: every value it
// reads is one the writer stored, and each only grows.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace eddy::metrics {

// Upper bounds of the buckets, in nanoseconds (100 us .. 10 s); the last
// bucket (+Inf) is implicit.
inline constexpr std::array<int64_t, 16> kLatencyBucketNanos = {
    100'000,       250'000,       500'000,       1'000'000,     2'500'000,      5'000'000,
    10'000'000,    25'000'000,    50'000'000,    100'000'000,   250'000'000,    500'000'000,
    1'000'000'000, 2'500'000'000, 5'000'000'000, 10'000'000'000};
inline constexpr size_t kLatencyBuckets = kLatencyBucketNanos.size() + 1;  // with +Inf

// What a reader sees: per-bucket counts (not cumulative), the count and the
// sum of all observations.
struct HistogramSnapshot {
  std::array<uint64_t, kLatencyBuckets> buckets{};
  uint64_t count = 0;
  uint64_t sum_nanos = 0;
};

class LatencyHistogram {
 public:
  // REQUIRES: called from this histogram's one writer thread. Negative
  // durations (a clock step) count as 0.
  void observe_nanos(int64_t nanos) {
    if (nanos < 0) nanos = 0;
    size_t i = 0;
    while (i < kLatencyBucketNanos.size() && nanos > kLatencyBucketNanos[i]) ++i;
    bump(&buckets_[i], 1);
    bump(&sum_nanos_, static_cast<uint64_t>(nanos));
    bump(&count_, 1);
  }

  // Any thread.
  HistogramSnapshot snapshot() const {
    HistogramSnapshot s;
    for (size_t i = 0; i < kLatencyBuckets; ++i) s.buckets[i] = buckets_[i].load(std::memory_order_relaxed);
    s.count = count_.load(std::memory_order_relaxed);
    s.sum_nanos = sum_nanos_.load(std::memory_order_relaxed);
    return s;
  }

 private:
  static void bump(std::atomic<uint64_t>* v, uint64_t by) {
    v->store(v->load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
  }

  std::array<std::atomic<uint64_t>, kLatencyBuckets> buckets_{};
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_nanos_{0};
};

}  // namespace eddy::metrics
