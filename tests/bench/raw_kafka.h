/* What the library-free bench clients (raw_fetch.c, raw_e2e.c) share of the
 * Kafka wire format: big-endian fields, a TCP connection with Nagle off,
 * and one Fetch v4 request and response of one partition. Test-only;
 * header-only C. */
#ifndef EDDY_TESTS_BENCH_RAW_KAFKA_H_
#define EDDY_TESTS_BENCH_RAW_KAFKA_H_

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static inline uint32_t be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t be64(const uint8_t *p) { return (uint64_t)be32(p) << 32 | be32(p + 4); }
static inline uint8_t *put16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)v;
  return p + 2;
}
static inline uint8_t *put32(uint8_t *p, uint32_t v) {
  put16(p, (uint16_t)(v >> 16));
  return put16(p + 2, (uint16_t)v);
}
static inline uint8_t *put64(uint8_t *p, uint64_t v) {
  put32(p, (uint32_t)(v >> 32));
  return put32(p + 4, (uint32_t)v);
}
/* A Kafka STRING (int16 length, bytes). REQUIRES strlen(s) < 32768. */
static inline uint8_t *put_str(uint8_t *p, const char *s) {
  size_t n = strlen(s);
  p = put16(p, (uint16_t)n);
  memcpy(p, s, n);
  return p + n;
}

/* A TCP connection to HOST:PORT with TCP_NODELAY; -1 on failure. */
static inline int connect_to(const char *hostport) {
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
    if (fd >= 0) close(fd);
    freeaddrinfo(ai);
    return -1;
  }
  freeaddrinfo(ai);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

/* Fetch v4 of partition 0 of topic from offset, replica -1, read
 * uncommitted, a long poll of 500 ms for at least 1 byte, at most max_bytes.
 * Writes the whole frame (length first) to out; returns its length.
 * REQUIRES out holds 64 + strlen(client) + strlen(topic) bytes. */
static inline size_t fetch_v4_request(uint8_t *out, int32_t correlation, const char *client, const char *topic,
                                      int64_t offset, uint32_t max_bytes) {
  uint8_t *p = out + 4;
  p = put16(p, 1); /* Fetch */
  p = put16(p, 4);
  p = put32(p, (uint32_t)correlation);
  p = put_str(p, client);
  p = put32(p, (uint32_t)-1); /* replica id */
  p = put32(p, 500);          /* max wait ms */
  p = put32(p, 1);            /* min bytes */
  p = put32(p, max_bytes);
  *p++ = 0;                   /* isolation: read uncommitted */
  p = put32(p, 1);            /* topics */
  p = put_str(p, topic);
  p = put32(p, 1);            /* partitions */
  p = put32(p, 0);
  p = put64(p, (uint64_t)offset);
  p = put32(p, max_bytes);
  put32(out, (uint32_t)(p - out - 4));
  return (size_t)(p - out);
}

/* The records of a Fetch v4 response (frame: what follows the length) for
 * one topic and one partition: correlation, throttle, [topic, [partition,
 * error, high watermark, last stable offset, aborted transactions,
 * records]]. Sets *error and *records_len; returns the records' first byte,
 * or NULL when the frame is not such a response or the partition has an
 * error (then *error is set when it could be read). */
static inline const uint8_t *fetch_v4_records(const uint8_t *frame, size_t len, int16_t *error,
                                              uint32_t *records_len) {
  const uint8_t *p = frame + 8, *end = frame + len;
  *error = 0;
  if (len < 8 + 4 + 2 || be32(p) != 1) return NULL;
  p += 4;
  p += 2 + ((size_t)p[0] << 8 | p[1]);
  if (p > end || end - p < 4 + 4 + 2 + 8 + 8 + 4 || be32(p) != 1) return NULL;
  p += 4 + 4;
  *error = (int16_t)(p[0] << 8 | p[1]);
  if (*error != 0) return NULL;
  p += 2 + 8 + 8;
  int32_t aborted = (int32_t)be32(p);
  p += 4;
  if (aborted > 0) {
    if ((size_t)(end - p) < (size_t)aborted * 16) return NULL;
    p += (size_t)aborted * 16;
  }
  if (end - p < 4) return NULL;
  *records_len = be32(p);
  p += 4;
  if (*records_len > (size_t)(end - p)) return NULL;
  return p;
}

#endif /* EDDY_TESTS_BENCH_RAW_KAFKA_H_ */
