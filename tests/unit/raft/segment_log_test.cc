// SegmentLog beyond the RaftLog contract (storage_test.cc): entries and
// epochs survive reopening (clean close, crash), the batches are what Kafka
// expects (LeaderChange control batches), corruption is an error Status,
// and truncate / append / power cut keeps the log a prefix of what it was.
#include <gtest/gtest.h>

#include <random>

#include "port/file_interceptor.h"
#include "port/log.h"
#include "protocol/control_batch.h"
#include "port/port.h"
#include "segment_log_fixture.h"
#include "storage/checkpoint.h"
#include "tests/unit/storage/power_cut_filesystem.h"

namespace eddy::raft {
namespace {

using testing::SegmentLogFixture;

std::vector<Entry> data_entries(Epoch epoch, int count, const std::string& tag) {
  std::vector<Entry> out;
  for (int i = 0; i < count; ++i) {
    out.push_back(Entry{epoch, EntryKind::kData, tag + std::to_string(i) + std::string(200, '.')});
  }
  return out;
}

std::vector<Entry> read_all(RaftLog& log) {
  std::vector<Entry> out;
  Status s = log.read(0, SIZE_MAX, &out);
  EXPECT_TRUE(s.ok()) << s.to_string();
  return out;
}

TEST(SegmentLog, ReopenKeepsEntriesAndEpochs) {
  SegmentLogFixture f;
  std::vector<Entry> all = data_entries(1, 30, "a");
  std::vector<Entry> more = data_entries(4, 30, "b");
  all.insert(all.end(), more.begin(), more.end());
  ASSERT_TRUE(f.log().append(all).ok());
  ASSERT_GT(f.partition().segments().size(), 2u);
  f.close();
  f.open();
  EXPECT_EQ(read_all(f.log()), all);
  EXPECT_EQ(f.log().durable_offset(), 60);
  EXPECT_EQ(f.log().end_offset_for_epoch(3), (EpochEndOffset{1, 30}));
  EXPECT_EQ(f.log().last_epoch(), 4);
  ASSERT_TRUE(f.log().truncate_to(45).ok());
  ASSERT_TRUE(f.log().append(data_entries(6, 5, "c")).ok());
  all.resize(45);
  for (const Entry& e : data_entries(6, 5, "c")) all.push_back(e);
  f.crash();
  f.open();
  EXPECT_EQ(read_all(f.log()), all);
  EXPECT_EQ(f.log().end_offset_for_epoch(5), (EpochEndOffset{4, 45}));
  EXPECT_EQ(f.log().epoch_at(49), 6);
}

TEST(SegmentLog, LeaderChangeEntriesAreKafkaControlBatches) {
  SegmentLogFixture f;
  ASSERT_TRUE(f.log().append({Entry{3, EntryKind::kLeaderChange, {}}, Entry{3, EntryKind::kData, "v"}}).ok());
  // An empty payload became this node's message.
  std::vector<Entry> back = read_all(f.log());
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].kind, EntryKind::kLeaderChange);
  EXPECT_EQ(back[0].payload, testing::leader_change_payload(1, {1, 2, 3}));
  std::vector<uint8_t> bytes;
  int64_t next = 0;
  ASSERT_TRUE(f.partition().read_copy(0, SIZE_MAX, -1, &bytes, &next).ok());
  protocol::BatchIterator it(bytes);
  protocol::RecordBatchView view;
  ASSERT_TRUE(it.next(&view));
  EXPECT_TRUE(view.is_control());
  EXPECT_FALSE(view.is_transactional());
  EXPECT_EQ(view.producer_id(), -1);
  EXPECT_EQ(view.partition_leader_epoch(), 3);
  EXPECT_FALSE(protocol::control_type(view).has_value()) << "not a transaction marker";
  // No transaction bookkeeping for it.
  EXPECT_FALSE(port::path_exists(f.directory() + "/" + storage::kTransactionsFile));
  // A leader-change payload that is no LeaderChangeMessage is refused.
  EXPECT_TRUE(f.log().append({Entry{3, EntryKind::kLeaderChange, "junk"}}).is_invalid_argument());
  EXPECT_EQ(f.log().end_offset(), 2);
}

TEST(SegmentLog, ACorruptBatchIsAnErrorStatus) {
  SegmentLogFixture f;
  ASSERT_TRUE(f.log().append(data_entries(1, 4, "x")).ok());
  storage::BatchLocation location;
  ASSERT_TRUE(f.partition().lookup(2, &location).ok());
  port::File file;
  ASSERT_FALSE(port::File::open(f.directory() + "/" + storage::segment_file_name(location.segment_base_offset),
                                port::OpenMode::kReadWrite, &file));
  const uint8_t flipped = 'X';
  ASSERT_FALSE(file.write_at(location.batch.position + location.batch.info.size - 10, &flipped, 1));
  std::vector<Entry> out;
  EXPECT_TRUE(f.log().read(0, 2, &out).ok());  // before it
  Status s = f.log().read(0, 10, &out);
  EXPECT_TRUE(s.is_corruption()) << s.to_string();
  EXPECT_TRUE(out.empty());
}

TEST(SegmentLog, RefusesALogThatStartsPastItsSnapshot) {
  SegmentLogFixture f;
  ASSERT_TRUE(f.log().append(data_entries(1, 4, "x")).ok());
  ASSERT_TRUE(f.log().flush().ok());
  ASSERT_TRUE(f.partition().delete_records_before(2).ok());
  f.close();
  EXPECT_TRUE(f.try_open().is_corruption());              // no snapshot at all
  EXPECT_TRUE(f.try_open({1, 1}).is_corruption());        // one below the start
  EXPECT_TRUE(f.try_open({2, 1}).ok());
  EXPECT_EQ(f.log().start(), (SnapshotId{2, 1}));
}

TEST(SegmentLog, StartsAtASnapshot) {
  SegmentLogFixture f;
  ASSERT_TRUE(f.log().append(data_entries(1, 3, "a")).ok());
  ASSERT_TRUE(f.log().append(data_entries(2, 3, "b")).ok());
  ASSERT_TRUE(f.log().flush().ok());
  EXPECT_TRUE(f.log().delete_before({4, 1}).is_invalid_argument());  // offset 3 is of epoch 2
  EXPECT_TRUE(f.log().delete_before({7, 2}).is_invalid_argument());  // past the end
  ASSERT_TRUE(f.log().delete_before({4, 2}).ok());
  EXPECT_EQ(f.log().start(), (SnapshotId{4, 2}));
  EXPECT_EQ(f.log().end_offset(), 6);
  EXPECT_EQ(f.log().last_epoch(), 2);
  EXPECT_EQ(f.log().end_offset_for_epoch(1), (EpochEndOffset{0, 0}));  // below the start's epoch
  EXPECT_EQ(f.log().end_offset_for_epoch(2), (EpochEndOffset{2, 6}));
  std::vector<Entry> out;
  EXPECT_TRUE(f.log().read(3, 10, &out).code() == Status::Code::kOutOfRange);
  ASSERT_TRUE(f.log().read(4, 10, &out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].payload.substr(0, 2), "b1");
  EXPECT_TRUE(f.log().truncate_to(3).code() == Status::Code::kOutOfRange);
  // The start survives a reopen with the same snapshot.
  f.close();
  f.open({4, 2});
  EXPECT_EQ(f.log().start(), (SnapshotId{4, 2}));
  EXPECT_EQ(f.log().end_offset(), 6);
}

TEST(SegmentLog, ResetStartsAnEmptyLogAtTheSnapshot) {
  SegmentLogFixture f;
  ASSERT_TRUE(f.log().append(data_entries(1, 3, "a")).ok());
  ASSERT_TRUE(f.log().reset_to({40, 3}).ok());
  EXPECT_EQ(f.log().start(), (SnapshotId{40, 3}));
  EXPECT_EQ(f.log().end_offset(), 40);
  EXPECT_EQ(f.log().durable_offset(), 40);
  EXPECT_EQ(f.log().last_epoch(), 3);
  EXPECT_EQ(f.log().end_offset_for_epoch(3), (EpochEndOffset{3, 40}));
  EXPECT_EQ(f.log().end_offset_for_epoch(5), (EpochEndOffset{3, 40}));
  ASSERT_TRUE(f.log().append(data_entries(4, 2, "c")).ok());
  EXPECT_EQ(f.log().end_offset(), 42);
  EXPECT_EQ(f.log().end_offset_for_epoch(3), (EpochEndOffset{3, 40}));
  EXPECT_EQ(f.log().end_offset_for_epoch(4), (EpochEndOffset{4, 42}));
  ASSERT_TRUE(f.log().flush().ok());
  f.close();
  f.open({40, 3});
  std::vector<Entry> out;
  ASSERT_TRUE(f.log().read(40, 10, &out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].payload.substr(0, 2), "c1");
}

// A crash between storing a snapshot and moving the log start: open()
// finishes the move, by deleting below it when the log holds the
// snapshot's last entry and by a reset when it does not.
TEST(SegmentLog, OpenFinishesAnInterruptedMoveToTheSnapshot) {
  SegmentLogFixture f;
  ASSERT_TRUE(f.log().append(data_entries(1, 5, "a")).ok());
  ASSERT_TRUE(f.log().flush().ok());
  f.close();
  f.open({3, 1});
  EXPECT_EQ(f.log().start(), (SnapshotId{3, 1}));
  EXPECT_EQ(f.log().end_offset(), 5);
  f.close();
  f.open({9, 2});  // the leader's snapshot, past this log's end
  EXPECT_EQ(f.log().start(), (SnapshotId{9, 2}));
  EXPECT_EQ(f.log().end_offset(), 9);
  // A leftover of a reset cut short is removed.
  f.close();
  ASSERT_FALSE(port::make_directories(f.directory() + ".reset"));
  f.open({9, 2});
  EXPECT_FALSE(port::path_exists(f.directory() + ".reset"));
}

// Truncate, append a new epoch, flush part of it, lose power: the log is a
// prefix of what it was, holds what was flushed, and never shows an old
// entry after a new one.
TEST(SegmentLog, TruncateAppendPowerCut) {
  eddy::testing::TempDir root(port::is_directory("/dev/shm") ? "/dev/shm" : nullptr);
  const port::LogLevel level = port::log_level();
  port::set_log_level(port::LogLevel::kOff);
  storage::testing::PowerCutFilesystem disk(root.file("disk"), root.file("stash"));
  ASSERT_FALSE(port::make_directories(root.file("disk")));
  port::set_file_interceptor(&disk);
  std::mt19937_64 rng(20240601);
  uint64_t survived_unflushed = 0;
  for (int round = 0; round < 40; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    auto f = std::make_unique<SegmentLogFixture>(root.file("disk").c_str());
    const Epoch old_epoch = 1, new_epoch = 2;
    ASSERT_TRUE(f->log().append(data_entries(old_epoch, 20, "old")).ok());
    ASSERT_TRUE(f->log().flush().ok());
    ASSERT_TRUE(f->log().append(data_entries(old_epoch, 10, "late")).ok());  // never flushed
    const Offset cut_at = 5 + static_cast<Offset>(rng() % 20);
    ASSERT_TRUE(f->log().truncate_to(cut_at).ok());
    ASSERT_TRUE(f->log().append(data_entries(new_epoch, 8, "new")).ok());
    const Offset flushed = f->log().end_offset();
    ASSERT_TRUE(f->log().flush().ok());
    ASSERT_TRUE(f->log().append(data_entries(new_epoch, 8, "newer")).ok());
    std::vector<Entry> before = read_all(f->log());

    disk.cut(rng, std::uniform_real_distribution<double>(0, 1)(rng), std::uniform_real_distribution<double>(0, 1)(rng));
    f->crash();
    disk.reset();
    f->open();
    std::vector<Entry> after = read_all(f->log());
    ASSERT_GE(static_cast<Offset>(after.size()), flushed) << "a flushed entry was lost";
    ASSERT_LE(after.size(), before.size());
    for (size_t i = 0; i < after.size(); ++i) ASSERT_EQ(after[i], before[i]) << "offset " << i;
    survived_unflushed += after.size() - static_cast<size_t>(flushed);
    EXPECT_EQ(f->log().last_epoch(), after.back().epoch);
    f.reset();
    (void)port::remove_tree(root.file("disk") + "/raft-0");
  }
  port::set_file_interceptor(nullptr);
  port::set_log_level(level);
  std::printf("unflushed entries that survived a cut: %llu\n", static_cast<unsigned long long>(survived_unflushed));
}

}  // namespace
}  // namespace eddy::raft
