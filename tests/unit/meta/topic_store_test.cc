#include "meta/topic_store.h"

#include <gtest/gtest.h>

#include "tests/unit/meta/meta_test_util.h"

namespace eddy::meta {
namespace {

using TopicStoreTest = testing::MetaStoreTest;
using testing::new_topic;

TEST_F(TopicStoreTest, CreateGetListRoundTrip) {
  TopicRecord created;
  NewTopic t = new_topic("sensors", 3, {{"retention.ms", "60000"}, {"cleanup.policy", "delete"}});
  Status s = store_->topics().create(t, &created);
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(created.name, "sensors");
  EXPECT_FALSE(created.id.is_zero());
  EXPECT_EQ(created.id.bytes[6] >> 4, 4);
  EXPECT_EQ(created.partition_count, 3);
  EXPECT_EQ(created.replication_factor, 1);
  EXPECT_EQ(created.configs, t.configs);

  TopicRecord by_name;
  ASSERT_TRUE(store_->topics().get("sensors", &by_name).ok());
  EXPECT_EQ(by_name.id, created.id);
  EXPECT_EQ(by_name.partition_count, 3);
  EXPECT_EQ(by_name.configs, t.configs);

  TopicRecord by_id;
  ASSERT_TRUE(store_->topics().get_by_id(created.id, &by_id).ok());
  EXPECT_EQ(by_id.name, "sensors");
  EXPECT_EQ(by_id.configs, t.configs);

  ASSERT_TRUE(store_->topics().create(new_topic("alarms", 1, {}, 3), nullptr).ok());
  std::vector<TopicRecord> all;
  ASSERT_TRUE(store_->topics().list(&all).ok());
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].name, "alarms");
  EXPECT_EQ(all[0].replication_factor, 3);
  EXPECT_TRUE(all[0].configs.empty());
  EXPECT_EQ(all[1].name, "sensors");
  EXPECT_EQ(all[1].configs, t.configs);
  EXPECT_NE(all[0].id, all[1].id);
}

TEST_F(TopicStoreTest, ReopenPersists) {
  TopicRecord created;
  ASSERT_TRUE(store_->topics().create(new_topic("t", 5, {{"k", "v"}}), &created).ok());
  reopen();
  TopicRecord loaded;
  ASSERT_TRUE(store_->topics().get_by_id(created.id, &loaded).ok());
  EXPECT_EQ(loaded.name, "t");
  EXPECT_EQ(loaded.partition_count, 5);
  EXPECT_EQ(loaded.configs.at("k"), "v");
}

TEST_F(TopicStoreTest, MissingTopics) {
  TopicRecord out;
  Status s = store_->topics().get("nope", &out);
  EXPECT_TRUE(s.is_not_found()) << s.to_string();
  EXPECT_TRUE(store_->topics().get_by_id(Uuid::random(), &out).is_not_found());
  EXPECT_TRUE(store_->topics().remove("nope").is_not_found());
  EXPECT_TRUE(store_->topics().set_partition_count("nope", 4).is_not_found());
  EXPECT_TRUE(store_->topics().alter_configs("nope", {ConfigChange::set("a", "b")}).is_not_found());
}

TEST_F(TopicStoreTest, CreateRefusals) {
  ASSERT_TRUE(store_->topics().create(new_topic("a.b"), nullptr).ok());

  Status s = store_->topics().create(new_topic("a.b", 7), nullptr);
  EXPECT_TRUE(s.is_already_exists()) << s.to_string();
  EXPECT_EQ(s.message(), "Topic 'a.b' already exists.");

  s = store_->topics().create(new_topic("a_b"), nullptr);
  EXPECT_TRUE(s.is_invalid_argument()) << s.to_string();
  EXPECT_EQ(s.message(), "Topic 'a_b' collides with existing topic: a.b");

  s = store_->topics().create(new_topic(".."), nullptr);
  EXPECT_TRUE(s.is_invalid_argument());
  EXPECT_EQ(s.message(), "Topic name is invalid: '..' is not allowed");
  EXPECT_TRUE(store_->topics().create(new_topic("bad name"), nullptr).is_invalid_argument());
  EXPECT_TRUE(store_->topics().create(new_topic(std::string(250, 'x')), nullptr).is_invalid_argument());
  EXPECT_TRUE(store_->topics().create(new_topic("z", 0), nullptr).is_invalid_argument());
  EXPECT_TRUE(store_->topics().create(new_topic("z", -1), nullptr).is_invalid_argument());
  EXPECT_TRUE(store_->topics().create(new_topic("z", 1, {}, 0), nullptr).is_invalid_argument());
  EXPECT_TRUE(store_->topics().create(new_topic("z", 1, {{"", "v"}}), nullptr).is_invalid_argument());

  // None of the refused creates left anything behind.
  std::vector<TopicRecord> all;
  ASSERT_TRUE(store_->topics().list(&all).ok());
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].partition_count, 1);
}

TEST_F(TopicStoreTest, CreateWithGivenId) {
  Uuid id = Uuid::random();
  TopicRecord created;
  NewTopic replicated = new_topic("replicated");
  replicated.id = id;
  ASSERT_TRUE(store_->topics().create(replicated, &created).ok());
  EXPECT_EQ(created.id, id);
  NewTopic other = new_topic("other");
  other.id = id;
  Status s = store_->topics().create(other, nullptr);
  EXPECT_TRUE(s.is_already_exists()) << s.to_string();
  TopicRecord none;
  EXPECT_TRUE(store_->topics().get("other", &none).is_not_found());
}

TEST_F(TopicStoreTest, SetPartitionCountOnlyGrows) {
  ASSERT_TRUE(store_->topics().create(new_topic("t", 3), nullptr).ok());
  Status s = store_->topics().set_partition_count("t", 3);
  EXPECT_TRUE(s.is_invalid_argument());
  EXPECT_EQ(s.message(), "Topic already has 3 partitions.");
  s = store_->topics().set_partition_count("t", 2);
  EXPECT_TRUE(s.is_invalid_argument());
  EXPECT_EQ(s.message(), "Topic currently has 3 partitions, which is higher than the requested 2.");
  ASSERT_TRUE(store_->topics().set_partition_count("t", 8).ok());
  reopen();
  TopicRecord t;
  ASSERT_TRUE(store_->topics().get("t", &t).ok());
  EXPECT_EQ(t.partition_count, 8);
}

TEST_F(TopicStoreTest, AlterConfigsSetAndDelete) {
  ASSERT_TRUE(store_->topics().create(new_topic("t", 1, {{"a", "1"}, {"b", "2"}}), nullptr).ok());
  Status s = store_->topics().alter_configs(
      "t", {ConfigChange::set("a", "10"), ConfigChange::remove("b"), ConfigChange::set("c", "3"),
            ConfigChange::remove("never-set"), ConfigChange::set("c", "30")});
  ASSERT_TRUE(s.ok()) << s.to_string();
  TopicRecord t;
  ASSERT_TRUE(store_->topics().get("t", &t).ok());
  EXPECT_EQ(t.configs, (std::map<std::string, std::string>{{"a", "10"}, {"c", "30"}}));

  // All or nothing: an invalid change leaves the configs as they were.
  s = store_->topics().alter_configs("t", {ConfigChange::set("d", "4"), ConfigChange::set("", "x")});
  EXPECT_TRUE(s.is_invalid_argument());
  reopen();
  ASSERT_TRUE(store_->topics().get("t", &t).ok());
  EXPECT_EQ(t.configs, (std::map<std::string, std::string>{{"a", "10"}, {"c", "30"}}));
}

TEST_F(TopicStoreTest, RemoveDeletesEverythingKeptForTheTopic) {
  TopicRecord t;
  ASSERT_TRUE(store_->topics().create(new_topic("gone", 2, {{"k", "v"}}), &t).ok());
  ASSERT_TRUE(store_->topics().create(new_topic("kept"), nullptr).ok());
  ASSERT_TRUE(store_->offsets().commit("g", {{"gone", 0, 5, -1, "", 1}, {"kept", 0, 7, -1, "", 1}}).ok());
  ASSERT_TRUE(store_->producer_snapshots().save({{"gone", 1, 100, 0, 4, 9, 1}, {"kept", 0, 100, 0, 1, 2, 1}}).ok());

  ASSERT_TRUE(store_->topics().remove("gone").ok());

  TopicRecord out;
  EXPECT_TRUE(store_->topics().get("gone", &out).is_not_found());
  EXPECT_TRUE(store_->topics().get_by_id(t.id, &out).is_not_found());
  int64_t configs = -1;
  ASSERT_TRUE(store_->database()->query_int64("SELECT count(*) FROM topic_configs", &configs).ok());
  EXPECT_EQ(configs, 0);
  std::vector<CommittedOffset> offsets;
  ASSERT_TRUE(store_->offsets().fetch_all("g", &offsets).ok());
  ASSERT_EQ(offsets.size(), 1u);
  EXPECT_EQ(offsets[0].topic, "kept");
  std::vector<ProducerSnapshot> snapshots;
  ASSERT_TRUE(store_->producer_snapshots().load_all(&snapshots).ok());
  ASSERT_EQ(snapshots.size(), 1u);
  EXPECT_EQ(snapshots[0].topic, "kept");

  // Re-created under the same name: a new id, nothing inherited.
  TopicRecord again;
  ASSERT_TRUE(store_->topics().create(new_topic("gone"), &again).ok());
  EXPECT_NE(again.id, t.id);
  EXPECT_TRUE(again.configs.empty());
}

}  // namespace
}  // namespace eddy::meta
