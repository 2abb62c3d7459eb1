// Access control lists with Apache Kafka's semantics (StandardAuthorizer):
// the codes of resource types, pattern types, operations and permission
// types are Kafka's wire codes, so CreateAcls/DescribeAcls/DeleteAcls carry
// them unchanged. Pure logic: no SQLite, no sockets (the store is
// meta/acl_store.h, the enforcement is in the broker).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace eddy::security {

// Kafka's org.apache.kafka.common.resource.ResourceType codes.
enum class ResourceType : int8_t {
  kUnknown = 0,
  kAny = 1,  // filters only
  kTopic = 2,
  kGroup = 3,
  kCluster = 4,
  kTransactionalId = 5,
  kDelegationToken = 6,
  kUser = 7,
};

// Kafka's PatternType codes.
enum class PatternType : int8_t {
  kUnknown = 0,
  kAny = 1,    // filters only: literal or prefixed, names compared exactly
  kMatch = 2,  // filters only: every binding that would apply to the name
  kLiteral = 3,
  kPrefixed = 4,
};

// Kafka's AclOperation codes.
enum class AclOperation : int8_t {
  kUnknown = 0,
  kAny = 1,  // filters only
  kAll = 2,
  kRead = 3,
  kWrite = 4,
  kCreate = 5,
  kDelete = 6,
  kAlter = 7,
  kDescribe = 8,
  kClusterAction = 9,
  kDescribeConfigs = 10,
  kAlterConfigs = 11,
  kIdempotentWrite = 12,
  kCreateTokens = 13,
  kDescribeTokens = 14,
};

// Kafka's AclPermissionType codes.
enum class AclPermission : int8_t {
  kUnknown = 0,
  kAny = 1,  // filters only
  kDeny = 2,
  kAllow = 3,
};

// The literal resource name that matches every name ("*"), the principal
// that matches every principal ("User:*") and the host that matches every
// host ("*"), as in Kafka.
inline constexpr std::string_view kWildcardResource = "*";
inline constexpr std::string_view kWildcardPrincipal = "User:*";
inline constexpr std::string_view kWildcardHost = "*";
// The one cluster resource's name.
inline constexpr std::string_view kClusterResourceName = "kafka-cluster";

// One ACL: who (principal, host) may or may not (permission) do what
// (operation) on which resources (type, name, pattern).
struct AclBinding {
  ResourceType resource_type = ResourceType::kUnknown;
  std::string resource_name;
  PatternType pattern_type = PatternType::kUnknown;
  std::string principal;  // "User:alice"
  std::string host;       // "*" or an IP address
  AclOperation operation = AclOperation::kUnknown;
  AclPermission permission = AclPermission::kUnknown;

  bool operator==(const AclBinding&) const = default;
  auto operator<=>(const AclBinding&) const = default;
};

// A DescribeAcls / DeleteAcls filter. A null (absent) string matches any
// value; the *_any codes match any value of their field.
struct AclBindingFilter {
  ResourceType resource_type = ResourceType::kAny;
  bool has_resource_name = false;
  std::string resource_name;
  PatternType pattern_type = PatternType::kAny;
  bool has_principal = false;
  std::string principal;
  bool has_host = false;
  std::string host;
  AclOperation operation = AclOperation::kAny;
  AclPermission permission = AclPermission::kAny;
};

// Why a binding cannot be created: empty when it can. Mirrors Kafka's
// checks (AclControlManager.validateNewAcl): concrete codes only (no
// UNKNOWN/ANY/MATCH), a principal of the form "Type:name", a non-empty
// resource name, a non-empty host, the cluster named kafka-cluster.
std::string invalid_binding_reason(const AclBinding& binding);

// Why a filter is unusable: empty when usable (no UNKNOWN codes; MATCH only
// with a resource name and a concrete resource type).
std::string invalid_filter_reason(const AclBindingFilter& filter);

// Whether the filter selects the binding, as Kafka's
// AclBindingFilter.matches: PatternType::kMatch selects the literal
// bindings for the name or "*", and the prefixed bindings that are a prefix
// of the name.
bool filter_matches(const AclBindingFilter& filter, const AclBinding& binding);

// The names Eddy's operations, resources, patterns and permissions carry in
// Kafka's messages and logs ("TOPIC", "READ", "PREFIXED", "ALLOW").
std::string_view to_string(ResourceType type);
std::string_view to_string(PatternType type);
std::string_view to_string(AclOperation operation);
std::string_view to_string(AclPermission permission);

}  // namespace eddy::security
