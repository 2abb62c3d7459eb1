#include "security/scram.h"

#include <gtest/gtest.h>

#include <map>

#include "scram_test_client.h"
#include "security/crypto.h"

namespace eddy::security {
namespace {

using testing::bytes_of;
using testing::ScramTestClient;
using Kind = SaslStep::Kind;

// RFC 7677 section 3: user "user", password "pencil".
constexpr char kRfcClientFirst[] = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO";
constexpr char kRfcServerNonce[] = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
constexpr char kRfcServerFirst[] =
    "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
constexpr char kRfcClientFinal[] =
    "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
constexpr char kRfcServerFinal[] = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";
constexpr char kRfcCombinedNonce[] = "rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";

const Bytes kSecret(32, 7);

struct Store {
  std::map<std::pair<std::string, ScramMechanism>, ScramCredential> creds;
  void add(const std::string& user, ScramMechanism m, const std::string& password, Bytes salt = {},
           int32_t iterations = 4096) {
    ScramCredential c;
    EXPECT_TRUE(credential_from_password(m, password, salt, iterations, &c).ok());
    creds[{user, m}] = c;
  }
  ScramCredentialLookup lookup() {
    return [this](const std::string& user, ScramMechanism m, ScramCredential* out) {
      auto it = creds.find({user, m});
      if (it == creds.end()) return false;
      *out = it->second;
      return true;
    };
  }
};

class ScramTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Bytes salt;
    ASSERT_TRUE(base64_decode("W22ZaJ0SNY7soEsUEjb6gQ==", &salt));
    store.add("user", ScramMechanism::kSha256, "pencil", salt);
  }
  std::unique_ptr<ScramServer> rfc_server() {
    auto server = std::make_unique<ScramServer>(ScramMechanism::kSha256, store.lookup(), kSecret);
    server->set_server_nonce_for_test(kRfcServerNonce);
    return server;
  }
  // Runs client-first of the RFC exchange, then final; returns final's step.
  SaslStep rfc_final(std::string_view final_message, std::string_view first = kRfcClientFirst) {
    server = rfc_server();
    SaslStep s1 = server->step(bytes_of(first));
    EXPECT_EQ(s1.kind, Kind::kChallenge) << s1.reason;
    return server->step(bytes_of(final_message));
  }
  SaslStep first_only(std::string_view first) { return rfc_server()->step(bytes_of(first)); }

  Store store;
  std::unique_ptr<ScramServer> server;
};

TEST_F(ScramTest, Rfc7677TestVector) {
  auto s = rfc_server();
  SaslStep first = s->step(bytes_of(kRfcClientFirst));
  ASSERT_EQ(first.kind, Kind::kChallenge) << first.reason;
  EXPECT_EQ(first.response, kRfcServerFirst);
  SaslStep final_step = s->step(bytes_of(kRfcClientFinal));
  ASSERT_EQ(final_step.kind, Kind::kSuccess) << final_step.reason;
  EXPECT_EQ(final_step.response, kRfcServerFinal);
  EXPECT_EQ(s->user(), "user");
  // Nothing after the end.
  EXPECT_EQ(s->step(bytes_of(kRfcClientFinal)).kind, Kind::kFailure);
}

TEST_F(ScramTest, Sha512RoundTripWithRandomNonce) {
  store.add("alice", ScramMechanism::kSha512, "s3cret, with = signs", {}, 8192);
  ScramServer s(ScramMechanism::kSha512, store.lookup(), kSecret);
  ScramTestClient client(ScramMechanism::kSha512, "alice", "s3cret, with = signs", "fyko+d2lbbFgONRv9qkxdawL");
  SaslStep first = s.step(bytes_of(client.client_first()));
  ASSERT_EQ(first.kind, Kind::kChallenge) << first.reason;
  EXPECT_NE(first.response.find(",i=8192"), std::string::npos);
  EXPECT_GT(first.response.find(",s="), std::string("r=fyko+d2lbbFgONRv9qkxdawL").size() + 16);
  SaslStep final_step = s.step(bytes_of(client.client_final(first.response)));
  ASSERT_EQ(final_step.kind, Kind::kSuccess) << final_step.reason;
  EXPECT_EQ(final_step.response, client.expected_server_final());
}

TEST_F(ScramTest, WrongPasswordAndUnknownUserFailAlikeAtTheProof) {
  ScramServer wrong(ScramMechanism::kSha256, store.lookup(), kSecret);
  ScramTestClient c1(ScramMechanism::kSha256, "user", "pencil2", "abc");
  SaslStep f1 = wrong.step(bytes_of(c1.client_first()));
  ASSERT_EQ(f1.kind, Kind::kChallenge);
  SaslStep r1 = wrong.step(bytes_of(c1.client_final(f1.response)));
  ASSERT_EQ(r1.kind, Kind::kFailure);

  ScramServer unknown(ScramMechanism::kSha256, store.lookup(), kSecret);
  ScramTestClient c2(ScramMechanism::kSha256, "mallory", "pencil", "abc");
  SaslStep f2 = unknown.step(bytes_of(c2.client_first()));
  ASSERT_EQ(f2.kind, Kind::kChallenge) << f2.reason;
  EXPECT_NE(f2.response.find(",i=4096"), std::string::npos);
  SaslStep r2 = unknown.step(bytes_of(c2.client_final(f2.response)));
  ASSERT_EQ(r2.kind, Kind::kFailure);
  EXPECT_EQ(r1.error, r2.error);
  EXPECT_EQ(r1.error, invalid_credentials_message("SCRAM-SHA-256"));
  EXPECT_NE(r2.reason.find("e=invalid-proof"), std::string::npos);

  // The fake salt is the same on every attempt (and with the same secret).
  ScramServer again(ScramMechanism::kSha256, store.lookup(), kSecret);
  SaslStep f3 = again.step(bytes_of(c2.client_first()));
  auto salt_of = [](const std::string& m) { return m.substr(m.find(",s=")); };
  EXPECT_EQ(salt_of(f2.response), salt_of(f3.response));
  ScramServer other_user(ScramMechanism::kSha256, store.lookup(), kSecret);
  ScramTestClient c3(ScramMechanism::kSha256, "trudy", "x", "abc");
  EXPECT_NE(salt_of(other_user.step(bytes_of(c3.client_first())).response), salt_of(f2.response));
}

TEST_F(ScramTest, MalformedClientFirst) {
  struct Case {
    const char* message;
    const char* rfc_error;
  };
  const Case cases[] = {
      {"", "invalid-encoding"},
      {"n", "invalid-encoding"},
      {"n,", "invalid-encoding"},
      {"x,,n=user,r=abc", "invalid-encoding"},
      {"p=tls-unique,,n=user,r=abc", "channel-binding-not-supported"},
      {"n,,", "invalid-encoding"},
      {"n,,n=user", "invalid-encoding"},
      {"n,,r=abc,n=user", "invalid-encoding"},
      {"n,,n=,r=abc", "invalid-username-encoding"},
      {"n,,n=us=er,r=abc", "invalid-username-encoding"},
      {"n,,n=us=2Xer,r=abc", "invalid-username-encoding"},
      {"n,,n=user=2,r=abc", "invalid-username-encoding"},
      {"n,,n=user,r=", "invalid-encoding"},
      {"n,,n=user,r=ab\x7f", "invalid-encoding"},
      {"n,,n=user,r=ab c", "invalid-encoding"},
      {"n,,m=ext,n=user,r=abc", "extensions-not-supported"},
      {"n,,n=user,r=abc,tokenauth=true", "extensions-not-supported"},
      {"n,,n=user,r=abc,x=1", "extensions-not-supported"},
      {"n,b=user,n=user,r=abc", "invalid-username-encoding"},
      {"n,a=,n=user,r=abc", "invalid-username-encoding"},
      {"n,a=admin,n=user,r=abc", "other-error"},
  };
  for (const Case& c : cases) {
    SaslStep s = first_only(c.message);
    EXPECT_EQ(s.kind, Kind::kFailure) << c.message;
    EXPECT_NE(s.reason.find(std::string("e=") + c.rfc_error), std::string::npos) << c.message << ": " << s.reason;
    EXPECT_TRUE(s.response.empty());
  }
  // An authzid naming the user itself, and y (client could bind, thinks the
  // server cannot), are accepted.
  EXPECT_EQ(first_only("n,a=user,n=user,r=abc").kind, Kind::kChallenge);
  EXPECT_EQ(first_only("y,,n=user,r=abc").kind, Kind::kChallenge);
}

TEST_F(ScramTest, SaslnameEscapes) {
  std::string out;
  EXPECT_TRUE(decode_saslname("a=2Cb=3Dc", &out));
  EXPECT_EQ(out, "a,b=c");
  EXPECT_FALSE(decode_saslname("a=2", &out));
  EXPECT_FALSE(decode_saslname("a=2c", &out));
  EXPECT_FALSE(decode_saslname("", &out));
  EXPECT_FALSE(decode_saslname(std::string_view("a\0b", 3), &out));

  store.add("a,b=c", ScramMechanism::kSha256, "pw");
  ScramServer s(ScramMechanism::kSha256, store.lookup(), kSecret);
  ScramTestClient client(ScramMechanism::kSha256, "a=2Cb=3Dc", "pw", "nonce");
  SaslStep first = s.step(bytes_of(client.client_first()));
  ASSERT_EQ(first.kind, Kind::kChallenge);
  ASSERT_EQ(s.step(bytes_of(client.client_final(first.response))).kind, Kind::kSuccess);
  EXPECT_EQ(s.user(), "a,b=c");
}

TEST_F(ScramTest, MalformedOrWrongClientFinal) {
  const std::string nonce = kRfcCombinedNonce;
  const std::string proof = "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
  struct Case {
    std::string message;
    const char* rfc_error;
  };
  const Case cases[] = {
      {"", "invalid-encoding"},
      {"c=biws,r=" + nonce, "invalid-encoding"},
      {"r=" + nonce + ",c=biws," + proof, "invalid-encoding"},
      {"c=bi!s,r=" + nonce + "," + proof, "invalid-encoding"},
      {"c=biw,r=" + nonce + "," + proof, "invalid-encoding"},
      // c= of "y,," and of "n,a=user,": not the header that was sent.
      {"c=eSws,r=" + nonce + "," + proof, "channel-bindings-dont-match"},
      {"c=bixhPXVzZXIs,r=" + nonce + "," + proof, "channel-bindings-dont-match"},
      // The client's nonce alone, the combined one cut short or extended.
      {"c=biws,r=rOprNGfwEbeRWgbNEkqO," + proof, "other-error"},
      {"c=biws,r=" + nonce.substr(0, nonce.size() - 1) + "," + proof, "other-error"},
      {"c=biws,r=" + nonce + "X," + proof, "other-error"},
      // librdkafka's doubled client nonce is accepted (below), but nothing
      // near it: another prefix, or the client nonce twice with a cut.
      {"c=biws,r=XOprNGfwEbeRWgbNEkqO" + nonce + "," + proof, "other-error"},
      {"c=biws,r=rOprNGfwEbeRWgbNEkqOrOprNGfwEbeRWgbNEkqO," + proof, "other-error"},
      {"c=biws,r=" + nonce + nonce + "," + proof, "other-error"},
      {"c=biws,r=" + nonce + ",x=1," + proof, "extensions-not-supported"},
      {"c=biws,r=" + nonce + ",p=", "invalid-proof"},
      {"c=biws,r=" + nonce + ",p=dHzb", "invalid-proof"},
      {"c=biws,r=" + nonce + ",p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ", "invalid-proof"},
      {"c=biws,r=" + nonce + ",p=eHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=", "invalid-proof"},
      {"c=biws,r=" + nonce + ",p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=,", "invalid-encoding"},
  };
  for (const Case& c : cases) {
    SaslStep s = rfc_final(c.message);
    EXPECT_EQ(s.kind, Kind::kFailure) << c.message;
    EXPECT_NE(s.reason.find(std::string("e=") + c.rfc_error), std::string::npos) << c.message << ": " << s.reason;
    // A failed exchange stays failed: the right answer no longer helps.
    EXPECT_EQ(server->step(bytes_of(kRfcClientFinal)).kind, Kind::kFailure);
  }
  // The RFC's final with the y,, header sent first: c= must then be "eSws".
  EXPECT_EQ(rfc_final(kRfcClientFinal, "y,,n=user,r=rOprNGfwEbeRWgbNEkqO").kind, Kind::kFailure);
}

// librdkafka 2.0 sends r=CNONCE + CNONCE + SNONCE (Kafka accepts it).
TEST_F(ScramTest, AcceptsLibrdkafkasDoubledClientNonce) {
  const std::string client_nonce = "rOprNGfwEbeRWgbNEkqO";
  const std::string without_proof = "c=biws,r=" + client_nonce + kRfcCombinedNonce;
  const std::string auth_message = std::string(kRfcClientFirst).substr(3) + "," + kRfcServerFirst + "," + without_proof;
  Bytes salt, salted;
  ASSERT_TRUE(base64_decode("W22ZaJ0SNY7soEsUEjb6gQ==", &salt));
  ASSERT_TRUE(pbkdf2(HashAlgorithm::kSha256, "pencil", salt, 4096, &salted).ok());
  const Bytes client_key = hmac(HashAlgorithm::kSha256, salted, "Client Key");
  const Bytes signature = hmac(HashAlgorithm::kSha256, hash(HashAlgorithm::kSha256, client_key), auth_message);
  Bytes proof(client_key.size());
  for (size_t i = 0; i < proof.size(); ++i) proof[i] = client_key[i] ^ signature[i];
  SaslStep s = rfc_final(without_proof + ",p=" + base64_encode(proof));
  EXPECT_EQ(s.kind, Kind::kSuccess) << s.reason;
}

TEST_F(ScramTest, RefusesOversizedTokens) {
  std::string big = "n,,n=user,r=" + std::string(kMaxSaslTokenBytes, 'a');
  SaslStep s = first_only(big);
  EXPECT_EQ(s.kind, Kind::kFailure);
}

TEST(ScramCredentialTest, FromSaltedPasswordMatchesFromPassword) {
  Bytes salt = {1, 2, 3, 4};
  ScramCredential a, b;
  ASSERT_TRUE(credential_from_password(ScramMechanism::kSha512, "pw", salt, 4096, &a).ok());
  Bytes salted;
  ASSERT_TRUE(pbkdf2(HashAlgorithm::kSha512, "pw", salt, 4096, &salted).ok());
  ASSERT_TRUE(credential_from_salted_password(ScramMechanism::kSha512, salt, salted, 4096, &b).ok());
  EXPECT_EQ(a.stored_key, b.stored_key);
  EXPECT_EQ(a.server_key, b.server_key);
  EXPECT_EQ(a.stored_key.size(), 64u);
  EXPECT_FALSE(credential_from_salted_password(ScramMechanism::kSha256, salt, salted, 4096, &b).ok());
  EXPECT_FALSE(credential_from_password(ScramMechanism::kSha256, "pw", salt, 4095, &b).ok());
  EXPECT_FALSE(credential_from_password(ScramMechanism::kSha256, "pw", salt, 16385, &b).ok());
  ScramCredential random_salt;
  ASSERT_TRUE(credential_from_password(ScramMechanism::kSha256, "pw", {}, 4096, &random_salt).ok());
  EXPECT_EQ(random_salt.salt.size(), kScramSaltBytes);
}

TEST(CryptoTest, Base64IsStrict) {
  Bytes out;
  EXPECT_TRUE(base64_decode("", &out));
  EXPECT_TRUE(base64_decode("biws", &out));
  EXPECT_EQ(std::string(out.begin(), out.end()), "n,,");
  EXPECT_FALSE(base64_decode("biw", &out));
  EXPECT_FALSE(base64_decode("bi s", &out));
  EXPECT_FALSE(base64_decode("b=ws", &out));
  EXPECT_FALSE(base64_decode("biws\n", &out));
  EXPECT_FALSE(base64_decode("====", &out));
  EXPECT_EQ(base64_encode(bytes_of("n,,")), "biws");
}

}  // namespace
}  // namespace eddy::security
