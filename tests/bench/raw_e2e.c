/* End-to-end latency with a client that adds as little as it can: one
 * thread, two sockets, plain Produce v3 (one record per request, as a
 * linger-0 producer sends it) and Fetch v4 long polls (one in flight, 500 ms,
 * min 1 byte), paced by ppoll. Next to rdkafka_bench e2e, whose producer and
 * consumer each hand every message between two or three threads of their
 * own, it measures what the broker adds between a record's arrival and its
 * delivery (compare_bench.py's raw e2e rows; METHOD.md). Test-only.
 *
 *   raw_e2e HOST:PORT TOPIC RATE SECONDS SIZE ACKS   (RATE <= 10^6, SECONDS <= 3600)
 *       ACKS: 1 or all. After one priming record, sends RATE records/s of
 *       SIZE bytes (>= 9) for SECONDS, each stamped with the time it is
 *       sent (see main), and prints, in rdkafka_bench e2e's format:
 *       "latency msgs=N ack_p50_us=.. ack_p99_us=.. ack_p999_us=..
 *        e2e_p50_us=.. e2e_p99_us=.. e2e_p999_us=.. errors=E"
 *       (ack: send -> produce response; e2e: send -> fetch response holding
 *       the record).
 * Exit code 0 when every record was acknowledged and fetched, 1 otherwise. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench_clock.h"
#include "raw_kafka.h"

#define FETCH_BYTES (1u << 20)
#define READ_CAPACITY (FETCH_BYTES + (64u << 10))

/* ---- encoding ---------------------------------------------------------- */

/* Zigzag varint, as record fields are written. */
static uint8_t *put_varint(uint8_t *p, int64_t v) {
  uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
  while (z >= 0x80) {
    *p++ = (uint8_t)(z | 0x80);
    z >>= 7;
  }
  *p++ = (uint8_t)z;
  return p;
}
/* Reads a zigzag varint at *p (below end); 0 when it does not fit. */
static int read_varint(const uint8_t **p, const uint8_t *end, int64_t *out) {
  uint64_t z = 0;
  for (int shift = 0; shift < 64 && *p < end; shift += 7) {
    uint8_t b = *(*p)++;
    z |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *out = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
      return 1;
    }
  }
  return 0;
}

static uint32_t crc_table[256];
static void crc32c_init(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    crc_table[i] = c;
  }
}
static uint32_t crc32c(const uint8_t *p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  while (n--) c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

/* A Produce v3 request carrying one record batch (v2, one record, no key)
 * whose value is `value` (size bytes). Returns the frame length. */
static size_t produce_request(uint8_t *out, int32_t correlation, const char *topic, int16_t acks, const char *value,
                              size_t size, int64_t timestamp_ms) {
  uint8_t *p = out + 4;
  p = put16(p, 0); /* Produce */
  p = put16(p, 3);
  p = put32(p, (uint32_t)correlation);
  p = put_str(p, "raw-e2e");
  p = put16(p, (uint16_t)-1); /* transactional id: null */
  p = put16(p, (uint16_t)acks);
  p = put32(p, 30000);
  p = put32(p, 1);
  p = put_str(p, topic);
  p = put32(p, 1);
  p = put32(p, 0);
  uint8_t *records_len = p;
  p += 4;
  uint8_t *batch = p;
  p = put64(p, 0);            /* base offset */
  uint8_t *batch_len = p;
  p += 4;
  p = put32(p, (uint32_t)-1); /* partition leader epoch */
  *p++ = 2;                   /* magic */
  uint8_t *crc = p;
  p += 4;
  uint8_t *crc_from = p;
  p = put16(p, 0);            /* attributes */
  p = put32(p, 0);            /* last offset delta */
  p = put64(p, (uint64_t)timestamp_ms);
  p = put64(p, (uint64_t)timestamp_ms);
  p = put64(p, (uint64_t)-1); /* producer id */
  p = put16(p, (uint16_t)-1); /* producer epoch */
  p = put32(p, (uint32_t)-1); /* base sequence */
  p = put32(p, 1);            /* records */
  uint8_t body[16], *b = body;
  *b++ = 0;                   /* attributes */
  b = put_varint(b, 0);       /* timestamp delta */
  b = put_varint(b, 0);       /* offset delta */
  b = put_varint(b, -1);      /* key: null */
  b = put_varint(b, (int64_t)size);
  size_t body_len = (size_t)(b - body) + size + 1;
  p = put_varint(p, (int64_t)body_len);
  memcpy(p, body, (size_t)(b - body));
  p += b - body;
  memcpy(p, value, size);
  p += size;
  *p++ = 0;                   /* headers: none */
  put32(batch_len, (uint32_t)(p - batch_len - 4));
  put32(crc, crc32c(crc_from, (size_t)(p - crc_from)));
  put32(records_len, (uint32_t)(p - batch));
  put32(out, (uint32_t)(p - out - 4));
  return (size_t)(p - out);
}

/* ---- connections ------------------------------------------------------- */

static int send_all(int fd, const uint8_t *p, size_t n) {
  while (n > 0) {
    ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

/* Bytes received on one connection, consumed a whole frame at a time. */
typedef struct {
  int fd;
  uint8_t *buf;
  size_t have;
} Reader;

/* Reads what the socket holds without blocking. -1 on EOF or error. */
static int fill(Reader *r) {
  for (;;) {
    if (r->have == READ_CAPACITY) return 0;
    ssize_t k = recv(r->fd, r->buf + r->have, READ_CAPACITY - r->have, MSG_DONTWAIT);
    if (k > 0) {
      r->have += (size_t)k;
      continue;
    }
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (k < 0 && errno == EINTR) continue;
    return -1;
  }
}

/* The next whole frame's body (after its length), or NULL; -1 in *len when
 * the frame can never fit. */
static const uint8_t *next_frame(Reader *r, size_t *len) {
  *len = 0;
  if (r->have < 4) return NULL;
  size_t n = be32(r->buf);
  if (n + 4 > READ_CAPACITY) {
    *len = (size_t)-1;
    return NULL;
  }
  if (r->have < n + 4) return NULL;
  *len = n;
  return r->buf + 4;
}

static void drop_frame(Reader *r, size_t len) {
  memmove(r->buf, r->buf + 4 + len, r->have - 4 - len);
  r->have -= 4 + len;
}

/* ---- the run ----------------------------------------------------------- */

typedef struct {
  const char *topic;
  int16_t acks;
  int64_t start_us, interval_ns;
  long total;
  int64_t *sent_us, *ack_us, *e2e_us;
  long acked, fetched, errors;
  int primed;
  int prime_again;   /* the priming record was refused for a retriable error */
  int fetch_again;   /* a fetch before priming was refused for one */
  int refused;       /* the priming record was refused for good */
  int64_t prime_stamp; /* this run's priming record's stamp */
  int64_t fetch_offset;
} Run;

/* Errors of a topic a broker has not finished creating (Kafka creates one
 * asynchronously): UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE,
 * NOT_LEADER_OR_FOLLOWER. Retried before the clock starts, as a library
 * client retries them; fatal after. */
static int retriable(int16_t error) { return error == 3 || error == 5 || error == 6; }

static int64_t due_us(const Run *run, long i) { return run->start_us + (i * run->interval_ns) / 1000; }

/* Produce v3 response: [topic, [partition, error, base offset, append
 * time]], throttle. The correlation id is the record's index (-1: the
 * priming record). */
static void on_produce_response(Run *run, const uint8_t *f, size_t len, int64_t now) {
  if (len < 4 + 4 + 2 + 4 + 4 + 2) {
    run->errors++;
    return;
  }
  int32_t correlation = (int32_t)be32(f);
  const uint8_t *p = f + 8;
  p += 2 + ((size_t)p[0] << 8 | p[1]);
  if (p + 4 + 4 + 2 > f + len || be32(p) != 1) {
    run->errors++;
    return;
  }
  int16_t error = (int16_t)(p[8] << 8 | p[9]);
  if (error != 0 && correlation < 0 && retriable(error)) {
    run->prime_again = 1; /* the topic is not ready yet: send the priming record again */
    return;
  }
  if (error != 0) {
    if (run->errors++ < 5) fprintf(stderr, "produce %d: error %d\n", correlation, error);
    if (correlation < 0) run->refused = 1; /* the priming record: nothing will get through */
    return;
  }
  if (correlation >= 0 && correlation < run->total && run->acked < run->total)
    run->ack_us[run->acked++] = now - run->sent_us[correlation];
}

/* Fetch v4 response: throttle, [topic, [partition, error, hw, lso, aborted,
 * records]]. Every whole batch's records: the value's first 8 bytes are the
 * send time, its 9th is 1 for a timed record, 0 for priming. The fetch
 * starts at offset 0: a record stamped before this run's priming record is
 * an earlier run's on the same topic and is skipped (runs on one topic do
 * not overlap). */
static int on_fetch_response(Run *run, const uint8_t *f, size_t len, int64_t now) {
  int16_t error = 0;
  uint32_t bytes = 0;
  const uint8_t *p = fetch_v4_records(f, len, &error, &bytes);
  if (p == NULL) {
    if (!run->primed && retriable(error)) {
      run->fetch_again = 1;
      return 0;
    }
    if (error != 0) fprintf(stderr, "fetch error %d at offset %lld\n", error, (long long)run->fetch_offset);
    return -1;
  }
  const uint8_t *q = p, *stop = p + bytes;
  while (stop - q >= 61) {
    uint32_t length = be32(q + 8);
    if (length > (size_t)(stop - q) - 12) break; /* a partial batch at the end */
    int64_t base = (int64_t)be64(q);
    int16_t attributes = (int16_t)(q[21] << 8 | q[22]);
    if (attributes & 7) return -1; /* compressed: not what this client sends */
    const uint8_t *r = q + 61, *batch_end = q + 12 + length;
    for (uint32_t k = be32(q + 57); k > 0; k--) {
      int64_t rec_len, ts, off, key_len, value_len;
      if (!read_varint(&r, batch_end, &rec_len) || rec_len < 0 || rec_len > batch_end - r) return -1;
      const uint8_t *rec_end = r + rec_len;
      r++; /* attributes */
      if (!read_varint(&r, rec_end, &ts) || !read_varint(&r, rec_end, &off) || !read_varint(&r, rec_end, &key_len))
        return -1;
      if (key_len > 0) r += key_len;
      if (r > rec_end || !read_varint(&r, rec_end, &value_len) || value_len < 9 || value_len > rec_end - r) return -1;
      const int64_t stamp = bench_read_stamp(r);
      if (base + off >= run->fetch_offset && stamp >= run->prime_stamp) {
        if (r[8] == 0)
          run->primed = run->primed || stamp == run->prime_stamp;
        else if (run->primed && run->fetched < run->total)
          run->e2e_us[run->fetched++] = now - stamp;
      }
      r = rec_end;
    }
    run->fetch_offset = base + (int32_t)be32(q + 23) + 1;
    q = batch_end;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: raw_e2e HOST:PORT TOPIC RATE SECONDS SIZE ACKS(1|all)\n");
    return 2;
  }
  Run run = {0};
  run.topic = argv[2];
  int rate = atoi(argv[3]), seconds = atoi(argv[4]), size = atoi(argv[5]);
  run.acks = strcmp(argv[6], "all") == 0 ? -1 : (int16_t)atoi(argv[6]);
  if (strlen(run.topic) > 200 || rate < 1 || rate > 1000000 || seconds < 1 || seconds > 3600 || size < 9 ||
      size > (1 << 20) ||
      (run.acks != 1 && run.acks != -1))
    return 2;
  crc32c_init();
  /* Wake for the next send on time: the default 50 us timer slack would
   * be the client's, not the broker's. */
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  Reader prod = {connect_to(argv[1]), malloc(READ_CAPACITY), 0};
  Reader cons = {connect_to(argv[1]), malloc(READ_CAPACITY), 0};
  if (prod.fd < 0 || cons.fd < 0) {
    perror("connect");
    return 1;
  }
  run.total = (long)rate * seconds;
  run.sent_us = calloc((size_t)run.total, sizeof(int64_t));
  run.ack_us = calloc((size_t)run.total, sizeof(int64_t));
  run.e2e_us = calloc((size_t)run.total, sizeof(int64_t));
  run.interval_ns = 1000000000LL / rate;
  char *value = calloc(1, (size_t)size);
  uint8_t *request = malloc((size_t)size + 512);
  if (!prod.buf || !cons.buf || !run.sent_us || !run.ack_us || !run.e2e_us || !value || !request) {
    fprintf(stderr, "raw_e2e: cannot allocate for %ld records\n", run.total);
    return 2;
  }
  int32_t fetch_correlation = 0;
  int failed = 0;

  /* Priming: one record through produce, storage and fetch before the clock
   * starts, so that connection and topic setup are not measured. */
  char *prime = calloc(1, (size_t)size); /* its 9th byte 0: the priming record */
  run.prime_stamp = bench_now_us();
  bench_stamp(prime, run.prime_stamp);
  size_t n = produce_request(request, -1, run.topic, run.acks, prime, (size_t)size, bench_now_us() / 1000);
  failed |= send_all(prod.fd, request, n);
  n = fetch_v4_request(request, fetch_correlation++, "raw-e2e", run.topic, 0, FETCH_BYTES);
  failed |= send_all(cons.fd, request, n);

  long sent = 0;
  int64_t deadline = bench_now_us() + 30 * 1000000LL, drain_until = -1;
  value[8] = 1;
  while (!failed && !run.refused) {
    int64_t now = bench_now_us();
    if (run.primed && run.start_us == 0) run.start_us = now;
    int started = run.start_us != 0;
    if (started && sent == run.total && drain_until < 0) drain_until = now + 30 * 1000000LL;
    /* Done when every record was answered (acknowledged or refused) and
     * every acknowledged one fetched. */
    if (started && sent == run.total && run.acked + run.errors >= run.total && run.fetched >= run.acked) break;
    if ((!started && now > deadline) || (drain_until >= 0 && now > drain_until)) break;
    if (started && sent < run.total && now >= due_us(&run, sent)) {
      /* Stamped when sent: the client's own wake-up lateness is not the
       * broker's, and nothing the broker does can delay this send (produce
       * and fetch are pipelined, neither waits for the other). */
      int64_t at = bench_now_us();
      bench_stamp(value, at);
      run.sent_us[sent] = at;
      n = produce_request(request, (int32_t)sent, run.topic, run.acks, value, (size_t)size, at / 1000);
      failed |= send_all(prod.fd, request, n);
      sent++;
      continue;
    }
    int64_t wait_us = started && sent < run.total ? due_us(&run, sent) - now : 100000;
    struct timespec timeout = {(time_t)(wait_us / 1000000), (long)(wait_us % 1000000) * 1000};
    struct pollfd fds[2] = {{prod.fd, POLLIN, 0}, {cons.fd, POLLIN, 0}};
    if (ppoll(fds, 2, &timeout, NULL) < 0 && errno != EINTR) break;
    now = bench_now_us();
    if (fds[0].revents && fill(&prod) != 0) failed = 1;
    if (fds[1].revents && fill(&cons) != 0) failed = 1;
    size_t len;
    const uint8_t *f;
    while ((f = next_frame(&prod, &len)) != NULL) {
      on_produce_response(&run, f, len, now);
      drop_frame(&prod, len);
    }
    if (len == (size_t)-1) failed = 1;
    if (run.prime_again) {
      run.prime_again = 0;
      bench_sleep_until(bench_now_us() + 100000);
      n = produce_request(request, -1, run.topic, run.acks, prime, (size_t)size, bench_now_us() / 1000);
      failed |= send_all(prod.fd, request, n);
    }
    while ((f = next_frame(&cons, &len)) != NULL) {
      if (on_fetch_response(&run, f, len, now) != 0) failed = 1;
      drop_frame(&cons, len);
      if (run.fetch_again) {
        run.fetch_again = 0;
        bench_sleep_until(bench_now_us() + 100000);
      }
      n = fetch_v4_request(request, fetch_correlation++, "raw-e2e", run.topic, run.fetch_offset, FETCH_BYTES);
      failed |= send_all(cons.fd, request, n);
    }
    if (len == (size_t)-1) failed = 1;
  }
  long a = run.acked, e = run.fetched;
  long errors = run.total - (a < e ? a : e);
  bench_sort(run.ack_us, a);
  bench_sort(run.e2e_us, e);
  printf("latency msgs=%ld ack_p50_us=%lld ack_p99_us=%lld ack_p999_us=%lld e2e_p50_us=%lld e2e_p99_us=%lld "
         "e2e_p999_us=%lld errors=%ld\n",
         e, (long long)bench_rank(run.ack_us, a, 0.50), (long long)bench_rank(run.ack_us, a, 0.99),
         (long long)bench_rank(run.ack_us, a, 0.999), (long long)bench_rank(run.e2e_us, e, 0.50),
         (long long)bench_rank(run.e2e_us, e, 0.99), (long long)bench_rank(run.e2e_us, e, 0.999), errors);
  close(prod.fd);
  close(cons.fd);
  free(prod.buf);
  free(cons.buf);
  free(run.sent_us);
  free(run.ack_us);
  free(run.e2e_us);
  free(value);
  free(prime);
  free(request);
  return errors == 0 && !failed && !run.refused ? 0 : 1;
}
