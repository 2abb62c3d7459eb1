/* librdkafka idempotent producer under faults: sends COUNT numbered messages
 * (value "%09d" of the number, message i to partition i % PARTITIONS, no
 * compression) with enable.idempotence=true and max.in.flight 5, through
 * whatever the driver (test_idempotence_faults.py) does to the connections
 * and the broker meanwhile, and waits for every delivery report.
 *
 * usage: rdkafka_idempotence BOOTSTRAP TOPIC COUNT PARTITIONS [RATE]
 * RATE (messages/s, 0 or absent: as fast as possible) spreads the run over
 * time so that the driver's faults hit it throughout.
 * stdout: "delivered N" every 1000 reports (the driver paces its faults on
 * it), then "produced N delivered N failed N" and exit 0 when every message
 * was delivered without error (a fatal idempotence error fails too). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

#define FLUSH_TIMEOUT_MS 300000

static long delivered;
static long failed;
static int fatal;

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
  (void)rk;
  (void)opaque;
  if (m->err) {
    if (failed < 10) fprintf(stderr, "delivery failed: %s\n", rd_kafka_err2str(m->err));
    failed++;
  } else {
    delivered++;
    if (delivered % 1000 == 0) {
      printf("delivered %ld\n", delivered);
      fflush(stdout);
    }
  }
}

static void on_error(rd_kafka_t *rk, int err, const char *reason, void *opaque) {
  (void)opaque;
  if (err == RD_KAFKA_RESP_ERR__FATAL) {
    char why[512];
    rd_kafka_resp_err_t orig = rd_kafka_fatal_error(rk, why, sizeof why);
    fprintf(stderr, "FATAL: %s: %s\n", rd_kafka_err2name(orig), why);
    fatal = 1;
  }
  /* Transport errors are expected: the proxy cuts connections. */
  (void)reason;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void set(rd_kafka_conf_t *conf, const char *key, const char *value) {
  char err[512];
  if (rd_kafka_conf_set(conf, key, value, err, sizeof err) != RD_KAFKA_CONF_OK) {
    fprintf(stderr, "%s=%s: %s\n", key, value, err);
    exit(2);
  }
}

int main(int argc, char **argv) {
  if (argc != 5 && argc != 6) {
    fprintf(stderr, "usage: %s BOOTSTRAP TOPIC COUNT PARTITIONS [RATE]\n", argv[0]);
    return 2;
  }
  const char *topic = argv[2];
  long count = atol(argv[3]);
  int partitions = atoi(argv[4]);
  double rate = argc == 6 ? atof(argv[5]) : 0;
  char err[512];
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  set(conf, "bootstrap.servers", argv[1]);
  /* RDKAFKA_IDEMPOTENCE=false: the control run, which must fail the
   * driver's checks (duplicates or reordering) under the same faults. */
  const char *idempotence = getenv("RDKAFKA_IDEMPOTENCE");
  set(conf, "enable.idempotence", idempotence ? idempotence : "true");
  set(conf, "max.in.flight.requests.per.connection", "5");
  set(conf, "acks", "all");
  set(conf, "compression.type", "none");
  set(conf, "linger.ms", "5");
  set(conf, "batch.num.messages", "200");
  set(conf, "message.timeout.ms", "240000");
  set(conf, "retry.backoff.ms", "50");
  set(conf, "reconnect.backoff.ms", "20");
  set(conf, "reconnect.backoff.max.ms", "500");
  set(conf, "socket.timeout.ms", "5000");
  set(conf, "topic.metadata.refresh.interval.ms", "1000");
  rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
  rd_kafka_conf_set_error_cb(conf, on_error);
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!rk) {
    fprintf(stderr, "rd_kafka_new: %s\n", err);
    return 2;
  }
  long produced = 0;
  char value[24];
  const double started = now_seconds();
  for (long i = 0; i < count && !fatal; i++) {
    if (rate > 0 && i % 100 == 0) {
      /* rd_kafka_poll returns early when it serves a callback. */
      double ahead;
      while ((ahead = (double)i / rate - (now_seconds() - started)) > 0) rd_kafka_poll(rk, (int)(ahead * 1000) + 1);
    }
    snprintf(value, sizeof value, "%09ld", i);
    for (;;) {
      rd_kafka_resp_err_t e = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic),
                                                RD_KAFKA_V_PARTITION((int32_t)(i % partitions)),
                                                RD_KAFKA_V_VALUE(value, strlen(value)),
                                                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
      if (e == RD_KAFKA_RESP_ERR_NO_ERROR) {
        produced++;
        break;
      }
      if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        fprintf(stderr, "produce %ld: %s\n", i, rd_kafka_err2str(e));
        fatal = 1;
        break;
      }
      rd_kafka_poll(rk, 50);
    }
    rd_kafka_poll(rk, 0);
  }
  rd_kafka_resp_err_t flushed = rd_kafka_flush(rk, FLUSH_TIMEOUT_MS);
  printf("produced %ld delivered %ld failed %ld%s%s\n", produced, delivered, failed,
         flushed ? " flush: " : "", flushed ? rd_kafka_err2str(flushed) : "");
  fflush(stdout);
  rd_kafka_destroy(rk);
  return (produced == count && delivered == count && failed == 0 && !fatal && !flushed) ? 0 : 1;
}
