// One machine, one power cut: a partition log (through the storage room's
// PowerCutFilesystem) and eddy.db's producer snapshots (through the meta
// room's PowerCutVfs) lose power at the same moment, again and again, under
// idempotent produce, acks=all waits, periodic snapshots (at the durable
// offset) and clean shutdowns (snapshot at the synced log end). After each
// cut the reopened ProducerStateTable must agree with the recovered log:
// for every producer, the epoch, last sequence and last offset it knows are
// exactly those of that producer's last batch in the log (a snapshot never
// claims sequences for offsets the log lost, nor forgets a batch the log
// kept), and every acknowledged batch is still known.
//
//   EDDY_POWER_CUTS      number of cuts (default 200, about 10 s)
//   EDDY_POWER_CUT_SEED  the seed to replay (each run prints the one it used)
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>

#include "broker/producer_state_table.h"
#include "meta/meta_store.h"
#include "port/file_interceptor.h"
#include "port/log.h"
#include "protocol/record_batch.h"
#include "storage/flusher.h"
#include "storage/partition_log.h"
#include "tests/unit/meta/power_cut_vfs.h"
#include "tests/unit/storage/power_cut_filesystem.h"
#include "tests/unit/storage/storage_test_util.h"

namespace eddy::broker {
namespace {

using meta::testing::DirectorySyncReporter;
using meta::testing::PowerCutVfs;
using storage::testing::PowerCutFilesystem;

constexpr int64_t kNow = 1'000'000;
constexpr int64_t kExpiry = 1'000'000'000;
constexpr uint64_t kCutWindow = 400;
constexpr int kMaxOps = 200;

uint64_t env_number(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

struct Known {
  int16_t epoch = -1;
  int32_t last_sequence = -1;
  int64_t last_offset = -1;
  friend bool operator==(const Known&, const Known&) = default;
};

// The running machine: log, meta store, producer table, and the clients'
// producers (id -> next sequence) with what was acknowledged to them.
struct Machine {
  std::unique_ptr<storage::Flusher> flusher;
  std::unique_ptr<storage::PartitionLog> log;
  std::unique_ptr<meta::MetaStore> meta;
  std::unique_ptr<ProducerStateTable> table;
};

struct Clients {
  std::map<int64_t, int32_t> next_sequence;
  std::map<int64_t, std::pair<int64_t, int32_t>> appended;  // id -> (last offset, last sequence) per append
  std::map<int64_t, int32_t> acknowledged;                  // id -> last sequence acknowledged as durable
  std::map<int64_t, std::map<int64_t, int32_t>> by_offset;  // id -> last offset -> last sequence, unacknowledged
};

// Segments of 64 KiB, no retention: every batch stays, so the whole log is the
// truth to compare with (retention would let the broker rightly remember
// producers whose batches are gone).
storage::LogConfig log_config() {
  storage::LogConfig config = storage::testing::small_config(64 * 1024);
  config.acks_all_waits_for = storage::AcksAllWaitsFor::kDisk;
  return config;
}

Status open_machine(PowerCutVfs& vfs, const std::string& disk, Machine* m) {
  m->flusher = std::make_unique<storage::Flusher>();
  m->flusher->start();
  Status s = storage::PartitionLog::open(disk + "/t-0", log_config(), m->flusher.get(), &m->log);
  meta::MetaStore::Options options;
  options.producer_id_block_size = 2;
  options.sqlite_vfs = vfs.name();
  if (s.ok()) s = meta::MetaStore::open(disk + "/eddy.db", options, &m->meta);
  if (!s.ok()) return s;
  m->table = std::make_unique<ProducerStateTable>(m->meta.get(), kExpiry);
  return m->table->open_partition("t", 0, m->log.get(), kNow, nullptr);
}

// What the recovered log says of each producer: its last batch.
std::map<int64_t, Known> truth_of(storage::PartitionLog& log) {
  std::map<int64_t, Known> truth;
  std::vector<uint8_t> bytes;
  for (int64_t offset = log.log_start_offset(); offset < log.log_end_offset();) {
    int64_t next = offset;
    EXPECT_TRUE(log.read_copy(offset, 1 << 20, log.log_end_offset(), &bytes, &next).ok());
    if (next <= offset) break;
    protocol::BatchIterator it(bytes, /*verify_crc=*/true);
    protocol::RecordBatchView batch;
    while (it.next(&batch)) {
      if (batch.producer_id() < 0) continue;
      truth[batch.producer_id()] =
          Known{batch.producer_epoch(), batch.base_sequence() + batch.record_count() - 1, batch.last_offset()};
    }
    offset = next;
  }
  return truth;
}

// After a cut: the table knows exactly what the log holds, and everything
// acknowledged. Clients continue from what the broker knows.
void check_agree(Machine& m, Clients* clients) {
  std::map<int64_t, Known> truth = truth_of(*m.log);
  std::map<int64_t, Known> known;
  m.table->find("t", 0)->for_each([&](int64_t id, const ProducerEntry& e) {
    known[id] = Known{e.epoch, e.last_sequence, e.last_offset};
  });
  for (const auto& [id, t] : truth) {
    auto k = known.find(id);
    ASSERT_NE(k, known.end()) << "producer " << id << " has batches in the log but the broker forgot it";
    EXPECT_EQ(k->second.last_sequence, t.last_sequence) << "producer " << id;
    EXPECT_EQ(k->second.last_offset, t.last_offset) << "producer " << id;
    EXPECT_EQ(k->second.epoch, t.epoch) << "producer " << id;
  }
  for (const auto& [id, k] : known) {
    EXPECT_EQ(truth.count(id), 1u) << "producer " << id << " known (last offset " << k.last_offset
                                   << ") without a batch in the log [" << m.log->log_start_offset() << ", "
                                   << m.log->log_end_offset() << ")";
  }
  for (const auto& [id, seq] : clients->acknowledged) {
    EXPECT_GE(truth.count(id) ? truth[id].last_sequence : -1, seq) << "an acknowledged batch of " << id << " is lost";
  }
  for (auto& [id, next] : clients->next_sequence) next = truth.count(id) ? truth[id].last_sequence + 1 : 0;
  clients->by_offset.clear();
}

void produce(std::mt19937_64& rng, Machine& m, Clients* clients) {
  auto p = std::next(clients->next_sequence.begin(), static_cast<long>(rng() % clients->next_sequence.size()));
  const int count = 1 + static_cast<int>(rng() % 4);
  protocol::RecordBatchBuilder builder;
  builder.producer(p->first, 0, p->second);
  for (int i = 0; i < count; ++i) builder.add("k", std::string(10 + rng() % 200, 'v'), kNow);
  std::vector<uint8_t> batch = builder.build();
  PartitionProducers* producers = m.table->find("t", 0);
  ASSERT_EQ(producers->check(p->first, 0, p->second, count).action, SequenceCheck::Action::kAppend);
  storage::AppendResult result;
  Status s = m.log->append(batch, storage::AppendOptions{}, &result);
  if (!s.ok()) return;  // the cut: the storage refuses
  producers->record(p->first, 0, p->second, count, result.base_offset, result.last_offset, kNow);
  p->second += count;
  clients->by_offset[p->first][result.last_offset] = p->second - 1;
}

// acks=all: what the sync covered is acknowledged.
void acknowledge(Machine& m, Clients* clients) {
  if (!m.log->wait_durable(m.log->log_end_offset(), 10000)) return;
  const int64_t durable = m.log->durable_offset();
  for (auto& [id, batches] : clients->by_offset) {
    for (auto it = batches.begin(); it != batches.end() && it->first < durable;) {
      clients->acknowledged[id] = std::max(clients->acknowledged[id], it->second);
      it = batches.erase(it);
    }
  }
}

// Returns false once the power is gone.
bool run_load(std::mt19937_64& rng, PowerCutVfs& vfs, const std::string& disk, Machine& m, Clients* clients) {
  for (int i = 0; i < kMaxOps && !vfs.is_cut(); ++i) {
    const unsigned roll = static_cast<unsigned>(rng() % 100);
    if (clients->next_sequence.empty() || roll < 3) {
      int64_t id = -1;
      if (m.meta->producer_ids().next(&id).ok()) clients->next_sequence[id] = 0;
    } else if (roll < 70) {
      produce(rng, m, clients);
    } else if (roll < 85) {
      acknowledge(m, clients);
    } else if (roll < 97) {
      m.table->snapshot([&](const std::string&, int32_t) { return m.log.get(); }, kNow, /*sync=*/false);
    } else {
      m.table->snapshot([&](const std::string&, int32_t) { return m.log.get(); }, kNow, /*sync=*/true);
      acknowledge(m, clients);
      m.table.reset();
      if (!m.log->close().ok() || !m.meta->close().ok()) return false;
      m = Machine{};
      if (!open_machine(vfs, disk, &m).ok()) return false;
      check_agree(m, clients);
    }
    if (::testing::Test::HasFailure()) return false;
  }
  return false;
}

TEST(ProducerPowerCutTest, ProducerStateAgreesWithTheRecoveredLog) {
  const uint64_t cuts = env_number("EDDY_POWER_CUTS", 200);
  const uint64_t seed = env_number("EDDY_POWER_CUT_SEED", std::random_device{}());
  std::printf("power cuts: %llu, seed %llu (EDDY_POWER_CUT_SEED=%llu replays it)\n",
              static_cast<unsigned long long>(cuts), static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  storage::testing::TempDir root(port::is_directory("/dev/shm") ? "/dev/shm" : nullptr);
  const std::string disk = root.file("disk");
  ASSERT_FALSE(port::make_directories(disk));
  ASSERT_FALSE(port::make_directories(root.file("vfs-stash")));
  const port::LogLevel level = port::log_level();
  port::set_log_level(port::LogLevel::kOff);
  PowerCutFilesystem fs(disk, root.file("stash"));
  PowerCutVfs vfs("eddy-power-cut-machine", root.file("vfs-stash"));
  DirectorySyncReporter machine_interceptor(&vfs, &fs);
  port::set_file_interceptor(&machine_interceptor);

  Clients clients;
  uint64_t opens_cut = 0;
  for (uint64_t cut = 0; cut < cuts && !::testing::Test::HasFailure(); ++cut) {
    SCOPED_TRACE("cut " + std::to_string(cut) + " of seed " + std::to_string(seed));
    vfs.arm(1 + rng() % kCutWindow);
    Machine m;
    Status s = open_machine(vfs, disk, &m);
    if (!s.ok()) {
      ASSERT_TRUE(vfs.is_cut()) << "cannot start after a power cut: " << s.to_string();
      ++opens_cut;
    } else {
      check_agree(m, &clients);
      run_load(rng, vfs, disk, m, &clients);
    }
    vfs.cut_now();  // (if the load ended first)
    const double p = (rng() % 3) * 0.5;
    fs.cut(rng, p, p);
    m.table.reset();
    m.log.reset();
    m.flusher.reset();
    m.meta.reset();
    vfs.power_off(rng, p, p);
    fs.reset();
  }
  port::set_file_interceptor(nullptr);
  port::set_log_level(level);
  std::printf("%llu cuts (%llu during a start), %llu producers\n", static_cast<unsigned long long>(cuts),
              static_cast<unsigned long long>(opens_cut), static_cast<unsigned long long>(clients.next_sequence.size()));
}

}  // namespace
}  // namespace eddy::broker
