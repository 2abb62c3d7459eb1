// Power cuts: a partition log under a mixed load (appends, rolls, recycling
// of the segment ring, syncs as acks=all asks for them, DeleteRecords,
// clean shutdowns) loses power at a random moment, again and again; after
// each cut the disk holds only what a sync covered plus a random part of
// the rest (power_cut_filesystem.h), and the reopened log must be sound:
//   - every offset acknowledged as durable before the cut is still there;
//   - the log is a gap-free run of valid batches holding exactly what was
//     appended at their offsets (no stale batch of an earlier lap of the
//     ring resurrected, no torn batch served);
//   - it invents nothing: its end is at most the end before the cut, and
//     offsets never go backwards below the durable point.
//
//   EDDY_POWER_CUTS    number of cuts (default 1000; `make power-cuts` runs 100 000)
//   EDDY_POWER_CUT_SEED  the seed to replay (each run prints the one it used)
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>

#include "log_check.h"
#include "port/file_interceptor.h"
#include "port/log.h"
#include "power_cut_filesystem.h"
#include "storage/partition_log.h"
#include "storage_test_util.h"

namespace eddy::storage {
namespace {

using testing::PowerCutFilesystem;
using testing::TempDir;

constexpr size_t kMinValue = 10;
constexpr size_t kMaxValue = 300;

uint64_t env_number(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

// Segments of 4 KiB in a ring of 6: a few dozen appends roll and recycle.
LogConfig ring_config() {
  LogConfig config = testing::small_config(4096, 6 * 4096);
  config.acks_all_waits_for = AcksAllWaitsFor::kDisk;
  return config;
}

// The undo probabilities of one cut: everything unsynced lost, all of it
// kept, or a random share.
std::pair<double, double> cut_shape(std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0: return {1.0, 1.0};
    case 1: return {0.0, 0.0};
    case 2: return {0.5, 0.5};
    default: return {std::uniform_real_distribution<double>(0, 1)(rng), std::uniform_real_distribution<double>(0, 1)(rng)};
  }
}

struct Load {
  int64_t acknowledged = 0;  // every offset below is acknowledged as durable
  uint64_t appends = 0, waits = 0, clean_closes = 0, deletes = 0;
};

// Runs a random mix of operations on log; may close and reopen it cleanly.
// Returns false (with the failure recorded by gtest) when an operation fails.
bool run_load(std::unique_ptr<PartitionLog>* log, Flusher* flusher, const std::string& directory,
              std::mt19937_64& rng, Load* load) {
  const int ops = 1 + static_cast<int>(rng() % 80);
  for (int i = 0; i < ops; ++i) {
    PartitionLog& l = **log;
    const unsigned pick = static_cast<unsigned>(rng() % 100);
    if (pick < 80) {
      int records = 1 + static_cast<int>(rng() % 6);
      std::vector<uint8_t> batch = testing::batch_for_offsets(l.log_end_offset(), records, kMinValue, kMaxValue,
                                                              1000 + l.log_end_offset());
      AppendResult result;
      Status s = l.append(batch, AppendOptions{}, &result);
      EXPECT_EQ(s.code(), Status::Code::kOk) << s.to_string().c_str();
      if (!s.ok()) return false;
      ++load->appends;
    } else if (pick < 90) {
      // acks=all: the producer is answered once the sync covers its batch.
      int64_t end = l.log_end_offset();
      EXPECT_TRUE(l.wait_durable(end, 10000));
      load->acknowledged = std::max(load->acknowledged, l.durable_offset());
      ++load->waits;
    } else if (pick < 95) {
      l.request_sync();  // a sync in flight when the power goes
    } else if (pick < 98) {
      int64_t hw = l.high_watermark();
      int64_t start = l.log_start_offset();
      if (hw > start) {
        EXPECT_TRUE(
            l.delete_records_before(start + static_cast<int64_t>(rng() % static_cast<uint64_t>(hw - start + 1))).ok());
        ++load->deletes;
      }
    } else {
      EXPECT_EQ(l.close().code(), Status::Code::kOk);
      load->acknowledged = std::max(load->acknowledged, l.log_end_offset());
      log->reset();
      Status s = PartitionLog::open(directory, ring_config(), flusher, log);
      EXPECT_EQ(s.code(), Status::Code::kOk) << s.to_string().c_str();
      if (!s.ok()) return false;
      ++load->clean_closes;
    }
  }
  load->acknowledged = std::max(load->acknowledged, (*log)->durable_offset());
  return true;
}

TEST(StoragePowerCutTest, AcknowledgedBatchesSurviveRandomPowerCuts) {
  const uint64_t cuts = env_number("EDDY_POWER_CUTS", 1000);
  const uint64_t seed = env_number("EDDY_POWER_CUT_SEED", std::random_device{}());
  std::printf("power cuts: %llu, seed %llu (EDDY_POWER_CUT_SEED=%llu replays it)\n",
              static_cast<unsigned long long>(cuts), static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  // Real durability is not what is tested (the simulation decides what
  // survives): on tmpfs the thousands of fdatasyncs cost nothing.
  TempDir root(port::is_directory("/dev/shm") ? "/dev/shm" : nullptr);
  // Every cut makes the storage log failed writes and syncs: expected here.
  const port::LogLevel level = port::log_level();
  port::set_log_level(port::LogLevel::kOff);
  const std::string directory = root.file("disk") + "/topic-0";
  PowerCutFilesystem disk(root.file("disk"), root.file("stash"));
  port::set_file_interceptor(&disk);

  Load load;
  int64_t end_before_cut = 0;
  PowerCutFilesystem::CutStats total;
  uint64_t lost_unacknowledged = 0;
  for (uint64_t cut = 0; cut < cuts; ++cut) {
    SCOPED_TRACE("cut " + std::to_string(cut) + " of seed " + std::to_string(seed));
    auto flusher = std::make_unique<Flusher>();
    flusher->start();
    std::unique_ptr<PartitionLog> log;
    Status s = PartitionLog::open(directory, ring_config(), flusher.get(), &log);
    ASSERT_EQ(s.code(), Status::Code::kOk) << s.to_string().c_str();
    // What the cut left must be a sound log holding everything acknowledged.
    ASSERT_EQ(testing::check_log(*log, kMinValue, kMaxValue), "");
    ASSERT_GE(log->log_end_offset(), load.acknowledged) << "an acknowledged batch was lost";
    ASSERT_LE(log->log_end_offset(), end_before_cut) << "offsets appeared that were never appended";
    lost_unacknowledged += static_cast<uint64_t>(end_before_cut - log->log_end_offset());

    ASSERT_TRUE(run_load(&log, flusher.get(), directory, rng, &load));
    end_before_cut = log->log_end_offset();

    auto [p_data, p_directory] = cut_shape(rng);
    PowerCutFilesystem::CutStats stats = disk.cut(rng, p_data, p_directory);
    total.sectors_undone += stats.sectors_undone;
    total.sectors_kept += stats.sectors_kept;
    total.files_shortened += stats.files_shortened;
    total.directory_changes_undone += stats.directory_changes_undone;
    total.directory_changes_kept += stats.directory_changes_kept;
    log.reset();  // as the process would die: what it still does fails with EIO
    flusher.reset();
    disk.reset();
  }
  port::set_file_interceptor(nullptr);
  port::set_log_level(level);
  std::printf(
      "appends %llu, acks=all waits %llu, clean closes %llu, DeleteRecords %llu, file writes %llu, syncs %llu;\n"
      "cuts undid %llu and kept %llu unsynced sectors, shortened %llu files, undid %llu and kept %llu directory "
      "changes; %llu unacknowledged offsets lost, 0 acknowledged\n",
      static_cast<unsigned long long>(load.appends), static_cast<unsigned long long>(load.waits),
      static_cast<unsigned long long>(load.clean_closes), static_cast<unsigned long long>(load.deletes),
      static_cast<unsigned long long>(disk.writes()), static_cast<unsigned long long>(disk.syncs()),
      static_cast<unsigned long long>(total.sectors_undone), static_cast<unsigned long long>(total.sectors_kept),
      static_cast<unsigned long long>(total.files_shortened),
      static_cast<unsigned long long>(total.directory_changes_undone),
      static_cast<unsigned long long>(total.directory_changes_kept),
      static_cast<unsigned long long>(lost_unacknowledged));
}

}  // namespace
}  // namespace eddy::storage
