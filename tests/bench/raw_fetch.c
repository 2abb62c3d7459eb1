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
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

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

static uint32_t be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static uint64_t be64(const uint8_t *p) { return (uint64_t)be32(p) << 32 | be32(p + 4); }
static uint8_t *put16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)v;
  return p + 2;
}
static uint8_t *put32(uint8_t *p, uint32_t v) {
  put16(p, (uint16_t)(v >> 16));
  return put16(p + 2, (uint16_t)v);
}
static uint8_t *put64(uint8_t *p, uint64_t v) {
  put32(p, (uint32_t)(v >> 32));
  return put32(p + 4, (uint32_t)v);
}

/* Fetch v4, replica -1, one topic, partition 0. Returns the frame length. */
static size_t fetch_request(uint8_t *out, int32_t correlation, const char *topic, int64_t offset) {
  uint8_t *p = out + 4;
  p = put16(p, 1); /* Fetch */
  p = put16(p, 4);
  p = put32(p, (uint32_t)correlation);
  p = put16(p, 9);
  memcpy(p, "raw-fetch", 9);
  p += 9;
  p = put32(p, (uint32_t)-1);  /* replica id */
  p = put32(p, 500);           /* max wait ms */
  p = put32(p, 1);             /* min bytes */
  p = put32(p, FETCH_BYTES);   /* max bytes */
  *p++ = 0;                    /* isolation: read uncommitted */
  p = put32(p, 1);             /* topics */
  size_t len = strlen(topic);
  p = put16(p, (uint16_t)len);
  memcpy(p, topic, len);
  p += len;
  p = put32(p, 1); /* partitions */
  p = put32(p, 0);
  p = put64(p, (uint64_t)offset);
  p = put32(p, FETCH_BYTES);
  put32(out, (uint32_t)(p - out - 4));
  return (size_t)(p - out);
}

static int connect_to(const char *hostport) {
  char host[256];
  const char *colon = strrchr(hostport, ':');
  if (!colon || (size_t)(colon - hostport) >= sizeof(host)) return -1;
  memcpy(host, hostport, (size_t)(colon - hostport));
  host[colon - hostport] = 0;
  struct addrinfo hints = {0}, *ai = NULL;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host, colon + 1, &hints, &ai) != 0) return -1;
  int fd = socket(ai->ai_family, SOCK_STREAM, 0);
  if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
    freeaddrinfo(ai);
    return -1;
  }
  freeaddrinfo(ai);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
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
    size_t n = fetch_request(request, (int32_t)fetches, topic, offset);
    if (send(fd, request, n, MSG_NOSIGNAL) != (ssize_t)n || recv_all(fd, buf, 4) != 0) break;
    size_t frame = be32(buf);
    if (frame > capacity || recv_all(fd, buf, frame) != 0) break;
    fetches++;
    /* correlation, throttle, [topics: name, [partition, error, hw, lso,
     * aborted, records]] */
    const uint8_t *p = buf + 8, *end = buf + frame;
    if (be32(p) != 1) break;
    p += 4;
    p += 2 + ((size_t)p[0] << 8 | p[1]);
    if (be32(p) != 1) break;
    p += 4 + 4;
    int16_t error = (int16_t)((p[0] << 8) | p[1]);
    if (error != 0) {
      fprintf(stderr, "fetch error %d at offset %lld\n", error, (long long)offset);
      errors++;
      break;
    }
    p += 2 + 8 + 8;
    int32_t aborted = (int32_t)be32(p);
    p += 4 + (aborted > 0 ? (size_t)aborted * 16 : 0);
    uint32_t records = be32(p);
    p += 4;
    if (records > (size_t)(end - p)) break;
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
