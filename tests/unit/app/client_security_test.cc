// The client security keys: a link's through forward_links_from, a tool's
// through --command-config: what each protocol needs, the credential
// sources, and the refusals (naming key and file, never the password).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "../security/test_pem.h"
#include "app/broker_config.h"
#include "app/client_security.h"
#include "app/command_config.h"
#include "app/forward_config.h"
#include "client/sasl_client_config.h"
#include "security/tls_config.h"

namespace eddy::app {
namespace {

namespace pem = security::test_pem;

constexpr char kLink[] = "eddy.forward.links=dc\neddy.forward.dc.bootstrap.servers=localhost:9094\n";

// The links of kLink + text; *error: the refusal otherwise.
bool links(const std::string& text, std::vector<forward::LinkOptions>* out, std::string* error) {
  Config config(&broker_schema());
  std::vector<std::string> warnings;
  Status s = config.apply(parse_properties(std::string(kLink) + text, "t.properties"), &warnings);
  if (s.ok()) s = forward_links_from(config, out);
  if (!s.ok()) *error = s.message();
  return s.ok();
}

std::string temp_file(const std::string& name, const std::string& content) {
  const std::string path = ::testing::TempDir() + "/forward_security_" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

TEST(ForwardSecurity, PlaintextByDefault) {
  std::vector<forward::LinkOptions> out;
  std::string error;
  ASSERT_TRUE(links("", &out, &error)) << error;
  EXPECT_EQ(out[0].security_protocol, "PLAINTEXT");
  EXPECT_EQ(out[0].tls, nullptr);
  EXPECT_EQ(out[0].sasl, nullptr);
}

TEST(ForwardSecurity, SaslFromJaasConfig) {
  std::vector<forward::LinkOptions> out;
  std::string error;
  ASSERT_TRUE(links("eddy.forward.dc.security.protocol=SASL_PLAINTEXT\n"
                    "eddy.forward.dc.sasl.mechanism=SCRAM-SHA-512\n"
                    "eddy.forward.dc.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule "
                    "required username=\"gw\" password=\"p\\\\\"w\";\n",
                    &out, &error))
      << error;
  ASSERT_NE(out[0].sasl, nullptr);
  EXPECT_EQ(out[0].sasl->mechanism, "SCRAM-SHA-512");
  EXPECT_EQ(out[0].sasl->username, "gw");
  EXPECT_EQ(out[0].sasl->password, "p\"w");
  EXPECT_EQ(out[0].tls, nullptr);
}

TEST(ForwardSecurity, SaslPasswordFileWithoutTrailingNewline) {
  const std::string file = temp_file("password", "from-file\n");
  std::vector<forward::LinkOptions> out;
  std::string error;
  ASSERT_TRUE(links("eddy.forward.dc.security.protocol=SASL_PLAINTEXT\neddy.forward.dc.sasl.username=gw\n"
                    "eddy.forward.dc.sasl.password.file=" + file + "\n",
                    &out, &error))
      << error;
  EXPECT_EQ(out[0].sasl->mechanism, "PLAIN");
  EXPECT_EQ(out[0].sasl->password, "from-file");
}

TEST(ForwardSecurity, TlsWithTruststoreAndClientCertificate) {
  const std::string ca = temp_file("ca.pem", pem::kCa);
  const std::string keystore = temp_file("client.pem", std::string(pem::kServerCert) + pem::kServerKey);
  std::vector<forward::LinkOptions> out;
  std::string error;
  ASSERT_TRUE(links("eddy.forward.dc.security.protocol=SASL_SSL\neddy.forward.dc.sasl.username=gw\n"
                    "eddy.forward.dc.sasl.password=pw\neddy.forward.dc.ssl.truststore.location=" + ca + "\n"
                    "eddy.forward.dc.ssl.keystore.location=" + keystore + "\n",
                    &out, &error))
      << error;
  ASSERT_NE(out[0].tls, nullptr);
  EXPECT_TRUE(out[0].tls->verifies_hostname());
  ASSERT_NE(out[0].sasl, nullptr);
  ASSERT_TRUE(links("eddy.forward.dc.security.protocol=SSL\neddy.forward.dc.ssl.truststore.location=" + ca +
                        "\neddy.forward.dc.ssl.endpoint.identification.algorithm=\n",
                    &out, &error))
      << error;
  EXPECT_FALSE(out[0].tls->verifies_hostname());
  EXPECT_EQ(out[0].sasl, nullptr);
}

TEST(ForwardSecurity, Refusals) {
  const std::string ca = temp_file("ca2.pem", pem::kCa);
  const std::string wrong_key = temp_file("wrong.pem", std::string(pem::kServerCert) + pem::kOtherKey);
  const std::string missing = ::testing::TempDir() + "/forward_security_missing";
  const std::string sasl = "eddy.forward.dc.security.protocol=SASL_PLAINTEXT\n";
  const std::string ssl = "eddy.forward.dc.security.protocol=SSL\neddy.forward.dc.ssl.truststore.location=" + ca + "\n";
  const std::pair<std::string, std::string> cases[] = {
      {"eddy.forward.dc.security.protocol=SSL\n", "needs eddy.forward.dc.ssl.truststore.location"},
      {"eddy.forward.dc.security.protocol=SSL\neddy.forward.dc.ssl.truststore.location=" + missing + "\n", missing},
      {ssl + "eddy.forward.dc.ssl.keystore.location=" + wrong_key + "\n", "does not match the certificate"},
      {ssl + "eddy.forward.dc.ssl.endpoint.identification.algorithm=dns\n",
       "eddy.forward.dc.ssl.endpoint.identification.algorithm"},
      {sasl, "needs eddy.forward.dc.sasl.jaas.config or eddy.forward.dc.sasl.username"},
      {sasl + "eddy.forward.dc.sasl.username=gw\n", "no password"},
      {sasl + "eddy.forward.dc.sasl.username=gw\neddy.forward.dc.sasl.password.file=" + missing + "\n",
       "t.properties:5: eddy.forward.dc.sasl.password.file " + missing + ": cannot open"},
      {sasl + "eddy.forward.dc.sasl.username=gw\neddy.forward.dc.sasl.password=secret\n"
              "eddy.forward.dc.sasl.password.file=" + missing + "\n",
       "set together with"},
      {sasl + "eddy.forward.dc.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
              "username=\"gw\" password=\"secret\";\neddy.forward.dc.sasl.username=gw\n",
       "set together with"},
      {sasl + "eddy.forward.dc.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
              "username=\"gw\";\n",
       "needs username=\"...\" and password=\"...\""},
      {"eddy.forward.dc.sasl.password=secret\n", "only used with security.protocol SASL_PLAINTEXT or SASL_SSL"},
      {sasl + "eddy.forward.dc.ssl.truststore.location=" + ca + "\n", "only used with security.protocol SSL or"},
      {sasl + "eddy.forward.dc.sasl.username=gw\neddy.forward.dc.sasl.password.file=" +
           temp_file("huge-password", std::string(5000, 'x')) + "\n",
       "larger than 4096 bytes: not a password file"},
  };
  for (const auto& [text, expected] : cases) {
    std::vector<forward::LinkOptions> out;
    std::string error;
    EXPECT_FALSE(links(text, &out, &error)) << text;
    EXPECT_NE(error.find(expected), std::string::npos) << text << "\n-> " << error;
    EXPECT_EQ(error.find("secret"), std::string::npos) << error;
  }
}

TEST(CommandConfig, EveryClientSecurityKeyIsALinkKey) {
  for (const std::string& suffix : client_security_keys()) {
    EXPECT_NE(broker_schema().find("eddy.forward.<link>." + suffix), nullptr) << suffix;
  }
}

TEST(CommandConfig, SaslSslFromAKafkaClientFile) {
  const std::string ca = temp_file("cmd-ca.pem", pem::kCa);
  const std::string file = temp_file("admin.properties",
                                     "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-256\n"
                                     "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule "
                                     "required username=\"admin\" password=\"pw\";\n"
                                     "ssl.truststore.type=PEM\nssl.truststore.location=" + ca + "\n"
                                     "client.id=ops\n");
  client::ClientOptions options;
  std::vector<std::string> warnings;
  ASSERT_TRUE(apply_command_config(file, &options, &warnings).ok());
  ASSERT_NE(options.connection.sasl, nullptr);
  EXPECT_EQ(options.connection.sasl->mechanism, "SCRAM-SHA-256");
  EXPECT_EQ(options.connection.sasl->username, "admin");
  EXPECT_TRUE(static_cast<bool>(options.transport_factory));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("admin.properties:6: client.id"), std::string::npos) << warnings[0];
}

TEST(CommandConfig, PlaintextLeavesTheClientAsItIs) {
  const std::string file = temp_file("plain.properties", "security.protocol=PLAINTEXT\n");
  client::ClientOptions options;
  std::vector<std::string> warnings;
  ASSERT_TRUE(apply_command_config(file, &options, &warnings).ok());
  EXPECT_EQ(options.connection.sasl, nullptr);
  EXPECT_FALSE(static_cast<bool>(options.transport_factory));
}

TEST(CommandConfig, Refusals) {
  const std::pair<std::string, std::string> cases[] = {
      {"security.protocol=SSL\nssl.truststore.type=JKS\n", "only PEM files are read (not 'JKS')"},
      {"security.protocol=TLS\n", "security.protocol"},
      {"security.protocol=SSL\n", "bad.properties:1: security.protocol: a TLS client needs ssl.truststore.location"},
      {"sasl.password=secret\n", "only used with security.protocol SASL_PLAINTEXT or SASL_SSL"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string file = temp_file("bad.properties", text);
    client::ClientOptions options;
    std::vector<std::string> warnings;
    Status s = apply_command_config(file, &options, &warnings);
    EXPECT_FALSE(s.ok()) << text;
    EXPECT_NE(s.message().find(expected), std::string::npos) << text << "\n-> " << s.message();
    EXPECT_EQ(s.message().find("secret"), std::string::npos) << s.message();
  }
  client::ClientOptions options;
  std::vector<std::string> warnings;
  Status missing = apply_command_config(::testing::TempDir() + "/no-such.properties", &options, &warnings);
  EXPECT_NE(missing.message().find("--command-config"), std::string::npos) << missing.message();
}

}  // namespace
}  // namespace eddy::app
