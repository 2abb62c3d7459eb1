// The controller log's records (controller_records.h) and a cluster node's
// topic table applying them (TopicTable::apply_*): strict decoding, and
// application that is idempotent and opens only the partitions this node holds.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "broker/controller_records.h"
#include "broker/topic_table.h"
#include "meta/meta_store.h"
#include "storage/log_manager.h"
#include "tests/unit/port/test_dir.h"

namespace eddy::broker {
namespace {

protocol::TopicRecord sample_topic() {
  protocol::TopicRecord r;
  r.name = "sensors";
  r.topic_id.bytes[0] = 7;
  r.topic_id.bytes[15] = 9;
  r.partitions = {{{1}, {}}, {{2}, {}}, {{3}, {}}};
  r.configs = {{"retention.ms", "60000", {}}};
  return r;
}

TEST(ControllerRecords, EveryTypeRoundTrips) {
  const std::vector<ControllerRecord> records = {
      protocol::ClusterIdRecord{"MpHGLVnjTNKUOmeQPJzh1Q", {}},
      protocol::RegisterBrokerRecord{2, std::nullopt, {{"PLAINTEXT", "127.0.0.1", 9093, 0, {}}}, {}},
      sample_topic(),
      protocol::RemoveTopicRecord{sample_topic().topic_id, {}},
      protocol::PartitionsAddedRecord{sample_topic().topic_id, 3, {{{1}, {}}}, {}},
      protocol::TopicConfigsRecord{sample_topic().topic_id, {{"cleanup.policy", "delete", {}}}, {}},
      protocol::GroupOffsetsRecord{"g", {{"sensors", 1, 42, 3, "meta", 1700000000000, {}}}, {}},
      protocol::GroupDeletedRecord{"g", {}},
      protocol::OffsetsDeletedRecord{"g", {{"sensors", 1, {}}}, {}},
      protocol::ProducerIdsRecord{3, 5000, 1000, {}},
      protocol::StaticMemberRecord{"g", "inst-a", "c-1", "c", "/127.0.0.1", "consumer", "range", 4, 10000, 30000,
                                   {0, 1}, {0, 2, 9}, {}},
      protocol::StaticMemberRemovedRecord{"g", "inst-a", {}},
      protocol::ForwardCursorsRecord{
          "central", {{"sensors", sample_topic().topic_id, 1, 400, 7, 0, 380, 1200, 3, {}}}, {}},
      protocol::PartitionLeadersRecord{{{sample_topic().topic_id, 2, 3, 9, {1, 3}, {}}}, {}},
      protocol::NodeFencingRecord{{{3, true, {}}, {2, false, {}}}, {}},
      protocol::TransactionStateRecord{"tx-1", false, 4001, -1, 3, 2, 60000, 1, 1700000000000, 1700000000500,
                                       {{"sensors", 0, {}}, {"sensors", 2, {}}}, {"g"}, {}, {}},
      protocol::TxnOffsetsStagedRecord{"g", 4001, {{"sensors", 1, 42, 3, "", 1700000000400, {}}}, {}},
  };
  ASSERT_EQ(records.size(), std::variant_size_v<ControllerRecord>) << "one of each type";
  for (const ControllerRecord& record : records) {
    const std::string payload = encode_controller_record(record);
    EXPECT_EQ(static_cast<size_t>(payload[0]), record.index() + 1) << controller_record_name(record);
    ControllerRecord back;
    Status s = decode_controller_record(payload, &back);
    ASSERT_TRUE(s.ok()) << controller_record_name(record) << ": " << s.to_string();
    EXPECT_EQ(back, record) << controller_record_name(record);
  }
}

TEST(ControllerRecords, AnythingButAWholeKnownRecordIsCorruption) {
  const std::string good = encode_controller_record(sample_topic());
  ControllerRecord out;
  for (size_t cut = 0; cut < good.size(); ++cut) {
    EXPECT_EQ(decode_controller_record(good.substr(0, cut), &out).code(), Status::Code::kCorruption) << cut;
  }
  EXPECT_EQ(decode_controller_record(good + "x", &out).code(), Status::Code::kCorruption) << "a byte after it";
  std::string unknown = good;
  unknown[0] = 99;
  Status s = decode_controller_record(unknown, &out);
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_NE(s.message().find("unknown type 99"), std::string::npos) << s.message();
  std::string newer = good;
  newer[2] = 1;  // version 1 of TopicRecord: not known to this binary
  EXPECT_EQ(decode_controller_record(newer, &out).code(), Status::Code::kCorruption);
}

TEST(ControllerSnapshot, RoundTripsAndRefusesAnythingElse) {
  const std::vector<ControllerRecord> records = {
      protocol::ClusterIdRecord{"MpHGLVnjTNKUOmeQPJzh1Q", {}},
      protocol::RegisterBrokerRecord{2, std::nullopt, {{"PLAINTEXT", "127.0.0.1", 9093, 0, {}}}, {}},
      sample_topic(),
      protocol::GroupOffsetsRecord{"g", {{"sensors", 1, 42, 3, "meta", 1700000000000, {}}}, {}},
  };
  const std::string bytes = encode_controller_snapshot(records);
  std::vector<ControllerRecord> back;
  ASSERT_TRUE(decode_controller_snapshot(bytes, &back).ok());
  EXPECT_EQ(back, records);
  ASSERT_TRUE(decode_controller_snapshot(encode_controller_snapshot({}), &back).ok());
  EXPECT_TRUE(back.empty());
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    EXPECT_EQ(decode_controller_snapshot(bytes.substr(0, cut), &back).code(), Status::Code::kCorruption) << cut;
  }
  for (size_t at = 0; at < bytes.size(); ++at) {
    std::string flipped = bytes;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x10);
    EXPECT_EQ(decode_controller_snapshot(flipped, &back).code(), Status::Code::kCorruption) << at;
    EXPECT_TRUE(back.empty());
  }
  EXPECT_EQ(decode_controller_snapshot(bytes + "x", &back).code(), Status::Code::kCorruption);
}

// One cluster node (node 2 of 1, 2, 3): its meta store, logs and topic table.
class ClusterNode : public ::testing::Test {
 protected:
  void SetUp() override { open(); }

  void open() {
    ASSERT_TRUE(meta::MetaStore::open(dir_.file("eddy.db"), &meta_).ok());
    ASSERT_TRUE(storage::LogManager::open(dir_.file("data"), &logs_).ok());
    options_.node_id = 2;
    options_.log_defaults.segment_bytes = 1 << 20;
    table_ = std::make_unique<TopicTable>(options_, meta_.get(), logs_.get(), nullptr);
    ASSERT_TRUE(table_->load().ok());
  }
  void reopen() {
    table_.reset();
    ASSERT_TRUE(logs_->close().ok());
    logs_.reset();
    meta_.reset();
    open();
  }
  TopicResult apply(const protocol::TopicRecord& r) {
    std::vector<std::vector<int32_t>> replicas;
    for (const auto& p : r.partitions) replicas.push_back(p.replicas);
    ConfigMap configs;
    for (const auto& c : r.configs) configs[c.name] = c.value;
    return table_->apply_created(r.name, r.topic_id, replicas, configs);
  }

  eddy::testing::TempDir dir_;
  BrokerOptions options_;
  std::unique_ptr<meta::MetaStore> meta_;
  std::unique_ptr<storage::LogManager> logs_;
  std::unique_ptr<TopicTable> table_;
};

TEST_F(ClusterNode, AppliedTopicOpensOnlyThePartitionsThisNodeHolds) {
  const protocol::TopicRecord r = sample_topic();
  ASSERT_TRUE(apply(r).ok());
  Topic* t = table_->find("sensors");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->id, r.topic_id);
  ASSERT_EQ(t->partitions.size(), 3u);
  EXPECT_EQ(t->local(0), nullptr);
  EXPECT_NE(t->local(1), nullptr);
  EXPECT_EQ(t->local(2), nullptr);
  EXPECT_EQ(t->replicas, (std::vector<std::vector<int32_t>>{{1}, {2}, {3}}));
  EXPECT_EQ(t->overrides.at("retention.ms"), "60000");
  EXPECT_FALSE(std::filesystem::exists(dir_.file("data/sensors-0")));
  EXPECT_TRUE(std::filesystem::exists(dir_.file("data/sensors-1")));
  // Applied again (a crash before the applied offset moved): the same state.
  ASSERT_TRUE(apply(r).ok());
  EXPECT_EQ(table_->all().size(), 1u);
  // A restart reads the placement back from eddy.db.
  reopen();
  t = table_->find("sensors");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->replicas, (std::vector<std::vector<int32_t>>{{1}, {2}, {3}}));
  EXPECT_EQ(t->local(0), nullptr);
  EXPECT_NE(t->local(1), nullptr);
}

TEST_F(ClusterNode, PartitionsConfigsAndRemovalApplyOnceAndInOrder) {
  const protocol::TopicRecord r = sample_topic();
  ASSERT_TRUE(apply(r).ok());
  const std::vector<std::vector<int32_t>> added = {{2}, {1}};
  ASSERT_TRUE(table_->apply_partitions_added(r.topic_id, 3, added).ok());
  ASSERT_TRUE(table_->apply_partitions_added(r.topic_id, 3, added).ok()) << "again: nothing more";
  Topic* t = table_->find("sensors");
  ASSERT_EQ(t->partitions.size(), 5u);
  EXPECT_NE(t->local(3), nullptr);
  EXPECT_EQ(t->local(4), nullptr);
  // A record that skips partitions does not fit this node's state.
  EXPECT_EQ(table_->apply_partitions_added(r.topic_id, 7, added).code, protocol::ErrorCode::kInvalidPartitions);
  ASSERT_TRUE(table_->apply_configs(r.topic_id, {{"retention.bytes", "1048576"}}).ok());
  EXPECT_EQ(t->overrides, (ConfigMap{{"retention.bytes", "1048576"}})) << "the record's set replaces the old one";
  reopen();
  t = table_->find("sensors");
  ASSERT_EQ(t->partitions.size(), 5u);
  EXPECT_EQ(t->overrides, (ConfigMap{{"retention.bytes", "1048576"}}));
  ASSERT_TRUE(table_->apply_removed(r.topic_id).ok());
  ASSERT_TRUE(table_->apply_removed(r.topic_id).ok()) << "again: already gone";
  EXPECT_EQ(table_->find("sensors"), nullptr);
  EXPECT_FALSE(std::filesystem::exists(dir_.file("data/sensors-1")));
}

TEST_F(ClusterNode, ANameTakenByAnotherTopicIsRefusedNotReplaced) {
  ASSERT_TRUE(apply(sample_topic()).ok());
  protocol::TopicRecord other = sample_topic();
  other.topic_id.bytes[1] = 1;
  EXPECT_EQ(apply(other).code, protocol::ErrorCode::kTopicAlreadyExists);
  EXPECT_EQ(table_->find("sensors")->id, sample_topic().topic_id);
}

}  // namespace
}  // namespace eddy::broker
