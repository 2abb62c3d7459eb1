// ssl.principal.mapping.rules: the cases of Kafka's SslPrincipalMapperTest
// that Eddy's ECMAScript patterns share with Java's.
#include "security/ssl_principal_mapper.h"

#include <gtest/gtest.h>

namespace eddy::security {
namespace {

SslPrincipalMapper mapper(const std::string& rules) {
  SslPrincipalMapper m;
  Status s = SslPrincipalMapper::parse(rules, &m);
  EXPECT_TRUE(s.ok()) << rules << ": " << s.message();
  return m;
}

std::string name(const SslPrincipalMapper& m, const std::string& subject) {
  return m.name_for(subject).value_or("<no rule>");
}

TEST(SslPrincipalMapper, DefaultIsTheWholeSubject) {
  EXPECT_EQ(name(SslPrincipalMapper(), "CN=Duke, OU=JavaSoft, O=Sun Microsystems"),
            "CN=Duke, OU=JavaSoft, O=Sun Microsystems");
  EXPECT_EQ(name(mapper(""), "CN=a"), "CN=a");
  EXPECT_EQ(name(mapper("  DEFAULT  "), "CN=a"), "CN=a");
}

TEST(SslPrincipalMapper, RulesInOrderFirstMatchWins) {
  const SslPrincipalMapper m = mapper(
      "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,"
      "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,"
      "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L,"
      "DEFAULT");
  EXPECT_EQ(name(m, "CN=Duke,OU=ServiceUsers,O=Org,C=US"), "Duke");
  EXPECT_EQ(name(m, "CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US"), "duke@sme");
  EXPECT_EQ(name(m, "cn=duke,OU=JavaSoft,O=Sun Microsystems"), "duke");
  EXPECT_EQ(name(m, "OU=JavaSoft,O=Sun Microsystems,C=US"), "OU=JavaSoft,O=Sun Microsystems,C=US");
}

TEST(SslPrincipalMapper, UpperCaseAndCommasInsidePatterns) {
  EXPECT_EQ(name(mapper("RULE:^CN=((\\\\, *|\\w)+)(,.*|$)/$1/U"), "CN=Kafka\\, Inc,O=Apache"), "KAFKA\\, INC");
  EXPECT_EQ(name(mapper("RULE:^CN=(.*),O=Eddy Test$/$1/L"), "CN=Reader,O=Eddy Test"), "reader");
}

TEST(SslPrincipalMapper, NoRuleApplies) {
  const SslPrincipalMapper m = mapper("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/");
  EXPECT_EQ(m.name_for("CN=Duke,OU=Other"), std::nullopt);
}

TEST(SslPrincipalMapper, ReferencesBeyondTheGroupsStayLiteral) {
  // Kafka (after Apache NiFi): $4 with three groups is the text "$4"; $12
  // with one group is group 1 followed by "2".
  EXPECT_EQ(name(mapper("RULE:^CN=(.*),OU=(.*),O=(.*)$/$1-$4/"), "CN=a,OU=b,O=c"), "a-$4");
  EXPECT_EQ(name(mapper("RULE:^CN=(.*)$/$12/"), "CN=a"), "a2");
  // A reference far beyond any int: group 1 and the remaining digits.
  EXPECT_EQ(name(mapper("RULE:^CN=(.*)$/$123456789012345678901234/"), "CN=a"), "a23456789012345678901234");
}

TEST(SslPrincipalMapper, InvalidRulesAreRefused) {
  for (const char* rules : {"DEFAULTS", "RULE:", "RULE:^CN=(.*?),OU=ServiceUsers.*$", "RULE:/", "RULE:^CN=(.*?)/$1/LU",
                            "RULE:^CN=(.*?)/$1/L,RULE:x", "RULE:^CN=(.*?)/$1/U/"}) {
    SslPrincipalMapper m;
    Status s = SslPrincipalMapper::parse(rules, &m);
    EXPECT_FALSE(s.ok()) << rules;
    EXPECT_NE(s.message().find("Invalid rule"), std::string::npos) << s.message();
  }
  SslPrincipalMapper m;
  Status s = SslPrincipalMapper::parse("RULE:^CN=(.*/$1/", &m);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("not a regular expression"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace eddy::security
