/* What handing a sync to another thread costs, next to syncing on the event
 * loop's own thread: the question behind write_path.md's "Would io_uring or
 * a sync on the reactor remove the hand-offs?". Test-only; no broker, no
 * network.
 *
 *   sync_handoff DIR RATE SECONDS SIZE BUSY ROUNDS [SYNC_NICE]
 *
 * An event loop (one thread in epoll_wait on an eventfd, as Eddy's reactor
 * waits in Asio's epoll) writes a record of SIZE bytes RATE times a second,
 * at the next offset of DIR/sync-handoff.dat (preallocated, 64 MiB, reused
 * from the start when full), and waits until it knows the record is durable.
 * A record's latency runs from its pwrite to that moment. Three ways:
 *
 *   loop    the loop calls fdatasync itself (no hand-off; the loop is blocked
 *           for the sync, which a broker's reactor must not be);
 *   thread  the loop wakes a sync thread (mutex and condition variable, as
 *           Eddy's flusher is woken), which runs fdatasync and signals the
 *           eventfd under a mutex (as Asio's post does), waking the loop;
 *   uring   the loop submits an fdatasync to io_uring (IORING_OP_FSYNC with
 *           IORING_FSYNC_DATASYNC), whose completion signals the eventfd
 *           (io_uring_register_eventfd): the kernel's worker does the sync.
 *           Needs liburing at build time (liburing-dev); without it, or when
 *           the kernel refuses io_uring, the mode is reported as unavailable.
 *
 * BUSY threads spin beside the loop the whole time (0 for an idle machine;
 * as many as there are cores for one whose CPUs are all taken, as a broker's
 * are by its clients on a 2-core gateway). The modes take turns: each of
 * ROUNDS rounds runs every mode for SECONDS, so that a slow spell of the
 * disk falls on all of them. SYNC_NICE (default 0, -20..19) is the sync
 * thread's nice value in the thread mode: with every CPU taken, whether a
 * priority removes the hand-off's tail (a negative value needs root or
 * CAP_SYS_NICE; refused, the program exits 1).
 *
 * Prints per mode and round "mode=M round=R busy=B sync_nice=S msgs=N p50_us=..
 * p90_us=.. p99_us=.. max_us=..", then per mode "mode=M busy=B sync_nice=S
 * median_p50_us=.. median_p99_us=.." over the rounds, and removes the file.
 * Exit 0; 1 on an I/O error (its message on stderr); 2 on bad arguments. */
#define _GNU_SOURCE
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef EDDY_BENCH_HAVE_LIBURING
#include <liburing.h>
#endif

#include "bench_clock.h"

#define FILE_BYTES (64LL << 20)
#define MAX_RECORDS 1000000L
#define MAX_BUSY 16
#define MAX_ROUNDS 20

enum Mode { MODE_LOOP, MODE_THREAD, MODE_URING, MODE_COUNT };
static const char *const kModeNames[MODE_COUNT] = {"loop", "thread", "uring"};

static int file_fd = -1;
static int event_fd = -1;
static int epoll_fd = -1;
static atomic_int spinning = 1;

/* The sync thread of MODE_THREAD. Guarded by mu. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int sync_wanted;
static int sync_stop;
static int sync_failed; /* errno of a failed fdatasync, 0 if none */
static int sync_started; /* the thread has set its nice value (or failed to) */
static int sync_nice_failed; /* errno of that, 0 if none */
static int sync_nice;    /* set once by main before any thread starts */

static void *spin(void *arg) {
  (void)arg;
  volatile uint64_t n = 0;
  while (atomic_load_explicit(&spinning, memory_order_relaxed)) n++;
  return NULL;
}

static void signal_loop(void) {
  uint64_t one = 1;
  if (write(event_fd, &one, sizeof(one)) != (ssize_t)sizeof(one)) abort(); /* an eventfd write cannot fail here */
}

static void *sync_thread(void *arg) {
  (void)arg;
  const int nice_failed =
      sync_nice != 0 && setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), sync_nice) != 0 ? errno : 0;
  pthread_mutex_lock(&mu);
  sync_nice_failed = nice_failed;
  sync_started = 1;
  pthread_cond_broadcast(&cv);
  for (;;) {
    while (!sync_wanted && !sync_stop) pthread_cond_wait(&cv, &mu);
    if (sync_stop) break;
    sync_wanted = 0;
    pthread_mutex_unlock(&mu);
    int failed = fdatasync(file_fd) != 0 ? errno : 0;
    pthread_mutex_lock(&mu);
    if (failed) sync_failed = failed;
    signal_loop();
  }
  pthread_mutex_unlock(&mu);
  return NULL;
}

/* Blocks in epoll_wait until the eventfd fires, then drains it. */
static void wait_for_signal(void) {
  struct epoll_event ev;
  while (epoll_wait(epoll_fd, &ev, 1, -1) != 1) {
  }
  uint64_t value;
  if (read(event_fd, &value, sizeof(value)) != (ssize_t)sizeof(value)) abort();
}

/* One run of mode: n records paced at rate; latencies into lat. Returns 0,
 * 1 on an I/O error, 3 when the mode is unavailable here (said on stdout). */
static int run_mode(enum Mode mode, int rate, long n, const char *record, int size, int64_t *lat) {
  pthread_t syncer;
#ifdef EDDY_BENCH_HAVE_LIBURING
  struct io_uring ring;
#endif
  if (mode == MODE_THREAD) {
    sync_stop = sync_wanted = sync_failed = sync_started = sync_nice_failed = 0;
    if (pthread_create(&syncer, NULL, sync_thread, NULL) != 0) return 1;
    pthread_mutex_lock(&mu);
    while (!sync_started) pthread_cond_wait(&cv, &mu);
    const int nice_failed = sync_nice_failed;
    pthread_mutex_unlock(&mu);
    if (nice_failed) {
      fprintf(stderr, "sync_handoff: the sync thread's nice %d: %s\n", sync_nice, strerror(nice_failed));
      pthread_mutex_lock(&mu);
      sync_stop = 1;
      pthread_cond_broadcast(&cv);
      pthread_mutex_unlock(&mu);
      pthread_join(syncer, NULL);
      return 1;
    }
  } else if (mode == MODE_URING) {
#ifdef EDDY_BENCH_HAVE_LIBURING
    int rc = io_uring_queue_init(4, &ring, 0);
    if (rc < 0) {
      printf("mode=uring unavailable: io_uring_queue_init: %s\n", strerror(-rc));
      return 3;
    }
    rc = io_uring_register_eventfd(&ring, event_fd);
    if (rc < 0) {
      printf("mode=uring unavailable: io_uring_register_eventfd: %s\n", strerror(-rc));
      io_uring_queue_exit(&ring);
      return 3;
    }
#else
    printf("mode=uring unavailable: built without liburing (liburing-dev)\n");
    return 3;
#endif
  }
  int status = 0;
  off_t offset = 0;
  const int64_t start = bench_now_us() + 1000, interval_ns = 1000000000LL / rate;
  for (long i = 0; i < n && status == 0; i++) {
    bench_sleep_until(start + (i * interval_ns) / 1000);
    const int64_t began = bench_now_us();
    if (pwrite(file_fd, record, (size_t)size, offset) != size) {
      perror("pwrite");
      status = 1;
      break;
    }
    offset = offset + size + size > FILE_BYTES ? 0 : offset + size;
    if (mode == MODE_LOOP) {
      if (fdatasync(file_fd) != 0) {
        perror("fdatasync");
        status = 1;
      }
    } else if (mode == MODE_THREAD) {
      pthread_mutex_lock(&mu);
      sync_wanted = 1;
      pthread_cond_broadcast(&cv);
      pthread_mutex_unlock(&mu);
      wait_for_signal();
      pthread_mutex_lock(&mu);
      if (sync_failed) {
        fprintf(stderr, "fdatasync: %s\n", strerror(sync_failed));
        status = 1;
      }
      pthread_mutex_unlock(&mu);
    } else {
#ifdef EDDY_BENCH_HAVE_LIBURING
      struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
      io_uring_prep_fsync(sqe, file_fd, IORING_FSYNC_DATASYNC);
      int rc = io_uring_submit(&ring);
      struct io_uring_cqe *cqe = NULL;
      if (rc == 1) {
        wait_for_signal();
        rc = io_uring_wait_cqe(&ring, &cqe);
      }
      if (rc < 0 || cqe == NULL || cqe->res < 0) {
        fprintf(stderr, "io_uring fdatasync: %s\n", strerror(rc < 0 ? -rc : cqe != NULL ? -cqe->res : EIO));
        status = 1;
      }
      if (cqe != NULL) io_uring_cqe_seen(&ring, cqe);
#endif
    }
    lat[i] = bench_now_us() - began;
  }
  if (mode == MODE_THREAD) {
    pthread_mutex_lock(&mu);
    sync_stop = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    pthread_join(syncer, NULL);
  }
#ifdef EDDY_BENCH_HAVE_LIBURING
  if (mode == MODE_URING) io_uring_queue_exit(&ring);
#endif
  return status;
}

static int64_t median(int64_t *v, int n) {
  bench_sort(v, n);
  return n > 0 ? v[(n - 1) / 2] : -1;
}

int main(int argc, char **argv) {
  if (argc != 7 && argc != 8) {
    fprintf(stderr, "usage: sync_handoff DIR RATE SECONDS SIZE BUSY ROUNDS [SYNC_NICE]\n");
    return 2;
  }
  const char *dir = argv[1];
  const int rate = atoi(argv[2]), seconds = atoi(argv[3]), size = atoi(argv[4]), busy = atoi(argv[5]),
            rounds = atoi(argv[6]);
  const long n = (long)rate * seconds;
  char *nice_end = NULL;
  const long nice = argc == 8 ? strtol(argv[7], &nice_end, 10) : 0;
  if (rate < 1 || rate > 100000 || seconds < 1 || n > MAX_RECORDS || size < 1 || size > (1 << 20) || busy < 0 ||
      busy > MAX_BUSY || rounds < 1 || rounds > MAX_ROUNDS || nice < -20 || nice > 19 ||
      (nice_end != NULL && (nice_end == argv[7] || *nice_end != 0))) {
    fprintf(stderr,
            "sync_handoff: RATE 1..100000, RATE*SECONDS <= %ld, SIZE 1..1048576, BUSY 0..%d, ROUNDS 1..%d, "
            "SYNC_NICE -20..19\n",
            MAX_RECORDS, MAX_BUSY, MAX_ROUNDS);
    return 2;
  }
  sync_nice = (int)nice;
  char path[4096];
  if (snprintf(path, sizeof(path), "%s/sync-handoff.dat", dir) >= (int)sizeof(path)) return 2;
  file_fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (file_fd < 0) {
    perror(path);
    return 1;
  }
  int rc = posix_fallocate(file_fd, 0, FILE_BYTES);
  if (rc != 0 || fdatasync(file_fd) != 0) {
    fprintf(stderr, "%s: preallocation: %s\n", path, strerror(rc != 0 ? rc : errno));
    unlink(path);
    return 1;
  }
  event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  struct epoll_event ev = {.events = EPOLLIN, .data = {.fd = event_fd}};
  if (event_fd < 0 || epoll_fd < 0 || epoll_ctl(epoll_fd, EPOLL_CTL_ADD, event_fd, &ev) != 0) {
    perror("eventfd/epoll");
    unlink(path);
    return 1;
  }
  char *record = malloc((size_t)size);
  int64_t *lat = malloc((size_t)n * sizeof(int64_t));
  if (!record || !lat) return 1;
  memset(record, 'x', (size_t)size);

  pthread_t spinners[MAX_BUSY];
  for (int i = 0; i < busy; i++) pthread_create(&spinners[i], NULL, spin, NULL);

  int64_t p50[MODE_COUNT][MAX_ROUNDS], p99[MODE_COUNT][MAX_ROUNDS];
  int done[MODE_COUNT] = {0}, unavailable[MODE_COUNT] = {0}, status = 0;
  for (int r = 0; r < rounds && status == 0; r++) {
    for (int m = 0; m < MODE_COUNT && status == 0; m++) {
      if (unavailable[m]) continue;
      int s = run_mode((enum Mode)m, rate, n, record, size, lat);
      if (s == 3) {
        unavailable[m] = 1;
        continue;
      }
      status = s;
      if (s != 0) break;
      bench_sort(lat, n);
      p50[m][done[m]] = bench_rank(lat, n, 0.50);
      p99[m][done[m]] = bench_rank(lat, n, 0.99);
      done[m]++;
      printf("mode=%s round=%d busy=%d sync_nice=%d msgs=%ld p50_us=%lld p90_us=%lld p99_us=%lld max_us=%lld\n",
             kModeNames[m], r + 1, busy, m == MODE_THREAD ? sync_nice : 0, n, (long long)bench_rank(lat, n, 0.50), (long long)bench_rank(lat, n, 0.90),
             (long long)bench_rank(lat, n, 0.99), (long long)lat[n - 1]);
      fflush(stdout);
    }
  }
  atomic_store(&spinning, 0);
  for (int i = 0; i < busy; i++) pthread_join(spinners[i], NULL);
  for (int m = 0; m < MODE_COUNT && status == 0; m++) {
    if (done[m] == 0) continue;
    printf("mode=%s busy=%d sync_nice=%d median_p50_us=%lld median_p99_us=%lld\n", kModeNames[m], busy,
           m == MODE_THREAD ? sync_nice : 0,
           (long long)median(p50[m], done[m]), (long long)median(p99[m], done[m]));
  }
  unlink(path);
  free(record);
  free(lat);
  return status;
}
