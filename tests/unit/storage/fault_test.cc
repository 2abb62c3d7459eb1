// Fault tests: the storage survives what gateways do to it.
//   (a) SIGKILL at random moments while appending (the test forks itself);
//   (b) tails truncated or garbled at random bytes, and stale batches planted
//       after the end of a recycled segment;
//   (c) a full filesystem (a 1 MiB tmpfs, when running as root).
// Test code may use the platform directly; src/ goes through port/.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <filesystem>
#include <random>

#include "port/file_interceptor.h"
#include "port/port.h"
#include "storage/partition_log.h"
#include "storage/segment.h"
#include "log_check.h"
#include "storage_test_util.h"

namespace eddy::storage {
namespace {

using protocol::BatchError;
using protocol::BatchIterator;
using protocol::RecordBatchView;
using testing::TempDir;

constexpr size_t kMinValue = 20;
constexpr size_t kMaxValue = 200;

std::string check_log(PartitionLog& log) { return testing::check_log(log, kMinValue, kMaxValue); }

Status append_for_offsets(PartitionLog& log, int records, std::mt19937_64& rng) {
  std::vector<uint8_t> batch = testing::batch_for_offsets(log.log_end_offset(), records, kMinValue, kMaxValue,
                                                          1000 + log.log_end_offset());
  AppendResult result;
  return log.append(batch, AppendOptions{}, &result);
}

bool all_zero(const std::string& path, uint64_t from, uint64_t to) {
  std::vector<char> bytes(to - from);
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  ssize_t n = pread(fd, bytes.data(), bytes.size(), static_cast<off_t>(from));
  ::close(fd);
  if (n != static_cast<ssize_t>(bytes.size())) return false;
  return std::all_of(bytes.begin(), bytes.end(), [](char c) { return c == 0; });
}

// ---------------------------------------------------------------------------
// (a) SIGKILL at random moments
// ---------------------------------------------------------------------------

// The child: opens the log (recovering it), then appends forever, reporting
// every durable offset on the pipe. Never returns.
[[noreturn]] void append_until_killed(const std::string& directory, const LogConfig& config, int report_fd,
                                      uint64_t seed) {
  Flusher flusher;
  flusher.start();
  std::unique_ptr<PartitionLog> log;
  if (!PartitionLog::open(directory, config, &flusher, &log).ok()) _exit(3);
  log->set_durability_listener([report_fd](int64_t durable, Status status) {
    if (!status.ok()) _exit(4);
    // 8-byte writes to a pipe are atomic.
    if (write(report_fd, &durable, sizeof(durable)) != sizeof(durable)) _exit(5);
  });
  // The offset durable at open is durable too.
  int64_t initial = log->durable_offset();
  if (write(report_fd, &initial, sizeof(initial)) != sizeof(initial)) _exit(5);
  std::mt19937_64 rng(seed);
  for (;;) {
    Status s = append_for_offsets(*log, 1 + static_cast<int>(rng() % 8), rng);
    if (!s.ok()) _exit(6);
  }
}

TEST(StorageFaultTest, SigkillWhileAppendingKeepsADurableValidPrefix) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string directory = dir.file("t-0");
  const uint64_t seed = 20240601;
  std::mt19937_64 rng(seed);
  int64_t recycled_iterations = 0;
  int64_t iterations_with_durable_reports = 0;
  constexpr int kIterations = 60;
  for (int iteration = 0; iteration < kIterations; ++iteration) {
    LogConfig config = testing::small_config(32 << 10, 4 * (32 << 10));  // a ring of 4
    // Mostly acks-wait-for-disk (every append synced by group commit); every
    // third run page-cache mode, where only rolls and flush.messages sync.
    if (iteration % 3 != 2) {
      config.acks_all_waits_for = AcksAllWaitsFor::kDisk;
    } else {
      config.flush_interval_messages = 50;
    }
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      close(fds[0]);
      append_until_killed(directory, config, fds[1], seed + iteration);
    }
    close(fds[1]);
    fcntl(fds[0], F_SETFL, O_NONBLOCK);

    // Let it append for a random 2..60 ms, collecting durable reports
    // meanwhile. The time counts from the child's first report (it has
    // opened and recovered the log), so that it appends that long however
    // slow the machine is (qemu, a loaded CI host); every fourth run it
    // counts from the fork instead, which kills some children during their
    // own recovery.
    int64_t durable = -1;
    bool reported = false;
    auto drain = [&] {
      int64_t value;
      while (read(fds[0], &value, sizeof(value)) == sizeof(value)) {
        durable = std::max(durable, value);
        reported = true;
      }
    };
    if (iteration % 4 != 3) {
      const int64_t give_up = port::monotonic_millis() + 20000;
      while (!reported && port::monotonic_millis() < give_up) {
        drain();
        usleep(500);
      }
    }
    int64_t deadline = port::monotonic_millis() + 2 + static_cast<int64_t>(rng() % 59);
    while (port::monotonic_millis() < deadline) {
      drain();
      usleep(500);
    }
    ASSERT_EQ(kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status) << " in iteration " << iteration;
    drain();
    close(fds[0]);

    Flusher flusher;
    flusher.start();
    std::unique_ptr<PartitionLog> log;
    ASSERT_EQ(PartitionLog::open(directory, config, &flusher, &log).code(), Status::Code::kOk) << "iteration " << iteration;
    EXPECT_GE(log->log_end_offset(), durable) << "durable data lost in iteration " << iteration;
    EXPECT_LE(log->log_start_offset(), log->log_end_offset());
    std::string problem = check_log(*log);
    ASSERT_EQ(problem, "") << "iteration " << iteration;
    if (log->log_start_offset() > 0) ++recycled_iterations;
    if (durable > 0) ++iterations_with_durable_reports;
    EXPECT_LE(log->stats().segments, 5u);  // the ring, plus one while a reader held a file
    // Alternate clean and unclean hand-over to the next child.
    if (iteration % 2 == 0) {
      ASSERT_EQ(log->close().code(), Status::Code::kOk);
    }
  }
  EXPECT_GT(recycled_iterations, 0) << "the runs were too short to wrap the ring";
  EXPECT_GT(iterations_with_durable_reports, kIterations / 2);
}

// ---------------------------------------------------------------------------
// (b) Damaged tails and stale batches
// ---------------------------------------------------------------------------

struct Written {
  int64_t base;
  int64_t next;
  uint64_t position;
  uint64_t size;
};

TEST(StorageFaultTest, DamagedTailKeepsExactlyTheValidPrefix) {
  std::mt19937_64 rng(77);
  Flusher flusher;
  flusher.start();
  for (int trial = 0; trial < 90; ++trial) {
    TempDir dir;
    const std::string directory = dir.file("t-0");
    LogConfig config = testing::small_config(16 << 10);
    std::vector<Written> active;  // batches of the last segment
    int64_t active_base = 0;
    {
      std::unique_ptr<PartitionLog> log;
      ASSERT_EQ(PartitionLog::open(directory, config, &flusher, &log).code(), Status::Code::kOk);
      int batches = 20 + static_cast<int>(rng() % 60);
      for (int i = 0; i < batches; ++i) ASSERT_EQ(append_for_offsets(*log, 1 + static_cast<int>(rng() % 6), rng).code(), Status::Code::kOk);
      ASSERT_TRUE(log->wait_durable(log->log_end_offset(), 10000));
      active_base = log->segments().back().base_offset;
      for (int64_t o = active_base; o < log->log_end_offset();) {
        BatchLocation at;
        ASSERT_EQ(log->lookup(o, &at).code(), Status::Code::kOk);
        active.push_back({at.batch.info.base_offset, at.batch.info.last_offset + 1, at.batch.position, at.batch.info.size});
        o = at.batch.info.last_offset + 1;
      }
    }  // unclean stop
    ASSERT_FALSE(active.empty());
    const std::string segment = directory + "/" + segment_file_name(active_base);
    const uint64_t end = active.back().position + active.back().size;
    const uint64_t p = rng() % end;
    const int mode = trial % 3;
    int fd = ::open(segment.c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    if (mode == 0) {  // flip one byte
      uint8_t byte;
      ASSERT_EQ(pread(fd, &byte, 1, static_cast<off_t>(p)), 1);
      byte ^= static_cast<uint8_t>(1 + rng() % 255);
      ASSERT_EQ(pwrite(fd, &byte, 1, static_cast<off_t>(p)), 1);
    } else if (mode == 1) {  // the file was cut short
      ASSERT_EQ(ftruncate(fd, static_cast<off_t>(p)), 0);
    } else {  // the tail never reached the disk
      std::vector<char> zeros(end - p, 0);
      ASSERT_EQ(pwrite(fd, zeros.data(), zeros.size(), static_cast<off_t>(p)), static_cast<ssize_t>(zeros.size()));
    }
    ::close(fd);

    // The valid prefix: every batch entirely before the damaged one. A flip
    // inside partitionLeaderEpoch (outside the CRC, like baseOffset, but
    // unlike baseOffset not checked by offset continuity) goes unnoticed.
    int64_t expected_end = active_base;
    for (const Written& w : active) {
      bool damaged = p < w.position + w.size;
      if (mode == 0 && p >= w.position + 12 && p < w.position + 16) damaged = false;
      if (damaged) break;
      expected_end = w.next;
    }

    std::unique_ptr<PartitionLog> log;
    ASSERT_EQ(PartitionLog::open(directory, config, &flusher, &log).code(), Status::Code::kOk);
    EXPECT_EQ(log->log_end_offset(), expected_end) << "trial " << trial << " mode " << mode << " byte " << p;
    EXPECT_EQ(check_log(*log), "") << "trial " << trial;
    uint64_t new_end = log->segments().back().end_position;
    EXPECT_EQ(std::filesystem::file_size(segment), 16u << 10);
    EXPECT_TRUE(all_zero(segment, new_end, 16 << 10)) << "trial " << trial;
    if (expected_end < active.back().next && mode == 0) {
      EXPECT_GT(log->recovery_stats().bytes_dropped, 0u);
    }

    // Appending over the dropped region and crashing again never brings the
    // old batches back.
    for (int i = 0; i < 3; ++i) ASSERT_EQ(append_for_offsets(*log, 1, rng).code(), Status::Code::kOk);
    int64_t leo = log->log_end_offset();
    log.reset();
    ASSERT_EQ(PartitionLog::open(directory, config, &flusher, &log).code(), Status::Code::kOk);
    EXPECT_EQ(log->log_end_offset(), leo);
    EXPECT_EQ(check_log(*log), "");
  }
}

TEST(StorageFaultTest, DamageInASealedSegmentEndsTheLogThereAndDiscardsLaterOnes) {
  std::mt19937_64 rng(5);
  Flusher flusher;
  flusher.start();
  TempDir dir;
  const std::string directory = dir.file("t-0");
  LogConfig config = testing::small_config(8 << 10);
  std::vector<SegmentInfo> segments;
  {
    std::unique_ptr<PartitionLog> log;
    ASSERT_EQ(PartitionLog::open(directory, config, &flusher, &log).code(), Status::Code::kOk);
    while (log->segments().size() < 5) ASSERT_EQ(append_for_offsets(*log, 3, rng).code(), Status::Code::kOk);
    segments = log->segments();
  }
  // Without index files every segment is scanned; garble segment 2.
  for (const SegmentInfo& s : segments) std::filesystem::remove(directory + "/" + index_file_name(s.base_offset));
  const std::string damaged = directory + "/" + segment_file_name(segments[2].base_offset);
  int fd = ::open(damaged.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  uint64_t p = segments[2].end_position / 2;
  uint8_t byte = 0x5a;
  ASSERT_EQ(pwrite(fd, &byte, 1, static_cast<off_t>(p)), 1);
  ::close(fd);

  std::unique_ptr<PartitionLog> log;
  ASSERT_EQ(PartitionLog::open(directory, config, &flusher, &log).code(), Status::Code::kOk);
  EXPECT_EQ(log->segments().size(), 3u);
  EXPECT_EQ(log->recovery_stats().segments_discarded, 2u);
  EXPECT_GT(log->log_end_offset(), segments[2].base_offset);
  EXPECT_LT(log->log_end_offset(), segments[3].base_offset);
  EXPECT_FALSE(std::filesystem::exists(directory + "/" + segment_file_name(segments[3].base_offset)));
  EXPECT_FALSE(std::filesystem::exists(directory + "/" + segment_file_name(segments[4].base_offset)));
  EXPECT_EQ(check_log(*log), "");
  // The log goes on from there.
  for (int i = 0; i < 100; ++i) ASSERT_EQ(append_for_offsets(*log, 3, rng).code(), Status::Code::kOk);
  EXPECT_EQ(check_log(*log), "");
}

TEST(StorageFaultTest, StaleBatchesAfterTheEndOfARecycledSegmentAreNeverResurrected) {
  std::mt19937_64 rng(11);
  Flusher flusher;
  flusher.start();
  TempDir dir;
  const std::string directory = dir.file("t-0");
  LogConfig config = testing::small_config(8 << 10, 2 * (8 << 10));  // a ring of 2
  std::vector<uint8_t> old_batches;
  int64_t leo = 0;
  int64_t active_base = 0;
  uint64_t active_end = 0;
  {
    std::unique_ptr<PartitionLog> log;
    ASSERT_EQ(PartitionLog::open(directory, config, &flusher, &log).code(), Status::Code::kOk);
    for (int i = 0; i < 10; ++i) ASSERT_EQ(append_for_offsets(*log, 2, rng).code(), Status::Code::kOk);
    int64_t next = 0;
    ASSERT_EQ(log->read_copy(0, SIZE_MAX, -1, &old_batches, &next).code(), Status::Code::kOk);
    while (log->stats().segments_recycled < 4) ASSERT_EQ(append_for_offsets(*log, 2, rng).code(), Status::Code::kOk);
    // Make room after the end of the active (recycled) segment.
    leo = log->log_end_offset();
    active_base = log->segments().back().base_offset;
    active_end = log->segments().back().end_position;
    ASSERT_LT(active_end + old_batches.size() + 2000, 8u << 10);
  }
  const std::string segment = directory + "/" + segment_file_name(active_base);
  int fd = ::open(segment.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  // Valid old batches right after the end ...
  ASSERT_EQ(pwrite(fd, old_batches.data(), old_batches.size(), static_cast<off_t>(active_end)),
            static_cast<ssize_t>(old_batches.size()));
  // ... and a valid batch carrying exactly the next offset, after a gap of
  // zeros (as if written before a power cut lost the page before it).
  std::vector<uint8_t> future = testing::batch_for_offsets(leo, 2, kMinValue, kMaxValue);
  protocol::set_base_offset(future, leo);
  uint64_t future_at = active_end + old_batches.size() + 512;
  ASSERT_EQ(pwrite(fd, future.data(), future.size(), static_cast<off_t>(future_at)), static_cast<ssize_t>(future.size()));
  ::close(fd);

  std::unique_ptr<PartitionLog> log;
  ASSERT_EQ(PartitionLog::open(directory, config, &flusher, &log).code(), Status::Code::kOk);
  EXPECT_EQ(log->log_end_offset(), leo);
  EXPECT_EQ(check_log(*log), "");
  EXPECT_TRUE(all_zero(segment, active_end, 8 << 10));
  // Dropped: the planted bytes and whatever the earlier use of the file left.
  EXPECT_GE(log->recovery_stats().bytes_dropped, future_at + future.size() - active_end);
  // Shorter appends over the planted region, then a crash: nothing planted
  // comes back.
  ASSERT_EQ(append_for_offsets(*log, 1, rng).code(), Status::Code::kOk);
  int64_t expected = log->log_end_offset();
  log.reset();
  ASSERT_EQ(PartitionLog::open(directory, config, &flusher, &log).code(), Status::Code::kOk);
  EXPECT_EQ(log->log_end_offset(), expected);
  EXPECT_EQ(check_log(*log), "");
}

// ---------------------------------------------------------------------------
// (c) Full filesystem
// ---------------------------------------------------------------------------

class TmpfsMount {
 public:
  explicit TmpfsMount(const std::string& path) : path_(path) {
    std::filesystem::create_directories(path);
    if (mount("tmpfs", path.c_str(), "tmpfs", 0, "size=1m") == 0) {
      mounted_ = true;
    } else {
      error_ = strerror(errno);
    }
  }
  ~TmpfsMount() {
    if (mounted_) umount2(path_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }

 private:
  std::string path_;
  bool mounted_ = false;
  std::string error_;
};

TEST(StorageFaultTest, FullFilesystemGivesAnErrorNotACrashNorACorruptLog) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting a 1 MiB tmpfs needs root";
  TempDir dir;
  TmpfsMount mount_point(dir.file("small"));
  if (!mount_point.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here: " << mount_point.error();
  std::mt19937_64 rng(3);
  Flusher flusher;
  flusher.start();
  const std::string directory = dir.file("small/t-0");
  LogConfig config = testing::small_config(192 << 10);  // no byte budget: the filesystem is the limit
  config.acks_all_waits_for = AcksAllWaitsFor::kDisk;
  int64_t leo = 0;
  {
    std::unique_ptr<PartitionLog> log;
    ASSERT_EQ(PartitionLog::open(directory, config, &flusher, &log).code(), Status::Code::kOk);
    Status s;
    int appends = 0;
    while (s.ok() && appends < 100000) {
      s = append_for_offsets(*log, 4, rng);
      appends += s.ok();
    }
    EXPECT_EQ(s.code(), Status::Code::kNoSpace) << s.to_string().c_str();
    EXPECT_GT(appends, 100);
    leo = log->log_end_offset();
    // It stays an error, the log stays readable and intact.
    EXPECT_EQ(append_for_offsets(*log, 4, rng).code(), Status::Code::kNoSpace);
    EXPECT_EQ(log->log_end_offset(), leo);
    EXPECT_TRUE(log->wait_durable(leo, 10000));
    EXPECT_EQ(check_log(*log), "");
    (void)log->close();  // may fail for lack of space (ignored on purpose): the next open recovers
  }
  std::unique_ptr<PartitionLog> log;
  ASSERT_EQ(PartitionLog::open(directory, config, &flusher, &log).code(), Status::Code::kOk);
  EXPECT_EQ(log->log_end_offset(), leo);
  EXPECT_EQ(check_log(*log), "");
  // Retention gives room back: the ring then runs inside the filesystem.
  LogConfig bounded = config;
  bounded.retention_bytes = 3 * (192 << 10);
  ASSERT_EQ(log->update_config(bounded).code(), Status::Code::kOk);
  for (int i = 0; i < 2000; ++i) ASSERT_EQ(append_for_offsets(*log, 4, rng).code(), Status::Code::kOk) << i;
  EXPECT_EQ(check_log(*log), "");
}

// ---------------------------------------------------------------------------
// (d) fdatasync failing (the port's file interceptor refuses it)
// ---------------------------------------------------------------------------

// Fails every fdatasync with EIO; everything else goes through.
class FailingSyncs : public port::FileInterceptor {
 public:
  void lock() override { mu_.lock(); }
  void unlock() override { mu_.unlock(); }
  std::error_code before(const port::FileEvent& event) override {
    if (event.op != port::FileOp::kSyncData) return {};
    ++refused;
    return std::error_code(EIO, std::generic_category());
  }
  void after(const port::FileEvent&, const std::error_code&) override {}
  std::atomic<int> refused{0};

 private:
  std::mutex mu_;
};

TEST(StorageFaultTest, AFailedSyncIsNeverAcknowledgedAndStopsAppends) {
  TempDir dir;
  const std::string directory = dir.file("p-0");
  LogConfig config = testing::small_config(64 << 10);
  config.acks_all_waits_for = AcksAllWaitsFor::kDisk;
  std::mt19937_64 rng(7);
  int64_t durable = 0;
  {
    Flusher flusher;
    flusher.start();
    std::unique_ptr<PartitionLog> log;
    ASSERT_EQ(PartitionLog::open(directory, config, &flusher, &log).code(), Status::Code::kOk);
    for (int i = 0; i < 20; ++i) ASSERT_EQ(append_for_offsets(*log, 3, rng).code(), Status::Code::kOk);
    ASSERT_TRUE(log->wait_durable(log->log_end_offset(), 10000));
    durable = log->durable_offset();

    FailingSyncs failing;
    port::set_file_interceptor(&failing);
    ASSERT_EQ(append_for_offsets(*log, 3, rng).code(), Status::Code::kOk);  // into the page cache
    const int64_t end = log->log_end_offset();
    EXPECT_FALSE(log->wait_durable(end, 10000)) << "a batch whose sync failed was reported durable";
    EXPECT_EQ(log->durable_offset(), durable);
    EXPECT_GE(failing.refused.load(), 1);
    // The partition refuses appends from now on instead of acknowledging
    // writes it cannot make durable, and what it has stays readable.
    EXPECT_EQ(append_for_offsets(*log, 3, rng).code(), Status::Code::kIOError);
    EXPECT_EQ(log->log_end_offset(), end);
    EXPECT_EQ(check_log(*log), "");
    log.reset();
    flusher.stop();
    port::set_file_interceptor(nullptr);
  }
  // A restart recovers the log: at least everything that was durable.
  Flusher flusher;
  flusher.start();
  std::unique_ptr<PartitionLog> log;
  ASSERT_EQ(PartitionLog::open(directory, config, &flusher, &log).code(), Status::Code::kOk);
  EXPECT_GE(log->log_end_offset(), durable);
  EXPECT_EQ(check_log(*log), "");
  EXPECT_EQ(append_for_offsets(*log, 3, rng).code(), Status::Code::kOk);
}

}  // namespace
}  // namespace eddy::storage
