#include "broker/producer_state_table.h"

#include <gtest/gtest.h>

#include <memory>

#include "meta/meta_store.h"
#include "protocol/record_batch.h"
#include "storage/flusher.h"
#include "storage/partition_log.h"
#include "tests/unit/storage/storage_test_util.h"

namespace eddy::broker {
namespace {

using protocol::ErrorCode;
using Action = SequenceCheck::Action;
using storage::testing::TempDir;

constexpr int64_t kNow = 1'000'000;
constexpr int64_t kExpiry = 60'000;

class ProducerStateTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    flusher_.start();
    ASSERT_TRUE(meta::MetaStore::open(dir_.file("eddy.db"), &meta_).ok());
    open_log("t-0");
  }

  void open_log(const std::string& name) {
    log_.reset();
    ASSERT_TRUE(
        storage::PartitionLog::open(dir_.file(name), storage::testing::small_config(64 * 1024), &flusher_, &log_).ok());
  }

  // A fresh table on the current log (what a restart does).
  std::unique_ptr<ProducerStateTable> open_table(ProducerReplayStats* stats = nullptr) {
    auto table = std::make_unique<ProducerStateTable>(meta_.get(), kExpiry);
    Status s = table->open_partition("t", 0, log_.get(), kNow, stats);
    EXPECT_TRUE(s.ok()) << s.to_string();
    return table;
  }

  // Produce's path: check, append, record. Returns the verdict and, for an
  // append, the base offset in *base.
  SequenceCheck produce(ProducerStateTable& table, int64_t pid, int16_t epoch, int32_t seq, int count,
                        int64_t* base = nullptr) {
    protocol::RecordBatchBuilder builder;
    builder.producer(pid, epoch, seq);
    for (int i = 0; i < count; ++i) builder.add("k", "v" + std::to_string(seq + i), 1000 + i);
    std::vector<uint8_t> batch = builder.build();
    PartitionProducers* producers = table.find("t", 0);
    EXPECT_NE(producers, nullptr);
    SequenceCheck c = producers->check(pid, epoch, seq, count);
    if (c.action == Action::kAppend) {
      storage::AppendResult result;
      EXPECT_EQ(log_->append(batch, storage::AppendOptions{}, &result).code(), Status::Code::kOk);
      producers->record(pid, epoch, seq, count, result.base_offset, result.last_offset, kNow);
      if (base != nullptr) *base = result.base_offset;
    }
    return c;
  }

  ProducerStateTable::CurrentLog current() {
    return [this](const std::string&, int32_t) { return log_.get(); };
  }

  TempDir dir_;
  storage::Flusher flusher_;
  std::unique_ptr<meta::MetaStore> meta_;
  std::unique_ptr<storage::PartitionLog> log_;
};

TEST_F(ProducerStateTableTest, RestartReplaysOnlyWhatFollowsTheSnapshot) {
  auto table = open_table();
  for (int i = 0; i < 20; ++i) EXPECT_EQ(produce(*table, 1, 0, i * 2, 2).action, Action::kAppend);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(produce(*table, 2, 4, i, 1).action, Action::kAppend);
  EXPECT_EQ(table->snapshot(current(), kNow, /*sync=*/true), 1u);
  // Nothing changed: no second write.
  EXPECT_EQ(table->snapshot(current(), kNow, true), 0u);
  int64_t bases[3];
  for (int i = 0; i < 3; ++i) EXPECT_EQ(produce(*table, 1, 0, 40 + i * 2, 2, &bases[i]).action, Action::kAppend);
  table.reset();
  ASSERT_EQ(log_->close().code(), Status::Code::kOk);
  open_log("t-0");

  ProducerReplayStats stats;
  table = open_table(&stats);
  EXPECT_EQ(stats.snapshot_rows, 2u);
  EXPECT_EQ(stats.batches_replayed, 3u);  // not the 23 before the snapshot
  PartitionProducers* p = table->find("t", 0);
  EXPECT_EQ(table->find(log_.get()), p);
  // Replayed batches keep their offsets; snapshotted ones are known written.
  SequenceCheck dup = p->check(1, 0, 44, 2);
  EXPECT_EQ(dup.action, Action::kDuplicate);
  EXPECT_EQ(dup.error, ErrorCode::kNone);
  EXPECT_EQ(dup.duplicate_base_offset, bases[2]);
  EXPECT_EQ(p->check(1, 0, 38, 2).error, ErrorCode::kDuplicateSequenceNumber);
  EXPECT_EQ(p->check(1, 0, 46, 1).action, Action::kAppend);
  EXPECT_EQ(p->check(1, 0, 47, 1).error, ErrorCode::kOutOfOrderSequenceNumber);
  EXPECT_EQ(p->check(2, 4, 3, 1).action, Action::kAppend);
  EXPECT_EQ(p->check(2, 3, 3, 1).error, ErrorCode::kInvalidProducerEpoch);
  EXPECT_EQ(table->current_epoch(2), 4);
}

TEST_F(ProducerStateTableTest, WithoutSnapshotTheWholeLogIsReplayed) {
  auto table = open_table();
  for (int i = 0; i < 6; ++i) produce(*table, 9, 1, i, 1);
  table.reset();  // a crash: no snapshot
  log_.reset();
  open_log("t-0");
  ProducerReplayStats stats;
  table = open_table(&stats);
  EXPECT_EQ(stats.snapshot_rows, 0u);
  EXPECT_EQ(stats.batches_replayed, 6u);
  SequenceCheck dup = table->find("t", 0)->check(9, 1, 5, 1);
  EXPECT_EQ(dup.action, Action::kDuplicate);
  EXPECT_EQ(dup.duplicate_base_offset, 5);
  EXPECT_EQ(table->find("t", 0)->check(9, 1, 6, 1).action, Action::kAppend);
}

TEST_F(ProducerStateTableTest, PeriodicSnapshotStopsAtTheDurableOffset) {
  auto table = open_table();
  produce(*table, 3, 0, 0, 1);
  ASSERT_TRUE(log_->wait_durable(log_->log_end_offset(), 10000));
  produce(*table, 3, 0, 1, 1);  // may or may not be durable yet
  const int64_t durable = log_->durable_offset();
  EXPECT_EQ(table->snapshot(current(), kNow, /*sync=*/false), 1u);
  std::vector<meta::ProducerSnapshot> rows;
  ASSERT_TRUE(meta_->producer_snapshots().load("t", 0, &rows).ok());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].producer_id, -1);  // the marker: snapshot point
  EXPECT_EQ(rows[0].last_offset, durable);
  EXPECT_EQ(rows[1].producer_id, 3);
  EXPECT_LT(rows[1].last_offset, durable);
}

TEST_F(ProducerStateTableTest, StateOfARecreatedTopicIsDropped) {
  auto table = open_table();
  for (int i = 0; i < 4; ++i) produce(*table, 5, 0, i, 1);
  EXPECT_EQ(table->snapshot(current(), kNow, true), 1u);
  // The topic is deleted and created again: a new, empty log.
  ASSERT_EQ(log_->close().code(), Status::Code::kOk);
  open_log("t-0-new");
  table = open_table();
  EXPECT_EQ(table->find("t", 0)->size(), 0u);
  EXPECT_EQ(table->find("t", 0)->check(5, 0, 4, 1).error, ErrorCode::kUnknownProducerId);
  // The stale rows were replaced at once (before the new log can grow past
  // them), by the marker alone.
  std::vector<meta::ProducerSnapshot> rows;
  ASSERT_TRUE(meta_->producer_snapshots().load("t", 0, &rows).ok());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].producer_id, -1);
}

TEST_F(ProducerStateTableTest, DeletedPartitionLosesItsRows) {
  auto table = open_table();
  produce(*table, 5, 0, 0, 1);
  EXPECT_EQ(table->snapshot(current(), kNow, true), 1u);
  auto gone = [](const std::string&, int32_t) -> storage::PartitionLog* { return nullptr; };
  EXPECT_EQ(table->snapshot(gone, kNow, true), 0u);
  EXPECT_EQ(table->find("t", 0), nullptr);
  std::vector<meta::ProducerSnapshot> rows;
  ASSERT_TRUE(meta_->producer_snapshots().load("t", 0, &rows).ok());
  EXPECT_TRUE(rows.empty());
}

TEST_F(ProducerStateTableTest, IdleProducersExpireFromStateAndSnapshot) {
  auto table = open_table();
  produce(*table, 5, 0, 0, 1);
  EXPECT_EQ(table->snapshot(current(), kNow, true), 1u);
  EXPECT_EQ(table->snapshot(current(), kNow + kExpiry + 1, true), 1u);
  EXPECT_EQ(table->find("t", 0)->size(), 0u);
  EXPECT_EQ(table->current_epoch(5), -1);
  table.reset();
  table = open_table();
  EXPECT_EQ(table->find("t", 0)->check(5, 0, 1, 1).error, ErrorCode::kUnknownProducerId);
}

// A follower: batches appended by replication (not through Produce).
int64_t append_as_replica(storage::PartitionLog& log, int64_t pid, int16_t epoch, int32_t seq, int count) {
  protocol::RecordBatchBuilder builder;
  builder.producer(pid, epoch, seq);
  for (int i = 0; i < count; ++i) builder.add("k", "v" + std::to_string(seq + i), 1000 + i);
  std::vector<uint8_t> batch = builder.build();
  storage::AppendResult result;
  EXPECT_TRUE(log.append(batch, storage::AppendOptions{}, &result).ok());
  return result.base_offset;
}

TEST_F(ProducerStateTableTest, AFollowerFollowsWhatReplicationAppended) {
  auto table = open_table();
  const int64_t from = log_->log_end_offset();
  const int64_t first = append_as_replica(*log_, 7, 2, 0, 3);
  append_as_replica(*log_, 8, 0, 0, 1);
  const int64_t last = append_as_replica(*log_, 7, 2, 3, 2);
  EXPECT_EQ(table->find("t", 0)->size(), 0u) << "not followed yet";
  ASSERT_TRUE(table->follow(log_.get(), from, kNow).ok());
  PartitionProducers* p = table->find("t", 0);
  // A leader elected here answers the producers' retries as duplicates and
  // takes their next batches.
  SequenceCheck dup = p->check(7, 2, 3, 2);
  EXPECT_EQ(dup.action, Action::kDuplicate);
  EXPECT_EQ(dup.duplicate_base_offset, last);
  EXPECT_EQ(p->check(7, 2, 0, 3).duplicate_base_offset, first);
  EXPECT_EQ(p->check(7, 2, 5, 1).action, Action::kAppend);
  EXPECT_EQ(p->check(8, 0, 1, 1).action, Action::kAppend);
  EXPECT_EQ(table->current_epoch(7), 2);
  // Following from the new end again finds nothing to add.
  ASSERT_TRUE(table->follow(log_.get(), log_->log_end_offset(), kNow).ok());
  EXPECT_EQ(p->size(), 2u);
  // A log the table never opened.
  storage::PartitionLog* stranger = log_.get() + 1;  // never dereferenced
  EXPECT_EQ(table->follow(stranger, 0, kNow).code(), Status::Code::kNotFound);
}

TEST_F(ProducerStateTableTest, ACutLogIsRebuiltFromTheSnapshotAndWhatRemains) {
  auto table = open_table();
  for (int i = 0; i < 3; ++i) produce(*table, 1, 0, i, 1);  // offsets 0..2
  log_->set_replicated_high_watermark(3);                    // the group committed them
  EXPECT_EQ(table->snapshot(current(), kNow, /*sync=*/true), 1u);
  // Uncommitted batches of producers 1 and 2, then a new leader's log
  // diverges at 3: the replica cuts them.
  produce(*table, 1, 0, 3, 1);
  produce(*table, 2, 0, 0, 1);
  EXPECT_EQ(table->find("t", 0)->check(1, 0, 4, 1).action, Action::kAppend);
  ASSERT_TRUE(log_->truncate_to(3).ok());
  ProducerReplayStats stats;
  ASSERT_TRUE(table->rebuild(log_.get(), kNow, &stats).ok());
  EXPECT_EQ(stats.snapshot_rows, 1u);
  PartitionProducers* p = table->find("t", 0);
  EXPECT_EQ(table->find(log_.get()), p);
  // The cut batches are forgotten: their retries are appended again.
  EXPECT_EQ(p->check(1, 0, 3, 1).action, Action::kAppend);
  EXPECT_EQ(p->check(1, 0, 2, 1).error, ErrorCode::kDuplicateSequenceNumber);
  EXPECT_EQ(p->find(2), nullptr);
}

TEST_F(ProducerStateTableTest, AReplicatedPartitionIsSnapshottedAtMostAtItsCommitIndex) {
  auto table = open_table();
  for (int i = 0; i < 4; ++i) produce(*table, 1, 0, i, 1);  // offsets 0..3
  // The broker's bound: no snapshot before the group has a commit index.
  auto unknown = [](const storage::PartitionLog*) -> int64_t { return -1; };
  EXPECT_EQ(table->snapshot(current(), kNow, /*sync=*/true, unknown), 0u);
  std::vector<meta::ProducerSnapshot> rows;
  ASSERT_TRUE(meta_->producer_snapshots().load("t", 0, &rows).ok());
  EXPECT_TRUE(rows.empty());
  // Committed up to 2: the point is 2 although the log is durable to 4.
  log_->set_replicated_high_watermark(2);
  EXPECT_EQ(table->snapshot(current(), kNow, true), 1u);
  ASSERT_TRUE(meta_->producer_snapshots().load("t", 0, &rows).ok());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].producer_id, -1);
  EXPECT_EQ(rows[0].last_offset, 2);
  EXPECT_EQ(rows[1].last_offset, 1);
  // A bound below the last point leaves the rows as they are.
  auto low = [](const storage::PartitionLog*) -> int64_t { return 1; };
  log_->set_replicated_high_watermark(4);
  EXPECT_EQ(table->snapshot(current(), kNow, true, low), 0u);
  EXPECT_EQ(table->snapshot(current(), kNow, true), 1u);
  ASSERT_TRUE(meta_->producer_snapshots().load("t", 0, &rows).ok());
  EXPECT_EQ(rows[0].last_offset, 4);
}

}  // namespace
}  // namespace eddy::broker
