/* A consumer that parses nothing: reads partition 0 of a topic from offset
 * 0 with plain Fetch v4 requests (one in flight, 4 MiB each) and looks only
 * at the record batch headers it needs for the next offset. Next to
 * rdkafka_bench consume, whose client spends most of the time in record
 * parsing, it measures what the broker can serve (compare_bench.py's raw
 * fetch row; METHOD.md). Test-only.
 *
 *   raw_fetch HOST:PORT TOPIC COUNT SIZE
 *       reads until COUNT offsets have arrived; prints one line:
 *       "rawfetch msgs=N bytes=B seconds=S msgs_per_s=X fetches=F errors=E"
 *       B is N * SIZE (message values, as rdkafka_bench counts them).
 * Exit code 0 when COUNT offsets were read, 1 otherwise. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "raw_kafka.h"

#define FETCH_BYTES (4u << 20)

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int recv_all(int fd, uint8_t *p, size_t n) {
  while (n > 0) {
    ssize_t k = recv(fd, p, n, 0);
    if (k <= 0) return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: raw_fetch HOST:PORT TOPIC COUNT SIZE\n");
    return 2;
  }
  const char *topic = argv[2];
  long long count = atoll(argv[3]);
  long long size = atoll(argv[4]);
  if (strlen(topic) > 200 || count < 1 || size < 0) return 2;
  int fd = connect_to(argv[1]);
  if (fd < 0) {
    perror("connect");
    return 1;
  }
  size_t capacity = FETCH_BYTES + (1u << 20);
  uint8_t *buf = malloc(capacity), request[512];
  int64_t offset = 0;
  long fetches = 0, empty = 0, errors = 0;
  double start = now_s();
  while (offset < count) {
    size_t n = fetch_v4_request(request, (int32_t)fetches, "raw-fetch", topic, offset, FETCH_BYTES);
    if (send(fd, request, n, MSG_NOSIGNAL) != (ssize_t)n || recv_all(fd, buf, 4) != 0) break;
    size_t frame = be32(buf);
    if (frame > capacity || recv_all(fd, buf, frame) != 0) break;
    fetches++;
    int16_t error = 0;
    uint32_t records = 0;
    const uint8_t *p = fetch_v4_records(buf, frame, &error, &records);
    if (p == NULL) {
      if (error != 0) {
        fprintf(stderr, "fetch error %d at offset %lld\n", error, (long long)offset);
        errors++;
      }
      break;
    }
    const uint8_t *q = p, *stop = p + records;
    int64_t next = offset;
    /* Whole batches only: base offset (8), length (4), ..., last offset
     * delta at 23. */
    while (stop - q >= 61) {
      uint32_t length = be32(q + 8);
      if (length > (size_t)(stop - q) - 12) break;
      next = (int64_t)be64(q) + (int32_t)be32(q + 23) + 1;
      q += 12 + length;
    }
    if (next == offset) {
      if (++empty > 20) break; /* nothing new for 20 fetches (10 s) */
      continue;
    }
    offset = next;
  }
  double seconds = now_s() - start;
  long long msgs = offset < count ? offset : count;
  printf("rawfetch msgs=%lld bytes=%lld seconds=%.6f msgs_per_s=%.0f fetches=%ld errors=%ld\n", msgs, msgs * size,
         seconds, seconds > 0 ? (double)msgs / seconds : 0.0, fetches, errors + (offset < count));
  close(fd);
  free(buf);
  return offset >= count ? 0 : 1;
}
