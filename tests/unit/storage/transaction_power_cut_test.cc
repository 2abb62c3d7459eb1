// Power cuts under a transactional load: producers' transactional batches,
// COMMIT and ABORT markers (some for producers with nothing open), plain
// batches, syncs, clean closes, in a small ring that rolls and recycles.
// After every cut the reopened partition's transaction index must be
// exactly what the batches the log now holds say: the same open
// transactions, the same aborted ones, the same last stable offset (up to
// the first offsets of transactions that began below the log start, which a
// clean close's snapshot remembers and the batches no longer show).
//
//   EDDY_POWER_CUTS      number of cuts (default 1000)
//   EDDY_POWER_CUT_SEED  the seed to replay (each run prints the one it used)
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>

#include "port/file_interceptor.h"
#include "port/log.h"
#include "power_cut_filesystem.h"
#include "storage/partition_log.h"
#include "storage_test_util.h"
#include "transaction_test_util.h"

namespace eddy::storage {
namespace {

using protocol::ControlType;
using testing::PowerCutFilesystem;
using testing::TempDir;

constexpr int64_t kProducers = 3;

uint64_t env_number(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

LogConfig ring_config() {
  LogConfig config = testing::small_config(4096, 6 * 4096);
  config.acks_all_waits_for = AcksAllWaitsFor::kDisk;
  return config;
}

// The index the batches of [log start, LEO) describe.
::testing::AssertionResult matches_the_log(PartitionLog& log) {
  std::vector<uint8_t> bytes;
  int64_t next = 0;
  Status s = log.read_copy(log.log_start_offset(), SIZE_MAX, log.log_end_offset(), &bytes, &next);
  if (!s.ok()) return ::testing::AssertionFailure() << "read: " << s.to_string();
  TransactionIndex expected;
  protocol::BatchIterator it(bytes);
  protocol::RecordBatchView view;
  while (it.next(&view)) {
    if (view.is_control()) {
      if (auto type = protocol::control_type(view)) expected.on_marker(view.producer_id(), *type, view.base_offset());
    } else if (view.is_transactional()) {
      expected.on_data_batch(view.producer_id(), view.base_offset());
    }
  }
  const int64_t hw = log.high_watermark();
  const int64_t start = log.log_start_offset();
  expected.trim_before(start);
  expected.settle(hw);
  // A clean close's snapshot keeps the first offsets of transactions that
  // began in a segment since recycled; the batches say where what is left of
  // them begins. Both mean the same to a consumer: equal from the log start.
  auto same_first = [start](int64_t kept, int64_t scanned) {
    return kept == scanned || (kept >= 0 && kept < start && scanned >= start);
  };
  bool began_before_start = false;
  for (int64_t p = 1; p <= kProducers; ++p) {
    const int64_t kept = log.transactions().ongoing_first_offset(p);
    began_before_start |= kept >= 0 && kept < start;
    if (!same_first(kept, expected.ongoing_first_offset(p))) {
      return ::testing::AssertionFailure() << "producer " << p << ": open at " << kept << ", the log says "
                                           << expected.ongoing_first_offset(p);
    }
  }
  const auto& kept = log.transactions().aborted();
  bool same = kept.size() == expected.aborted().size();
  for (size_t i = 0; same && i < kept.size(); ++i) {
    const AbortedTransaction& a = kept[i];
    const AbortedTransaction& b = expected.aborted()[i];
    same = a.producer_id == b.producer_id && a.last_offset == b.last_offset && same_first(a.first_offset, b.first_offset);
  }
  if (!same) {
    return ::testing::AssertionFailure() << kept.size() << " aborted transactions, the log says "
                                         << expected.aborted().size();
  }
  const int64_t first = expected.first_unstable_offset(hw);
  const int64_t lso = first < 0 ? hw : std::max(std::min(first, hw), start);
  // An open transaction that began below the log start holds the LSO at the
  // log start (as Kafka), at most where the batches say.
  const bool lso_ok = began_before_start ? log.last_stable_offset() >= start && log.last_stable_offset() <= lso
                                         : log.last_stable_offset() == lso;
  if (!lso_ok) {
    return ::testing::AssertionFailure() << "LSO " << log.last_stable_offset() << ", the log says " << lso;
  }
  return ::testing::AssertionSuccess();
}

bool run_load(std::unique_ptr<PartitionLog>* log, Flusher* flusher, const std::string& directory,
              std::mt19937_64& rng) {
  const int ops = 1 + static_cast<int>(rng() % 60);
  for (int i = 0; i < ops; ++i) {
    PartitionLog& l = **log;
    const unsigned pick = static_cast<unsigned>(rng() % 100);
    const int64_t producer = 1 + static_cast<int64_t>(rng() % kProducers);
    std::vector<uint8_t> batch;
    if (pick < 45) {
      batch = testing::transactional_batch(producer, 1 + static_cast<int>(rng() % 5));
    } else if (pick < 65) {
      batch = testing::marker_batch(producer, rng() % 2 == 0 ? ControlType::kAbort : ControlType::kCommit);
    } else if (pick < 80) {
      batch = testing::simple_batch(1 + static_cast<int>(rng() % 4), 30);
    } else if (pick < 90) {
      EXPECT_TRUE(l.wait_durable(l.log_end_offset(), 10000));
      continue;
    } else if (pick < 97) {
      l.request_sync();
      continue;
    } else {
      EXPECT_EQ(l.close().code(), Status::Code::kOk);
      log->reset();
      Status s = PartitionLog::open(directory, ring_config(), flusher, log);
      EXPECT_EQ(s.code(), Status::Code::kOk) << s.to_string().c_str();
      if (!s.ok()) return false;
      EXPECT_TRUE(matches_the_log(**log));
      continue;
    }
    AppendResult result;
    Status s = l.append(batch, AppendOptions{}, &result);
    EXPECT_EQ(s.code(), Status::Code::kOk) << s.to_string().c_str();
    if (!s.ok()) return false;
  }
  return true;
}

TEST(StorageTransactionPowerCutTest, TheTransactionIndexIsWhatTheLogHoldsAfterEveryCut) {
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
  uint64_t with_transactions = 0;
  for (uint64_t cut = 0; cut < cuts; ++cut) {
    SCOPED_TRACE("cut " + std::to_string(cut) + " of seed " + std::to_string(seed));
    auto flusher = std::make_unique<Flusher>();
    flusher->start();
    std::unique_ptr<PartitionLog> log;
    Status s = PartitionLog::open(directory, ring_config(), flusher.get(), &log);
    ASSERT_EQ(s.code(), Status::Code::kOk) << s.to_string().c_str();
    ASSERT_TRUE(matches_the_log(*log));
    if (log->transactions().ongoing_count() > 0 || log->has_aborted_transactions()) ++with_transactions;

    ASSERT_TRUE(run_load(&log, flusher.get(), directory, rng));
    std::uniform_real_distribution<double> share(0, 1);
    disk.cut(rng, share(rng), share(rng));
    log.reset();
    flusher.reset();
    disk.reset();
  }
  port::set_file_interceptor(nullptr);
  port::set_log_level(level);
  std::printf("%llu of %llu reopened logs held open or aborted transactions\n",
              static_cast<unsigned long long>(with_transactions), static_cast<unsigned long long>(cuts));
  EXPECT_GT(with_transactions, cuts / 2);
}

}  // namespace
}  // namespace eddy::storage
