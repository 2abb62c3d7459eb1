#include "net/listener_config.h"

#include <gtest/gtest.h>

namespace eddy::net {
namespace {

std::vector<ListenerConfig> parse_ok(const std::string& value, const SecurityProtocolMap* map = nullptr) {
  std::vector<ListenerConfig> out;
  Status s = parse_listeners(value, map, &out);
  EXPECT_TRUE(s.ok()) << value << ": " << s.to_string();
  return out;
}

std::string parse_error(const std::string& value, const SecurityProtocolMap* map = nullptr) {
  std::vector<ListenerConfig> out;
  Status s = parse_listeners(value, map, &out);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << value;
  EXPECT_FALSE(s.message().empty());
  return s.message();
}

TEST(ListenerConfig, ParsesHostPortAndEmptyHost) {
  auto listeners = parse_ok("PLAINTEXT://127.0.0.1:9092, SSL://:9093");
  ASSERT_EQ(listeners.size(), 2u);
  EXPECT_EQ(listeners[0].name, "PLAINTEXT");
  EXPECT_EQ(listeners[0].host, "127.0.0.1");
  EXPECT_EQ(listeners[0].port, 9092);
  EXPECT_EQ(listeners[0].security_protocol, SecurityProtocol::kPlaintext);
  EXPECT_EQ(listeners[1].name, "SSL");
  EXPECT_EQ(listeners[1].host, "");
  EXPECT_EQ(listeners[1].port, 9093);
  EXPECT_EQ(listeners[1].security_protocol, SecurityProtocol::kSsl);
}

TEST(ListenerConfig, NamesAreCaseInsensitive) {
  auto listeners = parse_ok("plaintext://localhost:0,sasl_ssl://broker-1.local:9094");
  ASSERT_EQ(listeners.size(), 2u);
  EXPECT_EQ(listeners[0].name, "PLAINTEXT");
  EXPECT_EQ(listeners[0].host, "localhost");
  EXPECT_EQ(listeners[0].port, 0);
  EXPECT_EQ(listeners[1].security_protocol, SecurityProtocol::kSaslSsl);
}

TEST(ListenerConfig, Ipv6HostsInBrackets) {
  auto listeners = parse_ok("PLAINTEXT://[::1]:9092,SSL://[fe80::1%eth0]:9093");
  ASSERT_EQ(listeners.size(), 2u);
  EXPECT_EQ(listeners[0].host, "::1");
  EXPECT_EQ(listeners[1].host, "fe80::1%eth0");
  EXPECT_EQ(format_listener(listeners[0].name, listeners[0].host, listeners[0].port), "PLAINTEXT://[::1]:9092");
  EXPECT_EQ(format_listener("PLAINTEXT", "", 9092), "PLAINTEXT://:9092");
}

TEST(ListenerConfig, EmptyValueIsEmptyList) { EXPECT_TRUE(parse_ok("  ").empty()); }

TEST(ListenerConfig, CustomNamesNeedTheProtocolMap) {
  std::string error = parse_error("PLAINTEXT://127.0.0.1:9092,OTHER://:9093");
  EXPECT_NE(error.find("OTHER"), std::string::npos) << error;
  EXPECT_NE(error.find("listener.security.protocol.map"), std::string::npos) << error;

  SecurityProtocolMap map;
  ASSERT_TRUE(parse_security_protocol_map("PLAINTEXT:PLAINTEXT, other:sasl_plaintext", &map).ok());
  auto listeners = parse_ok("PLAINTEXT://127.0.0.1:9092,OTHER://:9093", &map);
  ASSERT_EQ(listeners.size(), 2u);
  EXPECT_EQ(listeners[1].name, "OTHER");
  EXPECT_EQ(listeners[1].security_protocol, SecurityProtocol::kSaslPlaintext);
  // An explicit map replaces the default one.
  parse_error("SSL://:9093", &map);
}

TEST(ListenerConfig, MalformedEntriesAreRejectedWithTheEntryNamed) {
  EXPECT_NE(parse_error("127.0.0.1:9092").find("NAME://HOST:PORT"), std::string::npos);
  EXPECT_NE(parse_error("PLAINTEXT://127.0.0.1").find("no port"), std::string::npos);
  EXPECT_NE(parse_error("PLAINTEXT://127.0.0.1:").find("invalid port"), std::string::npos);
  EXPECT_NE(parse_error("PLAINTEXT://127.0.0.1:65536").find("invalid port"), std::string::npos);
  EXPECT_NE(parse_error("PLAINTEXT://127.0.0.1:-1").find("invalid port"), std::string::npos);
  EXPECT_NE(parse_error("PLAINTEXT://127.0.0.1:90a").find("invalid port"), std::string::npos);
  EXPECT_NE(parse_error("PLAINTEXT://::1:9092").find("brackets"), std::string::npos);
  EXPECT_NE(parse_error("PLAINTEXT://[::1:9092").find("IPv6"), std::string::npos);
  EXPECT_NE(parse_error("PLAINTEXT://[]:9092").find("IPv6"), std::string::npos);
  EXPECT_NE(parse_error("PLAINTEXT://bad host:9092").find("invalid host"), std::string::npos);
  EXPECT_NE(parse_error("PLAIN TEXT://:9092").find("invalid name"), std::string::npos);
  EXPECT_NE(parse_error("://:9092").find("invalid name"), std::string::npos);
  EXPECT_NE(parse_error("PLAINTEXT://:9092,").find("empty listener entry"), std::string::npos);
  EXPECT_NE(parse_error("PLAINTEXT://:9092,plaintext://:9093").find("used twice"), std::string::npos);
  std::string error = parse_error("PLAINTEXT://:9092,SSL://host:x");
  EXPECT_NE(error.find("SSL://host:x"), std::string::npos) << error;
}

TEST(ListenerConfig, SecurityProtocolMapErrors) {
  SecurityProtocolMap map;
  EXPECT_EQ(parse_security_protocol_map("A:PLAINTEXT,B", &map).code(), Status::Code::kInvalidArgument);
  Status unknown = parse_security_protocol_map("A:TLS", &map);
  EXPECT_NE(unknown.message().find("unknown security protocol"), std::string::npos) << unknown.message();
  Status twice = parse_security_protocol_map("A:PLAINTEXT,a:SSL", &map);
  EXPECT_NE(twice.message().find("twice"), std::string::npos) << twice.message();
}

}  // namespace
}  // namespace eddy::net
