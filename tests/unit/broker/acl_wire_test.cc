// The ACL APIs' conversions: a DeleteAcls/DescribeAcls filter read from the
// wire selects what Kafka's AclBindingFilter would (ANY, MATCH, null
// fields), and DescribeAcls groups bindings by resource pattern.
#include "broker/acl_wire.h"

#include <gtest/gtest.h>

namespace eddy::broker {
namespace {

using security::AclBinding;
using security::AclOperation;
using security::AclPermission;
using security::PatternType;
using security::ResourceType;

AclBinding binding(ResourceType type, const std::string& name, PatternType pattern, const std::string& principal,
                   AclOperation operation, AclPermission permission = AclPermission::kAllow) {
  return {type, name, pattern, principal, "*", operation, permission};
}

std::vector<AclBinding> sample() {
  return {
      binding(ResourceType::kTopic, "orders", PatternType::kLiteral, "User:alice", AclOperation::kRead),
      binding(ResourceType::kTopic, "ord", PatternType::kPrefixed, "User:bob", AclOperation::kWrite),
      binding(ResourceType::kTopic, "*", PatternType::kLiteral, "User:carol", AclOperation::kDescribe),
      binding(ResourceType::kTopic, "orders", PatternType::kLiteral, "User:bob", AclOperation::kWrite,
              AclPermission::kDeny),
      binding(ResourceType::kGroup, "orders", PatternType::kLiteral, "User:alice", AclOperation::kRead),
      binding(ResourceType::kTopic, "other", PatternType::kLiteral, "User:alice", AclOperation::kRead),
  };
}

protocol::DeleteAclsRequest::DeleteAclsFilter wire_filter(int8_t type, std::optional<std::string> name,
                                                          int8_t pattern) {
  protocol::DeleteAclsRequest::DeleteAclsFilter f;
  f.resource_type_filter = type;
  f.resource_name_filter = std::move(name);
  f.pattern_type_filter = pattern;
  f.principal_filter = std::nullopt;
  f.host_filter = std::nullopt;
  f.operation = 1;        // ANY
  f.permission_type = 1;  // ANY
  return f;
}

TEST(AclWire, NullFieldsAndAnyCodesSelectEverything) {
  const auto filter = acl_filter_from(wire_filter(1, std::nullopt, 1));
  EXPECT_TRUE(security::invalid_filter_reason(filter).empty());
  EXPECT_EQ(matching_acls(sample(), filter).size(), sample().size());
}

TEST(AclWire, AnyPatternComparesNamesExactly) {
  // ANY: the literal and prefixed bindings named exactly "orders", not "ord" nor "*".
  const auto got = matching_acls(sample(), acl_filter_from(wire_filter(2, "orders", 1)));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].principal, "User:alice");
  EXPECT_EQ(got[1].permission, AclPermission::kDeny);
}

TEST(AclWire, MatchSelectsWhatAppliesToTheName) {
  // MATCH: the literal "orders" ones, the wildcard and the prefix "ord".
  const auto got = matching_acls(sample(), acl_filter_from(wire_filter(2, "orders", 2)));
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[1].resource_name, "ord");
  EXPECT_EQ(got[2].resource_name, "*");
}

TEST(AclWire, LiteralAndPrefixedPatternsSelectTheirOwnKind) {
  EXPECT_EQ(matching_acls(sample(), acl_filter_from(wire_filter(2, std::nullopt, 4))).size(), 1u);
  EXPECT_EQ(matching_acls(sample(), acl_filter_from(wire_filter(2, "ord", 3))).size(), 0u);
}

TEST(AclWire, PrincipalAndPermissionNarrow) {
  auto f = wire_filter(1, std::nullopt, 1);
  f.principal_filter = "User:bob";
  f.permission_type = 2;  // DENY
  const auto got = matching_acls(sample(), acl_filter_from(f));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].resource_name, "orders");
}

TEST(AclWire, UnknownCodesMakeTheFilterInvalid) {
  EXPECT_FALSE(security::invalid_filter_reason(acl_filter_from(wire_filter(0, std::nullopt, 1))).empty());
  EXPECT_FALSE(security::invalid_filter_reason(acl_filter_from(wire_filter(2, std::nullopt, 0))).empty());
  EXPECT_FALSE(security::invalid_filter_reason(acl_filter_from(wire_filter(42, std::nullopt, 1))).empty());
}

TEST(AclWire, DescribeGroupsByResourcePattern) {
  const auto resources = describe_resources(sample());
  // topic orders LITERAL (2 bindings), topic ord PREFIXED, topic * LITERAL,
  // group orders LITERAL, topic other LITERAL.
  ASSERT_EQ(resources.size(), 5u);
  EXPECT_EQ(resources[0].resource_name, "orders");
  EXPECT_EQ(resources[0].resource_type, 2);
  ASSERT_EQ(resources[0].acls.size(), 2u);
  EXPECT_EQ(resources[0].acls[1].principal, "User:bob");
  EXPECT_EQ(resources[0].acls[1].permission_type, 2);
  EXPECT_EQ(resources[1].pattern_type, 4);
  EXPECT_EQ(resources[3].resource_type, 3);
}

TEST(AclWire, CreationAndRowRoundTrip) {
  protocol::CreateAclsRequest::AclCreation c;
  c.resource_type = 3;
  c.resource_name = "team-";
  c.resource_pattern_type = 4;
  c.principal = "User:alice";
  c.host = "10.0.0.1";
  c.operation = 3;
  c.permission_type = 3;
  const AclBinding b = acl_binding_from(c);
  EXPECT_TRUE(security::invalid_binding_reason(b).empty());
  EXPECT_EQ(acl_binding_from(acl_row_from(b)), b);
  const auto deleted = deleted_acl(b);
  EXPECT_EQ(deleted.resource_name, "team-");
  EXPECT_EQ(deleted.pattern_type, 4);
  EXPECT_EQ(deleted.host, "10.0.0.1");
  EXPECT_FALSE(deleted.error_message.has_value());
}

}  // namespace
}  // namespace eddy::broker
