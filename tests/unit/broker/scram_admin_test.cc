#include "broker/scram_admin.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "meta/meta_store.h"
#include "protocol/errors.h"
#include "security/crypto.h"
#include "tests/unit/port/test_dir.h"

namespace eddy::broker {
namespace {

using protocol::ErrorCode;
using Req = protocol::AlterUserScramCredentialsRequest;

Req::ScramCredentialUpsertion upsert(const std::string& name, int8_t mechanism, int32_t iterations = 8192) {
  Req::ScramCredentialUpsertion u;
  u.name = name;
  u.mechanism = mechanism;
  u.iterations = iterations;
  u.salt = {1, 2, 3};
  security::Bytes salted;
  EXPECT_TRUE(security::pbkdf2(mechanism == 1 ? security::HashAlgorithm::kSha256 : security::HashAlgorithm::kSha512,
                               "pw", u.salt, 4096, &salted)
                  .ok());
  u.salted_password = salted;
  return u;
}

Req::ScramCredentialDeletion remove(const std::string& name, int8_t mechanism) { return {name, mechanism, {}}; }

class ScramAdminTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(meta::MetaStore::open(dir_.file("eddy.db"), &store_).ok()); }
  // user -> error code
  std::map<std::string, ErrorCode> alter(const Req& request) {
    std::map<std::string, ErrorCode> out;
    for (const auto& r : alter_user_scram_credentials(request, &store_->scram_credentials()).results) {
      EXPECT_EQ(out.count(r.user), 0u) << r.user;
      out[r.user] = static_cast<ErrorCode>(r.error_code);
      EXPECT_EQ(r.error_message.has_value(), r.error_code != 0) << r.user;
    }
    return out;
  }
  testing::TempDir dir_;
  std::unique_ptr<meta::MetaStore> store_;
};

TEST_F(ScramAdminTest, AlterResultCodes) {
  Req request;
  request.upsertions = {upsert("alice", 2),        upsert("bob", 1),          upsert("", 2),
                        upsert("carol", 3),        upsert("dave", 2, 4095),   upsert("erin", 2, 16385),
                        upsert("frank", 2),        upsert("frank", 1)};
  request.upsertions.back().salted_password.resize(10);  // and frank is named twice anyway
  auto wrong_size = upsert("grace", 2);
  wrong_size.salted_password.resize(32);
  request.upsertions.push_back(wrong_size);
  request.deletions = {remove("nobody", 2), remove("heidi", 0)};
  EXPECT_EQ(alter(request), (std::map<std::string, ErrorCode>{
                                {"alice", ErrorCode::kNone},
                                {"bob", ErrorCode::kNone},
                                {"", ErrorCode::kUnacceptableCredential},
                                {"carol", ErrorCode::kUnsupportedSaslMechanism},
                                {"dave", ErrorCode::kUnacceptableCredential},
                                {"erin", ErrorCode::kUnacceptableCredential},
                                {"frank", ErrorCode::kDuplicateResource},
                                {"grace", ErrorCode::kUnacceptableCredential},
                                {"nobody", ErrorCode::kResourceNotFound},
                                {"heidi", ErrorCode::kUnsupportedSaslMechanism},
                            }));
  std::vector<meta::ScramCredentialRow> rows;
  ASSERT_TRUE(store_->scram_credentials().list(&rows).ok());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].user, "alice");
  EXPECT_EQ(rows[0].iterations, 8192);
  EXPECT_EQ(rows[0].stored_key.size(), 64u);

  // A deletion and an upsertion of one user in one request: refused (Kafka).
  Req both;
  both.deletions = {remove("alice", 2)};
  both.upsertions = {upsert("alice", 1)};
  EXPECT_EQ(alter(both), (std::map<std::string, ErrorCode>{{"alice", ErrorCode::kDuplicateResource}}));
  Req del;
  del.deletions = {remove("alice", 2), remove("bob", 2)};
  EXPECT_EQ(alter(del), (std::map<std::string, ErrorCode>{{"alice", ErrorCode::kNone},
                                                          {"bob", ErrorCode::kResourceNotFound}}));
}

TEST_F(ScramAdminTest, Describe) {
  Req request;
  request.upsertions = {upsert("alice", 2), upsert("bob", 1, 4096)};
  alter(request);
  Req more;
  more.upsertions = {upsert("alice", 1, 10000)};
  alter(more);

  protocol::DescribeUserScramCredentialsRequest all;
  all.users.reset();
  auto r = describe_user_scram_credentials(all, &store_->scram_credentials());
  ASSERT_EQ(r.results.size(), 2u);
  EXPECT_EQ(r.results[0].user, "alice");
  ASSERT_EQ(r.results[0].credential_infos.size(), 2u);
  EXPECT_EQ(r.results[0].credential_infos[0].mechanism, 1);
  EXPECT_EQ(r.results[0].credential_infos[0].iterations, 10000);
  EXPECT_EQ(r.results[1].credential_infos[0].iterations, 4096);

  protocol::DescribeUserScramCredentialsRequest named;
  named.users.emplace();
  named.users->push_back({"bob", {}});
  named.users->push_back({"zed", {}});
  named.users->push_back({"alice", {}});
  named.users->push_back({"alice", {}});
  r = describe_user_scram_credentials(named, &store_->scram_credentials());
  std::map<std::string, int16_t> codes;
  for (const auto& x : r.results) codes[x.user] = x.error_code;
  EXPECT_EQ(codes, (std::map<std::string, int16_t>{{"alice", protocol::to_int(ErrorCode::kDuplicateResource)},
                                                   {"bob", 0},
                                                   {"zed", protocol::to_int(ErrorCode::kResourceNotFound)}}));
}

}  // namespace
}  // namespace eddy::broker
