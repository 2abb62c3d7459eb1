// Restart cost of idempotent-producer state: fills one partition with MiB of
// batches from N producer ids (round robin, 1000-byte records), then times
// what a broker restart does:
//   log open          PartitionLog::open after a clean close (the peer: the
//                     restart cost without producer state)
//   state, snapshot   ProducerStateTable::open_partition from a snapshot at
//                     the log end (clean shutdown: N rows, nothing replayed)
//   state, no snapshot the same with the rows removed: the whole log's
//                     batch headers replayed (what snapshots avoid)
// and the time to write the snapshot itself.
//
// usage: eddy_producer_state_bench DIR [MiB=1024] [producers=10000]
// DIR must not exist (it is created, and left for inspection).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "broker/producer_state_table.h"
#include "meta/meta_store.h"
#include "port/port.h"
#include "protocol/record_batch.h"
#include "storage/flusher.h"
#include "storage/partition_log.h"

using namespace eddy;

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

storage::LogConfig bench_config() {
  storage::LogConfig c;
  c.segment_bytes = 256ull << 20;
  c.retention_bytes = storage::kNoLimit;
  c.retention_ms = storage::kNoLimit;
  c.acks_all_waits_for = storage::AcksAllWaitsFor::kPageCache;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR [MiB=1024] [producers=10000]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const int64_t mib = argc > 2 ? std::atoll(argv[2]) : 1024;
  const int64_t producers = argc > 3 ? std::atoll(argv[3]) : 10000;
  constexpr int kRecordsPerBatch = 32;
  const std::string value(1000, 'v');
  if (port::make_directories(dir)) {
    std::fprintf(stderr, "cannot create %s\n", dir.c_str());
    return 1;
  }
  storage::Flusher flusher;
  flusher.start();
  std::unique_ptr<meta::MetaStore> meta;
  Status ms = meta::MetaStore::open(dir + "/eddy.db", &meta);
  if (!ms.ok()) {
    std::fprintf(stderr, "%s\n", ms.message().c_str());
    return 1;
  }
  std::unique_ptr<storage::PartitionLog> log;
  if (!storage::PartitionLog::open(dir + "/bench-0", bench_config(), &flusher, &log).ok()) return 1;
  const int64_t now = port::wall_clock_millis();
  auto table = std::make_unique<broker::ProducerStateTable>(meta.get(), 86400000);
  if (!table->open_partition("bench", 0, log.get(), now, nullptr).ok()) return 1;
  broker::PartitionProducers* state = table->find(log.get());

  auto t0 = std::chrono::steady_clock::now();
  const uint64_t target = static_cast<uint64_t>(mib) << 20;
  uint64_t bytes = 0;
  int64_t batches = 0;
  std::vector<int32_t> next_sequence(static_cast<size_t>(producers), 0);
  protocol::RecordBatchBuilder builder;
  while (bytes < target) {
    const int64_t pid = batches % producers;
    int32_t& seq = next_sequence[static_cast<size_t>(pid)];
    builder.clear();
    builder.producer(pid, 0, seq);
    for (int i = 0; i < kRecordsPerBatch; ++i) builder.add("k", value, now + i);
    std::vector<uint8_t> batch = builder.build();
    broker::SequenceCheck c = state->check(pid, 0, seq, kRecordsPerBatch);
    if (c.action != broker::SequenceCheck::Action::kAppend) {
      std::fprintf(stderr, "unexpected verdict: %s\n", c.message.c_str());
      return 1;
    }
    storage::AppendResult r;
    Status s = log->append(batch, storage::AppendOptions{}, &r);
    if (!s.ok()) {
      std::fprintf(stderr, "append: %s\n", s.to_string().c_str());
      return 1;
    }
    state->record(pid, 0, seq, kRecordsPerBatch, r.base_offset, r.last_offset, now);
    seq += kRecordsPerBatch;
    bytes += batch.size();
    ++batches;
  }
  const double fill_ms = ms_since(t0);

  t0 = std::chrono::steady_clock::now();
  auto current = [&](const std::string&, int32_t) { return log.get(); };
  table->snapshot(current, now, /*sync=*/true);
  const double snapshot_ms = ms_since(t0);
  table.reset();
  if (!log->close().ok()) return 1;
  log.reset();

  t0 = std::chrono::steady_clock::now();
  if (!storage::PartitionLog::open(dir + "/bench-0", bench_config(), &flusher, &log).ok()) return 1;
  const double log_open_ms = ms_since(t0);

  broker::ProducerReplayStats with_snapshot;
  t0 = std::chrono::steady_clock::now();
  table = std::make_unique<broker::ProducerStateTable>(meta.get(), 86400000);
  if (!table->open_partition("bench", 0, log.get(), now, &with_snapshot).ok()) return 1;
  const double state_snapshot_ms = ms_since(t0);

  // No snapshot: what a crash before the first snapshot would cost.
  if (!meta->producer_snapshots().remove_partition("bench", 0).ok()) return 1;
  broker::ProducerReplayStats without;
  t0 = std::chrono::steady_clock::now();
  table = std::make_unique<broker::ProducerStateTable>(meta.get(), 86400000);
  if (!table->open_partition("bench", 0, log.get(), now, &without).ok()) return 1;
  const double state_replay_ms = ms_since(t0);
  const size_t known = table->find(log.get())->size();

  std::printf("log: %.0f MiB, %lld batches of %d x 1000 B, %lld producer ids (filled in %.0f ms)\n",
              bytes / 1048576.0, static_cast<long long>(batches), kRecordsPerBatch,
              static_cast<long long>(producers), fill_ms);
  std::printf("snapshot write (clean shutdown, %lld rows): %.1f ms\n", static_cast<long long>(producers), snapshot_ms);
  std::printf("restart: log open %.1f ms\n", log_open_ms);
  std::printf("restart: producer state from snapshot: %.1f ms (%zu rows, %zu batches replayed)\n", state_snapshot_ms,
              with_snapshot.snapshot_rows, with_snapshot.batches_replayed);
  std::printf("restart: producer state without snapshot: %.1f ms (%zu batches, %.0f MiB replayed; %zu producers)\n",
              state_replay_ms, without.batches_replayed, without.bytes_replayed / 1048576.0, known);
  std::printf("ratio producer state (snapshot) / log open: %.2f\n", state_snapshot_ms / log_open_ms);
  return 0;
}
