// The authorizer's decisions against Kafka's StandardAuthorizer rules.
#include "security/acl_authorizer.h"

#include <gtest/gtest.h>

namespace eddy::security {
namespace {

AclBinding acl(ResourceType type, std::string name, PatternType pattern, std::string principal,
               AclOperation op, AclPermission permission, std::string host = "*") {
  return AclBinding{type, std::move(name), pattern, std::move(principal), std::move(host), op, permission};
}

constexpr auto kTopic = ResourceType::kTopic;
constexpr auto kGroup = ResourceType::kGroup;
constexpr auto kLiteral = PatternType::kLiteral;
constexpr auto kPrefixed = PatternType::kPrefixed;
constexpr auto kAllow = AclPermission::kAllow;
constexpr auto kDeny = AclPermission::kDeny;

const RequestContext kAlice{"User:alice", "10.0.0.1"};
const RequestContext kBob{"User:bob", "10.0.0.2"};

TEST(AclAuthorizer, NoAclsDenyUnlessAllowEveryone) {
  AclAuthorizer strict("", false);
  EXPECT_FALSE(strict.authorize(kAlice, AclOperation::kRead, kTopic, "t"));
  AclAuthorizer open("", true);
  EXPECT_TRUE(open.authorize(kAlice, AclOperation::kRead, kTopic, "t"));
}

TEST(AclAuthorizer, AllowEveryoneAppliesOnlyToResourcesWithoutAcls) {
  AclAuthorizer a("", true);
  a.set_acls({acl(kTopic, "t", kLiteral, "User:bob", AclOperation::kRead, kAllow)});
  EXPECT_FALSE(a.authorize(kAlice, AclOperation::kRead, kTopic, "t"));  // t has ACLs, none for alice
  EXPECT_TRUE(a.authorize(kBob, AclOperation::kRead, kTopic, "t"));
  EXPECT_TRUE(a.authorize(kAlice, AclOperation::kRead, kTopic, "other"));
}

TEST(AclAuthorizer, LiteralWildcardAndPrefixedPatterns) {
  AclAuthorizer a("", false);
  a.set_acls({acl(kTopic, "sensors", kLiteral, "User:alice", AclOperation::kWrite, kAllow),
              acl(kTopic, "plant-", kPrefixed, "User:alice", AclOperation::kRead, kAllow),
              acl(kTopic, "*", kLiteral, "User:bob", AclOperation::kRead, kAllow)});
  EXPECT_TRUE(a.authorize(kAlice, AclOperation::kWrite, kTopic, "sensors"));
  EXPECT_FALSE(a.authorize(kAlice, AclOperation::kWrite, kTopic, "sensors2"));
  EXPECT_TRUE(a.authorize(kAlice, AclOperation::kRead, kTopic, "plant-7"));
  EXPECT_TRUE(a.authorize(kAlice, AclOperation::kRead, kTopic, "plant-"));
  EXPECT_FALSE(a.authorize(kAlice, AclOperation::kRead, kTopic, "plant"));
  EXPECT_TRUE(a.authorize(kBob, AclOperation::kRead, kTopic, "anything"));
  EXPECT_FALSE(a.authorize(kBob, AclOperation::kWrite, kTopic, "anything"));
  // A "*" literal binding is not a prefix pattern: it does not cover groups.
  EXPECT_FALSE(a.authorize(kBob, AclOperation::kRead, kGroup, "anything"));
}

TEST(AclAuthorizer, DenyWinsOverAllow) {
  AclAuthorizer a("", false);
  a.set_acls({acl(kTopic, "*", kLiteral, "User:*", AclOperation::kAll, kAllow),
              acl(kTopic, "secret", kPrefixed, "User:alice", AclOperation::kRead, kDeny)});
  EXPECT_FALSE(a.authorize(kAlice, AclOperation::kRead, kTopic, "secret-1"));
  EXPECT_TRUE(a.authorize(kAlice, AclOperation::kWrite, kTopic, "secret-1"));  // deny is for READ only
  EXPECT_TRUE(a.authorize(kBob, AclOperation::kRead, kTopic, "secret-1"));
  // A DENY READ does not deny DESCRIBE (implication is for ALLOW only)...
  EXPECT_TRUE(a.authorize(kAlice, AclOperation::kDescribe, kTopic, "secret-1"));
  // ...but a DENY ALL denies everything.
  a.set_acls({acl(kTopic, "*", kLiteral, "User:*", AclOperation::kAll, kAllow),
              acl(kTopic, "x", kLiteral, "User:*", AclOperation::kAll, kDeny)});
  EXPECT_FALSE(a.authorize(kAlice, AclOperation::kDescribe, kTopic, "x"));
  EXPECT_TRUE(a.authorize(kAlice, AclOperation::kDescribe, kTopic, "y"));
}

TEST(AclAuthorizer, ImpliedOperations) {
  for (AclOperation granted : {AclOperation::kRead, AclOperation::kWrite, AclOperation::kDelete,
                               AclOperation::kAlter, AclOperation::kAll}) {
    EXPECT_TRUE(operation_implies(granted, AclOperation::kDescribe)) << int(granted);
  }
  EXPECT_FALSE(operation_implies(AclOperation::kCreate, AclOperation::kDescribe));
  EXPECT_FALSE(operation_implies(AclOperation::kDescribeConfigs, AclOperation::kDescribe));
  EXPECT_TRUE(operation_implies(AclOperation::kAlterConfigs, AclOperation::kDescribeConfigs));
  EXPECT_FALSE(operation_implies(AclOperation::kAlter, AclOperation::kDescribeConfigs));
  EXPECT_FALSE(operation_implies(AclOperation::kDescribe, AclOperation::kRead));
  EXPECT_TRUE(operation_implies(AclOperation::kAll, AclOperation::kIdempotentWrite));
  EXPECT_FALSE(operation_implies(AclOperation::kWrite, AclOperation::kRead));
}

TEST(AclAuthorizer, PrincipalAndHostMatching) {
  AclAuthorizer a("", false);
  a.set_acls({acl(kTopic, "t", kLiteral, "User:alice", AclOperation::kRead, kAllow, "10.0.0.1"),
              acl(kTopic, "u", kLiteral, "User:*", AclOperation::kRead, kAllow)});
  EXPECT_TRUE(a.authorize(kAlice, AclOperation::kRead, kTopic, "t"));
  EXPECT_FALSE(a.authorize({"User:alice", "10.0.0.9"}, AclOperation::kRead, kTopic, "t"));
  EXPECT_FALSE(a.authorize({"User:ALICE", "10.0.0.1"}, AclOperation::kRead, kTopic, "t"));  // case matters
  EXPECT_TRUE(a.authorize(kBob, AclOperation::kRead, kTopic, "u"));
  EXPECT_TRUE(a.authorize({"User:ANONYMOUS", "1.2.3.4"}, AclOperation::kRead, kTopic, "u"));
}

TEST(AclAuthorizer, SuperUsersMayDoEverythingEvenWhenDenied) {
  AclAuthorizer a(" User:admin ;User:CN=ops,O=plant;", false);
  EXPECT_EQ(a.super_users(), (std::vector<std::string>{"User:admin", "User:CN=ops,O=plant"}));
  a.set_acls({acl(kTopic, "*", kLiteral, "User:*", AclOperation::kAll, kDeny)});
  EXPECT_TRUE(a.authorize({"User:admin", "1.1.1.1"}, AclOperation::kDelete, kTopic, "t"));
  EXPECT_TRUE(a.authorize({"User:CN=ops,O=plant", "1.1.1.1"}, AclOperation::kAlter, ResourceType::kCluster,
                          kClusterResourceName));
  EXPECT_FALSE(a.authorize(kAlice, AclOperation::kRead, kTopic, "t"));
  EXPECT_TRUE(a.authorize_any({"User:admin", "1.1.1.1"}, AclOperation::kWrite, kTopic));
}

TEST(AclAuthorizer, AuthorizeAnyResourceOfAType) {
  AclAuthorizer a("", false);
  EXPECT_FALSE(a.authorize_any(kAlice, AclOperation::kWrite, kTopic));
  a.set_acls({acl(kTopic, "sensors", kLiteral, "User:alice", AclOperation::kWrite, kAllow)});
  EXPECT_TRUE(a.authorize_any(kAlice, AclOperation::kWrite, kTopic));
  EXPECT_FALSE(a.authorize_any(kBob, AclOperation::kWrite, kTopic));
  EXPECT_FALSE(a.authorize_any(kAlice, AclOperation::kWrite, kGroup));
  // Cancelled by a DENY of a covering prefix.
  a.set_acls({acl(kTopic, "sensors", kLiteral, "User:alice", AclOperation::kWrite, kAllow),
              acl(kTopic, "sens", kPrefixed, "User:alice", AclOperation::kWrite, kDeny)});
  EXPECT_FALSE(a.authorize_any(kAlice, AclOperation::kWrite, kTopic));
  // A DENY on another name does not cancel it.
  a.set_acls({acl(kTopic, "sensors", kLiteral, "User:alice", AclOperation::kWrite, kAllow),
              acl(kTopic, "other", kLiteral, "User:alice", AclOperation::kWrite, kDeny)});
  EXPECT_TRUE(a.authorize_any(kAlice, AclOperation::kWrite, kTopic));
  // A DENY on the literal "*" denies every topic.
  a.set_acls({acl(kTopic, "sensors", kLiteral, "User:alice", AclOperation::kWrite, kAllow),
              acl(kTopic, "*", kLiteral, "User:*", AclOperation::kWrite, kDeny)});
  EXPECT_FALSE(a.authorize_any(kAlice, AclOperation::kWrite, kTopic));
  AclAuthorizer open("", true);
  EXPECT_TRUE(open.authorize_any(kAlice, AclOperation::kWrite, kTopic));
}

TEST(AclBindingValidation, RefusesWhatKafkaRefuses) {
  const AclBinding good = acl(kTopic, "t", kLiteral, "User:alice", AclOperation::kRead, kAllow);
  EXPECT_EQ(invalid_binding_reason(good), "");
  AclBinding b = good;
  b.resource_type = ResourceType::kAny;
  EXPECT_NE(invalid_binding_reason(b), "");
  b = good;
  b.resource_type = static_cast<ResourceType>(42);
  EXPECT_NE(invalid_binding_reason(b), "");
  b = good;
  b.pattern_type = PatternType::kMatch;
  EXPECT_NE(invalid_binding_reason(b), "");
  b = good;
  b.operation = AclOperation::kAny;
  EXPECT_NE(invalid_binding_reason(b), "");
  b = good;
  b.permission = AclPermission::kUnknown;
  EXPECT_NE(invalid_binding_reason(b), "");
  b = good;
  b.principal = "";
  EXPECT_NE(invalid_binding_reason(b), "");
  b.principal = "alice";
  EXPECT_NE(invalid_binding_reason(b), "");
  b = good;
  b.resource_name = "";
  EXPECT_NE(invalid_binding_reason(b), "");
  b = good;
  b.host = "";
  EXPECT_NE(invalid_binding_reason(b), "");
  b = good;
  b.resource_type = ResourceType::kCluster;
  EXPECT_NE(invalid_binding_reason(b), "");
  b.resource_name = "kafka-cluster";
  EXPECT_EQ(invalid_binding_reason(b), "");
}

TEST(AclBindingFilter, MatchesAsKafka) {
  const AclBinding lit = acl(kTopic, "plant-7", kLiteral, "User:alice", AclOperation::kRead, kAllow);
  const AclBinding pre = acl(kTopic, "plant-", kPrefixed, "User:alice", AclOperation::kRead, kAllow);
  const AclBinding star = acl(kTopic, "*", kLiteral, "User:bob", AclOperation::kWrite, kDeny);
  AclBindingFilter any;
  EXPECT_TRUE(filter_matches(any, lit));
  EXPECT_TRUE(filter_matches(any, star));
  AclBindingFilter named;
  named.has_resource_name = true;
  named.resource_name = "plant-7";
  EXPECT_TRUE(filter_matches(named, lit));
  EXPECT_FALSE(filter_matches(named, pre));
  named.pattern_type = PatternType::kMatch;
  EXPECT_TRUE(filter_matches(named, lit));
  EXPECT_TRUE(filter_matches(named, pre));
  EXPECT_TRUE(filter_matches(named, star));
  named.pattern_type = PatternType::kPrefixed;
  EXPECT_FALSE(filter_matches(named, lit));
  AclBindingFilter by_principal;
  by_principal.has_principal = true;
  by_principal.principal = "User:bob";
  EXPECT_FALSE(filter_matches(by_principal, lit));
  EXPECT_TRUE(filter_matches(by_principal, star));
  AclBindingFilter deny_only;
  deny_only.permission = kDeny;
  EXPECT_TRUE(filter_matches(deny_only, star));
  EXPECT_FALSE(filter_matches(deny_only, lit));
  AclBindingFilter group_only;
  group_only.resource_type = kGroup;
  EXPECT_FALSE(filter_matches(group_only, lit));
  AclBindingFilter bad;
  bad.resource_type = ResourceType::kUnknown;
  EXPECT_NE(invalid_filter_reason(bad), "");
  EXPECT_EQ(invalid_filter_reason(any), "");
}

}  // namespace
}  // namespace eddy::security
