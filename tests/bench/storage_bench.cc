// Storage benchmark: append throughput against fio on the same directory in
// the same run, recovery time after SIGKILL with 1 GiB in a partition, and
// index memory per GiB of log. Not a ctest test; run through
// tests/bench/storage_bench.sh, which installs fio when it is missing.
//
//   eddy_storage_bench --dir DIR [--fio PATH] [--size-mb N] [--sync-size-mb N]
//                      [--recovery-mb N] [--segment-mb N]
//
// Benchmark code may use the platform directly (fork, popen); src/ may not.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "port/log.h"
#include "port/port.h"
#include "protocol/control_batch.h"
#include "protocol/record_batch.h"
#include "storage/partition_log.h"
#include "storage/segment.h"

namespace eddy::storage {
namespace {

struct Options {
  std::string dir;
  std::string fio = "fio";
  uint64_t size_mb = 256;
  uint64_t sync_size_mb = 64;
  uint64_t recovery_mb = 1024;
  uint64_t segment_mb = 64;
  std::string phases = "page-cache,group-commit,per-batch,recovery";
  int repeat = 1;
  bool has(std::string_view phase) const {
    std::string_view rest = phases;
    while (!rest.empty()) {
      size_t comma = rest.find(',');
      if (rest.substr(0, comma) == phase) return true;
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    return false;
  }
};

double mib_per_s(uint64_t bytes, int64_t nanos) { return nanos <= 0 ? 0 : bytes / 1048576.0 / (nanos / 1e9); }

// A batch of `size` bytes (one record whose value fills it; a byte more
// when the varint lengths make the exact size impossible).
std::vector<uint8_t> batch_of_size(size_t size) {
  for (size_t value = size > 100 ? size - 100 : 1;; ++value) {
    protocol::RecordBatchBuilder builder;
    builder.add("key", std::string(value, 'x'), port::wall_clock_millis());
    std::vector<uint8_t> batch = builder.build();
    if (batch.size() >= size) return batch;
  }
}

LogConfig bench_config(const Options& o, AcksAllWaitsFor mode) {
  LogConfig config;
  config.segment_bytes = o.segment_mb << 20;
  config.retention_bytes = kNoLimit;
  config.retention_ms = kNoLimit;
  config.acks_all_waits_for = mode;
  return config;
}

void remove_all(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

// Runs fio and returns its write bandwidth in MiB/s (0 when it failed).
// end_fsync: finish with a sync (when the Eddy run waits for durability).
double run_fio(const Options& o, const std::string& name, size_t block, uint64_t bytes, uint64_t fdatasync_every,
               bool end_fsync) {
  std::string dir = o.dir + "/fio-" + name;
  remove_all(dir);
  std::filesystem::create_directories(dir);
  char command[1024];
  std::snprintf(command, sizeof(command),
                "%s --name=%s --directory=%s --rw=write --bs=%zu --size=%" PRIu64
                " --ioengine=psync --fallocate=native --fdatasync=%" PRIu64
                " --end_fsync=%d --output-format=json 2>/dev/null",
                o.fio.c_str(), name.c_str(), dir.c_str(), block, bytes, fdatasync_every, end_fsync ? 1 : 0);
  FILE* pipe = popen(command, "r");
  if (pipe == nullptr) return 0;
  std::string output;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
  int rc = pclose(pipe);
  remove_all(dir);
  size_t write = output.find("\"write\" : {");
  size_t bw = write == std::string::npos ? std::string::npos : output.find("\"bw_bytes\"", write);
  if (rc != 0 || bw == std::string::npos) return 0;
  size_t colon = output.find(':', bw);
  double value = std::strtod(output.c_str() + colon + 1, nullptr) / 1048576.0;
  return value;
}

struct AppendRun {
  size_t batch_bytes = 0;
  double mib_s = 0;
  uint64_t appends = 0;
  uint64_t syncs = 0;
  uint64_t index_bytes = 0;
  uint64_t log_bytes = 0;
};

// Appends `bytes` of batches of `block` bytes. In disk mode the flusher
// syncs continuously (group commit) and the run ends when all is durable;
// with wait_each, every append waits for its own sync (one acks=all
// producer without pipelining).
AppendRun run_append(const Options& o, size_t block, uint64_t bytes, AcksAllWaitsFor mode, bool wait_each) {
  std::string dir = o.dir + "/eddy-append";
  remove_all(dir);
  Flusher flusher;
  flusher.start();
  std::unique_ptr<PartitionLog> log;
  if (!PartitionLog::open(dir + "/t-0", bench_config(o, mode), &flusher, &log).ok()) {
    std::fprintf(stderr, "cannot open %s\n", dir.c_str());
    std::exit(1);
  }
  std::vector<uint8_t> batch = batch_of_size(block);
  AppendRun run;
  run.batch_bytes = batch.size();
  int64_t start = port::monotonic_nanos();
  for (uint64_t written = 0; written < bytes; written += batch.size()) {
    AppendResult result;
    if (!log->append(batch, AppendOptions{}, &result).ok()) {
      std::fprintf(stderr, "append failed\n");
      std::exit(1);
    }
    if (wait_each) log->wait_durable(result.last_offset + 1, 60000);
    ++run.appends;
  }
  if (mode == AcksAllWaitsFor::kDisk) log->wait_durable(log->log_end_offset(), 600000);
  int64_t elapsed = port::monotonic_nanos() - start;
  run.mib_s = mib_per_s(run.appends * batch.size(), elapsed);
  run.syncs = log->syncs();
  run.index_bytes = log->stats().index_memory_bytes;
  run.log_bytes = log->stats().log_bytes;
  log.reset();
  flusher.stop();
  remove_all(dir);
  return run;
}

void report_ratio(const char* what, double eddy, double fio, double target) {
  if (fio > 0) {
    std::printf("%-44s eddy %8.1f MiB/s  fio %8.1f MiB/s  ratio %.2f (target >= %.1f)\n", what, eddy, fio, eddy / fio,
                target);
  } else {
    std::printf("%-44s eddy %8.1f MiB/s  (fio unavailable: no ratio)\n", what, eddy);
  }
  std::fflush(stdout);
}

// What run_recovery's child appends: batches of batch_size bytes; when
// transactional, every batch is one producer's transactional data and a
// COMMIT marker follows every 100 batches (the last transaction left open).
struct RecoveryLoad {
  size_t batch_size = (16 << 10) + 100;
  bool transactional = false;
};

bool fill_for_recovery(PartitionLog& log, uint64_t bytes, const RecoveryLoad& load) {
  std::vector<uint8_t> batch = batch_of_size(load.batch_size);
  if (load.transactional) {
    protocol::store_be16(batch.data() + protocol::batch_layout::kAttributes,
                         static_cast<uint16_t>(protocol::batch_attributes::kTransactional));
    protocol::store_be64(batch.data() + protocol::batch_layout::kProducerId, 1);
    protocol::update_crc(batch);
  }
  uint64_t appended = 0;
  for (uint64_t written = 0; written < bytes; written += batch.size()) {
    AppendResult result;
    if (!log.append(batch, AppendOptions{}, &result).ok()) return false;
    if (load.transactional && ++appended % 100 == 0 && written + batch.size() < bytes) {
      std::vector<uint8_t> marker = protocol::build_control_batch(protocol::ControlType::kCommit, 1, 0, 0, 1000);
      if (!log.append(marker, AppendOptions{}, &result).ok()) return false;
    }
  }
  return true;
}

// Fills a partition with `bytes` in a child, SIGKILLs it once the sealed
// segments are synced and indexed (what a running broker looks like at any
// moment), then times the reopen.
void run_recovery(const Options& o, const char* label, uint64_t segment_bytes, int64_t retention_bytes,
                  uint64_t bytes, bool drop_caches, const RecoveryLoad& load = {}) {
  std::string dir = o.dir + "/eddy-recovery/t-0";
  remove_all(o.dir + "/eddy-recovery");
  LogConfig config = bench_config(o, AcksAllWaitsFor::kPageCache);
  config.segment_bytes = segment_bytes;
  config.retention_bytes = retention_bytes;
  int fds[2];
  if (pipe(fds) != 0) std::exit(1);
  pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    Flusher flusher;
    flusher.start();
    std::unique_ptr<PartitionLog> log;
    if (!PartitionLog::open(dir, config, &flusher, &log).ok()) _exit(2);
    // Not a divisor of segment.bytes: segments end with a gap, the active
    // one mid-way, as in real life.
    if (!fill_for_recovery(*log, bytes, load)) _exit(3);
    int64_t active = log->segments().back().base_offset;
    log->wait_durable(active, 600000);
    std::vector<SegmentInfo> segments = log->segments();
    if (segments.size() >= 2) {
      std::string index = dir + "/" + index_file_name(segments[segments.size() - 2].base_offset);
      while (access(index.c_str(), F_OK) != 0) usleep(1000);
    }
    char ready = 'r';
    if (write(fds[1], &ready, 1) != 1) _exit(4);
    for (;;) pause();
  }
  close(fds[1]);
  char ready;
  if (read(fds[0], &ready, 1) != 1) {
    std::fprintf(stderr, "recovery child failed\n");
    std::exit(1);
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  close(fds[0]);
  if (drop_caches) {
    sync();
    FILE* f = std::fopen("/proc/sys/vm/drop_caches", "w");
    if (f == nullptr) {
      std::printf("%-44s skipped: cannot drop caches (needs root)\n", label);
      return;
    }
    std::fputs("3\n", f);
    std::fclose(f);
  }
  Flusher flusher;
  flusher.start();
  std::unique_ptr<PartitionLog> log;
  int64_t start = port::monotonic_nanos();
  Status s = PartitionLog::open(dir, config, &flusher, &log);
  int64_t elapsed = port::monotonic_nanos() - start;
  if (!s.ok()) {
    std::fprintf(stderr, "reopen failed: %s\n", s.to_string().c_str());
    std::exit(1);
  }
  const RecoveryStats& r = log->recovery_stats();
  PartitionStats stats = log->stats();
  std::printf("%-44s %7.3f s  (%.0f MiB of log, %" PRIu64 " segments: %" PRIu64 " trusted, %" PRIu64
              " scanned; %.1f MiB scanned, %.1f MiB zero-checked, %.1f MiB zeroed, %.1f MiB read for "
              "transactions) target < 0.5 s\n",
              label, elapsed / 1e9, stats.log_bytes / 1048576.0, stats.segments, r.segments_trusted,
              r.segments_scanned, r.bytes_scanned / 1048576.0, r.bytes_zero_checked / 1048576.0,
              r.bytes_zeroed / 1048576.0, r.bytes_scanned_for_transactions / 1048576.0);
  std::fflush(stdout);
  log.reset();
  flusher.stop();
  remove_all(o.dir + "/eddy-recovery");
}

int main_bench(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    std::string value = argv[i + 1];
    if (flag == "--dir") o.dir = value;
    else if (flag == "--fio") o.fio = value;
    else if (flag == "--size-mb") o.size_mb = std::stoull(value);
    else if (flag == "--sync-size-mb") o.sync_size_mb = std::stoull(value);
    else if (flag == "--recovery-mb") o.recovery_mb = std::stoull(value);
    else if (flag == "--segment-mb") o.segment_mb = std::stoull(value);
    else if (flag == "--phases") o.phases = value;
    else if (flag == "--repeat") o.repeat = std::stoi(value);
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (o.dir.empty()) {
    std::fprintf(stderr, "usage: %s --dir DIR [--fio PATH] [--size-mb N] [--sync-size-mb N] [--recovery-mb N] [--segment-mb N]\n",
                 argv[0]);
    return 2;
  }
  port::set_log_level(port::LogLevel::kWarn);
  std::filesystem::create_directories(o.dir);
  std::printf("storage bench: dir %s, segment.bytes %" PRIu64 " MiB, crc32c %s\n", o.dir.c_str(), o.segment_mb,
              port::crc32c_implementation());

  const uint64_t size = o.size_mb << 20;
  const uint64_t sync_size = o.sync_size_mb << 20;
  for (int round = 0; round < o.repeat; ++round) {
  for (size_t block : {size_t{1024}, size_t{16384}}) {
    char what[96];
    if (o.has("page-cache")) {
      AppendRun pc = run_append(o, block, size, AcksAllWaitsFor::kPageCache, false);
      std::printf("batches of %zu bytes (fio --bs=%zu)\n", pc.batch_bytes, pc.batch_bytes);
      double fio_pc = run_fio(o, "pc", pc.batch_bytes, size, 0, false);
      std::snprintf(what, sizeof(what), "append %2zu KiB batches, page cache", block / 1024);
      report_ratio(what, pc.mib_s, fio_pc, 0.9);
      // Page-cache mode still syncs each sealed segment once (so that its
      // index file can be trusted by recovery): fio with one fdatasync per
      // segment is the same sync behaviour.
      uint64_t per_segment = (o.segment_mb << 20) / pc.batch_bytes;
      double fio_seg = run_fio(o, "pcs", pc.batch_bytes, size, per_segment, false);
      std::snprintf(what, sizeof(what), "  same, fio with fdatasync per segment");
      report_ratio(what, pc.mib_s, fio_seg, 0.9);
      std::printf("%-44s %.2f MiB per GiB of log (%" PRIu64 " B over %.0f MiB)\n", "  index memory",
                  pc.index_bytes * 1024.0 / (pc.log_bytes / 1048576.0) / 1048576.0, pc.index_bytes,
                  pc.log_bytes / 1048576.0);
    }
    if (o.has("group-commit")) {
      AppendRun gc = run_append(o, block, sync_size, AcksAllWaitsFor::kDisk, false);
      uint64_t every = std::max<uint64_t>(1, gc.appends / std::max<uint64_t>(gc.syncs, 1));
      double fio_gc = run_fio(o, "gc", gc.batch_bytes, sync_size, every, true);
      std::snprintf(what, sizeof(what), "append %2zu KiB batches, group-commit fdatasync", block / 1024);
      report_ratio(what, gc.mib_s, fio_gc, 0.7);
      std::printf("%-44s %" PRIu64 " fdatasyncs, one per %" PRIu64 " batches (fio --fdatasync=%" PRIu64 ")\n", "",
                  gc.syncs, every, every);
    }
    if (o.has("per-batch")) {
      uint64_t each_bytes = std::min<uint64_t>(sync_size, block * 2000);
      AppendRun one = run_append(o, block, each_bytes, AcksAllWaitsFor::kDisk, true);
      double fio_one = run_fio(o, "one", one.batch_bytes, each_bytes, 1, true);
      std::snprintf(what, sizeof(what), "append %2zu KiB batches, fdatasync per batch", block / 1024);
      report_ratio(what, one.mib_s, fio_one, 0.7);
    }
  }
  }

  const uint64_t recovery = o.recovery_mb << 20;
  if (o.has("transactions")) {
    // The transaction index is rebuilt from batch headers at open, only in
    // partitions that ever held a transactional batch.
    for (size_t batch : {size_t{1024}, size_t{(16 << 10) + 100}}) {
      for (bool transactional : {false, true}) {
        for (bool cold : {false, true}) {
          char label[96];
          std::snprintf(label, sizeof(label), "open, %zu B batches, %s, %s", batch,
                        transactional ? "transactional" : "no transactions", cold ? "cold" : "warm");
          run_recovery(o, label, o.segment_mb << 20, kNoLimit, recovery, cold, RecoveryLoad{batch, transactional});
        }
      }
    }
  }
  if (!o.has("recovery")) return 0;
  run_recovery(o, "recovery after SIGKILL (warm cache)", o.segment_mb << 20, kNoLimit, recovery, false);
  run_recovery(o, "recovery after SIGKILL, cold cache", o.segment_mb << 20, kNoLimit, recovery, true);
  run_recovery(o, "  ..all in one segment (full scan), warm", recovery + (1 << 20), kNoLimit, recovery, false);
  // The ring wrapped: the active segment is a recycled file whose stale
  // bytes after the end get zeroed.
  run_recovery(o, "  ..wrapped ring, recycled active, warm", o.segment_mb << 20, static_cast<int64_t>(recovery),
               recovery + recovery / 2 + (o.segment_mb << 19), false);
  return 0;
}

}  // namespace
}  // namespace eddy::storage

int main(int argc, char** argv) { return eddy::storage::main_bench(argc, argv); }
