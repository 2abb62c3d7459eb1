#include "meta/scram_credential_store.h"

#include <gtest/gtest.h>

#include "tests/unit/meta/meta_test_util.h"

namespace eddy::meta {
namespace {

using ScramCredentialStoreTest = testing::MetaStoreTest;

ScramCredentialRow row(const std::string& user, int8_t mechanism, uint8_t fill, int32_t iterations = 4096) {
  ScramCredentialRow r;
  r.user = user;
  r.mechanism = mechanism;
  r.salt.assign(16, fill);
  r.stored_key.assign(mechanism == 1 ? 32 : 64, static_cast<uint8_t>(fill + 1));
  r.server_key.assign(mechanism == 1 ? 32 : 64, static_cast<uint8_t>(fill + 2));
  r.iterations = iterations;
  return r;
}

TEST_F(ScramCredentialStoreTest, AddReplaceDeleteListSurviveReopen) {
  auto& creds = store_->scram_credentials();
  std::vector<ScramCredentialRow> all;
  ASSERT_TRUE(creds.list(&all).ok());
  EXPECT_TRUE(all.empty());

  ASSERT_TRUE(creds.upsert(row("bob", 2, 1)).ok());
  ASSERT_TRUE(creds.upsert(row("alice", 1, 2)).ok());
  ASSERT_TRUE(creds.upsert(row("alice", 2, 3, 8192)).ok());
  ASSERT_TRUE(creds.upsert(row("alice", 2, 4, 4096)).ok());  // replaces
  ASSERT_TRUE(creds.list(&all).ok());
  EXPECT_EQ(all, (std::vector<ScramCredentialRow>{row("alice", 1, 2), row("alice", 2, 4), row("bob", 2, 1)}));

  ASSERT_TRUE(creds.remove({"alice", 1}).ok());
  ASSERT_TRUE(creds.remove({"nobody", 1}).ok());
  reopen();
  auto& again = store_->scram_credentials();
  ASSERT_TRUE(again.list(&all).ok());
  EXPECT_EQ(all, (std::vector<ScramCredentialRow>{row("alice", 2, 4), row("bob", 2, 1)}));
  ScramCredentialRow got;
  bool found = false;
  ASSERT_TRUE(again.get("bob", 2, &got, &found).ok());
  EXPECT_TRUE(found);
  EXPECT_EQ(got, row("bob", 2, 1));
  ASSERT_TRUE(again.get("bob", 1, &got, &found).ok());
  EXPECT_FALSE(found);
}

TEST_F(ScramCredentialStoreTest, AlterIsAllOrNothing) {
  auto& creds = store_->scram_credentials();
  ASSERT_TRUE(creds.upsert(row("alice", 1, 1)).ok());
  Status s = creds.alter({{"alice", 1}}, {row("bob", 1, 1), row("carol", 1, 1, 100)});
  EXPECT_TRUE(s.is_invalid_argument()) << s.to_string();
  EXPECT_TRUE(creds.alter({}, {row("", 1, 1)}).is_invalid_argument());
  EXPECT_TRUE(creds.alter({}, {row("x", 3, 1)}).is_invalid_argument());
  std::vector<ScramCredentialRow> all;
  ASSERT_TRUE(creds.list(&all).ok());
  EXPECT_EQ(all, (std::vector<ScramCredentialRow>{row("alice", 1, 1)}));
}

TEST_F(ScramCredentialStoreTest, SecretIsCreatedOnceAndKept) {
  std::vector<uint8_t> first, second;
  ASSERT_TRUE(store_->scram_credentials().secret("k", std::vector<uint8_t>(32, 1), &first).ok());
  EXPECT_EQ(first, std::vector<uint8_t>(32, 1));
  reopen();
  ASSERT_TRUE(store_->scram_credentials().secret("k", std::vector<uint8_t>(32, 2), &second).ok());
  EXPECT_EQ(second, first);
  EXPECT_FALSE(store_->scram_credentials().secret("short", std::vector<uint8_t>(8, 2), &second).ok());
}

}  // namespace
}  // namespace eddy::meta
