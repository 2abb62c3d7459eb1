#include <gtest/gtest.h>

#include "app/broker_config.h"
#include "app/broker_options_from_config.h"
#include "net/server.h"

namespace eddy::app {
namespace {

// True when the text applies; *error: the refusal's message otherwise.
bool load(const std::string& text, Config* config, std::string* error) {
  std::vector<std::string> warnings;
  Status s = config->apply(parse_properties(text, "t.properties"), &warnings);
  if (!s.ok()) {
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.to_string();
    *error = s.message();
  }
  return s.ok();
}

TEST(BrokerConfig, DefaultsFollowKafka) {
  Config config(&broker_schema());
  EXPECT_EQ(config.get_int("num.partitions"), 1);
  EXPECT_TRUE(config.get_bool("auto.create.topics.enable"));
  EXPECT_EQ(config.get_int("message.max.bytes"), 1048588);
  EXPECT_EQ(config.get_long("log.retention.hours"), 168);
  EXPECT_EQ(config.get_list("listeners"), std::vector<std::string>{"PLAINTEXT://127.0.0.1:9092"});
  EXPECT_EQ(config.origin("num.partitions"), "default");
}

TEST(BrokerConfig, ValuesAliasesAndOrigin) {
  Config config(&broker_schema());
  std::string error;
  ASSERT_TRUE(load("num.partitions=3\nlog.dir=/var/eddy\nlisteners=PLAINTEXT://:1, PLAINTEXT://:2\n", &config,
                   &error))
      << error;
  EXPECT_EQ(config.get_int("num.partitions"), 3);
  EXPECT_EQ(config.get_string("log.dirs"), "/var/eddy");
  EXPECT_EQ(config.get_list("listeners"), (std::vector<std::string>{"PLAINTEXT://:1", "PLAINTEXT://:2"}));
  EXPECT_EQ(config.origin("num.partitions"), "t.properties:1");
}

TEST(BrokerConfig, UnknownKeyNamesFileLineAndKey) {
  Config config(&broker_schema());
  std::string error;
  EXPECT_FALSE(load("num.partitions=3\nno.such.key=1\n", &config, &error));
  EXPECT_EQ(error.rfind("t.properties:2: no.such.key: unknown configuration key", 0), 0u) << error;
}

TEST(BrokerConfig, NonNumericNumberIsRejected) {
  Config config(&broker_schema());
  std::string error;
  EXPECT_FALSE(load("\nnum.partitions=three\n", &config, &error));
  EXPECT_EQ(error, "t.properties:2: num.partitions: expected an integer, got 'three'");
}

TEST(BrokerConfig, OutOfRangeBoolAndEnumAreRejected) {
  std::string error;
  {
    Config config(&broker_schema());
    EXPECT_FALSE(load("num.partitions=0\n", &config, &error));
    EXPECT_NE(error.find("out of range"), std::string::npos) << error;
  }
  {
    Config config(&broker_schema());
    EXPECT_FALSE(load("message.max.bytes=99999999999\n", &config, &error));
    EXPECT_NE(error.find("out of range"), std::string::npos) << error;
  }
  {
    Config config(&broker_schema());
    EXPECT_FALSE(load("auto.create.topics.enable=yes\n", &config, &error));
    EXPECT_NE(error.find("expected true or false"), std::string::npos) << error;
  }
  {
    Config config(&broker_schema());
    EXPECT_FALSE(load("eddy.acks.all.waits.for=ram\n", &config, &error));
    EXPECT_NE(error.find("expected one of disk, page-cache"), std::string::npos) << error;
  }
}

TEST(BrokerConfig, OverridesWinAndBadOverrideIsNamed) {
  Config config(&broker_schema());
  std::string error;
  std::vector<std::string> warnings;
  ASSERT_TRUE(load_broker_config("", {"num.partitions=4", "num.partitions=5"}, &config, &warnings).ok());
  EXPECT_EQ(config.get_int("num.partitions"), 5);
  Config other(&broker_schema());
  Status bad = load_broker_config("", {"num.partitions"}, &other, &warnings);
  EXPECT_EQ(bad.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(bad.message(), "--override: num.partitions: expected key=value");
}

TEST(BrokerConfig, IgnoredKafkaKeysWarn) {
  Config config(&broker_schema());
  std::string error;
  std::vector<std::string> warnings;
  ASSERT_TRUE(config.apply(parse_properties("num.network.threads=3\n", "k"), &warnings).ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("k:1: num.network.threads"), std::string::npos);
}

// Kafka's keys, applied to client connections: a fixed send buffer and the
// kernel's own receive buffer by default; -1 asks for the kernel's.
TEST(BrokerConfig, SocketBufferSizesReachTheServer) {
  {
    Config config(&broker_schema());
    net::ServerOptions o = server_options_from(config);
    EXPECT_EQ(o.socket_send_buffer_bytes, 102400);
    EXPECT_EQ(o.socket_receive_buffer_bytes, -1);
  }
  Config config(&broker_schema());
  std::string error;
  ASSERT_TRUE(load("socket.send.buffer.bytes=-1\nsocket.receive.buffer.bytes=65536\n", &config, &error)) << error;
  net::ServerOptions o = server_options_from(config);
  EXPECT_EQ(o.socket_send_buffer_bytes, -1);
  EXPECT_EQ(o.socket_receive_buffer_bytes, 65536);
  Config bad(&broker_schema());
  EXPECT_FALSE(load("socket.receive.buffer.bytes=-2\n", &bad, &error));
  EXPECT_NE(error.find("out of range"), std::string::npos) << error;
}

TEST(ParseInt, RejectsGarbage) {
  EXPECT_EQ(parse_int64("12"), 12);
  EXPECT_EQ(parse_int64("-3"), -3);
  EXPECT_FALSE(parse_int64(""));
  EXPECT_FALSE(parse_int64("1x"));
  EXPECT_FALSE(parse_int64(" 1"));
  EXPECT_FALSE(parse_int64("99999999999999999999"));
}

}  // namespace
}  // namespace eddy::app
