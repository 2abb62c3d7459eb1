/* Clock, pacing and percentile helpers shared by the bench clients
 * (rdkafka_bench.c, nats_bench.c), so that both measure time, pace sends and
 * rank latencies the same way. Test-only; header-only C. */
#ifndef EDDY_TESTS_BENCH_BENCH_CLOCK_H_
#define EDDY_TESTS_BENCH_BENCH_CLOCK_H_

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CLOCK_MONOTONIC in microseconds: comparable across the processes of one
 * machine, so a stamp written by a producer can be read by a consumer. */
static inline int64_t bench_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Sleeps until the monotonic clock reads due_us (returns at once when it is
 * past). Sleeping, not spinning: on a 2-core machine a spinning client would
 * take a core from the broker it measures. */
static inline void bench_sleep_until(int64_t due_us) {
  struct timespec ts;
  ts.tv_sec = (time_t)(due_us / 1000000);
  ts.tv_nsec = (long)(due_us % 1000000) * 1000;
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
  }
}

/* The send time travels in the first 8 bytes of every latency message
 * (REQUIRES size >= 8). */
static inline void bench_stamp(char *payload, int64_t at_us) { memcpy(payload, &at_us, sizeof(at_us)); }
static inline int64_t bench_read_stamp(const void *payload) {
  int64_t at;
  memcpy(&at, payload, sizeof(at));
  return at;
}

static int bench_cmp64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static inline void bench_sort(int64_t *v, long n) {
  if (n > 0) qsort(v, (size_t)n, sizeof(int64_t), bench_cmp64);
}

/* Nearest-rank percentile (0 < p <= 1) of sorted[0..n) (REQUIRES sorted
 * ascending, see bench_sort); -1 when n == 0. */
static inline int64_t bench_rank(const int64_t *sorted, long n, double p) {
  if (n <= 0) return -1;
  long rank = (long)(p * (double)n + 0.999999);
  if (rank < 1) rank = 1;
  if (rank > n) rank = n;
  return sorted[rank - 1];
}

#endif /* EDDY_TESTS_BENCH_BENCH_CLOCK_H_ */
