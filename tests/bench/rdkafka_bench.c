/* A small librdkafka load generator for benchmarking a Kafka-protocol broker
 * (Eddy or any other). Test-only: it is not part of the eddy binary.
 *
 *   rdkafka_bench produce BROKER TOPIC COUNT SIZE ACKS [PARTITIONS]
 *       sends COUNT messages of SIZE bytes as fast as the client allows,
 *       waits for every delivery report; prints one line:
 *       "produce msgs=N bytes=B seconds=S msgs_per_s=X mib_per_s=Y errors=E"
 *   rdkafka_bench latency BROKER TOPIC RATE SECONDS SIZE ACKS
 *       sends RATE messages per second for SECONDS, one at a time (no
 *       batching delay), and prints delivery latency percentiles:
 *       "latency msgs=N p50_us=A p99_us=B p999_us=C errors=E"
 *   rdkafka_bench consume BROKER TOPIC PARTITIONS COUNT
 *       reads COUNT messages from the beginning of every partition (manual
 *       assignment) and prints "consume msgs=N bytes=B seconds=S ..."
 * Exit code 0 when every message was delivered or read, 1 otherwise. */
#include <librdkafka/rdkafka.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static long delivered = 0, errors = 0;
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
  if (latencies && m->_private && latency_count < latency_cap) {
    int64_t sent = *(int64_t *)m->_private;
    latencies[latency_count++] = now_us() - sent;
  }
}

static void set(rd_kafka_conf_t *conf, const char *key, const char *value) {
  char err[256];
  if (rd_kafka_conf_set(conf, key, value, err, sizeof(err)) != RD_KAFKA_CONF_OK) {
    fprintf(stderr, "%s=%s: %s\n", key, value, err);
    exit(2);
  }
}

static rd_kafka_t *make_producer(const char *broker, const char *acks, int low_latency) {
  char err[256];
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  set(conf, "bootstrap.servers", broker);
  set(conf, "acks", acks);
  set(conf, "linger.ms", low_latency ? "0" : "5");
  set(conf, "batch.size", "1000000");
  set(conf, "queue.buffering.max.messages", "1000000");
  set(conf, "queue.buffering.max.kbytes", "1048576");
  set(conf, "compression.codec", "none");
  rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
  if (!rk) {
    fprintf(stderr, "producer: %s\n", err);
    exit(2);
  }
  return rk;
}

static int cmp64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static int produce(const char *broker, const char *topic, long count, int size, const char *acks, int partitions) {
  rd_kafka_t *rk = make_producer(broker, acks, 0);
  char *payload = malloc((size_t)size);
  for (int i = 0; i < size; i++) payload[i] = (char)('a' + i % 26);
  int64_t start = now_us();
  for (long i = 0; i < count; i++) {
    int32_t partition = partitions > 0 ? (int32_t)(i % partitions) : RD_KAFKA_PARTITION_UA;
    for (;;) {
      rd_kafka_resp_err_t e = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(partition),
                                                RD_KAFKA_V_VALUE(payload, (size_t)size), RD_KAFKA_V_END);
      if (e == RD_KAFKA_RESP_ERR_NO_ERROR) break;
      if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        fprintf(stderr, "produce: %s\n", rd_kafka_err2str(e));
        return 1;
      }
      rd_kafka_poll(rk, 10);
    }
    if ((i & 1023) == 0) rd_kafka_poll(rk, 0);
  }
  rd_kafka_flush(rk, 120000);
  double seconds = (double)(now_us() - start) / 1e6;
  double bytes = (double)count * size;
  printf("produce msgs=%ld bytes=%.0f seconds=%.3f msgs_per_s=%.0f mib_per_s=%.2f errors=%ld\n", delivered, bytes,
         seconds, delivered / seconds, bytes / seconds / 1048576.0, errors);
  rd_kafka_destroy(rk);
  free(payload);
  return delivered == count && errors == 0 ? 0 : 1;
}

static int latency(const char *broker, const char *topic, int rate, int seconds, int size, const char *acks) {
  rd_kafka_t *rk = make_producer(broker, acks, 1);
  long total = (long)rate * seconds;
  latency_cap = total;
  latencies = calloc((size_t)total, sizeof(int64_t));
  int64_t *sent_at = calloc((size_t)total, sizeof(int64_t));
  char *payload = calloc(1, (size_t)size);
  int64_t start = now_us(), interval = 1000000 / rate;
  for (long i = 0; i < total; i++) {
    int64_t due = start + i * interval;
    while (now_us() < due) rd_kafka_poll(rk, 0);
    sent_at[i] = now_us();
    rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0), RD_KAFKA_V_VALUE(payload, (size_t)size),
                      RD_KAFKA_V_OPAQUE(&sent_at[i]), RD_KAFKA_V_END);
    rd_kafka_poll(rk, 0);
  }
  rd_kafka_flush(rk, 60000);
  qsort(latencies, (size_t)latency_count, sizeof(int64_t), cmp64);
  long n = latency_count;
  printf("latency msgs=%ld p50_us=%lld p99_us=%lld p999_us=%lld errors=%ld\n", n,
         n ? (long long)latencies[n / 2] : -1LL, n ? (long long)latencies[(n * 99) / 100] : -1LL,
         n ? (long long)latencies[(n * 999) / 1000] : -1LL, errors);
  rd_kafka_destroy(rk);
  return n == total && errors == 0 ? 0 : 1;
}

static int consume(const char *broker, const char *topic, int partitions, long count) {
  char err[256];
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  set(conf, "bootstrap.servers", broker);
  set(conf, "group.id", "rdkafka-bench-unused"); /* librdkafka wants one even for assign() */
  set(conf, "enable.auto.commit", "false");
  set(conf, "fetch.max.bytes", "52428800");
  set(conf, "max.partition.fetch.bytes", "4194304");
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
  if (!rk) {
    fprintf(stderr, "consumer: %s\n", err);
    return 2;
  }
  rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; p++)
    rd_kafka_topic_partition_list_add(list, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_assign(rk, list);
  rd_kafka_topic_partition_list_destroy(list);
  long got = 0;
  double bytes = 0;
  int64_t start = 0, deadline = now_us() + 120 * 1000000LL;
  while (got < count && now_us() < deadline) {
    rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 500);
    if (!m) continue;
    if (!m->err) {
      if (got == 0) start = now_us();
      got++;
      bytes += (double)m->len;
    }
    rd_kafka_message_destroy(m);
  }
  double seconds = (double)(now_us() - start) / 1e6;
  printf("consume msgs=%ld bytes=%.0f seconds=%.3f msgs_per_s=%.0f mib_per_s=%.2f\n", got, bytes, seconds,
         got / seconds, bytes / seconds / 1048576.0);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return got == count ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc >= 7 && strcmp(argv[1], "produce") == 0)
    return produce(argv[2], argv[3], atol(argv[4]), atoi(argv[5]), argv[6], argc > 7 ? atoi(argv[7]) : 0);
  if (argc == 8 && strcmp(argv[1], "latency") == 0)
    return latency(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]), atoi(argv[6]), argv[7]);
  if (argc == 6 && strcmp(argv[1], "consume") == 0) return consume(argv[2], argv[3], atoi(argv[4]), atol(argv[5]));
  fprintf(stderr,
          "usage: rdkafka_bench produce BROKER TOPIC COUNT SIZE ACKS [PARTITIONS]\n"
          "       rdkafka_bench latency BROKER TOPIC RATE SECONDS SIZE ACKS\n"
          "       rdkafka_bench consume BROKER TOPIC PARTITIONS COUNT\n");
  return 2;
}
