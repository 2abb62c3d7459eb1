// The RaftLog contract, for MemoryLog, SegmentLog and BatchLog alike (typed
// tests; each kind says what its entries' payloads are),
// the in-memory log's crash model, and the quorum-state stores. SegmentLog's
// own tests (reopen, leader-change records, corruption, power cuts):
// segment_log_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

#include "port/port.h"
#include "raft/file_snapshot_store.h"
#include "raft/memory_log.h"
#include "raft/quorum_state_store.h"
#include "batch_log_fixture.h"
#include "segment_log_fixture.h"

namespace eddy::raft {
namespace {

// A log of each kind, fresh per test, and its entries: data(epoch, tag, at)
// and change(epoch, at) are the entries as that log reads them back when
// they lie at offset at; durable() waits for what flush() asked.
struct PayloadEntries {
  static Entry data(Epoch e, const std::string& tag, Offset) { return Entry{e, EntryKind::kData, tag}; }
  static Entry change(Epoch e, Offset) {
    return Entry{e, EntryKind::kLeaderChange, testing::leader_change_payload(2, {1, 2, 3})};
  }
};
struct MemoryLogKind : PayloadEntries {
  MemoryLog log;
  RaftLog& get() { return log; }
  void durable() {}
};
struct SegmentLogKind : PayloadEntries {
  testing::SegmentLogFixture fixture;
  RaftLog& get() { return fixture.log(); }
  void durable() {}
};
// A partition group's log: the payloads are record batches.
struct BatchLogKind {
  testing::BatchLogFixture fixture;
  RaftLog& get() { return fixture.log(); }
  void durable() { fixture.wait_durable(); }
  static Entry data(Epoch e, const std::string& tag, Offset at) {
    return Entry{e, EntryKind::kData, testing::data_batch(tag, at, e)};
  }
  static Entry change(Epoch e, Offset at) { return Entry{e, EntryKind::kLeaderChange, testing::empty_batch(at, e)}; }
};

template <typename Kind>
class RaftLogContract : public ::testing::Test {
 protected:
  RaftLog& log() { return kind_.get(); }
  void append_epochs(std::vector<Epoch> epochs) {
    for (Epoch e : epochs) ASSERT_TRUE(log().append({data(e, "x" + std::to_string(e), log().end_offset())}).ok());
  }
  Entry data(Epoch e, const std::string& tag, Offset at) { return Kind::data(e, tag, at); }
  Entry change(Epoch e, Offset at) { return Kind::change(e, at); }
  // flush(), and wait for it where it only asks.
  void flush() {
    ASSERT_TRUE(log().flush().ok());
    kind_.durable();
  }
  std::vector<Entry> read(Offset offset, size_t max_entries) {
    std::vector<Entry> out{Entry{}};  // replaced, not appended to
    Status s = log().read(offset, max_entries, &out);
    EXPECT_TRUE(s.ok()) << s.to_string();
    return out;
  }
  Kind kind_;
};

using LogKinds = ::testing::Types<MemoryLogKind, SegmentLogKind, BatchLogKind>;
TYPED_TEST_SUITE(RaftLogContract, LogKinds);

TYPED_TEST(RaftLogContract, EndOffsetForEpochIsKafkas) {
  RaftLog& log = this->log();
  EXPECT_EQ(log.end_offset_for_epoch(3), (EpochEndOffset{0, 0}));
  EXPECT_EQ(log.last_epoch(), 0);
  this->append_epochs({1, 1, 3, 3, 3, 5});
  EXPECT_EQ(log.end_offset_for_epoch(0), (EpochEndOffset{0, 0}));
  EXPECT_EQ(log.end_offset_for_epoch(1), (EpochEndOffset{1, 2}));
  // Epoch 2 is absent: the largest epoch below it and that epoch's end.
  EXPECT_EQ(log.end_offset_for_epoch(2), (EpochEndOffset{1, 2}));
  EXPECT_EQ(log.end_offset_for_epoch(3), (EpochEndOffset{3, 5}));
  EXPECT_EQ(log.end_offset_for_epoch(4), (EpochEndOffset{3, 5}));
  EXPECT_EQ(log.end_offset_for_epoch(5), (EpochEndOffset{5, 6}));
  EXPECT_EQ(log.end_offset_for_epoch(9), (EpochEndOffset{5, 6}));
  EXPECT_EQ(log.epoch_at(0), 1);
  EXPECT_EQ(log.epoch_at(4), 3);
  EXPECT_EQ(log.epoch_at(5), 5);
  EXPECT_EQ(log.last_epoch(), 5);
}

TYPED_TEST(RaftLogContract, RefusesDecreasingOrZeroEpochs) {
  RaftLog& log = this->log();
  this->append_epochs({2});
  EXPECT_TRUE(log.append({Entry{1, EntryKind::kData, "x"}}).is_invalid_argument());
  EXPECT_TRUE(log.append({Entry{0, EntryKind::kData, "x"}}).is_invalid_argument());
  EXPECT_TRUE(log.append({Entry{3, EntryKind::kData, "a"}, Entry{2, EntryKind::kData, "b"}}).is_invalid_argument());
  EXPECT_EQ(log.end_offset(), 1);  // nothing of a refused batch appended
  EXPECT_EQ(log.truncate_to(5).code(), Status::Code::kOutOfRange);
  EXPECT_EQ(log.truncate_to(-1).code(), Status::Code::kOutOfRange);
}

TYPED_TEST(RaftLogContract, ReadsWhatWasAppended) {
  RaftLog& log = this->log();
  const std::vector<Entry> entries{this->change(1, 0), this->data(1, "first", 1), this->data(1, "", 2),
                                   this->change(4, 3), this->data(4, std::string(3000, 'z'), 4)};
  ASSERT_TRUE(log.append(entries).ok());
  EXPECT_EQ(log.end_offset(), 5);
  EXPECT_EQ(this->read(0, 100), entries);
  EXPECT_EQ(this->read(1, 2), (std::vector<Entry>{entries[1], entries[2]}));
  EXPECT_EQ(this->read(4, 1), (std::vector<Entry>{entries[4]}));
  EXPECT_TRUE(this->read(5, 10).empty());
  EXPECT_TRUE(this->read(9, 10).empty());
  EXPECT_TRUE(this->read(-1, 10).empty());
  EXPECT_TRUE(this->read(0, 0).empty());
}

TYPED_TEST(RaftLogContract, TruncationThenAppendReplacesTheSuffix) {
  RaftLog& log = this->log();
  this->append_epochs({1, 1, 2, 2, 2});
  this->flush();
  EXPECT_EQ(log.durable_offset(), 5);
  ASSERT_TRUE(log.truncate_to(3).ok());
  EXPECT_EQ(log.end_offset(), 3);
  EXPECT_LE(log.durable_offset(), 3);
  EXPECT_EQ(log.end_offset_for_epoch(2), (EpochEndOffset{2, 3}));
  ASSERT_TRUE(log.truncate_to(2).ok());
  EXPECT_EQ(log.last_epoch(), 1);
  this->append_epochs({3, 3});
  EXPECT_EQ(log.end_offset_for_epoch(2), (EpochEndOffset{1, 2}));
  EXPECT_EQ(log.end_offset_for_epoch(3), (EpochEndOffset{3, 4}));
  EXPECT_EQ(this->read(1, 10),
            (std::vector<Entry>{this->data(1, "x1", 1), this->data(3, "x3", 2), this->data(3, "x3", 3)}));
  this->flush();
  EXPECT_EQ(log.durable_offset(), 4);
  ASSERT_TRUE(log.truncate_to(0).ok());
  EXPECT_EQ(log.end_offset(), 0);
  EXPECT_EQ(log.last_epoch(), 0);
  EXPECT_EQ(log.end_offset_for_epoch(3), (EpochEndOffset{0, 0}));
}

MemoryLog log_with_epochs(std::vector<Epoch> epochs) {
  MemoryLog log;
  for (Epoch e : epochs) EXPECT_TRUE(log.append({Entry{e, EntryKind::kData, "x"}}).ok());
  return log;
}

// The start: delete_before keeps the entries from a snapshot's end, and the
// start answers for the snapshot's epoch; reset_to empties the log there.
TYPED_TEST(RaftLogContract, StartsAtASnapshot) {
  this->append_epochs({1, 1, 2, 2, 3});
  this->flush();
  EXPECT_EQ(this->log().start(), (SnapshotId{0, 0}));
  EXPECT_TRUE(this->log().delete_before({3, 1}).is_invalid_argument());  // offset 2 is of epoch 2
  EXPECT_TRUE(this->log().delete_before({0, 0}).is_invalid_argument());
  ASSERT_TRUE(this->log().delete_before({3, 2}).ok());
  EXPECT_EQ(this->log().start(), (SnapshotId{3, 2}));
  EXPECT_TRUE(this->log().delete_before({3, 2}).is_invalid_argument());  // not past the start
  EXPECT_EQ(this->log().end_offset(), 5);
  EXPECT_EQ(this->log().epoch_at(3), 2);
  EXPECT_EQ(this->log().end_offset_for_epoch(1), (EpochEndOffset{0, 0}));
  EXPECT_EQ(this->log().end_offset_for_epoch(2), (EpochEndOffset{2, 4}));
  EXPECT_EQ(this->log().end_offset_for_epoch(3), (EpochEndOffset{3, 5}));
  std::vector<Entry> out;
  EXPECT_TRUE(this->log().read(2, 5, &out).code() == Status::Code::kOutOfRange);
  EXPECT_EQ(this->read(3, 5).size(), 2u);
  EXPECT_TRUE(this->log().truncate_to(2).code() == Status::Code::kOutOfRange);
  ASSERT_TRUE(this->log().truncate_to(3).ok());
  EXPECT_EQ(this->log().last_epoch(), 2);  // the start's
  EXPECT_EQ(this->log().end_offset_for_epoch(3), (EpochEndOffset{2, 3}));
  ASSERT_TRUE(this->log().reset_to({20, 4}).ok());
  EXPECT_EQ(this->log().start(), (SnapshotId{20, 4}));
  EXPECT_EQ(this->log().end_offset(), 20);
  EXPECT_GE(this->log().durable_offset(), 20);
  EXPECT_EQ(this->log().last_epoch(), 4);
  EXPECT_TRUE(this->log().append({Entry{3, EntryKind::kData, "old"}}).is_invalid_argument());
  this->append_epochs({5});
  EXPECT_EQ(this->log().end_offset_for_epoch(4), (EpochEndOffset{4, 20}));
  EXPECT_EQ(this->log().end_offset_for_epoch(5), (EpochEndOffset{5, 21}));
  EXPECT_TRUE(this->log().reset_to({0, 0}).is_invalid_argument());
}

TEST(MemoryLog, CrashLosesOnlyTheUnflushedSuffix) {
  MemoryLog log = log_with_epochs({1, 1});
  ASSERT_TRUE(log.flush().ok());
  ASSERT_TRUE(log.append({Entry{1, EntryKind::kData, "late"}}).ok());
  EXPECT_EQ(log.durable_offset(), 2);
  log.crash();
  EXPECT_EQ(log.end_offset(), 2);
  ASSERT_TRUE(log.truncate_to(1).ok());
  EXPECT_EQ(log.durable_offset(), 1);
}

// Entries covering several offsets (a partition group's record batches):
// epochs answer for every offset inside, but reads, truncations and
// snapshots happen only at boundaries.
TEST(MemoryLog, EntriesCoverTheirOffsetsAndOnlyBoundariesAreNamed) {
  MemoryLog log;
  ASSERT_TRUE(log.append({Entry{1, EntryKind::kLeaderChange, {}, 1}, Entry{1, EntryKind::kData, "a", 3},
                          Entry{2, EntryKind::kData, "b", 2}, Entry{2, EntryKind::kData, "c", 4}})
                  .ok());
  EXPECT_EQ(log.end_offset(), 10);
  EXPECT_EQ(log.epoch_at(3), 1);
  EXPECT_EQ(log.epoch_at(4), 2);
  EXPECT_EQ(log.entry_at(8).payload, "c");
  EXPECT_EQ(log.end_offset_for_epoch(1), (EpochEndOffset{1, 4}));
  EXPECT_EQ(log.end_offset_for_epoch(2), (EpochEndOffset{2, 10}));
  std::vector<Entry> got;
  ASSERT_TRUE(log.read(4, 10, &got).ok());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].payload, "b");
  EXPECT_TRUE(log.read(5, 10, &got).is_invalid_argument()) << "inside b";
  EXPECT_FALSE(log.truncate_to(7).ok()) << "inside c";
  EXPECT_TRUE(log.append({Entry{2, EntryKind::kData, "none", 0}}).is_invalid_argument());
  EXPECT_TRUE(log.delete_before({5, 2}).is_invalid_argument()) << "inside b";
  ASSERT_TRUE(log.delete_before({6, 2}).ok());
  EXPECT_EQ(log.entries().size(), 1u);
  ASSERT_TRUE(log.truncate_to(6).ok());
  EXPECT_EQ(log.end_offset(), 6);
  ASSERT_TRUE(log.append({Entry{3, EntryKind::kData, "d", 5}}).ok());
  EXPECT_EQ(log.end_offset(), 11);
  EXPECT_EQ(log.epoch_at(10), 3);
}

TEST(FileSnapshotStore, StoresAtomicallyKeepsOnlyTheLatestAndReadsInChunks) {
  eddy::testing::TempDir dir;
  const std::string path = dir.file("snapshots");
  std::unique_ptr<FileSnapshotStore> store;
  ASSERT_TRUE(FileSnapshotStore::open(path, &store).ok());
  EXPECT_TRUE(store->latest().empty());
  std::string out;
  EXPECT_TRUE(store->read({5, 1}, 0, 10, &out).is_not_found());
  EXPECT_TRUE(store->store({0, 1}, "x").is_invalid_argument());
  EXPECT_TRUE(store->store({5, 0}, "x").is_invalid_argument());
  const std::string first(1000, 'a');
  ASSERT_TRUE(store->store({5, 1}, first).ok());
  const std::string second = std::string(700, 'b') + std::string(1, '\0') + "tail";
  ASSERT_TRUE(store->store({12, 3}, second).ok());
  EXPECT_TRUE(store->store({12, 3}, "again").is_invalid_argument());
  EXPECT_TRUE(store->store({20, 2}, "older epoch").is_invalid_argument());
  EXPECT_EQ(store->latest(), (SnapshotId{12, 3}));
  EXPECT_EQ(store->latest_size(), static_cast<int64_t>(second.size()));
  EXPECT_TRUE(store->read({5, 1}, 0, 10, &out).is_not_found());
  std::string whole;
  for (int64_t at = 0; at < store->latest_size();) {
    ASSERT_TRUE(store->read({12, 3}, at, 97, &out).ok());
    ASSERT_FALSE(out.empty());
    whole += out;
    at += static_cast<int64_t>(out.size());
  }
  EXPECT_EQ(whole, second);
  ASSERT_TRUE(store->read({12, 3}, store->latest_size(), 97, &out).ok());
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(store->read({12, 3}, store->latest_size() + 1, 97, &out).code(), Status::Code::kOutOfRange);
  std::vector<std::string> names;
  ASSERT_FALSE(port::list_directory(path, &names));
  EXPECT_EQ(names, std::vector<std::string>{FileSnapshotStore::file_name({12, 3})});
  EXPECT_EQ(names[0], "00000000000000000012-0000000003.checkpoint");
  // A crash mid-store leaves a part, and maybe an older snapshot not yet
  // removed: the next open keeps only the latest.
  store.reset();
  for (const char* leftover : {"00000000000000000040-0000000004.checkpoint.tmp",
                               "00000000000000000003-0000000001.checkpoint", "unrelated"}) {
    port::File f;
    ASSERT_FALSE(port::File::open(path + "/" + leftover, port::OpenMode::kCreate, &f));
  }
  ASSERT_TRUE(FileSnapshotStore::open(path, &store).ok());
  EXPECT_EQ(store->latest(), (SnapshotId{12, 3}));
  ASSERT_TRUE(store->read({12, 3}, 0, 4096, &out).ok());
  EXPECT_EQ(out, second);
  names.clear();
  ASSERT_FALSE(port::list_directory(path, &names));
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"00000000000000000012-0000000003.checkpoint", "unrelated"}));
}

TEST(QuorumStateText, RoundTripsAndRefusesGarbage) {
  QuorumState s{7, 3, 2, true};
  QuorumState back;
  ASSERT_TRUE(parse_quorum_state(format_quorum_state(s), &back).ok());
  EXPECT_EQ(back, s);
  QuorumState none{0, kNoNode, kNoNode, false};
  ASSERT_TRUE(parse_quorum_state(format_quorum_state(none), &back).ok());
  EXPECT_EQ(back, none);
  for (const char* bad : {"", "eddy-raft-quorum-state 1\n", "eddy-raft-quorum-state 2\nepoch=1\nvoted_for=1\nleader_id=1\nrecovering=0\n",
                          "eddy-raft-quorum-state 1\nepoch=-4\nvoted_for=1\nleader_id=1\nrecovering=0\n",
                          "eddy-raft-quorum-state 1\nepoch=1\nvoted_for=x\nleader_id=1\nrecovering=0\n",
                          "eddy-raft-quorum-state 1\nepoch=1\nvoted_for=1\nleader_id=1\nrecovering=2\n",
                          "eddy-raft-quorum-state 1\nepoch=1\nvoted_for=1\nleader_id=1\nrecovering=0",
                          "eddy-raft-quorum-state 1\nepoch=99999999999\nvoted_for=1\nleader_id=1\nrecovering=0\n"}) {
    EXPECT_TRUE(parse_quorum_state(bad, &back).is_corruption()) << bad;
  }
}

class FileStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/eddy-raft-store-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { (void)port::remove_tree(dir_); }
  std::string dir_;
};

TEST_F(FileStoreTest, MissingThenWrittenThenReplaced) {
  FileQuorumStateStore store(dir_);
  QuorumState s;
  EXPECT_TRUE(store.read(&s).is_not_found());
  ASSERT_TRUE(store.write(QuorumState{1, 1, kNoNode, false}).ok());
  ASSERT_TRUE(store.write(QuorumState{2, kNoNode, 3, false}).ok());
  FileQuorumStateStore reopened(dir_);
  ASSERT_TRUE(reopened.read(&s).ok());
  EXPECT_EQ(s, (QuorumState{2, kNoNode, 3, false}));
  EXPECT_FALSE(port::path_exists(dir_ + "/quorum-state.tmp"));
}

TEST_F(FileStoreTest, ALeftoverTempFileIsIgnoredAndADamagedFileIsCorruption) {
  FileQuorumStateStore store(dir_);
  ASSERT_TRUE(store.write(QuorumState{4, 2, 2, false}).ok());
  std::ofstream(dir_ + "/quorum-state.tmp") << "half a wri";  // a crash mid-write
  QuorumState s;
  ASSERT_TRUE(store.read(&s).ok());
  EXPECT_EQ(s.epoch, 4);
  std::ofstream(dir_ + "/quorum-state", std::ios::trunc) << "garbage\n";
  Status st = store.read(&s);
  EXPECT_TRUE(st.is_corruption()) << st.to_string();
}

TEST_F(FileStoreTest, AMissingDirectoryIsAnIOError) {
  FileQuorumStateStore store(dir_ + "/absent");
  Status st = store.write(QuorumState{1, 1, 1, false});
  EXPECT_TRUE(st.is_io_error()) << st.to_string();
}

}  // namespace
}  // namespace eddy::raft
