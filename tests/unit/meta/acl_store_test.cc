#include "meta/acl_store.h"

#include <gtest/gtest.h>

#include "tests/unit/meta/meta_test_util.h"

namespace eddy::meta {
namespace {

using AclStoreTest = testing::MetaStoreTest;

// TOPIC sensors LITERAL User:alice * WRITE ALLOW, varied by the arguments.
AclRow acl(std::string name = "sensors", std::string principal = "User:alice", int8_t operation = 4,
           int8_t permission = 3, int8_t pattern = 3, int8_t type = 2) {
  return AclRow{type, std::move(name), pattern, std::move(principal), "*", operation, permission};
}

TEST_F(AclStoreTest, AddRemoveListSurviveReopen) {
  auto& acls = store_->acls();
  std::vector<AclRow> all;
  ASSERT_TRUE(acls.list(&all).ok());
  EXPECT_TRUE(all.empty());

  ASSERT_TRUE(acls.add({acl(), acl("plant-", "User:bob", 3, 3, 4), acl("*", "User:*", 2, 2)}).ok());
  ASSERT_TRUE(acls.add({acl()}).ok());  // a set: adding again changes nothing
  ASSERT_TRUE(acls.add({acl("g", "User:alice", 3, 3, 3, 3)}).ok());
  ASSERT_TRUE(acls.list(&all).ok());
  EXPECT_EQ(all, (std::vector<AclRow>{acl("*", "User:*", 2, 2), acl("plant-", "User:bob", 3, 3, 4), acl(),
                                       acl("g", "User:alice", 3, 3, 3, 3)}));

  ASSERT_TRUE(acls.remove({acl("*", "User:*", 2, 2), acl("never-there")}).ok());
  reopen();
  ASSERT_TRUE(store_->acls().list(&all).ok());
  EXPECT_EQ(all, (std::vector<AclRow>{acl("plant-", "User:bob", 3, 3, 4), acl(), acl("g", "User:alice", 3, 3, 3, 3)}));
}

TEST_F(AclStoreTest, AlterIsAllOrNothing) {
  auto& acls = store_->acls();
  ASSERT_TRUE(acls.add({acl()}).ok());
  const std::vector<AclRow> bad = {
      acl("x", "User:a", 4, 3, 3, 1),  // ANY resource type
      acl("x", "User:a", 4, 3, 2),     // MATCH pattern
      acl("x", "User:a", 1),           // ANY operation
      acl("x", "User:a", 4, 1),        // ANY permission
      acl(""),                         // empty name
      acl("x", ""),                    // empty principal
  };
  for (const AclRow& b : bad) {
    Status s = acls.alter({acl()}, {acl("ok"), b});
    EXPECT_TRUE(s.is_invalid_argument()) << s.to_string();
  }
  AclRow no_host = acl("x");
  no_host.host = "";
  EXPECT_TRUE(acls.add({no_host}).is_invalid_argument());
  std::vector<AclRow> all;
  ASSERT_TRUE(acls.list(&all).ok());
  EXPECT_EQ(all, std::vector<AclRow>{acl()});
}

TEST_F(AclStoreTest, TheTableRefusesWhatBypassesTheStore) {
  Status s = store_->database()->exec(
      "INSERT INTO acls VALUES (9, 'x', 3, 'User:a', '*', 4, 3)");
  EXPECT_FALSE(s.ok());
}

}  // namespace
}  // namespace eddy::meta
