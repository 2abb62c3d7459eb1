#include "app/jaas_config.h"

#include <gtest/gtest.h>

namespace eddy::app {
namespace {

TEST(JaasConfig, ScramModuleWithQuotedAndBareOptions) {
  JaasLoginModule m;
  ASSERT_TRUE(parse_jaas_config("org.apache.kafka.common.security.scram.ScramLoginModule required\n"
                                "  username=\"gateway-7\" password=\"s3 c;r\\\"e=t\" tokenauth=false;",
                                &m)
                  .ok());
  EXPECT_EQ(m.module_class, "org.apache.kafka.common.security.scram.ScramLoginModule");
  EXPECT_EQ(m.flag, "required");
  EXPECT_EQ(m.options.at("username"), "gateway-7");
  EXPECT_EQ(m.options.at("password"), "s3 c;r\"e=t");
  EXPECT_EQ(m.options.at("tokenauth"), "false");
}

TEST(JaasConfig, NoOptions) {
  JaasLoginModule m;
  ASSERT_TRUE(parse_jaas_config("org.apache.kafka.common.security.plain.PlainLoginModule optional ;", &m).ok());
  EXPECT_EQ(m.flag, "optional");
  EXPECT_TRUE(m.options.empty());
}

TEST(JaasConfig, RejectsMalformedTextWithoutQuotingValues) {
  const char* bad[] = {
      "",                                                       // no module
      "Module username=\"u\";",                                 // no flag
      "Module mandatory username=\"u\";",                       // unknown flag
      "Module required username=\"u\" password=\"secret",       // unterminated quote
      "Module required username=\"u\" password=\"secret\"",     // no ';'
      "Module required username;",                              // no =value
      "Module required username=;",                             // no value
      "Module required username=\"a\" username=\"b\";",         // twice
      "Module required username=\"u\"; Other required a=b;",    // two modules
  };
  for (const char* text : bad) {
    JaasLoginModule m;
    Status s = parse_jaas_config(text, &m);
    EXPECT_FALSE(s.ok()) << text;
    EXPECT_EQ(s.message().find("secret"), std::string::npos) << s.message();
  }
}

TEST(JaasConfig, ModuleForMechanism) {
  EXPECT_EQ(jaas_module_for("PLAIN"), "org.apache.kafka.common.security.plain.PlainLoginModule");
  EXPECT_EQ(jaas_module_for("SCRAM-SHA-256"), "org.apache.kafka.common.security.scram.ScramLoginModule");
  EXPECT_EQ(jaas_module_for("SCRAM-SHA-512"), "org.apache.kafka.common.security.scram.ScramLoginModule");
  EXPECT_EQ(jaas_module_for("GSSAPI"), "");
}

}  // namespace
}  // namespace eddy::app
