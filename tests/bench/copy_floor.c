/* The copy floor: the CPU a broker cannot go under on this machine, for
 * compare_bench.py (METHOD.md, "The limits"). Test-only.
 *
 *   copy_floor write DIR MIB
 *       a thread sends MIB MiB over a loopback TCP connection; the measured
 *       thread receives them into a 1 MiB buffer and pwrites each piece at
 *       the next offset of DIR/copy-floor.dat, preallocated (fallocate)
 *       before the timing as a segment file is: the two copies of every
 *       produced byte (out of the socket, into the page cache) and nothing
 *       else. The file is removed afterwards.
 *   copy_floor write-sync DIR MIB
 *       the same, and the measured thread fdatasyncs the file after every
 *       MiB written (and at the end): the floor of a produce path that
 *       makes every batch durable, as Eddy's default gateway durability
 *       does (eddy.acks.all.waits.for=disk: its flusher syncs each batch of
 *       about a MiB in the bench). The writeback that fdatasync starts is
 *       then charged to this thread, as it is to a syncing broker, instead
 *       of to the kernel's flusher threads.
 *   copy_floor sendfile FILE...
 *       the measured thread sendfile(2)s the files to a loopback TCP
 *       connection whose reader (another thread) only counts: the zero-copy
 *       serving of a consume, and nothing else.
 *
 * Prints "copyfloor bytes=B seconds=S cpu_s=C": B bytes moved, S wall
 * seconds, C the CPU seconds (user + system) of the measured thread alone
 * (CLOCK_THREAD_CPUTIME_ID), so the peer thread's share, the client's in a
 * broker run, is not in it. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (1u << 20)

static void die(const char *what) {
  perror(what);
  exit(1);
}

static double clock_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A connected pair of loopback TCP sockets: *a accepted, *b connected. */
static void loopback_pair(int *a, int *b) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof(addr);
  if (listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(listener, 1) != 0 ||
      getsockname(listener, (struct sockaddr *)&addr, &len) != 0)
    die("listen on loopback");
  *b = socket(AF_INET, SOCK_STREAM, 0);
  if (*b < 0 || connect(*b, (struct sockaddr *)&addr, sizeof(addr)) != 0) die("connect");
  *a = accept(listener, NULL, NULL);
  if (*a < 0) die("accept");
  close(listener);
}

struct peer {
  int fd;
  uint64_t bytes; /* write: to send; sendfile: received */
};

static void *send_bytes(void *arg) {
  struct peer *p = arg;
  char *buf = malloc(CHUNK);
  memset(buf, 'x', CHUNK);
  for (uint64_t sent = 0; sent < p->bytes;) {
    size_t n = p->bytes - sent < CHUNK ? (size_t)(p->bytes - sent) : CHUNK;
    ssize_t w = send(p->fd, buf, n, 0);
    if (w < 0) die("send");
    sent += (uint64_t)w;
  }
  shutdown(p->fd, SHUT_WR);
  free(buf);
  return NULL;
}

static void *count_bytes(void *arg) {
  struct peer *p = arg;
  char *buf = malloc(CHUNK);
  for (;;) {
    ssize_t r = recv(p->fd, buf, CHUNK, 0);
    if (r < 0) die("recv");
    if (r == 0) break;
    p->bytes += (uint64_t)r;
  }
  free(buf);
  return NULL;
}

static void report(uint64_t bytes, double wall, double cpu) {
  printf("copyfloor bytes=%llu seconds=%.6f cpu_s=%.6f\n", (unsigned long long)bytes, wall, cpu);
}

static int floor_write(const char *dir, long mib, int sync_every_mib) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/copy-floor.dat", dir);
  uint64_t total = (uint64_t)mib << 20;
  int file = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (file < 0) die(path);
  if (posix_fallocate(file, 0, (off_t)total) != 0) die("fallocate");
  fsync(file);
  int rx, tx;
  loopback_pair(&rx, &tx);
  char *buf = malloc(CHUNK);
  struct peer sender = {.fd = tx, .bytes = total};
  pthread_t thread;
  double wall0 = clock_s(CLOCK_MONOTONIC), cpu0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
  pthread_create(&thread, NULL, send_bytes, &sender);
  uint64_t offset = 0, synced = 0;
  for (;;) {
    ssize_t r = recv(rx, buf, CHUNK, 0);
    if (r < 0) die("recv");
    if (r == 0) break;
    for (ssize_t done = 0; done < r;) {
      ssize_t w = pwrite(file, buf + done, (size_t)(r - done), (off_t)(offset + (uint64_t)done));
      if (w < 0) die("pwrite");
      done += w;
    }
    offset += (uint64_t)r;
    if (sync_every_mib && offset - synced >= CHUNK) {
      if (fdatasync(file) != 0) die("fdatasync");
      synced = offset;
    }
  }
  if (sync_every_mib && offset != synced && fdatasync(file) != 0) die("fdatasync");
  double cpu = clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu0, wall = clock_s(CLOCK_MONOTONIC) - wall0;
  pthread_join(thread, NULL);
  close(rx);
  close(tx);
  close(file);
  unlink(path);
  free(buf);
  if (offset != total) {
    fprintf(stderr, "received %llu of %llu bytes\n", (unsigned long long)offset, (unsigned long long)total);
    return 1;
  }
  report(offset, wall, cpu);
  return 0;
}

static int floor_sendfile(int count, char **paths) {
  int tx, rx;
  loopback_pair(&tx, &rx);
  struct peer reader = {.fd = rx, .bytes = 0};
  pthread_t thread;
  uint64_t sent = 0;
  double wall0 = clock_s(CLOCK_MONOTONIC), cpu0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
  pthread_create(&thread, NULL, count_bytes, &reader);
  for (int i = 0; i < count; i++) {
    int fd = open(paths[i], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) die(paths[i]);
    off_t off = 0;
    while (off < st.st_size) {
      ssize_t n = sendfile(tx, fd, &off, (size_t)(st.st_size - off));
      if (n < 0) die("sendfile");
      if (n == 0) break;
    }
    sent += (uint64_t)off;
    close(fd);
  }
  double cpu = clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu0;
  shutdown(tx, SHUT_WR);
  pthread_join(thread, NULL);
  double wall = clock_s(CLOCK_MONOTONIC) - wall0;
  close(tx);
  close(rx);
  if (reader.bytes != sent) {
    fprintf(stderr, "read %llu of %llu bytes\n", (unsigned long long)reader.bytes, (unsigned long long)sent);
    return 1;
  }
  report(sent, wall, cpu);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "write") == 0) return floor_write(argv[2], atol(argv[3]), 0);
  if (argc == 4 && strcmp(argv[1], "write-sync") == 0) return floor_write(argv[2], atol(argv[3]), 1);
  if (argc >= 3 && strcmp(argv[1], "sendfile") == 0) return floor_sendfile(argc - 2, argv + 2);
  fprintf(stderr, "usage: copy_floor write DIR MIB | copy_floor write-sync DIR MIB | copy_floor sendfile FILE...\n");
  return 2;
}
