// BatchLog: a replicated partition's segment files as a Raft log whose
// entries are the producers' record batches (the contract every log keeps
// is in storage_test.cc). Here: batches of several offsets, the
// leader-change batch, byte-identical copies, the start as a snapshot, and
// three replicas over BatchLogs replicating and catching up past a
// leader's moved start.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <thread>

#include "batch_log_fixture.h"
#include "port/port.h"
#include "raft/quorum_state_store.h"
#include "raft/replica.h"

namespace eddy::raft {
namespace {

using testing::BatchLogFixture;
using testing::data_batch;
using testing::empty_batch;

std::vector<uint8_t> partition_bytes(storage::PartitionLog& partition, Offset from) {
  std::vector<uint8_t> bytes;
  int64_t next = 0;
  EXPECT_TRUE(partition.read_copy(from, SIZE_MAX, partition.log_end_offset(), &bytes, &next).ok());
  return bytes;
}

TEST(BatchLog, EntriesAreWholeBatchesOfSeveralOffsets) {
  BatchLogFixture f;
  RaftLog& log = f.log();
  const std::vector<Entry> entries{{1, EntryKind::kLeaderChange, {}, 1},
                                   {1, EntryKind::kData, data_batch("a", 1, 1, 3), 3},
                                   {2, EntryKind::kData, data_batch("b", 4, 2, 2), 2},
                                   {2, EntryKind::kData, data_batch("c", 6, 2, 4), 4}};
  ASSERT_TRUE(log.append(entries).ok());
  EXPECT_EQ(log.end_offset(), 10);
  EXPECT_EQ(log.epoch_at(3), 1);
  EXPECT_EQ(log.epoch_at(4), 2);
  EXPECT_EQ(log.end_offset_for_epoch(1), (EpochEndOffset{1, 4}));
  EXPECT_EQ(log.boundary_at_or_below(0), 0);
  EXPECT_EQ(log.boundary_at_or_below(3), 1);
  EXPECT_EQ(log.boundary_at_or_below(9), 6);
  EXPECT_EQ(log.boundary_at_or_below(10), 10);
  std::vector<Entry> got;
  ASSERT_TRUE(log.read(0, 10, &got).ok());
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].kind, EntryKind::kLeaderChange);
  EXPECT_EQ(got[0].payload, empty_batch(0, 1)) << "the leader-change entry is the empty batch, stamped by the clock";
  EXPECT_EQ(got[1], entries[1]);
  EXPECT_EQ(got[3], entries[3]);
  ASSERT_TRUE(log.read(4, 1, &got).ok());
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], entries[2]);
  EXPECT_TRUE(log.read(5, 10, &got).is_invalid_argument()) << "inside b";
  EXPECT_TRUE(got.empty());
  EXPECT_FALSE(log.truncate_to(7).ok()) << "inside c";
  ASSERT_TRUE(log.truncate_to(6).ok());
  EXPECT_EQ(log.end_offset(), 6);
}

TEST(BatchLog, RefusesWhatIsNotAnEntryAndAppendsNothingOfARefusedList) {
  BatchLogFixture f;
  RaftLog& log = f.log();
  ASSERT_TRUE(log.append({{1, EntryKind::kData, data_batch("ok"), 1}}).ok());
  std::string crc_broken = data_batch("x");
  crc_broken.back() ^= 1;
  std::string cut = data_batch("x");
  cut.pop_back();
  const std::vector<std::pair<Entry, Status::Code>> bad{
      {{1, EntryKind::kData, "not a batch", 1}, Status::Code::kInvalidArgument},
      {{1, EntryKind::kData, data_batch("x", 0, -1, 3), 2}, Status::Code::kInvalidArgument},  // offsets differ
      {{1, EntryKind::kData, cut, 1}, Status::Code::kInvalidArgument},
      {{1, EntryKind::kData, data_batch("x") + data_batch("y"), 1}, Status::Code::kInvalidArgument},  // two batches
      {{1, EntryKind::kData, empty_batch(), 1}, Status::Code::kInvalidArgument},  // data, but empty
      {{1, EntryKind::kLeaderChange, data_batch("x"), 1}, Status::Code::kInvalidArgument},
      {{1, EntryKind::kData, crc_broken, 1}, Status::Code::kCorruption},
  };
  for (const auto& [entry, code] : bad) {
    // After a good entry: the list is refused whole.
    Status s = log.append({{1, EntryKind::kData, data_batch("fine"), 1}, entry});
    EXPECT_EQ(s.code(), code) << s.to_string();
    EXPECT_EQ(log.end_offset(), 1);
  }
  ASSERT_TRUE(log.append({{1, EntryKind::kData, data_batch("after"), 1}}).ok());
  std::vector<Entry> got;
  ASSERT_TRUE(log.read(0, 10, &got).ok());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].payload, data_batch("after", 1, 1));
}

// A follower appends the leader's batches as they are: with LogAppendTime
// the leader's time stays (the leader's produce path stamps it), and the
// two partitions hold the same bytes.
TEST(BatchLog, AFollowersCopyIsByteIdentical) {
  storage::LogConfig config = testing::raft_log_config();
  config.timestamp_type = protocol::TimestampType::kLogAppendTime;
  BatchLogFixture leader(config), follower(config);
  ASSERT_TRUE(leader.log().append({{3, EntryKind::kLeaderChange, {}, 1}}).ok());
  for (int i = 0; i < 20; ++i) {
    const std::string batch = data_batch(std::string(200, 'v') + std::to_string(i), 0, -1, 1 + i % 4);
    ASSERT_TRUE(leader.log().append({{3, EntryKind::kData, batch, 1 + i % 4}}).ok());
  }
  std::vector<Entry> entries;
  for (Offset at = 0; at < leader.log().end_offset(); at = follower.log().end_offset()) {
    std::vector<Entry> some;
    Status read = leader.log().read(at, 3, &some);
    ASSERT_TRUE(read.ok()) << read.to_string() << " at " << at;
    ASSERT_FALSE(some.empty());
    ASSERT_TRUE(follower.log().append(some).ok());
    entries.insert(entries.end(), some.begin(), some.end());
  }
  EXPECT_EQ(entries.size(), 21u);
  EXPECT_GT(leader.partition().segments().size(), 1u) << "the batches should span segments";
  EXPECT_EQ(partition_bytes(follower.partition(), 0), partition_bytes(leader.partition(), 0));
  protocol::RecordBatchView view;
  ASSERT_EQ(protocol::RecordBatchView::parse(
                std::span(reinterpret_cast<const uint8_t*>(entries[1].payload.data()), entries[1].payload.size()), &view),
            protocol::BatchError::kOk);
  EXPECT_EQ(view.max_timestamp(), testing::kBatchTime) << "not restamped";
}

TEST(BatchLog, FlushAsksAndDurabilityCatchesUp) {
  BatchLogFixture f;
  ASSERT_TRUE(f.log().append({{1, EntryKind::kData, data_batch("a"), 1}, {1, EntryKind::kData, data_batch("b"), 1}}).ok());
  ASSERT_TRUE(f.log().flush().ok());
  for (int i = 0; i < 1000 && f.log().durable_offset() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(f.log().durable_offset(), 2);
}

// The start as a snapshot: where the partition moved it by itself, the
// epoch of its first batch; where the replica moved it, the recorded id,
// which survives a crash; a recorded start ahead of the log (a crash
// between store() and the move) is what latest() names.
TEST(BatchLog, TheStartIsTheSnapshot) {
  BatchLogFixture f;
  BatchLog& log = f.batch_log();
  ASSERT_TRUE(log.append({{1, EntryKind::kData, data_batch("a", 0, 1, 2), 2},
                          {2, EntryKind::kData, data_batch("b", 2, 2, 2), 2},
                          {3, EntryKind::kData, data_batch("c", 4, 3, 2), 2}})
                  .ok());
  f.wait_durable();
  EXPECT_EQ(log.latest(), (SnapshotId{0, 0}));
  EXPECT_EQ(log.latest_size(), 0);
  // DeleteRecords or the ring, not through the log: the first kept batch's epoch.
  ASSERT_TRUE(f.partition().delete_records_before(2).ok());
  EXPECT_EQ(log.start(), (SnapshotId{2, 2}));
  EXPECT_EQ(log.latest(), (SnapshotId{2, 2}));
  std::string bytes;
  SnapshotStore& snapshots = log;
  ASSERT_TRUE(snapshots.read(SnapshotId{2, 2}, 0, 100, &bytes).ok());
  EXPECT_EQ(bytes, BatchLog::snapshot_bytes({2, 2}));
  EXPECT_EQ(log.latest_size(), 12);
  ASSERT_TRUE(snapshots.read(SnapshotId{2, 2}, 10, 100, &bytes).ok());
  EXPECT_EQ(bytes.size(), 2u);
  EXPECT_TRUE(snapshots.read(SnapshotId{2, 2}, 13, 100, &bytes).code() == Status::Code::kOutOfRange);
  EXPECT_TRUE(snapshots.read(SnapshotId{4, 3}, 0, 100, &bytes).is_not_found());
  // Through the log: recorded exactly.
  EXPECT_TRUE(log.store({4, 2}, "other bytes").is_invalid_argument());
  EXPECT_TRUE(log.store({2, 2}, BatchLog::snapshot_bytes({2, 2})).is_invalid_argument()) << "not past the latest";
  ASSERT_TRUE(log.store({4, 2}, BatchLog::snapshot_bytes({4, 2})).ok());
  EXPECT_EQ(log.latest(), (SnapshotId{4, 2})) << "recorded, not moved yet";
  EXPECT_EQ(log.start(), (SnapshotId{2, 2}));
  ASSERT_TRUE(log.delete_before({4, 2}).ok());
  EXPECT_EQ(log.start(), (SnapshotId{4, 2}));
  EXPECT_EQ(log.end_offset_for_epoch(2), (EpochEndOffset{2, 4}));
  EXPECT_EQ(log.end_offset_for_epoch(1), (EpochEndOffset{0, 0}));
  f.crash();
  f.open();
  EXPECT_EQ(f.batch_log().start(), (SnapshotId{4, 2})) << "the recorded start after a crash";
  // A leader's start recorded, the crash before the reset: latest() is
  // ahead of the log, and the reset finishes it.
  ASSERT_TRUE(f.batch_log().store({30, 5}, BatchLog::snapshot_bytes({30, 5})).ok());
  f.crash();
  f.open();
  EXPECT_EQ(f.batch_log().latest(), (SnapshotId{30, 5}));
  // The file holds the next start now: the current one's epoch is its
  // first batch's again (3, where 2 was exact), which errs on the safe side.
  EXPECT_EQ(f.batch_log().start(), (SnapshotId{4, 3}));
  ASSERT_TRUE(f.batch_log().reset_to({30, 5}).ok());
  EXPECT_EQ(f.batch_log().start(), (SnapshotId{30, 5}));
  EXPECT_EQ(f.log().end_offset(), 30);
  EXPECT_EQ(f.log().last_epoch(), 5);
  ASSERT_TRUE(f.log().append({{6, EntryKind::kData, data_batch("d"), 1}}).ok());
  f.open();  // a clean close first
  EXPECT_EQ(f.batch_log().start(), (SnapshotId{30, 5}));
  EXPECT_EQ(f.log().end_offset(), 31);
  EXPECT_EQ(f.log().end_offset_for_epoch(5), (EpochEndOffset{5, 30}));
}

// Three replicas, each over its own BatchLog, messages delivered by hand on
// real time (the partitions' flushers sync on their own threads): the
// leader's record batches reach the followers byte for byte; a follower
// that was away while the leader's start moved past its log end resets to
// that start and catches up.
class ThreeReplicas : public ::testing::Test {
 protected:
  struct Node {
    std::unique_ptr<BatchLogFixture> log = std::make_unique<BatchLogFixture>();
    MemoryQuorumStateStore store;
    std::unique_ptr<Replica> replica;
    bool up = true;
  };

  void SetUp() override {
    for (NodeId id : {1, 2, 3}) {
      ReplicaOptions o;
      o.id = id;
      o.voters = {1, 2, 3};
      o.election_timeout_ms = 150;
      o.fetch_timeout_ms = 1000;
      o.fetch_retry_ms = 10;
      Node& n = nodes_[id];
      BatchLog* log = &n.log->batch_log();
      Status s = Replica::open(o, log, log, &n.store, [id](uint64_t bound) { return (uint64_t(id) * 37) % bound; },
                               now(), &n.replica);
      ASSERT_TRUE(s.ok()) << s.to_string();
    }
  }

  static int64_t now() { return port::monotonic_millis(); }

  // Polls and delivers among the nodes that are up until done() or 10 s.
  template <typename Done>
  bool run_until(Done done) {
    const int64_t deadline = now() + 10000;
    while (now() < deadline) {
      for (auto& [id, n] : nodes_) {
        if (!n.up) continue;
        EXPECT_TRUE(n.replica->poll(now()).ok());
        for (Message& m : n.replica->take_outbox()) {
          Node& to = nodes_[m.to];
          if (!to.up) continue;
          Status s = to.replica->handle(m, now());
          EXPECT_TRUE(s.ok()) << s.to_string();
        }
      }
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }

  Node* leader() {
    for (auto& [id, n] : nodes_) {
      if (n.up && n.replica->role() == Role::kLeader) return &n;
    }
    return nullptr;
  }

  // Appends count batches of 3 records on the leader; the offset after them.
  Offset produce(int count) {
    Offset end = 0;
    for (int i = 0; i < count; ++i) {
      Offset at = 0;
      Status s = leader()->replica->append(data_batch("m" + std::to_string(next_++), 0, -1, 3), &at, 3);
      EXPECT_TRUE(s.ok()) << s.to_string();
      end = at + 3;
    }
    return end;
  }

  bool all_up_hold(Offset end) {
    for (auto& [id, n] : nodes_) {
      if (n.up && n.replica->high_watermark() < end) return false;
    }
    return true;
  }

  std::map<NodeId, Node> nodes_;
  int next_ = 0;
};

TEST_F(ThreeReplicas, ReplicateBatchesByteForByteAndCatchUpPastAMovedStart) {
  ASSERT_TRUE(run_until([&] { return leader() != nullptr && leader()->replica->high_watermark() > 0; }));
  Offset end = produce(10);
  ASSERT_TRUE(run_until([&] { return all_up_hold(end); }));
  Node* first = leader();
  for (auto& [id, n] : nodes_) {
    EXPECT_EQ(partition_bytes(n.log->partition(), 0), partition_bytes(first->log->partition(), 0)) << "node " << id;
  }

  // A follower goes away; the others go on, and the leader's start moves
  // past everything the away one holds (as the ring recycling would).
  NodeId away = 0;
  for (auto& [id, n] : nodes_) {
    if (&n != first) away = id;
  }
  nodes_[away].up = false;
  end = produce(10);
  ASSERT_TRUE(run_until([&] { return all_up_hold(end); }));
  const Offset old_end = nodes_[away].log->log().end_offset();
  ASSERT_TRUE(first->log->partition().delete_records_before(old_end + 6).ok());
  end = produce(5);
  ASSERT_TRUE(run_until([&] { return all_up_hold(end); }));

  nodes_[away].up = true;
  ASSERT_TRUE(run_until([&] { return all_up_hold(end); }));
  BatchLogFixture& back = *nodes_[away].log;
  EXPECT_EQ(back.batch_log().start().end_offset, old_end + 6) << "reset to the leader's start";
  EXPECT_EQ(partition_bytes(back.partition(), old_end + 6), partition_bytes(first->log->partition(), old_end + 6));
}

}  // namespace
}  // namespace eddy::raft
