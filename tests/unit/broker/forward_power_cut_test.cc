// One gateway, one power cut: two partition logs (the storage room's
// PowerCutFilesystem), eddy.db (producer ids and idempotence snapshots) and
// forward.db (a link's cursors and uplink producer; both through the meta
// room's PowerCutVfs) lose power at the same moment, again and again, under
// a mixed load: idempotent local producers, acks=all waits, snapshots, clean
// restarts, and a store-and-forward link sending what lies below the last
// stable offset to a central cluster and saving its progress as the forward
// room does (forward/link.cc): one forward.db transaction per answer with
// the cursors of every partition it moved, a producer reset saving every
// cursor with the new producer, windows rewound when the connection drops.
// The link's numbers are kept by the forward room's own SendWindow; the
// link's thread is not run (its timing would make a cut unreplayable), its
// steps are taken here in the order link.cc takes them.
//
// The central cluster is another machine (it keeps everything) and behaves
// as Kafka does per producer and partition: the next sequence is written, a
// sequence of one of the last 5 batches is a duplicate, anything else is out
// of order (which the link must never provoke).
//
// After each cut, on what the disks kept:
//   - both databases open and pass PRAGMA integrity_check; the logs recover;
//   - every batch acknowledged as durable is in its log, and the producer
//     table agrees with the logs (each producer's last batch);
//   - forward.db holds the last acknowledged save, or that plus the save the
//     cut interrupted, as a whole: cursors, producer id, epoch and sequences
//     never go back;
//   - no cursor points beyond its log's end, and the central cluster holds
//     nothing the edge lost: every batch it wrote is, byte for byte (CRC),
//     the batch the recovered log holds at that offset;
//   - the link resumes exactly: what it sends next from its cursor is either
//     a batch the central cluster recognises as a duplicate or the next one
//     it lacks (checked before any send, and on every send: the central
//     cluster writes local offsets consecutively, without gap or duplicate).
// Every kCutsPerLife cuts the machine starts again on an empty disk (so
// that each check stays short however many cuts run).
//
//   EDDY_POWER_CUTS      number of cuts (default 200; `make power-cuts` runs more)
//   EDDY_POWER_CUT_SEED  the seed to replay (each run prints the one it used)
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "broker/producer_state_table.h"
#include "forward/send_window.h"
#include "meta/forward_progress.h"
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
constexpr int32_t kPartitions = 2;
constexpr int32_t kMaxInFlight = 5;  // the link's max.in.flight limit, and what Kafka remembers per producer
constexpr uint64_t kCutWindow = 220;
constexpr int kMaxOps = 150;
constexpr uint64_t kCutsPerLife = 50;
const char kTopic[] = "t";
const char kLink[] = "central";

uint64_t env_number(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

// A stored batch as the central cluster got it: local offsets and the
// stored batch's CRC (which covers its records).
struct BatchPrint {
  int64_t base_offset = 0;
  int64_t next_offset = 0;
  uint32_t crc = 0;
  friend bool operator==(const BatchPrint&, const BatchPrint&) = default;
};

// ---------------------------------------------------------------------------
// The central cluster: Kafka's idempotence rules per producer and partition.
// ---------------------------------------------------------------------------

class Central {
 public:
  enum class Answer { kWritten, kDuplicate, kOutOfOrder };

  int64_t init_producer_id() { return next_producer_id_++; }

  // What Kafka would answer to batch under (producer_id, base_sequence);
  // why: the reason when out of order. Does not write.
  Answer judge(int32_t p, int64_t producer_id, int32_t base_sequence, const BatchPrint& batch,
               std::string* why) const {
    const Partition& part = partitions_[p];
    auto it = part.producers.find(producer_id);
    const bool known = it != part.producers.end();
    const int32_t expected = known ? it->second.next_sequence : 0;
    if (known) {
      for (const Recent& r : it->second.recent) {
        if (r.base_sequence != base_sequence) continue;
        if (part.log[r.index] == batch) return Answer::kDuplicate;
        *why = "sequence " + std::to_string(base_sequence) + " was written for offset " +
               std::to_string(part.log[r.index].base_offset) + ", now sent for offset " +
               std::to_string(batch.base_offset);
        return Answer::kOutOfOrder;
      }
    }
    if (base_sequence != expected) {
      *why = "sequence " + std::to_string(base_sequence) + " (offset " + std::to_string(batch.base_offset) +
             ") where " + std::to_string(expected) + " is next for producer " + std::to_string(producer_id);
      return Answer::kOutOfOrder;
    }
    if (batch.base_offset != next_offset(p)) {
      *why = "new data at local offset " + std::to_string(batch.base_offset) + " where the central partition holds " +
             "everything below " + std::to_string(next_offset(p)) + " (a gap or a duplicate)";
      return Answer::kOutOfOrder;
    }
    return Answer::kWritten;
  }

  Answer produce(int32_t p, int64_t producer_id, int32_t base_sequence, int32_t next_sequence,
                 const BatchPrint& batch, std::string* why) {
    const Answer answer = judge(p, producer_id, base_sequence, batch, why);
    if (answer != Answer::kWritten) return answer;
    Partition& part = partitions_[p];
    Producer& producer = part.producers[producer_id];
    part.log.push_back(batch);
    producer.next_sequence = next_sequence;
    producer.recent.push_back({base_sequence, part.log.size() - 1});
    if (producer.recent.size() > static_cast<size_t>(kMaxInFlight)) producer.recent.pop_front();
    return answer;
  }

  int64_t next_offset(int32_t p) const {
    return partitions_[p].log.empty() ? 0 : partitions_[p].log.back().next_offset;
  }
  const std::vector<BatchPrint>& log(int32_t p) const { return partitions_[p].log; }

 private:
  struct Recent {
    int32_t base_sequence;
    size_t index;  // in the partition's log
  };
  struct Producer {
    int32_t next_sequence = 0;
    std::deque<Recent> recent;  // the last kMaxInFlight batches written
  };
  struct Partition {
    std::vector<BatchPrint> log;
    std::map<int64_t, Producer> producers;
  };
  int64_t next_producer_id_ = 5000;
  Partition partitions_[kPartitions];
};

std::ostream& operator<<(std::ostream& os, Central::Answer answer) {
  switch (answer) {
    case Central::Answer::kWritten: return os << "written";
    case Central::Answer::kDuplicate: return os << "duplicate";
    case Central::Answer::kOutOfOrder: return os << "out of order";
  }
  return os;
}

// ---------------------------------------------------------------------------
// The machine and what its clients were told
// ---------------------------------------------------------------------------

// forward.db's content for the link.
struct ForwardState {
  meta::ForwardProducer producer;
  std::map<int32_t, meta::ForwardCursor> cursors;
  friend bool operator==(const ForwardState&, const ForwardState&) = default;
};

std::string describe(const ForwardState& s) {
  std::string out =
      "producer " + std::to_string(s.producer.producer_id) + "/" + std::to_string(s.producer.producer_epoch);
  for (const auto& [p, c] : s.cursors) {
    out += ", " + std::to_string(p) + ": offset " + std::to_string(c.next_offset) + " producer " +
           std::to_string(c.producer_id) + " sequence " + std::to_string(c.next_sequence);
  }
  return out;
}

struct InFlight {
  int32_t partition;
  uint64_t tag;
  Central::Answer answer;
};

// The link's state in memory (what link.cc keeps on its thread).
struct LinkState {
  meta::ForwardProducer identity;
  std::vector<forward::SendWindow> windows;  // by partition
  std::deque<InFlight> answers;              // sent, not yet read, oldest first
  uint64_t next_tag = 1;
};

struct Machine {
  std::unique_ptr<storage::Flusher> flusher;
  std::unique_ptr<storage::PartitionLog> logs[kPartitions];
  std::unique_ptr<meta::MetaStore> meta;
  std::unique_ptr<meta::ForwardProgress> forward;
  std::unique_ptr<ProducerStateTable> table;
  LinkState link;
};

using ProducerKey = std::pair<int64_t, int32_t>;  // (producer id, partition)

struct World {
  Central central;
  // Local producers.
  std::vector<int64_t> producer_ids;
  std::map<ProducerKey, int32_t> next_sequence;
  std::map<ProducerKey, int32_t> acknowledged;                  // last sequence acknowledged as durable
  std::map<ProducerKey, std::map<int64_t, int32_t>> by_offset;  // last offset -> last sequence, unacknowledged
  // forward.db: what the last successful save left, and what the save the
  // cut interrupted would have left.
  ForwardState saved;
  std::optional<ForwardState> interrupted;
};

// What the load was doing when the power went (run_load's operations).
enum Op { kNewProducerId, kProduce, kAcknowledge, kSnapshot, kSend, kReceive, kDrop, kReset, kRestart, kOps };
const char* const kOpNames[kOps] = {"producer id", "produce", "acks=all wait", "snapshot", "send",
                                    "receive+save",  "drop",    "reset+save",    "clean restart"};

struct Counters {
  uint64_t cut_during[kOps] = {};
  uint64_t cut_between = 0;  // the load ended first
  uint64_t opens_cut = 0, saves = 0, saves_interrupted = 0, interrupted_survived = 0, written = 0, duplicates = 0;
  uint64_t resets = 0, clean_restarts = 0, lives = 1;
};

storage::LogConfig log_config() {
  storage::LogConfig config = storage::testing::small_config(64 * 1024);
  config.acks_all_waits_for = storage::AcksAllWaitsFor::kDisk;
  return config;
}

storage::PartitionLog* log_of(Machine& m, const std::string&, int32_t partition) {
  return m.logs[partition].get();
}

// ---------------------------------------------------------------------------
// The link's steps, as link.cc takes them
// ---------------------------------------------------------------------------

// progress_->save; the model follows what it left, or what it would have.
Status save_progress(Machine& m, World* world, const std::vector<meta::ForwardCursor>& cursors,
                     const meta::ForwardProducer* producer, Counters* counters) {
  ForwardState after = world->saved;
  if (producer != nullptr) after.producer = *producer;
  for (const meta::ForwardCursor& c : cursors) after.cursors[c.partition] = c;
  Status s = m.forward->save(kLink, cursors, producer);
  if (s.ok()) {
    world->saved = std::move(after);
    ++counters->saves;
  } else {
    world->interrupted = std::move(after);
    ++counters->saves_interrupted;
  }
  return s;
}

// Link::reset_producer: a new producer id; every cursor starts again at
// sequence 0 under it, saved with it in one transaction. REQUIRES
// all_answered() (so that the reset stays exactly-once).
Status reset_producer(Machine& m, World* world, Counters* counters) {
  const meta::ForwardProducer fresh{world->central.init_producer_id(), 0};
  std::vector<meta::ForwardCursor> cursors;
  for (forward::SendWindow& w : m.link.windows) {
    w.restart_sequences(fresh);
    cursors.push_back(w.acked());
  }
  Status s = save_progress(m, world, cursors, &fresh, counters);
  if (s.ok()) m.link.identity = fresh;
  ++counters->resets;
  return s;
}

// Link::run, connect and add_partition: the producer and cursors loaded,
// a first start's producer saved; a partition never forwarded starts at
// its log start.
Status start_link(Machine& m, World* world, Counters* counters) {
  Status s = m.forward->load_producer(kLink, &m.link.identity);
  if (s.is_not_found()) {
    const meta::ForwardProducer fresh{world->central.init_producer_id(), 0};
    s = save_progress(m, world, {}, &fresh, counters);
    if (s.ok()) m.link.identity = fresh;
  }
  for (int32_t p = 0; s.ok() && p < kPartitions; ++p) {
    meta::ForwardCursor cursor;
    s = m.forward->get(kLink, kTopic, p, &cursor);
    if (s.is_not_found()) {
      cursor = meta::ForwardCursor{};
      cursor.topic = kTopic;
      cursor.partition = p;
      cursor.next_offset = m.logs[p]->log_start_offset();
      s = Status();
    }
    // With eddy.acks.all.waits.for=disk the link forwards durable data only:
    // Link::rewind_past_lost_tail must never have anything to do.
    EXPECT_LE(cursor.next_offset, m.logs[p]->log_end_offset())
        << "partition " << p << ": forward.db's cursor points beyond the recovered log";
    m.link.windows.emplace_back(cursor, m.link.identity, kMaxInFlight);
  }
  return s;
}

// One batch of partition p from its send offset, as Link::next_batch reads
// it (below the last stable offset). False when there is none.
bool send_one(Machine& m, World* world, int32_t p, Counters* counters) {
  forward::SendWindow& w = m.link.windows[p];
  storage::PartitionLog& log = *m.logs[p];
  if (!w.can_send() || w.send_offset() >= log.last_stable_offset()) return false;
  std::vector<uint8_t> bytes;
  int64_t next = 0;
  if (!log.read_copy(w.send_offset(), 64 * 1024, log.last_stable_offset(), &bytes, &next).ok()) return false;
  protocol::BatchIterator it(bytes, /*verify_crc=*/true);
  protocol::RecordBatchView batch;
  if (!it.next(&batch)) return false;
  EXPECT_EQ(batch.base_offset(), w.send_offset()) << "partition " << p << ": the send offset is not a batch's start";
  const BatchPrint print{batch.base_offset(), batch.next_offset(), batch.crc()};
  const uint64_t tag = m.link.next_tag++;
  const int32_t base_sequence = w.send(tag, print.base_offset, print.next_offset, batch.size());
  std::string why;
  const Central::Answer answer =
      world->central.produce(p, w.acked().producer_id, base_sequence, w.send_sequence(), print, &why);
  EXPECT_NE(answer, Central::Answer::kOutOfOrder) << "partition " << p << ": the central cluster refuses: " << why;
  if (answer == Central::Answer::kWritten) ++counters->written;
  if (answer == Central::Answer::kDuplicate) ++counters->duplicates;
  m.link.answers.push_back({p, tag, answer});
  return true;
}

// Link::receive_oldest: reads up to count answers; the cursors they moved
// are saved in one transaction before anything more is sent.
Status receive(Machine& m, World* world, size_t count, Counters* counters) {
  std::map<int32_t, meta::ForwardCursor> changed;
  for (; count > 0 && !m.link.answers.empty(); --count) {
    const InFlight answer = m.link.answers.front();
    m.link.answers.pop_front();
    forward::SendWindow::Batch done{};
    EXPECT_TRUE(m.link.windows[answer.partition].acknowledge(answer.tag, &done)) << "an answer out of order";
    changed[answer.partition] = m.link.windows[answer.partition].acked();
  }
  if (changed.empty()) return Status();
  std::vector<meta::ForwardCursor> cursors;
  for (const auto& [p, c] : changed) cursors.push_back(c);
  return save_progress(m, world, cursors, nullptr, counters);
}

// Link::rewind after a lost connection: the answers never come; every
// window resends from its cursor (the central cluster wrote what it got).
void drop_connection(Machine& m) {
  m.link.answers.clear();
  for (forward::SendWindow& w : m.link.windows) w.rewind();
}

// Nothing in flight, and the central cluster holds nothing beyond the
// cursors. A producer reset with batches written but never answered (lost
// with a connection) sends them again under the new producer: the
// at-least-once case src/forward/README.md documents, not tested here.
bool all_answered(const Machine& m, const World& world) {
  for (int32_t p = 0; p < kPartitions; ++p) {
    const forward::SendWindow& w = m.link.windows[p];
    if (!w.idle() || w.acked().next_offset != world.central.next_offset(p)) return false;
  }
  return m.link.answers.empty();
}

// ---------------------------------------------------------------------------
// Local producers (as in producer_power_cut_test.cc, over two partitions)
// ---------------------------------------------------------------------------

Status open_machine(PowerCutVfs& vfs, const std::string& disk, Machine* m) {
  m->flusher = std::make_unique<storage::Flusher>();
  m->flusher->start();
  Status s;
  for (int32_t p = 0; s.ok() && p < kPartitions; ++p) {
    s = storage::PartitionLog::open(disk + "/t-" + std::to_string(p), log_config(), m->flusher.get(), &m->logs[p]);
  }
  meta::MetaStore::Options options;
  options.producer_id_block_size = 2;
  options.sqlite_vfs = vfs.name();
  if (s.ok()) s = meta::MetaStore::open(disk + "/eddy.db", options, &m->meta);
  if (s.ok()) s = meta::ForwardProgress::open(disk + "/forward.db", &m->forward, vfs.name());
  if (!s.ok()) return s;
  m->table = std::make_unique<ProducerStateTable>(m->meta.get(), kExpiry);
  for (int32_t p = 0; s.ok() && p < kPartitions; ++p) {
    s = m->table->open_partition(kTopic, p, m->logs[p].get(), kNow, nullptr);
  }
  return s;
}

// Each producer's last batch in the recovered log, and every batch by offset.
void read_log(storage::PartitionLog& log, int32_t p, std::map<ProducerKey, ProducerEntry>* last,
              std::map<int64_t, BatchPrint>* batches) {
  std::vector<uint8_t> bytes;
  for (int64_t offset = log.log_start_offset(); offset < log.log_end_offset();) {
    int64_t next = offset;
    EXPECT_TRUE(log.read_copy(offset, 1 << 20, log.log_end_offset(), &bytes, &next).ok());
    if (next <= offset) break;
    protocol::BatchIterator it(bytes, /*verify_crc=*/true);
    protocol::RecordBatchView batch;
    while (it.next(&batch)) {
      (*batches)[batch.base_offset()] = BatchPrint{batch.base_offset(), batch.next_offset(), batch.crc()};
      if (batch.producer_id() < 0) continue;
      ProducerEntry& e = (*last)[{batch.producer_id(), p}];
      e.epoch = batch.producer_epoch();
      e.last_sequence = batch.base_sequence() + batch.record_count() - 1;
      e.last_offset = batch.last_offset();
    }
    offset = next;
  }
}

void produce(std::mt19937_64& rng, Machine& m, World* world) {
  if (world->producer_ids.empty()) return;
  const int64_t id = world->producer_ids[rng() % world->producer_ids.size()];
  const int32_t p = static_cast<int32_t>(rng() % kPartitions);
  int32_t& sequence = world->next_sequence[{id, p}];
  const int count = 1 + static_cast<int>(rng() % 4);
  protocol::RecordBatchBuilder builder;
  builder.producer(id, 0, sequence);
  for (int i = 0; i < count; ++i) builder.add("k", std::string(10 + rng() % 200, 'v'), kNow);
  std::vector<uint8_t> batch = builder.build();
  PartitionProducers* producers = m.table->find(kTopic, p);
  ASSERT_EQ(producers->check(id, 0, sequence, count).action, SequenceCheck::Action::kAppend);
  storage::AppendResult result;
  if (!m.logs[p]->append(batch, storage::AppendOptions{}, &result).ok()) return;  // the cut: the storage refuses
  producers->record(id, 0, sequence, count, result.base_offset, result.last_offset, kNow);
  sequence += count;
  world->by_offset[{id, p}][result.last_offset] = sequence - 1;
}

// acks=all: what the sync covered is acknowledged.
void acknowledge(Machine& m, World* world) {
  for (int32_t p = 0; p < kPartitions; ++p) {
    storage::PartitionLog& log = *m.logs[p];
    if (!log.wait_durable(log.log_end_offset(), 10000)) return;
    const int64_t durable = log.durable_offset();
    for (auto& [key, batches] : world->by_offset) {
      if (key.second != p) continue;
      for (auto it = batches.begin(); it != batches.end() && it->first < durable;) {
        world->acknowledged[key] = std::max(world->acknowledged[key], it->second);
        it = batches.erase(it);
      }
    }
  }
}

// ---------------------------------------------------------------------------
// The checks after a cut (or a clean restart)
// ---------------------------------------------------------------------------

std::string integrity(Machine& m) {
  std::string out;
  for (meta::Database* db : {m.meta->database(), m.forward->database()}) {
    std::string verdict;
    Status s = db->query_text("PRAGMA integrity_check", &verdict);
    if (!s.ok()) out += s.to_string() + "\n";
    else if (verdict != "ok") out += db->path() + ": " + verdict + "\n";
  }
  return out;
}

// The logs hold every acknowledged batch and agree with the producer table;
// the central cluster holds nothing the logs lost. Clients continue from
// what the broker knows.
void check_logs(Machine& m, World* world) {
  std::map<ProducerKey, ProducerEntry> truth;
  for (int32_t p = 0; p < kPartitions; ++p) {
    std::map<int64_t, BatchPrint> batches;
    read_log(*m.logs[p], p, &truth, &batches);
    std::map<ProducerKey, ProducerEntry> known;
    m.table->find(kTopic, p)->for_each([&](int64_t id, const ProducerEntry& e) { known[{id, p}] = e; });
    for (const auto& [key, e] : known) {
      auto t = truth.find(key);
      ASSERT_NE(t, truth.end()) << "producer " << key.first << " known on partition " << p << " without a batch";
      EXPECT_EQ(e.last_sequence, t->second.last_sequence) << "producer " << key.first << " partition " << p;
      EXPECT_EQ(e.last_offset, t->second.last_offset) << "producer " << key.first << " partition " << p;
    }
    EXPECT_LE(world->central.next_offset(p), m.logs[p]->log_end_offset())
        << "partition " << p << ": the central cluster holds offsets the edge lost in the cut";
    for (const BatchPrint& b : world->central.log(p)) {
      auto local = batches.find(b.base_offset);
      ASSERT_TRUE(local != batches.end() && local->second == b)
          << "partition " << p << ": the central cluster's batch at offset " << b.base_offset
          << " is not the one the recovered log holds there";
    }
  }
  for (const auto& [key, seq] : world->acknowledged) {
    auto t = truth.find(key);
    EXPECT_GE(t == truth.end() ? -1 : t->second.last_sequence, seq)
        << "an acknowledged batch of producer " << key.first << " on partition " << key.second << " is lost";
  }
  for (auto& [key, next] : world->next_sequence) {
    auto t = truth.find(key);
    next = t == truth.end() ? 0 : t->second.last_sequence + 1;
  }
  world->by_offset.clear();
}

// forward.db holds the last save, or that plus the interrupted one, whole;
// what the link sends next from each cursor is what the central cluster
// expects (a duplicate it recognises, or the next batch it lacks).
void check_forward(Machine& m, World* world, Counters* counters) {
  ForwardState recovered;
  Status s = m.forward->load_producer(kLink, &recovered.producer);
  ASSERT_TRUE(s.ok() || s.is_not_found()) << s.to_string();
  std::vector<meta::ForwardCursor> cursors;
  ASSERT_TRUE(m.forward->load(kLink, &cursors).ok());
  for (const meta::ForwardCursor& c : cursors) recovered.cursors[c.partition] = c;
  if (recovered == world->saved) {
  } else if (world->interrupted && recovered == *world->interrupted) {
    ++counters->interrupted_survived;
  } else {
    FAIL() << "forward.db went back or holds part of a save.\n  saved:       " << describe(world->saved)
           << "\n  interrupted: " << (world->interrupted ? describe(*world->interrupted) : "(none)")
           << "\n  recovered:   " << describe(recovered);
  }
  world->saved = recovered;
  world->interrupted.reset();
  for (int32_t p = 0; p < kPartitions; ++p) {
    const forward::SendWindow& w = m.link.windows[p];
    if (w.send_offset() >= world->central.next_offset(p)) {
      EXPECT_EQ(w.send_offset(), world->central.next_offset(p))
          << "partition " << p << ": the link would leave a gap at the central cluster";
      continue;
    }
    std::map<ProducerKey, ProducerEntry> unused;
    std::map<int64_t, BatchPrint> batches;
    read_log(*m.logs[p], p, &unused, &batches);
    auto next = batches.find(w.send_offset());
    ASSERT_NE(next, batches.end()) << "partition " << p << ": the cursor is not at a batch's start";
    std::string why;
    EXPECT_EQ(world->central.judge(p, w.acked().producer_id, w.send_sequence(), next->second, &why),
              Central::Answer::kDuplicate)
        << "partition " << p << ": the link's resend from its cursor would not be recognised: " << why;
  }
}

// ---------------------------------------------------------------------------
// The load and the cuts
// ---------------------------------------------------------------------------

// A test-only connection setting, as in meta_power_cut_test.cc: a small
// autocheckpoint makes commits checkpoint into the main file (its writes,
// syncs, the WAL's restarts) far more often than the default 1000 pages.
void tune_checkpoints(std::mt19937_64& rng, Machine& m) {
  static const char* const kSettings[] = {"PRAGMA wal_autocheckpoint = 1000", "PRAGMA wal_autocheckpoint = 2",
                                          "PRAGMA wal_autocheckpoint = 8"};
  EXPECT_TRUE(m.meta->database()->exec(kSettings[rng() % 3]).ok());
  EXPECT_TRUE(m.forward->database()->exec(kSettings[rng() % 3]).ok());
}

Status open_and_check(std::mt19937_64& rng, PowerCutVfs& vfs, const std::string& disk, World* world, Machine* m,
                      Counters* counters) {
  Status s = open_machine(vfs, disk, m);
  if (s.ok()) s = start_link(*m, world, counters);
  if (!s.ok()) return s;
  EXPECT_EQ(integrity(*m), "");
  check_logs(*m, world);
  check_forward(*m, world, counters);
  tune_checkpoints(rng, *m);
  return s;
}

void close_machine(Machine& m) {
  m.table.reset();
  for (auto& log : m.logs) log.reset();
  m.flusher.reset();
  m.meta.reset();
  m.forward.reset();
}

// A clean shutdown (snapshots at the synced log end) and start. False when
// the cut came.
bool clean_restart(std::mt19937_64& rng, PowerCutVfs& vfs, const std::string& disk, World* world, Machine& m,
                   Counters* counters) {
  ++counters->clean_restarts;
  m.table->snapshot([&](const std::string& t, int32_t p) { return log_of(m, t, p); }, kNow, /*sync=*/true);
  acknowledge(m, world);
  m.table.reset();
  for (auto& log : m.logs) {
    if (!log->close().ok()) return false;
  }
  if (!m.meta->close().ok() || !m.forward->close().ok()) return false;
  close_machine(m);
  m = Machine{};
  return open_and_check(rng, vfs, disk, world, &m, counters).ok();
}

Op pick_op(std::mt19937_64& rng, const World& world) {
  const unsigned roll = static_cast<unsigned>(rng() % 100);
  if (world.producer_ids.empty() || roll < 3) return kNewProducerId;
  if (roll < 45) return kProduce;
  if (roll < 55) return kAcknowledge;
  if (roll < 62) return kSnapshot;
  if (roll < 80) return kSend;
  if (roll < 96) return kReceive;
  if (roll < 98) return kDrop;
  return roll < 99 ? kReset : kRestart;
}

// One operation; false when it failed (*error: why; the cut, or a failure).
bool run_op(Op op, std::mt19937_64& rng, PowerCutVfs& vfs, const std::string& disk, World* world, Machine& m,
            Counters* counters, std::string* error) {
  Status s;
  switch (op) {
    case kNewProducerId: {
      int64_t id = -1;
      if (m.meta->producer_ids().next(&id).ok()) world->producer_ids.push_back(id);
      return true;
    }
    case kProduce: produce(rng, m, world); return true;
    case kAcknowledge: acknowledge(m, world); return true;
    case kSnapshot:
      m.table->snapshot([&](const std::string& t, int32_t p) { return log_of(m, t, p); }, kNow, /*sync=*/false);
      return true;
    case kSend:
      for (int n = 1 + static_cast<int>(rng() % kMaxInFlight); n > 0; --n) {
        if (!send_one(m, world, static_cast<int32_t>(rng() % kPartitions), counters)) break;
      }
      return true;
    case kReceive: s = receive(m, world, 1 + rng() % 4, counters); break;
    case kDrop: drop_connection(m); return true;
    case kReset:
      if (!all_answered(m, *world)) return true;
      s = reset_producer(m, world, counters);
      break;
    case kRestart:
      *error = "a clean restart failed";
      return clean_restart(rng, vfs, disk, world, m, counters);
    case kOps: break;
  }
  *error = "saving progress failed: " + s.to_string();
  return s.ok();
}

// Runs the load until the power is gone (or kMaxOps operations).
void run_load(std::mt19937_64& rng, PowerCutVfs& vfs, const std::string& disk, World* world, Machine& m,
              Counters* counters) {
  for (int i = 0; i < kMaxOps && !::testing::Test::HasFailure(); ++i) {
    const Op op = pick_op(rng, *world);
    std::string error;
    const bool ok = run_op(op, rng, vfs, disk, world, m, counters, &error);
    if (vfs.is_cut()) {
      ++counters->cut_during[op];
      return;
    }
    if (!ok) {
      ADD_FAILURE() << kOpNames[op] << " failed without a power cut: " << error;
      return;
    }
  }
  ++counters->cut_between;
}

// A new life: an empty disk, a new central cluster, new clients.
void start_afresh(const std::string& disk, World* world, Counters* counters) {
  std::filesystem::remove_all(disk);  // outside the interceptor: nothing recorded since the last reset
  std::filesystem::create_directories(disk);
  *world = World{};
  ++counters->lives;
}

TEST(ForwardPowerCutTest, LogsEddyDbAndForwardDbLosePowerTogether) {
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
  PowerCutVfs vfs("eddy-power-cut-gateway", root.file("vfs-stash"));
  DirectorySyncReporter machine_interceptor(&vfs, &fs);
  port::set_file_interceptor(&machine_interceptor);

  World world;
  Counters counters;
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t cut = 0; cut < cuts && !::testing::Test::HasFailure(); ++cut) {
    SCOPED_TRACE("cut " + std::to_string(cut) + " of seed " + std::to_string(seed));
    if (cut > 0 && cut % kCutsPerLife == 0) start_afresh(disk, &world, &counters);
    vfs.arm(1 + rng() % kCutWindow);
    Machine m;
    Status s = open_and_check(rng, vfs, disk, &world, &m, &counters);
    if (!s.ok()) {
      ASSERT_TRUE(vfs.is_cut()) << "cannot start after a power cut: " << s.to_string();
      ++counters.opens_cut;
    } else {
      run_load(rng, vfs, disk, &world, m, &counters);
    }
    vfs.cut_now();  // (if the load ended first)
    const double p = (rng() % 3) * 0.5;
    fs.cut(rng, p, p);
    close_machine(m);
    vfs.power_off(rng, p, p);
    fs.reset();
  }
  port::set_file_interceptor(nullptr);
  port::set_log_level(level);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%.1f s: %llu cuts (%llu during a start) in %llu lives, %llu clean restarts; forward.db: %llu saves, "
              "%llu interrupted (%llu of those survived whole); central: %llu batches written, %llu duplicates "
              "recognised, %llu producer resets\n",
              seconds, static_cast<unsigned long long>(cuts), static_cast<unsigned long long>(counters.opens_cut),
              static_cast<unsigned long long>(counters.lives), static_cast<unsigned long long>(counters.clean_restarts),
              static_cast<unsigned long long>(counters.saves),
              static_cast<unsigned long long>(counters.saves_interrupted),
              static_cast<unsigned long long>(counters.interrupted_survived),
              static_cast<unsigned long long>(counters.written), static_cast<unsigned long long>(counters.duplicates),
              static_cast<unsigned long long>(counters.resets));
  std::printf("the power went during:");
  for (int op = 0; op < kOps; ++op) {
    std::printf(" %s %llu,", kOpNames[op], static_cast<unsigned long long>(counters.cut_during[op]));
  }
  std::printf(" between operations %llu\n", static_cast<unsigned long long>(counters.cut_between));
}

}  // namespace
}  // namespace eddy::broker
