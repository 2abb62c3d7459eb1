#include "security/scram_client.h"

#include <gtest/gtest.h>

#include "security/scram.h"

namespace eddy::security {
namespace {

// RFC 7677 section 3: user "user", password "pencil".
constexpr char kRfcClientNonce[] = "rOprNGfwEbeRWgbNEkqO";
constexpr char kRfcClientFirst[] = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO";
constexpr char kRfcServerFirst[] =
    "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
constexpr char kRfcClientFinal[] =
    "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
constexpr char kRfcServerFinal[] = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";

const Bytes kSecret(32, 9);

ScramClient rfc_client(std::string password = "pencil") {
  ScramClient client(ScramMechanism::kSha256, "user", std::move(password));
  client.set_client_nonce_for_test(kRfcClientNonce);
  return client;
}

TEST(ScramClientTest, Rfc7677Vector) {
  ScramClient client = rfc_client();
  std::string first;
  ASSERT_TRUE(client.client_first(&first).ok());
  EXPECT_EQ(first, kRfcClientFirst);
  std::string final_message;
  ASSERT_TRUE(client.client_final(kRfcServerFirst, &final_message).ok());
  EXPECT_EQ(final_message, kRfcClientFinal);
  EXPECT_TRUE(client.verify_server_final(kRfcServerFinal).ok());
}

TEST(ScramClientTest, WrongServerSignatureRefused) {
  ScramClient client = rfc_client();
  std::string first, final_message;
  ASSERT_TRUE(client.client_first(&first).ok());
  ASSERT_TRUE(client.client_final(kRfcServerFirst, &final_message).ok());
  Status s = client.verify_server_final("v=7rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=");
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("signature"), std::string::npos) << s.message();
}

TEST(ScramClientTest, ServerFinalErrorAndGarbageRefused) {
  for (std::string_view bad : {"e=invalid-proof", "x=abc", "v=not base64!", ""}) {
    ScramClient client = rfc_client();
    std::string first, final_message;
    ASSERT_TRUE(client.client_first(&first).ok());
    ASSERT_TRUE(client.client_final(kRfcServerFirst, &final_message).ok());
    EXPECT_FALSE(client.verify_server_final(bad).ok()) << bad;
  }
}

// Each server-first breaks one rule the client checks.
TEST(ScramClientTest, BadServerFirstRefused) {
  const char* cases[] = {
      // Nonce not starting with ours.
      "r=XOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
      // Nonce adding nothing to ours.
      "r=rOprNGfwEbeRWgbNEkqO,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
      // Too few iterations, too many, not a number.
      "r=rOprNGfwEbeRWgbNEkqOabc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4095",
      "r=rOprNGfwEbeRWgbNEkqOabc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=1000000",
      "r=rOprNGfwEbeRWgbNEkqOabc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096x",
      "r=rOprNGfwEbeRWgbNEkqOabc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=",
      // Bad or empty salt.
      "r=rOprNGfwEbeRWgbNEkqOabc,s=***,i=4096",
      "r=rOprNGfwEbeRWgbNEkqOabc,s=,i=4096",
      // Mandatory extension, an error, wrong order, missing fields.
      "m=ext,r=rOprNGfwEbeRWgbNEkqOabc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
      "e=unknown-user",
      "s=W22ZaJ0SNY7soEsUEjb6gQ==,r=rOprNGfwEbeRWgbNEkqOabc,i=4096",
      "r=rOprNGfwEbeRWgbNEkqOabc,s=W22ZaJ0SNY7soEsUEjb6gQ==",
      "",
  };
  for (const char* server_first : cases) {
    ScramClient client = rfc_client();
    std::string first, final_message;
    ASSERT_TRUE(client.client_first(&first).ok());
    Status s = client.client_final(server_first, &final_message);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << server_first;
    // Once refused, the exchange never resumes.
    EXPECT_FALSE(client.verify_server_final(kRfcServerFinal).ok());
  }
}

TEST(ScramClientTest, OutOfOrderCallsRefused) {
  ScramClient client = rfc_client();
  std::string out;
  EXPECT_FALSE(client.client_final(kRfcServerFirst, &out).ok());
  ScramClient second = rfc_client();
  ASSERT_TRUE(second.client_first(&out).ok());
  EXPECT_FALSE(second.client_first(&out).ok());
  ScramClient third = rfc_client();
  EXPECT_FALSE(third.verify_server_final(kRfcServerFinal).ok());
}

TEST(ScramClientTest, RandomNonceIsFreshAndPrintable) {
  ScramClient a(ScramMechanism::kSha512, "u", "p");
  ScramClient b(ScramMechanism::kSha512, "u", "p");
  std::string first_a, first_b;
  ASSERT_TRUE(a.client_first(&first_a).ok());
  ASSERT_TRUE(b.client_first(&first_b).ok());
  EXPECT_NE(first_a, first_b);
  const std::string prefix = "n,,n=u,r=";
  ASSERT_EQ(first_a.substr(0, prefix.size()), prefix);
  const std::string nonce = first_a.substr(prefix.size());
  EXPECT_EQ(nonce.size(), 24u);
  EXPECT_EQ(nonce.find_first_of(",="), std::string::npos);
}

TEST(ScramClientTest, SaslnameEscaped) {
  EXPECT_EQ(encode_saslname("a,b=c"), "a=2Cb=3Dc");
  std::string decoded;
  ASSERT_TRUE(decode_saslname(encode_saslname("a,b=c"), &decoded));
  EXPECT_EQ(decoded, "a,b=c");
}

// Runs a whole exchange of ScramClient against the broker's ScramServer.
struct Exchange {
  Status client_status;
  SaslStep::Kind server_result = SaslStep::Kind::kFailure;
};

Exchange run_against_server(ScramMechanism mechanism, const std::string& user, const std::string& client_password,
                            const std::string& stored_password) {
  ScramCredential credential;
  EXPECT_TRUE(credential_from_password(mechanism, stored_password, {}, 4096, &credential).ok());
  ScramServer server(
      mechanism,
      [&](const std::string& name, ScramMechanism m, ScramCredential* out) {
        if (name != user || m != mechanism) return false;
        *out = credential;
        return true;
      },
      kSecret);
  ScramClient client(mechanism, user, client_password);
  Exchange result;
  std::string first, final_message;
  if (result.client_status = client.client_first(&first); !result.client_status.ok()) return result;
  SaslStep server_first = server.step(as_bytes(first));
  if (server_first.kind != SaslStep::Kind::kChallenge) return result;
  if (result.client_status = client.client_final(server_first.response, &final_message);
      !result.client_status.ok()) {
    return result;
  }
  SaslStep server_final = server.step(as_bytes(final_message));
  result.server_result = server_final.kind;
  if (server_final.kind == SaslStep::Kind::kSuccess) {
    result.client_status = client.verify_server_final(server_final.response);
  }
  return result;
}

TEST(ScramClientTest, AgainstScramServerBothMechanisms) {
  for (ScramMechanism m : {ScramMechanism::kSha256, ScramMechanism::kSha512}) {
    Exchange e = run_against_server(m, "gate,way=7", "s3cret", "s3cret");
    EXPECT_EQ(e.server_result, SaslStep::Kind::kSuccess);
    EXPECT_TRUE(e.client_status.ok()) << e.client_status.message();
  }
}

TEST(ScramClientTest, WrongPasswordFailsAtServer) {
  Exchange e = run_against_server(ScramMechanism::kSha512, "gateway", "wrong", "right");
  EXPECT_EQ(e.server_result, SaslStep::Kind::kFailure);
}

TEST(ScramClientTest, ServerWithOtherCredentialFailsAtClient) {
  // A server that accepts the proof cannot exist without the stored key; a
  // server that answers with a signature of another credential is refused.
  ScramClient client = rfc_client();
  std::string first, final_message;
  ASSERT_TRUE(client.client_first(&first).ok());
  ASSERT_TRUE(client.client_final(kRfcServerFirst, &final_message).ok());
  ScramClient other = rfc_client("not-pencil");
  std::string other_first, other_final;
  ASSERT_TRUE(other.client_first(&other_first).ok());
  ASSERT_TRUE(other.client_final(kRfcServerFirst, &other_final).ok());
  EXPECT_NE(other_final, final_message);
  EXPECT_FALSE(other.verify_server_final(kRfcServerFinal).ok());
}

}  // namespace
}  // namespace eddy::security
