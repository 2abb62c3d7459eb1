#include "security/plain.h"

#include <gtest/gtest.h>

#include "security/crypto.h"

namespace eddy::security {
namespace {

using Kind = SaslStep::Kind;
const Bytes kSecret(32, 9);

std::string msg(std::string_view a, std::string_view u, std::string_view p) {
  std::string m(a);
  m += '\0';
  m += u;
  m += '\0';
  m += p;
  return m;
}

TEST(PlainTest, Parse) {
  PlainMessage m;
  std::string why;
  ASSERT_TRUE(parse_plain_message(msg("", "alice", "pw"), &m, &why)) << why;
  EXPECT_EQ(m.user, "alice");
  EXPECT_EQ(m.password, "pw");
  EXPECT_TRUE(parse_plain_message(msg("alice", "alice", "pw"), &m, &why));
  EXPECT_TRUE(parse_plain_message(msg("", "a,b=c", "p\xc3\xa4ss word"), &m, &why));
  EXPECT_FALSE(parse_plain_message(msg("bob", "alice", "pw"), &m, &why));
  EXPECT_FALSE(parse_plain_message(msg("", "", "pw"), &m, &why));
  EXPECT_FALSE(parse_plain_message(msg("", "alice", ""), &m, &why));
  EXPECT_FALSE(parse_plain_message("", &m, &why));
  EXPECT_FALSE(parse_plain_message(std::string("alice\0pw", 8), &m, &why));
  EXPECT_FALSE(parse_plain_message(msg("", "alice", std::string("pw\0x", 4)), &m, &why));
}

class PlainServerTest : public ::testing::Test {
 protected:
  ScramCredentialLookup lookup() {
    return [this](const std::string& user, ScramMechanism m, ScramCredential* out) {
      if (user == "alice" && m == ScramMechanism::kSha256) {
        *out = alice256;
        return true;
      }
      if (user == "bob" && m == ScramMechanism::kSha512) {
        *out = bob512;
        return true;
      }
      return false;
    };
  }
  SaslStep run(const std::string& message) {
    PlainServer s(lookup(), kSecret);
    SaslStep step = s.step(as_bytes(message));
    if (step.kind == Kind::kSuccess) {
      EXPECT_FALSE(s.user().empty());
    }
    EXPECT_EQ(s.step(as_bytes(message)).kind, Kind::kFailure);  // one message only
    return step;
  }
  void SetUp() override {
    ASSERT_TRUE(credential_from_password(ScramMechanism::kSha256, "alice-pw", {}, 4096, &alice256).ok());
    ASSERT_TRUE(credential_from_password(ScramMechanism::kSha512, "bob-pw", {}, 8192, &bob512).ok());
  }
  ScramCredential alice256, bob512;
};

TEST_F(PlainServerTest, VerifiesAgainstEitherScramCredential) {
  EXPECT_EQ(run(msg("", "alice", "alice-pw")).kind, Kind::kSuccess);
  EXPECT_EQ(run(msg("bob", "bob", "bob-pw")).kind, Kind::kSuccess);
  SaslStep wrong = run(msg("", "alice", "bob-pw"));
  SaslStep unknown = run(msg("", "carol", "alice-pw"));
  EXPECT_EQ(wrong.kind, Kind::kFailure);
  EXPECT_EQ(unknown.kind, Kind::kFailure);
  EXPECT_EQ(wrong.error, unknown.error);
  EXPECT_EQ(run(msg("", "alice", "")).kind, Kind::kFailure);
  EXPECT_EQ(run(std::string(kMaxSaslTokenBytes + 1, 'a')).kind, Kind::kFailure);
}

}  // namespace
}  // namespace eddy::security
