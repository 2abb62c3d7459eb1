/* The durable delivery floor, open loop: the end-to-end latency no broker
 * that syncs a record before a consumer sees it can go under on this disk,
 * for compare_bench.py's disk-mode latency rows (METHOD.md, "The limits").
 * Test-only.
 *
 *   sync_floor DIR RATE SECONDS SIZE
 *
 * A writer thread appends RATE records of SIZE bytes a second, for SECONDS,
 * at the next offset of DIR/sync-floor.dat, preallocated (fallocate) before
 * the timing as a segment file is; each write is paced to its schedule
 * (clock_nanosleep, 1 ns timer slack), never held back by a sync. A syncer
 * thread does group commit, as a broker's flusher does: it waits for
 * something written, runs fdatasync, and the records written before that
 * fdatasync started are durable when it returns. A record's latency runs
 * from its write to the end of the first sync that started after it: what
 * a consumer of a syncing broker waits at least, without the network, the
 * protocol or the broker's own threads.
 *
 * fio's paced figure (--fdatasync=1 --thinktime) times each sync alone, and
 * its next write waits for it: a slow sync delays the writes behind it
 * without counting that delay (a closed loop). Here the writes keep their
 * schedule, so a record that arrives during a slow sync waits for the rest
 * of it and then for its own, as in a broker.
 *
 * Prints "latency msgs=N e2e_p50_us=.. e2e_p99_us=.. e2e_p999_us=..
 * sync_p50_us=.. sync_p99_us=.. sync_p999_us=.. sync_max_us=.. syncs=S errors=E" (the
 * same keys as raw_e2e for the records) and removes the file. Exit 0; 1 on
 * an I/O error (its message on stderr); 2 on bad arguments. */
#define _GNU_SOURCE
#define _FILE_OFFSET_BITS 64 /* a 32-bit ARM board: files over 2 GiB */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "bench_clock.h"

/* Bounds: samples are kept for every record and every sync, and the file
 * holds every record. */
#define MAX_RECORDS 4000000L
#define MAX_FILE_BYTES (4LL << 30)

typedef struct {
  int fd;
  long total;
  int64_t *written_us; /* per record: when its write returned */
  int64_t *e2e_us;     /* per record: written -> end of its covering sync */
  int64_t *sync_us;    /* per sync: its duration */
  long syncs;
  /* Guarded by mu. */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  long written; /* records [0, written) are in the file */
  int done;     /* the writer has finished (or failed) */
  int failed;   /* a write or a sync failed */
} Floor;

static void *syncer(void *arg) {
  Floor *f = arg;
  long durable = 0;
  pthread_mutex_lock(&f->mu);
  for (;;) {
    while (f->written == durable && !f->done && !f->failed) pthread_cond_wait(&f->cv, &f->mu);
    if (f->failed || f->written == durable) break; /* done, and all of it durable */
    const long covered = f->written;
    pthread_mutex_unlock(&f->mu);
    const int64_t started = bench_now_us();
    const int rc = fdatasync(f->fd);
    const int64_t ended = bench_now_us();
    pthread_mutex_lock(&f->mu);
    if (rc != 0) {
      fprintf(stderr, "sync_floor: fdatasync: %s\n", strerror(errno));
      f->failed = 1;
      break;
    }
    if (f->syncs < f->total) f->sync_us[f->syncs++] = ended - started;
    for (long i = durable; i < covered; i++) f->e2e_us[i] = ended - f->written_us[i];
    durable = covered;
  }
  pthread_mutex_unlock(&f->mu);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: sync_floor DIR RATE SECONDS SIZE\n");
    return 2;
  }
  const long rate = atol(argv[2]), seconds = atol(argv[3]), size = atol(argv[4]);
  if (rate < 1 || rate > 1000000 || seconds < 1 || seconds > 3600 || size < 1 || size > (1L << 20) ||
      rate * seconds > MAX_RECORDS || (long long)rate * seconds * size > MAX_FILE_BYTES) {
    fprintf(stderr, "sync_floor: RATE 1..1000000, SECONDS 1..3600, SIZE 1..1048576, at most %ld records and "
            "%lld bytes\n", MAX_RECORDS, MAX_FILE_BYTES);
    return 2;
  }
  /* Pacing on time: the default 50 us timer slack would be this floor's. */
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  char path[4096];
  if (snprintf(path, sizeof(path), "%s/sync-floor.dat", argv[1]) >= (int)sizeof(path)) return 2;
  Floor f = {0};
  f.total = rate * seconds;
  f.fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (f.fd < 0) {
    fprintf(stderr, "sync_floor: %s: %s\n", path, strerror(errno));
    return 1;
  }
  const off_t file_bytes = (off_t)f.total * size;
  int rc = posix_fallocate(f.fd, 0, file_bytes);
  if (rc == 0 && fsync(f.fd) != 0) rc = errno;
  f.written_us = calloc((size_t)f.total, sizeof(int64_t));
  f.e2e_us = calloc((size_t)f.total, sizeof(int64_t));
  f.sync_us = calloc((size_t)f.total, sizeof(int64_t));
  char *record = malloc((size_t)size);
  if (rc != 0 || !f.written_us || !f.e2e_us || !f.sync_us || !record) {
    fprintf(stderr, "sync_floor: cannot prepare %lld bytes in %s: %s\n", (long long)file_bytes, path,
            rc != 0 ? strerror(rc) : "out of memory");
    unlink(path);
    return 1;
  }
  memset(record, 'r', (size_t)size);
  pthread_mutex_init(&f.mu, NULL);
  pthread_cond_init(&f.cv, NULL);
  pthread_t thread;
  if (pthread_create(&thread, NULL, syncer, &f) != 0) {
    fprintf(stderr, "sync_floor: cannot start the syncer thread\n");
    unlink(path);
    return 1;
  }

  const int64_t start = bench_now_us() + 1000, interval_ns = 1000000000LL / rate;
  long i = 0;
  for (; i < f.total; i++) {
    bench_sleep_until(start + (i * interval_ns) / 1000);
    const ssize_t n = pwrite(f.fd, record, (size_t)size, (off_t)i * size);
    const int64_t now = bench_now_us();
    pthread_mutex_lock(&f.mu);
    if (n != (ssize_t)size) {
      fprintf(stderr, "sync_floor: pwrite: %s\n", n < 0 ? strerror(errno) : "short write");
      f.failed = 1;
    } else {
      f.written_us[i] = now;
      f.written = i + 1;
    }
    const int failed = f.failed;
    pthread_mutex_unlock(&f.mu);
    pthread_cond_signal(&f.cv);
    if (failed) break;
  }
  pthread_mutex_lock(&f.mu);
  f.done = 1;
  pthread_mutex_unlock(&f.mu);
  pthread_cond_signal(&f.cv);
  pthread_join(thread, NULL);
  close(f.fd);
  unlink(path);

  const long timed = f.failed ? 0 : f.total;
  bench_sort(f.e2e_us, timed);
  bench_sort(f.sync_us, f.syncs);
  printf("latency msgs=%ld e2e_p50_us=%lld e2e_p99_us=%lld e2e_p999_us=%lld sync_p50_us=%lld sync_p99_us=%lld "
         "sync_p999_us=%lld sync_max_us=%lld syncs=%ld errors=%ld\n",
         timed, (long long)bench_rank(f.e2e_us, timed, 0.50), (long long)bench_rank(f.e2e_us, timed, 0.99),
         (long long)bench_rank(f.e2e_us, timed, 0.999), (long long)bench_rank(f.sync_us, f.syncs, 0.50),
         (long long)bench_rank(f.sync_us, f.syncs, 0.99), (long long)bench_rank(f.sync_us, f.syncs, 0.999),
         (long long)(f.syncs > 0 ? f.sync_us[f.syncs - 1] : -1), f.syncs, f.total - timed);
  free(f.written_us);
  free(f.e2e_us);
  free(f.sync_us);
  free(record);
  return f.failed ? 1 : 0;
}
