// BrokerConnection's SASL exchange against the fake broker, whose
// SaslHandshake/SaslAuthenticate handlers run the broker's real ScramServer
// and PlainServer logic.
#include <gtest/gtest.h>

#include "client/broker_connection.h"
#include "fake_broker.h"
#include "protocol/generated/sasl_authenticate.h"
#include "protocol/generated/sasl_handshake.h"
#include "security/scram.h"

namespace eddy::client {
namespace {

using protocol::SaslAuthenticateRequest;
using protocol::SaslAuthenticateResponse;
using protocol::SaslHandshakeRequest;
using protocol::SaslHandshakeResponse;
using testing::FakeBroker;

const security::Bytes kSecret(32, 3);

// The fake broker offers SCRAM-SHA-512 for user "gateway" / "right".
struct ScramBroker {
  FakeBroker broker;
  security::ScramCredential credential;
  std::unique_ptr<security::ScramServer> server;
  std::string last_mechanism;

  ScramBroker() {
    EXPECT_TRUE(security::credential_from_password(security::ScramMechanism::kSha512, "right", {}, 4096, &credential)
                    .ok());
    broker.on<SaslHandshakeRequest, SaslHandshakeResponse>([this](const SaslHandshakeRequest& r, int16_t) {
      last_mechanism = r.mechanism;
      SaslHandshakeResponse response;
      response.mechanisms = {"SCRAM-SHA-512"};
      if (r.mechanism != "SCRAM-SHA-512") response.error_code = 33;
      server = std::make_unique<security::ScramServer>(
          security::ScramMechanism::kSha512,
          [this](const std::string& user, security::ScramMechanism, security::ScramCredential* out) {
            if (user != "gateway") return false;
            *out = credential;
            return true;
          },
          kSecret);
      return response;
    });
    broker.on<SaslAuthenticateRequest, SaslAuthenticateResponse>([this](const SaslAuthenticateRequest& r, int16_t) {
      security::SaslStep step = server->step(r.auth_bytes);
      SaslAuthenticateResponse response;
      if (step.kind == security::SaslStep::Kind::kFailure) {
        response.error_code = 58;
        response.error_message = step.error;
      } else {
        response.auth_bytes.assign(step.response.begin(), step.response.end());
      }
      return response;
    });
  }
};

ConnectionOptions sasl_options(std::string mechanism, std::string user, std::string password) {
  ConnectionOptions options;
  options.sasl = std::make_shared<SaslClientConfig>(SaslClientConfig{std::move(mechanism), std::move(user),
                                                                     std::move(password)});
  return options;
}

TEST(SaslClientTest, ScramSha512Authenticates) {
  ScramBroker fake;
  BrokerConnection conn(fake.broker.transport(), sasl_options("SCRAM-SHA-512", "gateway", "right"));
  Status s = conn.open({"b", 1}, Deadline::after_ms(2000));
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(conn.is_open());
  // ApiVersions, SaslHandshake v1, SaslAuthenticate v2 twice.
  ASSERT_EQ(fake.broker.requests.size(), 4u);
  EXPECT_EQ(fake.broker.requests[1].api_key, 17);
  EXPECT_EQ(fake.broker.requests[1].api_version, 1);
  EXPECT_EQ(fake.broker.requests[2].api_key, 36);
  EXPECT_EQ(fake.broker.requests[2].api_version, 2);
}

TEST(SaslClientTest, OlderSaslAuthenticateVersionUsed) {
  ScramBroker fake;
  fake.broker.set_range(36, 0, 0);
  BrokerConnection conn(fake.broker.transport(), sasl_options("SCRAM-SHA-512", "gateway", "right"));
  ASSERT_TRUE(conn.open({"b", 1}, Deadline::after_ms(2000)).ok());
  EXPECT_EQ(fake.broker.requests[2].api_version, 0);
}

TEST(SaslClientTest, WrongPasswordIsSaslAuthenticationFailed) {
  ScramBroker fake;
  BrokerConnection conn(fake.broker.transport(), sasl_options("SCRAM-SHA-512", "gateway", "wrong"));
  Status s = conn.open({"b", 1}, Deadline::after_ms(2000));
  EXPECT_EQ(protocol::kafka_error(s), protocol::ErrorCode::kSaslAuthenticationFailed) << s.message();
  EXPECT_FALSE(s.retriable());
  EXPECT_NE(s.message().find("user 'gateway'"), std::string::npos) << s.message();
  EXPECT_FALSE(conn.is_open());
}

TEST(SaslClientTest, UnknownUserIsSaslAuthenticationFailed) {
  ScramBroker fake;
  BrokerConnection conn(fake.broker.transport(), sasl_options("SCRAM-SHA-512", "nobody", "right"));
  Status s = conn.open({"b", 1}, Deadline::after_ms(2000));
  EXPECT_EQ(protocol::kafka_error(s), protocol::ErrorCode::kSaslAuthenticationFailed) << s.message();
}

TEST(SaslClientTest, MechanismNotOfferedNamesWhatIs) {
  ScramBroker fake;
  BrokerConnection conn(fake.broker.transport(), sasl_options("SCRAM-SHA-256", "gateway", "right"));
  Status s = conn.open({"b", 1}, Deadline::after_ms(2000));
  EXPECT_EQ(protocol::kafka_error(s), protocol::ErrorCode::kUnsupportedSaslMechanism) << s.message();
  EXPECT_NE(s.message().find("the broker offers SCRAM-SHA-512"), std::string::npos) << s.message();
  EXPECT_FALSE(conn.is_open());
}

TEST(SaslClientTest, BrokerWithoutSaslHandshakeRefused) {
  ScramBroker fake;
  fake.broker.remove_api(17);
  BrokerConnection conn(fake.broker.transport(), sasl_options("SCRAM-SHA-512", "gateway", "right"));
  Status s = conn.open({"b", 1}, Deadline::after_ms(2000));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("SaslHandshake"), std::string::npos) << s.message();
  EXPECT_FALSE(conn.is_open());
}

TEST(SaslClientTest, ForgedServerSignatureRefused) {
  ScramBroker fake;
  // Replace the handler: server-final carries a signature of another key.
  int round = 0;
  fake.broker.on<SaslAuthenticateRequest, SaslAuthenticateResponse>(
      [&](const SaslAuthenticateRequest& r, int16_t) {
        security::SaslStep step = fake.server->step(r.auth_bytes);
        SaslAuthenticateResponse response;
        std::string bytes = step.response;
        if (++round == 2) bytes = "v=" + security::base64_encode(security::Bytes(64, 1));
        response.auth_bytes.assign(bytes.begin(), bytes.end());
        return response;
      });
  BrokerConnection conn(fake.broker.transport(), sasl_options("SCRAM-SHA-512", "gateway", "right"));
  Status s = conn.open({"b", 1}, Deadline::after_ms(2000));
  EXPECT_EQ(protocol::kafka_error(s), protocol::ErrorCode::kSaslAuthenticationFailed) << s.message();
  EXPECT_NE(s.message().find("server signature"), std::string::npos) << s.message();
  EXPECT_FALSE(conn.is_open());
}

TEST(SaslClientTest, PlainSendsRfc4616Token) {
  FakeBroker broker;
  std::vector<uint8_t> token;
  broker.on<SaslHandshakeRequest, SaslHandshakeResponse>([](const SaslHandshakeRequest&, int16_t) {
    SaslHandshakeResponse response;
    response.mechanisms = {"PLAIN"};
    return response;
  });
  broker.on<SaslAuthenticateRequest, SaslAuthenticateResponse>([&](const SaslAuthenticateRequest& r, int16_t) {
    token = r.auth_bytes;
    return SaslAuthenticateResponse{};
  });
  BrokerConnection conn(broker.transport(), sasl_options("PLAIN", "gw", "pw"));
  ASSERT_TRUE(conn.open({"b", 1}, Deadline::after_ms(2000)).ok());
  EXPECT_EQ(std::string(token.begin(), token.end()), std::string("\0gw\0pw", 6));
}

}  // namespace
}  // namespace eddy::client
