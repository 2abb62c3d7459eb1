// Power cuts under a load that truncates: appends (each batch stamped with
// the current generation, which every truncation raises, and with that
// generation as its leader epoch), truncations to random batch boundaries,
// readers holding regions across them, syncs, clean closes, in a ring that
// rolls and recycles. After every cut the reopened log must be a prefix of
// the log as it was just before the cut (so no batch a truncation removed
// is ever back, and none is followed by a batch appended after it), hold
// every offset acknowledged as durable (and not truncated since), and its
// epoch index must be what its batches say. The second test mixes in
// resets (reset_to below, inside and above the log), after which the log
// never starts below the reset's offset again.
//
//   EDDY_POWER_CUTS      number of cuts (default 1000)
//   EDDY_POWER_CUT_SEED  the seed to replay (each run prints the one it used)
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "port/file_interceptor.h"
#include "port/log.h"
#include "power_cut_filesystem.h"
#include "storage/partition_log.h"
#include "storage_test_util.h"

namespace eddy::storage {
namespace {

using testing::PowerCutFilesystem;
using testing::TempDir;

uint64_t env_number(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

LogConfig ring_config() {
  LogConfig config = testing::small_config(4096, 6 * 4096);
  config.acks_all_waits_for = AcksAllWaitsFor::kDisk;
  return config;
}

std::string value_of(int64_t offset, int32_t generation) {
  return "g" + std::to_string(generation) + ":" + testing::value_for_offset(offset, 10, 200);
}

// The log as the test knows it: the generation of each offset's record.
struct Model {
  std::vector<int32_t> generations;
  int32_t generation = 1;
  int64_t acknowledged = 0;
  uint64_t truncations = 0;
  uint64_t held_truncations = 0;
  // The offset of the last reset: the log never starts below it again.
  int64_t reset_floor = 0;
  uint64_t resets = 0;
  uint64_t held_resets = 0;
};

// "" when the log is a prefix of the model from its log start, holding
// every acknowledged offset, with an epoch index that matches its batches.
std::string check(PartitionLog& log, const Model& model) {
  std::vector<uint8_t> bytes;
  int64_t next = 0;
  Status s = log.read_copy(log.log_start_offset(), SIZE_MAX, log.log_end_offset(), &bytes, &next);
  if (!s.ok()) return "read: " + s.to_string();
  if (log.log_end_offset() < model.acknowledged) return "an acknowledged offset was lost";
  if (log.log_end_offset() > static_cast<int64_t>(model.generations.size())) return "offsets were invented";
  if (log.log_start_offset() < model.reset_floor) return "the log starts below the last reset";
  protocol::BatchIterator it(bytes);
  protocol::RecordBatchView view;
  EpochIndex epochs;
  int64_t expected = log.log_start_offset();
  while (it.next(&view)) {
    epochs.note_batch(view.partition_leader_epoch(), view.base_offset());
    protocol::RecordIterator records(view);
    protocol::Record r;
    while (records.next(&r)) {
      const int64_t offset = view.base_offset() + r.offset_delta;
      if (offset < log.log_start_offset()) continue;
      if (offset != expected) return "gap at " + std::to_string(offset);
      ++expected;
      const std::string value(reinterpret_cast<const char*>(r.value->data()), r.value->size());
      if (value != value_of(offset, model.generations[static_cast<size_t>(offset)])) {
        return "offset " + std::to_string(offset) + " holds " + value.substr(0, value.find(':')) + ", expected g" +
               std::to_string(model.generations[static_cast<size_t>(offset)]);
      }
    }
  }
  if (it.error() != protocol::BatchError::kOk || expected != log.log_end_offset()) return "the log is cut short";
  epochs.trim_before(log.log_start_offset());
  if (epochs.entries() != log.epochs().entries()) return "the epoch index is not what the batches say";
  return "";
}

void append(PartitionLog& log, std::mt19937_64& rng, Model* model) {
  protocol::RecordBatchBuilder builder;
  const int records = 1 + static_cast<int>(rng() % 4);
  const int64_t first = log.log_end_offset();
  for (int i = 0; i < records; ++i) {
    builder.add(testing::key_for_offset(first + i), value_of(first + i, model->generation), 1000);
  }
  std::vector<uint8_t> batch = builder.build();
  AppendResult result;
  Status s = log.append(batch, AppendOptions{.leader_epoch = model->generation}, &result);
  ASSERT_TRUE(s.ok()) << s.to_string();
  model->generations.resize(static_cast<size_t>(first), 0);
  model->generations.resize(static_cast<size_t>(first + records), model->generation);
}

void truncate(PartitionLog& log, std::mt19937_64& rng, bool held, Model* model) {
  const int64_t start = log.log_start_offset();
  const int64_t end = log.log_end_offset();
  int64_t offset = start + static_cast<int64_t>(rng() % static_cast<uint64_t>(end - start + 1));
  if (offset < end) {
    BatchLocation location;
    ASSERT_TRUE(log.lookup(offset, &location).ok());
    offset = std::max(location.batch.info.base_offset, start);
  }
  Status s = log.truncate_to(offset);
  if (offset > start && s.code() == Status::Code::kInvalidArgument) return;  // the log start cut that batch
  ASSERT_TRUE(s.ok()) << s.to_string();
  model->generations.resize(static_cast<size_t>(offset));
  model->acknowledged = std::min(model->acknowledged, offset);
  ++model->generation;
  ++model->truncations;
  if (held) ++model->held_truncations;
}

// reset_to below the log start, inside the log or above its end.
void reset(PartitionLog& log, std::mt19937_64& rng, bool held, Model* model) {
  const int64_t start = log.log_start_offset();
  const int64_t end = log.log_end_offset();
  int64_t offset = 0;
  switch (rng() % 3) {
    case 0: offset = static_cast<int64_t>(rng() % static_cast<uint64_t>(start + 1)); break;
    case 1: offset = start + static_cast<int64_t>(rng() % static_cast<uint64_t>(end - start + 1)); break;
    default: offset = end + static_cast<int64_t>(rng() % 50); break;
  }
  Status s = log.reset_to(offset);
  ASSERT_TRUE(s.ok()) << s.to_string();
  // Offsets below it are never read again; all of them are durable.
  model->generations.resize(static_cast<size_t>(offset), 0);
  model->acknowledged = offset;
  model->reset_floor = offset;
  ++model->generation;
  ++model->resets;
  if (held) ++model->held_resets;
}

void run_load(std::unique_ptr<PartitionLog>* log, Flusher* flusher, const std::string& directory,
              std::mt19937_64& rng, bool with_resets, Model* model) {
  std::optional<ReadResult> held;
  const int ops = 1 + static_cast<int>(rng() % 60);
  for (int i = 0; i < ops; ++i) {
    PartitionLog& l = **log;
    const unsigned pick = static_cast<unsigned>(rng() % 100);
    if (held && rng() % 3 == 0) held.reset();
    if (pick < 60) {
      ASSERT_NO_FATAL_FAILURE(append(l, rng, model));
    } else if (pick < 70) {
      ASSERT_TRUE(l.wait_durable(l.log_end_offset(), 10000));
      model->acknowledged = std::max(model->acknowledged, l.durable_offset());
    } else if (pick < 75) {
      l.request_sync();
    } else if (pick < 88) {
      if (with_resets && pick >= 85) {
        ASSERT_NO_FATAL_FAILURE(reset(l, rng, held.has_value(), model));
      } else {
        ASSERT_NO_FATAL_FAILURE(truncate(l, rng, held.has_value(), model));
      }
    } else if (pick < 96) {
      held.emplace();
      ASSERT_TRUE(l.read(l.log_start_offset(), SIZE_MAX, l.log_end_offset(), &*held).ok());
    } else {
      held.reset();
      ASSERT_TRUE(l.close().ok());
      model->acknowledged = std::max(model->acknowledged, l.log_end_offset());
      log->reset();
      Status s = PartitionLog::open(directory, ring_config(), flusher, log);
      ASSERT_TRUE(s.ok()) << s.to_string();
      ASSERT_EQ(check(**log, *model), "") << "after a clean close";
    }
  }
  model->acknowledged = std::max(model->acknowledged, (*log)->durable_offset());
}

void run_cuts(bool with_resets) {
  const uint64_t cuts = env_number("EDDY_POWER_CUTS", 1000);
  const uint64_t seed = env_number("EDDY_POWER_CUT_SEED", std::random_device{}());
  std::printf("power cuts: %llu, seed %llu (EDDY_POWER_CUT_SEED=%llu replays it)\n",
              static_cast<unsigned long long>(cuts), static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  TempDir root(port::is_directory("/dev/shm") ? "/dev/shm" : nullptr);
  const port::LogLevel level = port::log_level();
  port::set_log_level(port::LogLevel::kOff);
  const std::string directory = root.file("disk") + "/topic-0";
  PowerCutFilesystem disk(root.file("disk"), root.file("stash"));
  port::set_file_interceptor(&disk);
  Model model;
  for (uint64_t cut = 0; cut < cuts; ++cut) {
    SCOPED_TRACE("cut " + std::to_string(cut) + " of seed " + std::to_string(seed));
    auto flusher = std::make_unique<Flusher>();
    flusher->start();
    std::unique_ptr<PartitionLog> log;
    Status s = PartitionLog::open(directory, ring_config(), flusher.get(), &log);
    ASSERT_TRUE(s.ok()) << s.to_string();
    ASSERT_EQ(check(*log, model), "");
    model.generations.resize(static_cast<size_t>(log->log_end_offset()));

    ASSERT_NO_FATAL_FAILURE(run_load(&log, flusher.get(), directory, rng, with_resets, &model));
    std::uniform_real_distribution<double> share(0, 1);
    disk.cut(rng, share(rng), share(rng));
    log.reset();
    flusher.reset();
    disk.reset();
  }
  port::set_file_interceptor(nullptr);
  port::set_log_level(level);
  std::printf("%llu truncations, %llu of them with a reader holding regions\n",
              static_cast<unsigned long long>(model.truncations),
              static_cast<unsigned long long>(model.held_truncations));
  EXPECT_GT(model.truncations, cuts);
  if (with_resets) {
    std::printf("%llu resets, %llu of them with a reader holding regions\n",
                static_cast<unsigned long long>(model.resets), static_cast<unsigned long long>(model.held_resets));
    EXPECT_GT(model.resets, cuts / 10);
  }
}

TEST(StorageTruncationPowerCutTest, TruncatedBatchesNeverComeBack) { run_cuts(/*with_resets=*/false); }

TEST(StorageTruncationPowerCutTest, NorDoBatchesAResetDropped) { run_cuts(/*with_resets=*/true); }

}  // namespace
}  // namespace eddy::storage
