/* librdkafka against Eddy: for each codec (snappy, then zstd) create a
 * 2-partition topic with the Admin API, produce N keyed messages with headers
 * (acks=all), wait for every delivery report, then consume them back with
 * rd_kafka_assign (no consumer group) and compare partition, offset, key,
 * value, headers and timestamp with what the delivery reports promised.
 * The consumer has a group.id (librdkafka requires one for rd_kafka_assign)
 * but never joins, commits or asks for a coordinator.
 *
 * usage: rdkafka_roundtrip BOOTSTRAP COUNT
 * Prints one line per check and "N passed, N failed"; exit 0 when all pass. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

#define PARTITIONS 2
#define TIMEOUT_MS 60000

static int passed;
static int failed;

static void check(const char *name, int ok, const char *detail) {
  if (ok) {
    passed++;
    printf("ok   %s\n", name);
  } else {
    failed++;
    printf("FAIL %s%s%s\n", name, detail ? ": " : "", detail ? detail : "");
  }
  fflush(stdout);
}

/* What the delivery report said about message i. */
struct delivered {
  int done;
  rd_kafka_resp_err_t err;
  int32_t partition;
  int64_t offset;
  int64_t timestamp;
};

static struct delivered *reports;
static int report_count;

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
  (void)rk;
  (void)opaque;
  size_t i = (size_t)(uintptr_t)m->_private;
  rd_kafka_timestamp_type_t type;
  reports[i].done = 1;
  reports[i].err = m->err;
  reports[i].partition = m->partition;
  reports[i].offset = m->offset;
  reports[i].timestamp = rd_kafka_message_timestamp(m, &type);
  report_count++;
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void key_of(int i, char *buf, size_t n) { snprintf(buf, n, "key-%d", i % 101); }

static size_t value_of(int i, const char *codec, char *buf, size_t n) {
  /* Repetitive text so that the codecs have something to compress. */
  size_t len = (size_t)snprintf(buf, n, "%s message %d:", codec, i);
  int repeat = 1 + i % 40;
  for (int r = 0; r < repeat && len + 16 < n; r++) len += (size_t)snprintf(buf + len, n - len, " payload-%d", r);
  return len;
}

static rd_kafka_conf_t *base_conf(const char *bootstrap) {
  char err[512];
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap, err, sizeof err) != RD_KAFKA_CONF_OK) {
    fprintf(stderr, "%s\n", err);
    exit(2);
  }
  return conf;
}

static void set(rd_kafka_conf_t *conf, const char *key, const char *value) {
  char err[512];
  if (rd_kafka_conf_set(conf, key, value, err, sizeof err) != RD_KAFKA_CONF_OK) {
    fprintf(stderr, "config %s=%s: %s\n", key, value, err);
    exit(2);
  }
}

static void create_topic(rd_kafka_t *rk, const char *topic, const char *codec) {
  char err[512];
  char name[256];
  rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(topic, PARTITIONS, 1, err, sizeof err);
  rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
  rd_kafka_CreateTopics(rk, &nt, 1, NULL, q);
  rd_kafka_event_t *ev = rd_kafka_queue_poll(q, TIMEOUT_MS);
  const rd_kafka_CreateTopics_result_t *res = ev ? rd_kafka_event_CreateTopics_result(ev) : NULL;
  size_t n = 0;
  const rd_kafka_topic_result_t **results = res ? rd_kafka_CreateTopics_result_topics(res, &n) : NULL;
  snprintf(name, sizeof name, "%s: CreateTopics %s with %d partitions", codec, topic, PARTITIONS);
  if (!ev || rd_kafka_event_error(ev) || n != 1 || rd_kafka_topic_result_error(results[0])) {
    snprintf(err, sizeof err, "%s",
             !ev ? "no result"
                 : rd_kafka_event_error(ev) ? rd_kafka_event_error_string(ev)
                                            : n == 1 ? rd_kafka_err2str(rd_kafka_topic_result_error(results[0]))
                                                     : "wrong result count");
    check(name, 0, err);
  } else {
    check(name, 1, NULL);
  }
  if (ev) rd_kafka_event_destroy(ev);
  rd_kafka_queue_destroy(q);
  rd_kafka_NewTopic_destroy(nt);
}

static void roundtrip(const char *bootstrap, const char *codec, int count) {
  char topic[64], name[256], detail[512], err[512], key[64];
  static char value[1024];
  snprintf(topic, sizeof topic, "rdkafka-%s", codec);
  int64_t base_ts = (int64_t)time(NULL) * 1000 - 86400000;

  /* -- produce ---------------------------------------------------------- */
  rd_kafka_conf_t *conf = base_conf(bootstrap);
  set(conf, "compression.codec", codec);
  set(conf, "acks", "all");
  set(conf, "linger.ms", "10");
  set(conf, "enable.idempotence", "false");
  rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
  rd_kafka_t *producer = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!producer) {
    fprintf(stderr, "rd_kafka_new: %s\n", err);
    exit(2);
  }
  create_topic(producer, topic, codec);

  reports = calloc((size_t)count, sizeof *reports);
  report_count = 0;
  int produce_errors = 0;
  for (int i = 0; i < count; i++) {
    key_of(i, key, sizeof key);
    size_t len = value_of(i, codec, value, sizeof value);
    char seq[16];
    snprintf(seq, sizeof seq, "%d", i);
    rd_kafka_resp_err_t e;
    for (;;) {
      e = rd_kafka_producev(producer, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(i % PARTITIONS),
                            RD_KAFKA_V_KEY(key, strlen(key)), RD_KAFKA_V_VALUE(value, len),
                            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_TIMESTAMP(base_ts + i),
                            RD_KAFKA_V_HEADER("seq", seq, (ssize_t)strlen(seq)),
                            RD_KAFKA_V_HEADER("codec", codec, (ssize_t)strlen(codec)),
                            RD_KAFKA_V_OPAQUE((void *)(uintptr_t)i), RD_KAFKA_V_END);
      if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) break;
      rd_kafka_poll(producer, 100); /* serve delivery reports to make room */
    }
    if (e) produce_errors++;
    rd_kafka_poll(producer, 0);
  }
  snprintf(name, sizeof name, "%s: %d messages queued", codec, count);
  check(name, produce_errors == 0, NULL);
  rd_kafka_resp_err_t flushed = rd_kafka_flush(producer, TIMEOUT_MS);
  snprintf(name, sizeof name, "%s: flush completes", codec);
  check(name, flushed == RD_KAFKA_RESP_ERR_NO_ERROR, rd_kafka_err2str(flushed));

  int failed_reports = 0, bad_offsets = 0;
  int64_t next_offset[PARTITIONS] = {0};
  for (int i = 0; i < count; i++) {
    if (!reports[i].done || reports[i].err) {
      if (failed_reports++ == 0)
        snprintf(detail, sizeof detail, "message %d: %s", i,
                 reports[i].done ? rd_kafka_err2str(reports[i].err) : "no report");
      continue;
    }
    /* One producer, in-order delivery per partition: offsets 0, 1, 2, ... */
    int p = i % PARTITIONS;
    if (reports[i].partition != p || reports[i].offset != next_offset[p]) bad_offsets++;
    next_offset[p] = reports[i].offset + 1;
  }
  snprintf(name, sizeof name, "%s: every delivery report succeeded", codec);
  check(name, failed_reports == 0 && report_count == count, failed_reports ? detail : NULL);
  snprintf(name, sizeof name, "%s: delivered offsets contiguous per partition in send order", codec);
  check(name, bad_offsets == 0, NULL);
  rd_kafka_destroy(producer);

  /* -- consume with rd_kafka_assign --------------------------------------- */
  conf = base_conf(bootstrap);
  /* librdkafka's rd_kafka_assign needs a group.id, but with assign alone
   * (no subscribe, no commits) the group is never joined; librdkafka sees
   * from ApiVersions that Eddy has no FindCoordinator and does not ask. */
  set(conf, "group.id", "eddy-it-unused");
  set(conf, "enable.auto.commit", "false");
  set(conf, "enable.auto.offset.store", "false");
  set(conf, "fetch.wait.max.ms", "100");
  rd_kafka_t *consumer = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (!consumer) {
    fprintf(stderr, "rd_kafka_new consumer: %s\n", err);
    exit(2);
  }
  rd_kafka_poll_set_consumer(consumer);
  rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(PARTITIONS);
  for (int p = 0; p < PARTITIONS; p++)
    rd_kafka_topic_partition_list_add(parts, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_resp_err_t assigned = rd_kafka_assign(consumer, parts);
  snprintf(name, sizeof name, "%s: rd_kafka_assign", codec);
  check(name, assigned == RD_KAFKA_RESP_ERR_NO_ERROR, rd_kafka_err2str(assigned));
  rd_kafka_topic_partition_list_destroy(parts);
  if (assigned) {
    rd_kafka_destroy(consumer);
    free(reports);
    return;
  }

  int received = 0, mismatches = 0, consume_errors = 0, duplicates = 0;
  char *seen = calloc((size_t)count, 1);
  int64_t deadline = now_ms() + TIMEOUT_MS;
  detail[0] = 0;
  while (received < count && now_ms() < deadline) {
    rd_kafka_message_t *m = rd_kafka_consumer_poll(consumer, 200);
    if (!m) continue;
    if (m->err) {
      if (consume_errors++ == 0) snprintf(detail, sizeof detail, "%s", rd_kafka_message_errstr(m));
      rd_kafka_message_destroy(m);
      continue;
    }
    /* Which message is this? Partition p, offset o holds i = o * PARTITIONS + p. */
    int64_t i64 = m->offset * PARTITIONS + m->partition;
    if (i64 < 0 || i64 >= count) {
      mismatches++;
      rd_kafka_message_destroy(m);
      continue;
    }
    int i = (int)i64;
    if (seen[i]) duplicates++;
    seen[i] = 1;
    received++;
    key_of(i, key, sizeof key);
    size_t len = value_of(i, codec, value, sizeof value);
    rd_kafka_timestamp_type_t type;
    int64_t ts = rd_kafka_message_timestamp(m, &type);
    rd_kafka_headers_t *headers = NULL;
    const void *hv = NULL;
    size_t hlen = 0;
    char seq[16];
    snprintf(seq, sizeof seq, "%d", i);
    int headers_ok = rd_kafka_message_headers(m, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR &&
                     rd_kafka_header_cnt(headers) == 2 &&
                     rd_kafka_header_get_last(headers, "seq", &hv, &hlen) == RD_KAFKA_RESP_ERR_NO_ERROR &&
                     hlen == strlen(seq) && memcmp(hv, seq, hlen) == 0 &&
                     rd_kafka_header_get_last(headers, "codec", &hv, &hlen) == RD_KAFKA_RESP_ERR_NO_ERROR &&
                     hlen == strlen(codec) && memcmp(hv, codec, hlen) == 0;
    int ok = m->key_len == strlen(key) && memcmp(m->key, key, m->key_len) == 0 && m->len == len &&
             memcmp(m->payload, value, len) == 0 && headers_ok && type == RD_KAFKA_TIMESTAMP_CREATE_TIME &&
             ts == base_ts + i && ts == reports[i].timestamp;
    if (!ok && mismatches++ == 0)
      snprintf(detail, sizeof detail, "message %d (partition %" PRId32 " offset %" PRId64 ") differs", i,
               m->partition, m->offset);
    rd_kafka_message_destroy(m);
  }
  snprintf(name, sizeof name, "%s: consumed %d of %d", codec, received, count);
  check(name, received == count && duplicates == 0, NULL);
  snprintf(name, sizeof name, "%s: keys, values, headers, timestamps identical", codec);
  check(name, mismatches == 0 && consume_errors == 0, detail);

  /* High watermarks as the consumer sees them (ListOffsets). */
  for (int p = 0; p < PARTITIONS; p++) {
    int64_t low = -1, high = -1;
    rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(consumer, topic, p, &low, &high, 10000);
    int64_t want = count / PARTITIONS + (p < count % PARTITIONS ? 1 : 0);
    snprintf(name, sizeof name, "%s: partition %d watermarks [0, %" PRId64 ")", codec, p, want);
    snprintf(detail, sizeof detail, "%s: [%" PRId64 ", %" PRId64 ")", rd_kafka_err2str(e), low, high);
    check(name, e == RD_KAFKA_RESP_ERR_NO_ERROR && low == 0 && high == want, detail);
  }
  rd_kafka_consumer_close(consumer);
  rd_kafka_destroy(consumer);
  free(seen);
  free(reports);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s BOOTSTRAP COUNT\n", argv[0]);
    return 2;
  }
  int count = atoi(argv[2]);
  if (count <= 0) return 2;
  printf("librdkafka %s\n", rd_kafka_version_str());
  roundtrip(argv[1], "snappy", count);
  roundtrip(argv[1], "zstd", count);
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 && passed > 0 ? 0 : 1;
}
