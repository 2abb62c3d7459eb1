/* A libnats load generator for NATS JetStream: the workloads of
 * rdkafka_bench.c against nats-server, so that tests/bench/compare_bench.py
 * can set Eddy next to the broker a gateway user might otherwise run.
 * Test-only: it is not part of the eddy binary.
 *
 *   nats_bench produce URL PREFIX STREAMS COUNT SIZE MAX_PENDING
 *       creates STREAMS file-stored single-replica streams PREFIX_0.. (stream
 *       i takes subject PREFIX.i), publishes COUNT messages of SIZE bytes
 *       round-robin over them with js_PublishAsync (at most MAX_PENDING
 *       unacknowledged), waits for every publish ack (js_PublishAsyncComplete)
 *       and checks that the streams hold COUNT messages; prints
 *       "produce msgs=N bytes=B seconds=S msgs_per_s=X mib_per_s=Y errors=E"
 *       where msgs counts positive acks from the server.
 *   nats_bench delete URL PREFIX STREAMS
 *       deletes streams PREFIX_0 .. PREFIX_{STREAMS-1}.
 *   nats_bench consume URL PREFIX COUNT
 *       reads COUNT messages from the start of stream PREFIX_0 with an ordered
 *       consumer (ephemeral, no acks, flow control: NATS's fast replay) and
 *       prints "consume msgs=N bytes=B seconds=S msgs_per_s=X mib_per_s=Y"
 *   nats_bench latency URL PREFIX RATE SECONDS SIZE
 *       creates stream PREFIX_0 (subject PREFIX.0), follows it with an ordered consumer, publishes RATE
 *       messages per second for SECONDS (js_PublishAsync, sent at once), each
 *       stamped with its scheduled send time, and prints ack (publish ->
 *       stored) and end-to-end (publish -> consumer) latency percentiles:
 *       "latency msgs=N ack_p50_us=.. ack_p99_us=.. ack_p999_us=..
 *        e2e_p50_us=.. e2e_p99_us=.. e2e_p999_us=.. errors=E"
 * Exit code 0 when every message was acknowledged (and, for latency, read),
 * 1 otherwise, 2 on usage or setup errors. */
#include <nats/nats.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"

enum { kMaxStreams = 64, kNameMax = 128 };

/* Publish acks, counted by the ack handler (a libnats thread). */
static long acked = 0, ack_errors = 0;
/* Latency samples (latency mode only), each array filled by one thread. */
static int64_t *ack_us = NULL, *e2e_us = NULL;
static long ack_n = 0, e2e_n = 0, sample_cap = 0;

static void fail_setup(const char *what, natsStatus s, jsErrCode jerr) {
  fprintf(stderr, "%s: %s (jetstream error %d)\n", what, natsStatus_GetText(s), (int)jerr);
  nats_PrintLastErrorStack(stderr);
  exit(2);
}

static void on_ack(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae, void *closure) {
  (void)js;
  (void)closure;
  if (pa != NULL) {
    __atomic_add_fetch(&acked, 1, __ATOMIC_RELAXED);
    if (ack_us != NULL && natsMsg_GetDataLength(msg) >= 8) {
      long i = __atomic_fetch_add(&ack_n, 1, __ATOMIC_RELAXED);
      if (i < sample_cap) ack_us[i] = bench_now_us() - bench_read_stamp(natsMsg_GetData(msg));
    }
  } else {
    long n = __atomic_fetch_add(&ack_errors, 1, __ATOMIC_RELAXED);
    if (n < 5 && pae != NULL)
      fprintf(stderr, "publish failed: %s (jetstream error %d) %s\n", natsStatus_GetText(pae->Err),
              (int)pae->ErrCode, pae->ErrText ? pae->ErrText : "");
  }
  natsMsg_Destroy(msg); /* the ack handler owns the published message */
}

/* Connects to url; send_asap: no client-side write buffering (latency). */
static natsConnection *connect_to(const char *url, int send_asap) {
  natsOptions *opts = NULL;
  natsConnection *nc = NULL;
  natsStatus s = natsOptions_Create(&opts);
  if (s == NATS_OK) s = natsOptions_SetURL(opts, url);
  if (s == NATS_OK) s = natsOptions_SetSendAsap(opts, send_asap ? true : false);
  if (s == NATS_OK) s = natsOptions_SetTimeout(opts, 10000);
  if (s == NATS_OK) s = natsConnection_Connect(&nc, opts);
  natsOptions_Destroy(opts);
  if (s != NATS_OK) fail_setup("connect", s, 0);
  return nc;
}

static jsCtx *jetstream(natsConnection *nc, long max_pending) {
  jsOptions o;
  jsCtx *js = NULL;
  jsOptions_Init(&o);
  o.Wait = 30000;
  o.PublishAsync.MaxPending = max_pending;
  o.PublishAsync.AckHandler = on_ack;
  o.PublishAsync.StallWait = 1000;
  natsStatus s = natsConnection_JetStream(&js, nc, &o);
  if (s != NATS_OK) fail_setup("jetstream context", s, 0);
  return js;
}

/* A file-stored stream with one replica and no limits: the analogue of an
 * Eddy partition (one log, one writer, one sequence). */
static void add_stream(jsCtx *js, const char *name, const char *subject) {
  jsStreamConfig cfg;
  jsStreamInfo *si = NULL;
  jsErrCode jerr = 0;
  const char *subjects[1] = {subject};
  jsStreamConfig_Init(&cfg);
  cfg.Name = name;
  cfg.Subjects = subjects;
  cfg.SubjectsLen = 1;
  cfg.Storage = js_FileStorage;
  cfg.Replicas = 1;
  natsStatus s = js_AddStream(&si, js, &cfg, NULL, &jerr);
  if (s != NATS_OK) fail_setup(name, s, jerr);
  jsStreamInfo_Destroy(si);
}

static uint64_t stream_msgs(jsCtx *js, const char *name) {
  jsStreamInfo *si = NULL;
  jsErrCode jerr = 0;
  natsStatus s = js_GetStreamInfo(&si, js, name, NULL, &jerr);
  if (s != NATS_OK) fail_setup(name, s, jerr);
  uint64_t n = si->State.Msgs;
  jsStreamInfo_Destroy(si);
  return n;
}

static void stream_names(const char *prefix, int i, char *name, char *subject) {
  snprintf(name, kNameMax, "%s_%d", prefix, i);
  snprintf(subject, kNameMax, "%s.%d", prefix, i);
}

/* js_PublishAsync, retried while the pending window is full. */
static natsStatus publish(jsCtx *js, const char *subject, const char *payload, int size) {
  for (;;) {
    natsStatus s = js_PublishAsync(js, subject, payload, size, NULL);
    if (s != NATS_TIMEOUT) return s;
  }
}

static natsStatus wait_for_acks(jsCtx *js, int64_t max_wait_ms) {
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = max_wait_ms;
  return js_PublishAsyncComplete(js, &po);
}

static int produce(const char *url, const char *prefix, int streams, long count, int size, long max_pending) {
  if (streams < 1 || streams > kMaxStreams || count < 1 || size < 1 || max_pending < 1) return 2;
  natsConnection *nc = connect_to(url, 0);
  jsCtx *js = jetstream(nc, max_pending);
  char names[kMaxStreams][kNameMax], subjects[kMaxStreams][kNameMax];
  for (int i = 0; i < streams; i++) {
    stream_names(prefix, i, names[i], subjects[i]);
    add_stream(js, names[i], subjects[i]);
  }
  char *payload = malloc((size_t)size);
  for (int i = 0; i < size; i++) payload[i] = (char)('a' + i % 26);
  long send_errors = 0;
  int64_t start = bench_now_us();
  for (long i = 0; i < count; i++) {
    natsStatus s = publish(js, subjects[i % streams], payload, size);
    if (s != NATS_OK && send_errors++ < 5) fprintf(stderr, "js_PublishAsync: %s\n", natsStatus_GetText(s));
  }
  natsStatus done = wait_for_acks(js, 300000);
  double seconds = (double)(bench_now_us() - start) / 1e6;
  if (done != NATS_OK) fprintf(stderr, "js_PublishAsyncComplete: %s\n", natsStatus_GetText(done));
  long got = __atomic_load_n(&acked, __ATOMIC_RELAXED);
  /* errors: messages without a positive ack (failed sends, negative acks,
   * no answer), each counted once. */
  long errors = count - got;
  uint64_t stored = 0;
  for (int i = 0; i < streams; i++) stored += stream_msgs(js, names[i]);
  int stored_ok = stored == (uint64_t)got;
  if (!stored_ok)
    fprintf(stderr, "streams hold %llu messages, %ld were acknowledged\n", (unsigned long long)stored, got);
  double bytes = (double)got * size;
  printf("produce msgs=%ld bytes=%.0f seconds=%.3f msgs_per_s=%.0f mib_per_s=%.2f errors=%ld\n", got, bytes, seconds,
         got / seconds, bytes / seconds / 1048576.0, errors);
  free(payload);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  return errors == 0 && send_errors == 0 && stored_ok ? 0 : 1;
}

static int delete_streams(const char *url, const char *prefix, int streams) {
  if (streams < 1 || streams > kMaxStreams) return 2;
  natsConnection *nc = connect_to(url, 0);
  jsCtx *js = jetstream(nc, 1);
  int rc = 0;
  for (int i = 0; i < streams; i++) {
    char name[kNameMax], subject[kNameMax];
    jsErrCode jerr = 0;
    stream_names(prefix, i, name, subject);
    natsStatus s = js_DeleteStream(js, name, NULL, &jerr);
    if (s != NATS_OK) {
      fprintf(stderr, "delete %s: %s (jetstream error %d)\n", name, natsStatus_GetText(s), (int)jerr);
      rc = 1;
    }
  }
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  return rc;
}

/* An ordered consumer of the whole stream; cb NULL: a synchronous one. */
static natsSubscription *follow(jsCtx *js, const char *stream, const char *subject, natsMsgHandler cb,
                                void *closure) {
  jsSubOptions so;
  natsSubscription *sub = NULL;
  jsErrCode jerr = 0;
  jsSubOptions_Init(&so);
  so.Stream = stream;
  so.Ordered = true;
  so.Config.DeliverPolicy = js_DeliverAll;
  natsStatus s = cb ? js_Subscribe(&sub, js, subject, cb, closure, NULL, &so, &jerr)
                    : js_SubscribeSync(&sub, js, subject, NULL, &so, &jerr);
  if (s == NATS_OK) s = natsSubscription_SetPendingLimits(sub, 1 << 20, 256 << 20);
  if (s != NATS_OK) fail_setup("ordered consumer", s, jerr);
  return sub;
}

static int consume(const char *url, const char *prefix, long count) {
  char stream[kNameMax], subject[kNameMax];
  stream_names(prefix, 0, stream, subject);
  natsConnection *nc = connect_to(url, 0);
  jsCtx *js = jetstream(nc, 1);
  natsSubscription *sub = follow(js, stream, subject, NULL, NULL);
  long got = 0;
  double bytes = 0;
  int64_t start = 0, deadline = bench_now_us() + 300 * 1000000LL;
  while (got < count && bench_now_us() < deadline) {
    natsMsg *m = NULL;
    natsStatus s = natsSubscription_NextMsg(&m, sub, 1000);
    if (s == NATS_TIMEOUT) continue;
    if (s != NATS_OK) {
      fprintf(stderr, "next message: %s\n", natsStatus_GetText(s));
      break;
    }
    if (got == 0) start = bench_now_us();
    got++;
    bytes += natsMsg_GetDataLength(m);
    natsMsg_Destroy(m);
  }
  double seconds = (double)(bench_now_us() - start) / 1e6;
  printf("consume msgs=%ld bytes=%.0f seconds=%.3f msgs_per_s=%.0f mib_per_s=%.2f\n", got, bytes, seconds,
         got / seconds, bytes / seconds / 1048576.0);
  natsSubscription_Destroy(sub);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  return got == count ? 0 : 1;
}

/* Latency mode's consumer callback: the first byte after the stamp tells a
 * timed message (1) from the priming one (0). */
static volatile int primed = 0;
static void on_delivery(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure) {
  (void)nc;
  (void)sub;
  (void)closure;
  int64_t now = bench_now_us();
  const char *data = natsMsg_GetData(msg);
  if (natsMsg_GetDataLength(msg) >= 9) {
    if (data[8] == 0) {
      __atomic_store_n(&primed, 1, __ATOMIC_RELEASE);
    } else if (e2e_n < sample_cap) {
      e2e_us[e2e_n] = now - bench_read_stamp(data);
      __atomic_store_n(&e2e_n, e2e_n + 1, __ATOMIC_RELEASE);
    }
  }
  natsMsg_Destroy(msg);
}

static int latency(const char *url, const char *prefix, int rate, int seconds, int size) {
  if (rate < 1 || seconds < 1 || size < 9) return 2;
  char stream[kNameMax], subject[kNameMax];
  stream_names(prefix, 0, stream, subject);
  natsConnection *nc = connect_to(url, 1);
  jsCtx *js = jetstream(nc, 1 << 16);
  add_stream(js, stream, subject);
  long total = (long)rate * seconds;
  sample_cap = total;
  ack_us = calloc((size_t)total, sizeof(int64_t));
  e2e_us = calloc((size_t)total, sizeof(int64_t));
  natsSubscription *sub = follow(js, stream, subject, on_delivery, NULL);
  char *payload = calloc(1, (size_t)size);
  /* Priming: one message through publish, store and delivery before the clock
   * starts, so that consumer creation is not measured. */
  bench_stamp(payload, bench_now_us());
  payload[8] = 0;
  publish(js, subject, payload, size);
  wait_for_acks(js, 30000);
  int64_t deadline = bench_now_us() + 30 * 1000000LL;
  while (!__atomic_load_n(&primed, __ATOMIC_ACQUIRE) && bench_now_us() < deadline) bench_sleep_until(bench_now_us() + 1000);
  __atomic_store_n(&acked, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&ack_n, 0, __ATOMIC_RELAXED);
  payload[8] = 1;
  long send_errors = 0;
  int64_t start = bench_now_us(), interval_ns = 1000000000LL / rate;
  for (long i = 0; i < total; i++) {
    int64_t due = start + (i * interval_ns) / 1000;
    bench_sleep_until(due);
    bench_stamp(payload, due); /* scheduled time: a late send counts against the system */
    natsStatus s = publish(js, subject, payload, size);
    if (s != NATS_OK && send_errors++ < 5) fprintf(stderr, "js_PublishAsync: %s\n", natsStatus_GetText(s));
  }
  natsStatus done = wait_for_acks(js, 60000);
  if (done != NATS_OK) fprintf(stderr, "js_PublishAsyncComplete: %s\n", natsStatus_GetText(done));
  /* Every message the server acknowledged must reach the consumer. */
  long stored = __atomic_load_n(&acked, __ATOMIC_ACQUIRE);
  deadline = bench_now_us() + 30 * 1000000LL;
  while (__atomic_load_n(&e2e_n, __ATOMIC_ACQUIRE) < stored && bench_now_us() < deadline)
    bench_sleep_until(bench_now_us() + 1000);
  natsSubscription_Unsubscribe(sub);
  long a = __atomic_load_n(&ack_n, __ATOMIC_ACQUIRE), e = __atomic_load_n(&e2e_n, __ATOMIC_ACQUIRE);
  if (a > total) a = total;
  /* errors: timed messages not acknowledged or not consumed, each once. */
  long errors = total - (a < e ? a : e);
  if (send_errors) fprintf(stderr, "%ld sends failed\n", send_errors);
  bench_sort(ack_us, a);
  bench_sort(e2e_us, e);
  printf("latency msgs=%ld ack_p50_us=%lld ack_p99_us=%lld ack_p999_us=%lld e2e_p50_us=%lld e2e_p99_us=%lld "
         "e2e_p999_us=%lld errors=%ld\n",
         e, (long long)bench_rank(ack_us, a, 0.50), (long long)bench_rank(ack_us, a, 0.99),
         (long long)bench_rank(ack_us, a, 0.999), (long long)bench_rank(e2e_us, e, 0.50),
         (long long)bench_rank(e2e_us, e, 0.99), (long long)bench_rank(e2e_us, e, 0.999), errors);
  natsSubscription_Destroy(sub);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  free(payload);
  return errors == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  int rc = 2;
  if (argc == 8 && strcmp(argv[1], "produce") == 0)
    rc = produce(argv[2], argv[3], atoi(argv[4]), atol(argv[5]), atoi(argv[6]), atol(argv[7]));
  else if (argc == 5 && strcmp(argv[1], "delete") == 0)
    rc = delete_streams(argv[2], argv[3], atoi(argv[4]));
  else if (argc == 5 && strcmp(argv[1], "consume") == 0)
    rc = consume(argv[2], argv[3], atol(argv[4]));
  else if (argc == 7 && strcmp(argv[1], "latency") == 0)
    rc = latency(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]), atoi(argv[6]));
  else
    fprintf(stderr,
            "usage: nats_bench produce URL PREFIX STREAMS COUNT SIZE MAX_PENDING\n"
            "       nats_bench delete URL PREFIX STREAMS\n"
            "       nats_bench consume URL PREFIX COUNT\n"
            "       nats_bench latency URL PREFIX RATE SECONDS SIZE\n");
  nats_Close();
  return rc;
}
