/* A small librdkafka load generator for benchmarking a Kafka-protocol broker
 * (Eddy or any other). Test-only: it is not part of the eddy binary.
 * tests/bench/nats_bench.c runs the same workloads against NATS JetStream.
 *
 *   rdkafka_bench create BROKER TOPIC PARTITIONS [KEY=VALUE...]
 *       creates TOPIC with PARTITIONS partitions and the given topic configs
 *       (CreateTopics) and waits until its metadata shows every partition.
 *   rdkafka_bench delete BROKER TOPIC
 *       deletes TOPIC (DeleteTopics).
 *   rdkafka_bench produce BROKER TOPIC COUNT SIZE ACKS [PARTITIONS [CODEC]]
 *       sends COUNT messages of SIZE bytes as fast as the client allows,
 *       waits for every delivery report; prints one line:
 *       "produce msgs=N bytes=B seconds=S msgs_per_s=X mib_per_s=Y errors=E"
 *       Without CODEC every message is the same "abc..z" text, uncompressed.
 *       With CODEC (none, gzip, snappy, lz4, zstd) the producer compresses
 *       with it and each message is a different slice of sensor-like text
 *       (see sensor_text), so that a compressed batch costs its consumer
 *       about what real data would.
 *   rdkafka_bench latency BROKER TOPIC RATE SECONDS SIZE ACKS
 *       sends RATE messages per second for SECONDS, one at a time (no
 *       batching delay), and prints delivery latency percentiles:
 *       "latency msgs=N p50_us=A p99_us=B p999_us=C max_us=D errors=E"
 *   rdkafka_bench e2e BROKER TOPIC RATE SECONDS SIZE ACKS
 *       the same sends, each stamped with its scheduled send time, while a
 *       consumer in this process reads the partition; prints ack (produce ->
 *       delivery report) and end-to-end (produce -> consumer) percentiles:
 *       "latency msgs=N ack_p50_us=.. ack_p99_us=.. ack_p999_us=..
 *        e2e_p50_us=.. e2e_p99_us=.. e2e_p999_us=.. errors=E"
 *   rdkafka_bench consume BROKER TOPIC PARTITIONS COUNT
 *       reads COUNT messages from the beginning of every partition (manual
 *       assignment) and prints "consume msgs=N bytes=B seconds=S ..."
 * RDKAFKA_BENCH_CONFIG=FILE in the environment: librdkafka settings, one
 * key=value per line (# comments), applied to every client before the
 * bench's own settings, e.g. security.protocol=ssl and ssl.ca.location=ca.pem.
 * Exit code 0 when every message was delivered or read, 1 otherwise. */
#include <librdkafka/rdkafka.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"

static long delivered = 0, errors = 0;
/* Delivery latencies from the stamp in each payload's first 8 bytes; only
 * messages whose byte 8 is 1 (timed, not priming) are sampled. */
static int64_t *latencies = NULL;
static long latency_count = 0, latency_cap = 0;

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
  (void)rk;
  (void)opaque;
  if (m->err) {
    if (errors < 5) fprintf(stderr, "delivery failed: %s\n", rd_kafka_err2str(m->err));
    errors++;
    return;
  }
  delivered++;
  const char *p = m->payload;
  if (latencies && m->len >= 9 && p[8] == 1 && latency_count < latency_cap)
    latencies[latency_count++] = bench_now_us() - bench_read_stamp(p);
}

static void set(rd_kafka_conf_t *conf, const char *key, const char *value) {
  char err[256];
  if (rd_kafka_conf_set(conf, key, value, err, sizeof(err)) != RD_KAFKA_CONF_OK) {
    fprintf(stderr, "%s=%s: %s\n", key, value, err);
    exit(2);
  }
}

/* A client configuration: bootstrap.servers, then RDKAFKA_BENCH_CONFIG's
 * lines; the caller's settings come after and win, so a workload stays the
 * same whatever the file adds (it is for the connection: security). */
static rd_kafka_conf_t *new_conf(const char *broker) {
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  set(conf, "bootstrap.servers", broker);
  const char *path = getenv("RDKAFKA_BENCH_CONFIG");
  if (!path || !*path) return conf;
  FILE *f = fopen(path, "r");
  if (!f) {
    perror(path);
    exit(2);
  }
  char line[1024];
  while (fgets(line, sizeof(line), f)) {
    line[strcspn(line, "\r\n")] = 0;
    char *eq = strchr(line, '=');
    if (line[0] == '#' || line[0] == 0) continue;
    if (!eq) {
      fprintf(stderr, "%s: not key=value: %s\n", path, line);
      exit(2);
    }
    *eq = 0;
    set(conf, line, eq + 1);
  }
  fclose(f);
  return conf;
}

static rd_kafka_t *make_producer(const char *broker, const char *acks, int low_latency, const char *codec) {
  char err[256];
  rd_kafka_conf_t *conf = new_conf(broker);
  set(conf, "acks", acks);
  set(conf, "linger.ms", low_latency ? "0" : "5");
  set(conf, "batch.size", "1000000");
  set(conf, "queue.buffering.max.messages", "1000000");
  set(conf, "queue.buffering.max.kbytes", "1048576");
  set(conf, "compression.codec", codec);
  rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
  if (!rk) {
    fprintf(stderr, "producer: %s\n", err);
    exit(2);
  }
  return rk;
}

static rd_kafka_t *make_consumer(const char *broker) {
  char err[256];
  rd_kafka_conf_t *conf = new_conf(broker);
  set(conf, "group.id", "rdkafka-bench-unused"); /* librdkafka wants one even for assign() */
  set(conf, "enable.auto.commit", "false");
  set(conf, "fetch.max.bytes", "52428800");
  set(conf, "max.partition.fetch.bytes", "4194304");
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
  if (!rk) {
    fprintf(stderr, "consumer: %s\n", err);
    exit(2);
  }
  return rk;
}

static void assign_from_start(rd_kafka_t *rk, const char *topic, int partitions) {
  rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; p++)
    rd_kafka_topic_partition_list_add(list, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_assign(rk, list);
  rd_kafka_topic_partition_list_destroy(list);
}

static int partition_count(rd_kafka_t *rk, const char *topic) {
  const struct rd_kafka_metadata *md = NULL;
  rd_kafka_topic_t *t = rd_kafka_topic_new(rk, topic, NULL);
  int n = -1;
  if (rd_kafka_metadata(rk, 0, t, &md, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    if (md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR) n = md->topics[0].partition_cnt;
    rd_kafka_metadata_destroy(md);
  }
  rd_kafka_topic_destroy(t);
  return n;
}

static rd_kafka_t *make_admin(const char *broker) {
  char err[256];
  rd_kafka_conf_t *conf = new_conf(broker);
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
  if (!rk) {
    fprintf(stderr, "admin: %s\n", err);
    exit(2);
  }
  return rk;
}

/* Waits for the CreateTopics or DeleteTopics result on q; 0 when its one
 * topic result carries no error. */
static int admin_result(rd_kafka_queue_t *q, const char *what, const char *topic) {
  rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 30000);
  const rd_kafka_topic_result_t **topics = NULL;
  size_t n = 0;
  if (ev && rd_kafka_event_type(ev) == RD_KAFKA_EVENT_CREATETOPICS_RESULT)
    topics = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
  else if (ev && rd_kafka_event_type(ev) == RD_KAFKA_EVENT_DELETETOPICS_RESULT)
    topics = rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(ev), &n);
  int rc = 1;
  if (!ev)
    fprintf(stderr, "%s %s: no answer\n", what, topic);
  else if (rd_kafka_event_error(ev))
    fprintf(stderr, "%s %s: %s\n", what, topic, rd_kafka_event_error_string(ev));
  else if (n != 1)
    fprintf(stderr, "%s %s: %zu topic results\n", what, topic, n);
  else if (rd_kafka_topic_result_error(topics[0]) != RD_KAFKA_RESP_ERR_NO_ERROR)
    fprintf(stderr, "%s %s: %s\n", what, topic, rd_kafka_topic_result_error_string(topics[0]));
  else
    rc = 0;
  if (ev) rd_kafka_event_destroy(ev);
  return rc;
}

static int create(const char *broker, const char *topic, int partitions, int nconfigs, char **configs) {
  char err[256];
  rd_kafka_t *rk = make_admin(broker);
  rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(topic, partitions, 1, err, sizeof(err));
  if (!nt) {
    fprintf(stderr, "%s: %s\n", topic, err);
    return 2;
  }
  for (int i = 0; i < nconfigs; i++) {
    char *eq = strchr(configs[i], '=');
    if (!eq) {
      fprintf(stderr, "topic config %s: want KEY=VALUE\n", configs[i]);
      return 2;
    }
    *eq = '\0';
    if (rd_kafka_NewTopic_set_config(nt, configs[i], eq + 1) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      fprintf(stderr, "topic config %s rejected by the client\n", configs[i]);
      return 2;
    }
  }
  rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
  rd_kafka_CreateTopics(rk, &nt, 1, NULL, q);
  int rc = admin_result(q, "create", topic);
  int64_t deadline = bench_now_us() + 10 * 1000000LL;
  while (rc == 0 && partition_count(rk, topic) != partitions) {
    if (bench_now_us() > deadline) {
      fprintf(stderr, "create %s: metadata never showed %d partitions\n", topic, partitions);
      rc = 1;
    }
    bench_sleep_until(bench_now_us() + 20000);
  }
  rd_kafka_NewTopic_destroy(nt);
  rd_kafka_queue_destroy(q);
  rd_kafka_destroy(rk);
  return rc;
}

static int delete_topic(const char *broker, const char *topic) {
  rd_kafka_t *rk = make_admin(broker);
  rd_kafka_DeleteTopic_t *dt = rd_kafka_DeleteTopic_new(topic);
  rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
  rd_kafka_DeleteTopics(rk, &dt, 1, NULL, q);
  int rc = admin_result(q, "delete", topic);
  rd_kafka_DeleteTopic_destroy(dt);
  rd_kafka_queue_destroy(q);
  rd_kafka_destroy(rk);
  return rc;
}

/* Fetches the topic's metadata before the clock starts: a producer that
 * learns of a topic from its first message may wait for librdkafka's
 * 1-second metadata timer, which would be timed as the broker's. */
static void learn_topic(rd_kafka_t *rk, const char *topic) {
  if (partition_count(rk, topic) < 1) fprintf(stderr, "%s: no metadata yet; timing includes the lookup\n", topic);
}

/* SENSOR_TEXT_BYTES of lines such as "t=1700000123 dev=17 temp=21.37
 * hum=48.02 ok\n" with pseudo-random readings: the kind of text a gateway
 * carries, which lz4 and zstd shrink about 2-4 times. Message i is the slice
 * starting at a different offset, so batches are not one value repeated. */
#define SENSOR_TEXT_BYTES (4 << 20)
static char *sensor_text(int size) {
  size_t n = SENSOR_TEXT_BYTES + (size_t)size;
  char *text = malloc(n + 64);
  uint32_t x = 2463534242u; /* xorshift32 */
  size_t at = 0;
  for (unsigned line = 0; at < n; line++) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    at += (size_t)sprintf(text + at, "t=%u dev=%u temp=%u.%02u hum=%u.%02u %s\n", 1700000000u + line, x % 64,
                          15 + x % 20, (x >> 8) % 100, 30 + (x >> 12) % 40, (x >> 20) % 100, x % 97 ? "ok" : "ALARM");
  }
  return text;
}

static int produce(const char *broker, const char *topic, long count, int size, const char *acks, int partitions,
                   const char *codec) {
  rd_kafka_t *rk = make_producer(broker, acks, 0, codec ? codec : "none");
  learn_topic(rk, topic);
  char *payload = codec ? sensor_text(size) : malloc((size_t)size);
  if (!codec)
    for (int i = 0; i < size; i++) payload[i] = (char)('a' + i % 26);
  int64_t start = bench_now_us();
  for (long i = 0; i < count; i++) {
    int32_t partition = partitions > 0 ? (int32_t)(i % partitions) : RD_KAFKA_PARTITION_UA;
    const char *value = codec ? payload + (size_t)(i * 7919) % SENSOR_TEXT_BYTES : payload;
    for (;;) {
      rd_kafka_resp_err_t e = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(partition),
                                                RD_KAFKA_V_VALUE((void *)value, (size_t)size), RD_KAFKA_V_END);
      if (e == RD_KAFKA_RESP_ERR_NO_ERROR) break;
      if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        fprintf(stderr, "produce: %s\n", rd_kafka_err2str(e));
        return 1;
      }
      rd_kafka_poll(rk, 10);
    }
    if ((i & 1023) == 0) rd_kafka_poll(rk, 0);
  }
  rd_kafka_flush(rk, 300000);
  double seconds = (double)(bench_now_us() - start) / 1e6;
  double bytes = (double)delivered * size;
  printf("produce msgs=%ld bytes=%.0f seconds=%.3f msgs_per_s=%.0f mib_per_s=%.2f errors=%ld\n", delivered, bytes,
         seconds, delivered / seconds, bytes / seconds / 1048576.0, errors);
  rd_kafka_destroy(rk);
  free(payload);
  return delivered == count && errors == 0 ? 0 : 1;
}

static int latency(const char *broker, const char *topic, int rate, int seconds, int size, const char *acks) {
  if (rate < 1 || seconds < 1 || size < 9) return 2;
  rd_kafka_t *rk = make_producer(broker, acks, 1, "none");
  learn_topic(rk, topic);
  long total = (long)rate * seconds;
  latency_cap = total;
  latencies = calloc((size_t)total, sizeof(int64_t));
  char *payload = calloc(1, (size_t)size);
  payload[8] = 1;
  int64_t start = bench_now_us(), interval = 1000000 / rate;
  for (long i = 0; i < total; i++) {
    int64_t due = start + i * interval;
    while (bench_now_us() < due) rd_kafka_poll(rk, 0);
    bench_stamp(payload, bench_now_us());
    /* F_COPY: the payload buffer is stamped again for the next message;
     * without a copy librdkafka would send (and checksum) a moving target. */
    rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0), RD_KAFKA_V_VALUE(payload, (size_t)size),
                      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
    rd_kafka_poll(rk, 0);
  }
  rd_kafka_flush(rk, 60000);
  long n = latency_count;
  bench_sort(latencies, n);
  printf("latency msgs=%ld p50_us=%lld p99_us=%lld p999_us=%lld max_us=%lld errors=%ld\n", n,
         (long long)bench_rank(latencies, n, 0.50), (long long)bench_rank(latencies, n, 0.99),
         (long long)bench_rank(latencies, n, 0.999), (long long)(n > 0 ? latencies[n - 1] : 0), errors);
  rd_kafka_destroy(rk);
  return n == total && errors == 0 ? 0 : 1;
}

/* e2e: the consumer thread and the delivery-report thread. */
typedef struct {
  rd_kafka_t *rk;
  long expected;
  int64_t *e2e_us;
  long e2e_n;    /* written by the consumer thread only */
  int primed;    /* the priming message arrived */
  int64_t prime_stamp; /* its stamp; a message stamped earlier is an earlier run's */
  int stop;      /* set by main: give up */
} E2eConsumer;

static void *consume_stamps(void *arg) {
  E2eConsumer *c = arg;
  while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE) && __atomic_load_n(&c->e2e_n, __ATOMIC_RELAXED) < c->expected) {
    rd_kafka_message_t *m = rd_kafka_consumer_poll(c->rk, 100);
    if (!m) continue;
    int64_t now = bench_now_us();
    const char *p = m->payload;
    /* The consumer reads the topic from the start: messages stamped before
     * this run's priming message are an earlier run's on the same topic. */
    const int64_t stamp = m->err || m->len < 9 ? 0 : bench_read_stamp(p);
    if (!m->err && m->len >= 9 && stamp >= c->prime_stamp) {
      if (p[8] == 0) {
        if (stamp == c->prime_stamp) __atomic_store_n(&c->primed, 1, __ATOMIC_RELEASE);
      } else if (__atomic_load_n(&c->primed, __ATOMIC_RELAXED) && c->e2e_n < c->expected) {
        c->e2e_us[c->e2e_n] = now - stamp;
        __atomic_store_n(&c->e2e_n, c->e2e_n + 1, __ATOMIC_RELEASE);
      }
    }
    rd_kafka_message_destroy(m);
  }
  return NULL;
}

typedef struct {
  rd_kafka_t *rk;
  int stop;
} Poller;

/* Serves delivery reports as they arrive, so that the ack latency is not
 * rounded up to the send loop's next wake-up. */
static void *poll_reports(void *arg) {
  Poller *p = arg;
  while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) rd_kafka_poll(p->rk, 50);
  return NULL;
}

static void wait_until_or(const int *flag, const long *count, long want, int64_t timeout_us) {
  int64_t deadline = bench_now_us() + timeout_us;
  while (bench_now_us() < deadline) {
    if (flag && __atomic_load_n(flag, __ATOMIC_ACQUIRE)) return;
    if (count && __atomic_load_n(count, __ATOMIC_ACQUIRE) >= want) return;
    bench_sleep_until(bench_now_us() + 1000);
  }
}

static int e2e(const char *broker, const char *topic, int rate, int seconds, int size, const char *acks) {
  if (rate < 1 || seconds < 1 || size < 9) return 2;
  long total = (long)rate * seconds;
  rd_kafka_t *producer = make_producer(broker, acks, 1, "none");
  E2eConsumer c = {make_consumer(broker), total, calloc((size_t)total, sizeof(int64_t)), 0, 0, bench_now_us(), 0};
  char *payload = calloc(1, (size_t)size);
  /* Priming: one message through produce, storage and fetch before the
   * clock starts, so that connection and topic setup are not measured. */
  bench_stamp(payload, c.prime_stamp);
  rd_kafka_producev(producer, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
                    RD_KAFKA_V_VALUE(payload, (size_t)size), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
  rd_kafka_flush(producer, 30000);
  assign_from_start(c.rk, topic, 1);
  pthread_t consumer_thread, poller_thread;
  pthread_create(&consumer_thread, NULL, consume_stamps, &c);
  wait_until_or(&c.primed, NULL, 0, 30 * 1000000LL);
  latency_cap = total;
  latencies = calloc((size_t)total, sizeof(int64_t));
  Poller poller = {producer, 0};
  pthread_create(&poller_thread, NULL, poll_reports, &poller);
  payload[8] = 1;
  long send_errors = 0;
  int64_t start = bench_now_us(), interval_ns = 1000000000LL / rate;
  for (long i = 0; i < total; i++) {
    int64_t due = start + (i * interval_ns) / 1000;
    bench_sleep_until(due);
    bench_stamp(payload, due); /* scheduled time: a late send counts against the system */
    rd_kafka_resp_err_t e = rd_kafka_producev(producer, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
                                              RD_KAFKA_V_VALUE(payload, (size_t)size),
                                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR && send_errors++ < 5) fprintf(stderr, "produce: %s\n", rd_kafka_err2str(e));
  }
  __atomic_store_n(&poller.stop, 1, __ATOMIC_RELEASE);
  pthread_join(poller_thread, NULL);
  rd_kafka_flush(producer, 60000);
  /* Every message the broker acknowledged must reach the consumer. */
  wait_until_or(NULL, &c.e2e_n, latency_count, 30 * 1000000LL);
  __atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
  pthread_join(consumer_thread, NULL);
  long a = latency_count, n = c.e2e_n;
  /* errors: timed messages not acknowledged or not consumed, each once. */
  long errs = total - (a < n ? a : n);
  if (send_errors) fprintf(stderr, "%ld sends failed\n", send_errors);
  bench_sort(latencies, a);
  bench_sort(c.e2e_us, n);
  printf("latency msgs=%ld ack_p50_us=%lld ack_p99_us=%lld ack_p999_us=%lld e2e_p50_us=%lld e2e_p99_us=%lld "
         "e2e_p999_us=%lld errors=%ld\n",
         n, (long long)bench_rank(latencies, a, 0.50), (long long)bench_rank(latencies, a, 0.99),
         (long long)bench_rank(latencies, a, 0.999), (long long)bench_rank(c.e2e_us, n, 0.50),
         (long long)bench_rank(c.e2e_us, n, 0.99), (long long)bench_rank(c.e2e_us, n, 0.999), errs);
  rd_kafka_consumer_close(c.rk);
  rd_kafka_destroy(c.rk);
  rd_kafka_destroy(producer);
  free(payload);
  return errs == 0 ? 0 : 1;
}

static int consume(const char *broker, const char *topic, int partitions, long count) {
  rd_kafka_t *rk = make_consumer(broker);
  assign_from_start(rk, topic, partitions);
  long got = 0;
  double bytes = 0;
  int64_t start = 0, deadline = bench_now_us() + 300 * 1000000LL;
  while (got < count && bench_now_us() < deadline) {
    rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 500);
    if (!m) continue;
    if (!m->err) {
      if (got == 0) start = bench_now_us();
      got++;
      bytes += (double)m->len;
    }
    rd_kafka_message_destroy(m);
  }
  double seconds = (double)(bench_now_us() - start) / 1e6;
  printf("consume msgs=%ld bytes=%.0f seconds=%.3f msgs_per_s=%.0f mib_per_s=%.2f\n", got, bytes, seconds,
         got / seconds, bytes / seconds / 1048576.0);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return got == count ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc >= 5 && strcmp(argv[1], "create") == 0) return create(argv[2], argv[3], atoi(argv[4]), argc - 5, argv + 5);
  if (argc == 4 && strcmp(argv[1], "delete") == 0) return delete_topic(argv[2], argv[3]);
  if (argc >= 7 && strcmp(argv[1], "produce") == 0)
    return produce(argv[2], argv[3], atol(argv[4]), atoi(argv[5]), argv[6], argc > 7 ? atoi(argv[7]) : 0,
                   argc > 8 ? argv[8] : NULL);
  if (argc == 8 && strcmp(argv[1], "latency") == 0)
    return latency(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]), atoi(argv[6]), argv[7]);
  if (argc == 8 && strcmp(argv[1], "e2e") == 0)
    return e2e(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]), atoi(argv[6]), argv[7]);
  if (argc == 6 && strcmp(argv[1], "consume") == 0) return consume(argv[2], argv[3], atoi(argv[4]), atol(argv[5]));
  fprintf(stderr,
          "usage: rdkafka_bench create BROKER TOPIC PARTITIONS [KEY=VALUE...]\n"
          "       rdkafka_bench delete BROKER TOPIC\n"
          "       rdkafka_bench produce BROKER TOPIC COUNT SIZE ACKS [PARTITIONS]\n"
          "       rdkafka_bench latency BROKER TOPIC RATE SECONDS SIZE ACKS\n"
          "       rdkafka_bench e2e BROKER TOPIC RATE SECONDS SIZE ACKS\n"
          "       rdkafka_bench consume BROKER TOPIC PARTITIONS COUNT\n");
  return 2;
}
