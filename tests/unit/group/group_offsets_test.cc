// GroupOffsets on its own, on a real meta store in a temp dir: commits,
// fetches, OffsetDelete, DeleteGroups and expiry, without a coordinator.
#include "group/group_offsets.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/unit/port/test_dir.h"

namespace eddy::group {
namespace {

using protocol::ErrorCode;

constexpr int64_t kRetentionMs = 60'000;
constexpr int64_t kNow = 1'000'000;

int16_t code(ErrorCode c) { return protocol::to_int(c); }

struct Commit {
  std::string topic;
  int32_t partition;
  int64_t offset;
  std::optional<std::string> metadata = "";
  int32_t leader_epoch = -1;
};

class GroupOffsetsTest : public ::testing::Test {
 protected:
  void SetUp() override { open(); }

  void open() {
    offsets_.reset();
    meta_.reset();
    ASSERT_TRUE(meta::MetaStore::open(dir_.path() + "/eddy.db", &meta_).ok());
    // Topic "t" has partitions 0..5; nothing else exists.
    offsets_ = std::make_unique<GroupOffsets>(
        meta_.get(), [](const std::string& t, int32_t p) { return t == "t" && p >= 0 && p < 6; }, 16, kRetentionMs);
  }

  protocol::OffsetCommitResponse commit(const std::string& group, const std::vector<Commit>& commits,
                                        ErrorCode verdict = ErrorCode::kNone, int64_t now = kNow,
                                        int16_t version = 8) {
    protocol::OffsetCommitRequest r;
    r.group_id = group;
    for (const auto& c : commits) {
      if (r.topics.empty() || r.topics.back().name != c.topic) {
        r.topics.emplace_back();
        r.topics.back().name = c.topic;
      }
      protocol::OffsetCommitRequest::OffsetCommitRequestPartition p;
      p.partition_index = c.partition;
      p.committed_offset = c.offset;
      p.committed_metadata = c.metadata;
      p.committed_leader_epoch = c.leader_epoch;
      r.topics.back().partitions.push_back(p);
    }
    return offsets_->commit(r, version, verdict, now);
  }

  // The committed offset of group's partition of "t" (OffsetFetch v7), -1 for none.
  protocol::OffsetFetchResponse::OffsetFetchResponsePartition fetched(const std::string& group, int32_t partition) {
    protocol::OffsetFetchRequest r;
    r.group_id = group;
    protocol::OffsetFetchRequest::OffsetFetchRequestTopic t;
    t.name = "t";
    t.partition_indexes = {partition};
    r.topics->push_back(t);
    auto resp = offsets_->fetch(r, 7);
    EXPECT_EQ(resp.error_code, 0);
    return resp.topics.at(0).partitions.at(0);
  }

  protocol::OffsetDeleteResponse remove(const std::string& group, const std::vector<int32_t>& partitions,
                                        bool group_is_live, const SubscribedTopics& subscribed = {},
                                        const std::string& topic = "t") {
    protocol::OffsetDeleteRequest r;
    r.group_id = group;
    protocol::OffsetDeleteRequest::OffsetDeleteRequestTopic t;
    t.name = topic;
    for (int32_t p : partitions) {
      t.partitions.emplace_back();
      t.partitions.back().partition_index = p;
    }
    r.topics.push_back(t);
    return offsets_->remove(r, group_is_live, subscribed);
  }

  eddy::testing::TempDir dir_;
  std::unique_ptr<meta::MetaStore> meta_;
  std::unique_ptr<GroupOffsets> offsets_;
};

TEST_F(GroupOffsetsTest, CommitThenFetchAcrossARestart) {
  auto r = commit("g", {{"t", 0, 10, "m", 3}, {"t", 1, 20}});
  ASSERT_EQ(r.topics.size(), 1u);
  ASSERT_EQ(r.topics[0].partitions.size(), 2u);
  EXPECT_EQ(r.topics[0].partitions[0].error_code, 0);
  EXPECT_EQ(r.topics[0].partitions[1].error_code, 0);
  open();  // the meta store is the only copy
  auto p0 = fetched("g", 0);
  EXPECT_EQ(p0.committed_offset, 10);
  EXPECT_EQ(p0.committed_leader_epoch, 3);
  EXPECT_EQ(p0.metadata, "m");
  EXPECT_EQ(fetched("g", 1).committed_offset, 20);
  EXPECT_EQ(fetched("g", 2).committed_offset, -1);    // never committed
  EXPECT_EQ(fetched("other", 0).committed_offset, -1);  // another group's
  // A later commit replaces the earlier one.
  commit("g", {{"t", 0, 11}});
  EXPECT_EQ(fetched("g", 0).committed_offset, 11);
}

TEST_F(GroupOffsetsTest, LeaderEpochOnlyFromVersion6AndNullMetadataIsEmpty) {
  commit("g", {{"t", 0, 5, std::nullopt, 7}}, ErrorCode::kNone, kNow, 5);
  auto p = fetched("g", 0);
  EXPECT_EQ(p.committed_leader_epoch, -1);
  EXPECT_EQ(p.metadata, "");
}

TEST_F(GroupOffsetsTest, GroupVerdictAnswersEveryPartitionAndStoresNothing) {
  auto r = commit("g", {{"t", 0, 10}, {"t", 1, 20}, {"nope", 0, 1}}, ErrorCode::kIllegalGeneration);
  ASSERT_EQ(r.topics.size(), 2u);
  for (const auto& t : r.topics) {
    for (const auto& p : t.partitions) EXPECT_EQ(p.error_code, code(ErrorCode::kIllegalGeneration));
  }
  EXPECT_EQ(fetched("g", 0).committed_offset, -1);
  bool any = true;
  ASSERT_TRUE(offsets_->has_offsets("g", &any).ok());
  EXPECT_FALSE(any);
}

TEST_F(GroupOffsetsTest, PartitionChecksRefuseOnlyTheirPartition) {
  auto r = commit("g", {{"t", 0, 10, std::string(17, 'x')}, {"t", 1, 20, std::string(16, 'x')}, {"t", 9, 1},
                        {"nope", 0, 1}});
  ASSERT_EQ(r.topics.size(), 2u);
  EXPECT_EQ(r.topics[0].partitions[0].error_code, code(ErrorCode::kOffsetMetadataTooLarge));
  EXPECT_EQ(r.topics[0].partitions[1].error_code, 0);  // exactly offset.metadata.max.bytes
  EXPECT_EQ(r.topics[0].partitions[2].error_code, code(ErrorCode::kUnknownTopicOrPartition));
  EXPECT_EQ(r.topics[1].partitions[0].error_code, code(ErrorCode::kUnknownTopicOrPartition));
  EXPECT_EQ(fetched("g", 0).committed_offset, -1);
  EXPECT_EQ(fetched("g", 1).committed_offset, 20);
}

TEST_F(GroupOffsetsTest, FetchAllAndByGroup) {
  commit("g", {{"t", 2, 7}, {"t", 0, 5}});
  commit("h", {{"t", 1, 9}});
  // v7 with a null topic list: every offset of the group, sorted.
  protocol::OffsetFetchRequest all;
  all.group_id = "g";
  all.topics = std::nullopt;
  auto r = offsets_->fetch(all, 7);
  ASSERT_EQ(r.topics.size(), 1u);
  ASSERT_EQ(r.topics[0].partitions.size(), 2u);
  EXPECT_EQ(r.topics[0].partitions[0].partition_index, 0);
  EXPECT_EQ(r.topics[0].partitions[1].committed_offset, 7);
  // v8: several groups at once; an empty group id is refused on its own.
  protocol::OffsetFetchRequest multi;
  for (const char* id : {"g", "", "h"}) {
    protocol::OffsetFetchRequest::OffsetFetchRequestGroup g;
    g.group_id = id;
    g.topics = std::nullopt;
    multi.groups.push_back(g);
  }
  auto m = offsets_->fetch(multi, 8);
  ASSERT_EQ(m.groups.size(), 3u);
  EXPECT_EQ(m.groups[0].topics.at(0).partitions.size(), 2u);
  EXPECT_EQ(m.groups[1].error_code, code(ErrorCode::kInvalidGroupId));
  EXPECT_EQ(m.groups[2].topics.at(0).partitions.at(0).committed_offset, 9);
  protocol::OffsetFetchRequest none;
  EXPECT_EQ(offsets_->fetch(none, 7).error_code, code(ErrorCode::kInvalidGroupId));
}

TEST_F(GroupOffsetsTest, RemoveKeepsSubscribedTopicsAndChecksPartitions) {
  commit("g", {{"t", 0, 5}, {"t", 1, 6}});
  SubscribedTopics subscribed;
  subscribed.names = {"t"};
  auto r = remove("g", {0}, true, subscribed);
  EXPECT_EQ(r.error_code, 0);
  EXPECT_EQ(r.topics.at(0).partitions.at(0).error_code, code(ErrorCode::kGroupSubscribedToTopic));
  SubscribedTopics unknown;
  unknown.all = true;  // a subscription that does not decode: every topic counts
  EXPECT_EQ(remove("g", {0}, true, unknown).topics.at(0).partitions.at(0).error_code,
            code(ErrorCode::kGroupSubscribedToTopic));
  EXPECT_EQ(fetched("g", 0).committed_offset, 5);
  r = remove("g", {0, 9}, false);
  EXPECT_EQ(r.error_code, 0);
  EXPECT_EQ(r.topics.at(0).partitions.at(0).error_code, 0);
  EXPECT_EQ(r.topics.at(0).partitions.at(1).error_code, code(ErrorCode::kUnknownTopicOrPartition));
  EXPECT_EQ(fetched("g", 0).committed_offset, -1);
  EXPECT_EQ(fetched("g", 1).committed_offset, 6);
}

TEST_F(GroupOffsetsTest, RemoveFromAGroupThatDoesNotExist) {
  EXPECT_EQ(remove("", {0}, false).error_code, code(ErrorCode::kInvalidGroupId));
  EXPECT_EQ(remove("g", {0}, false).error_code, code(ErrorCode::kGroupIdNotFound));
  // A live group without offsets exists.
  EXPECT_EQ(remove("g", {0}, true).error_code, 0);
}

TEST_F(GroupOffsetsTest, GroupsRemoveGroupAndHasOffsets) {
  commit("b", {{"t", 0, 1}});
  commit("a", {{"t", 0, 1}});
  std::vector<std::string> groups;
  ASSERT_TRUE(offsets_->groups_with_offsets(&groups).ok());
  EXPECT_EQ(groups, (std::vector<std::string>{"a", "b"}));
  ASSERT_TRUE(offsets_->remove_group("a").ok());
  bool any = true;
  ASSERT_TRUE(offsets_->has_offsets("a", &any).ok());
  EXPECT_FALSE(any);
  ASSERT_TRUE(offsets_->has_offsets("b", &any).ok());
  EXPECT_TRUE(any);
}

TEST_F(GroupOffsetsTest, ExpiryRemovesOnlyOldOffsetsOfTheGroupsGiven) {
  commit("g", {{"t", 0, 1}}, ErrorCode::kNone, kNow);
  commit("g", {{"t", 1, 2}}, ErrorCode::kNone, kNow + 30'000);
  commit("busy", {{"t", 0, 3}}, ErrorCode::kNone, kNow);
  ASSERT_TRUE(offsets_->expire({"g"}, kNow + kRetentionMs).ok());
  EXPECT_EQ(fetched("g", 0).committed_offset, 1);  // committed exactly the retention ago: kept
  ASSERT_TRUE(offsets_->expire({"g"}, kNow + kRetentionMs + 1).ok());
  EXPECT_EQ(fetched("g", 0).committed_offset, -1);
  EXPECT_EQ(fetched("g", 1).committed_offset, 2);
  EXPECT_EQ(fetched("busy", 0).committed_offset, 3);  // not passed in: a group with members
  ASSERT_TRUE(offsets_->expire({"g", "busy"}, kNow + 30'000 + kRetentionMs + 1).ok());
  EXPECT_EQ(fetched("g", 1).committed_offset, -1);
  EXPECT_EQ(fetched("busy", 0).committed_offset, -1);
}

}  // namespace
}  // namespace eddy::group

namespace eddy::group {
namespace {

class GroupTxnOffsetsTest : public GroupOffsetsTest {
 protected:
  protocol::TxnOffsetCommitResponse stage(const std::string& group, int64_t producer_id,
                                          const std::vector<std::pair<int32_t, int64_t>>& offsets,
                                          ErrorCode verdict = ErrorCode::kNone) {
    protocol::TxnOffsetCommitRequest r;
    r.transactional_id = "tx";
    r.group_id = group;
    r.producer_id = producer_id;
    auto& t = r.topics.emplace_back();
    t.name = "t";
    for (const auto& [p, o] : offsets) {
      auto& rp = t.partitions.emplace_back();
      rp.partition_index = p;
      rp.committed_offset = o;
    }
    return offsets_->commit_transactional(r, 3, verdict, kNow);
  }

  // OffsetFetch v7 with require_stable.
  protocol::OffsetFetchResponse::OffsetFetchResponsePartition stable(const std::string& group, int32_t partition) {
    protocol::OffsetFetchRequest r;
    r.group_id = group;
    r.require_stable = true;
    auto& t = r.topics->emplace_back();
    t.name = "t";
    t.partition_indexes = {partition};
    return offsets_->fetch(r, 7).topics.at(0).partitions.at(0);
  }
};

TEST_F(GroupTxnOffsetsTest, StagedUntilCommitThenApplied) {
  commit("g", {{"t", 0, 5}});
  auto r = stage("g", 42, {{0, 50}, {1, 60}, {9, 1}});
  EXPECT_EQ(r.topics.at(0).partitions.at(0).error_code, 0);
  EXPECT_EQ(r.topics.at(0).partitions.at(2).error_code, code(ErrorCode::kUnknownTopicOrPartition));
  EXPECT_EQ(fetched("g", 0).committed_offset, 5) << "staged offsets are not committed yet";
  EXPECT_EQ(stable("g", 0).error_code, code(ErrorCode::kUnstableOffsetCommit));
  EXPECT_EQ(stable("g", 0).committed_offset, -1);
  EXPECT_EQ(stable("g", 2).error_code, 0) << "a partition without staged offsets is stable";
  open();  // staged offsets survive a restart
  ASSERT_TRUE(offsets_->complete_transaction("g", 42, true).ok());
  EXPECT_EQ(fetched("g", 0).committed_offset, 50);
  EXPECT_EQ(fetched("g", 1).committed_offset, 60);
  EXPECT_EQ(stable("g", 0).error_code, 0);
}

TEST_F(GroupTxnOffsetsTest, AbortDropsAndAVerdictRefusesEverything) {
  commit("g", {{"t", 0, 5}});
  stage("g", 42, {{0, 50}});
  ASSERT_TRUE(offsets_->complete_transaction("g", 42, false).ok());
  EXPECT_EQ(fetched("g", 0).committed_offset, 5);
  EXPECT_EQ(stable("g", 0).error_code, 0);
  auto r = stage("g", 43, {{0, 70}}, ErrorCode::kInvalidTxnState);
  EXPECT_EQ(r.topics.at(0).partitions.at(0).error_code, code(ErrorCode::kInvalidTxnState));
  EXPECT_EQ(stable("g", 0).error_code, 0) << "nothing staged";
}

}  // namespace
}  // namespace eddy::group
