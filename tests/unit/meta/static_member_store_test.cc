#include "meta/static_member_store.h"

#include <gtest/gtest.h>

#include "tests/unit/meta/meta_test_util.h"

namespace eddy::meta {
namespace {

using StaticMemberStoreTest = testing::MetaStoreTest;

StaticMember member(const std::string& group, const std::string& instance, int32_t generation) {
  StaticMember m;
  m.group_id = group;
  m.group_instance_id = instance;
  m.member_id = instance + "-" + std::to_string(generation);
  m.client_id = "client";
  m.client_host = "/127.0.0.1";
  m.protocol_type = "consumer";
  m.protocol_name = "range";
  m.generation_id = generation;
  m.session_timeout_ms = 45000;
  m.rebalance_timeout_ms = 300000;
  m.subscription = {0, 1, 0, 0, 0, 1, 0, 1, 't'};
  m.assignment = {0, 0, 0xff, 0, 7};
  return m;
}

TEST_F(StaticMemberStoreTest, SaveLoadRoundTripAndPersist) {
  std::vector<StaticMember> group = {member("g", "b", 1), member("g", "a", 1)};
  group[1].assignment.clear();  // a member without an assignment yet
  ASSERT_TRUE(store_->static_members().save(group).ok());
  ASSERT_TRUE(store_->static_members().save(member("h", "a", 3)).ok());
  reopen();
  std::vector<StaticMember> loaded;
  ASSERT_TRUE(store_->static_members().load("g", &loaded).ok());
  EXPECT_EQ(loaded, (std::vector<StaticMember>{group[1], group[0]}));
  ASSERT_TRUE(store_->static_members().load_all(&loaded).ok());
  ASSERT_EQ(loaded.size(), 3u);
  EXPECT_EQ(loaded[2], member("h", "a", 3));
}

TEST_F(StaticMemberStoreTest, SaveReplacesByInstanceId) {
  ASSERT_TRUE(store_->static_members().save(member("g", "a", 1)).ok());
  StaticMember rejoined = member("g", "a", 2);
  rejoined.assignment = {1, 2, 3};
  ASSERT_TRUE(store_->static_members().save(rejoined).ok());
  std::vector<StaticMember> loaded;
  ASSERT_TRUE(store_->static_members().load("g", &loaded).ok());
  ASSERT_EQ(loaded.size(), 1u);
  EXPECT_EQ(loaded[0], rejoined);
}

TEST_F(StaticMemberStoreTest, Remove) {
  ASSERT_TRUE(store_->static_members().save({member("g", "a", 1), member("g", "b", 1), member("h", "a", 1)}).ok());
  bool removed = false;
  ASSERT_TRUE(store_->static_members().remove("g", "a", &removed).ok());
  EXPECT_TRUE(removed);
  ASSERT_TRUE(store_->static_members().remove("g", "a", &removed).ok());
  EXPECT_FALSE(removed);
  std::vector<StaticMember> loaded;
  ASSERT_TRUE(store_->static_members().load("g", &loaded).ok());
  ASSERT_EQ(loaded.size(), 1u);
  EXPECT_EQ(loaded[0].group_instance_id, "b");
  ASSERT_TRUE(store_->static_members().remove_group("g").ok());
  ASSERT_TRUE(store_->static_members().load("g", &loaded).ok());
  EXPECT_TRUE(loaded.empty());
  ASSERT_TRUE(store_->static_members().load_all(&loaded).ok());
  EXPECT_EQ(loaded.size(), 1u);
}

}  // namespace
}  // namespace eddy::meta
