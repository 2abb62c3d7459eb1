#include "security/acl.h"

namespace eddy::security {

namespace {

bool concrete_resource(ResourceType t) {
  return t >= ResourceType::kTopic && t <= ResourceType::kUser;
}
bool concrete_operation(AclOperation o) {
  return o >= AclOperation::kAll && o <= AclOperation::kDescribeTokens;
}

// Kafka's principal form: "<type>:<name>" with a non-empty type.
bool principal_well_formed(const std::string& principal) {
  const size_t colon = principal.find(':');
  return colon != std::string::npos && colon > 0;
}

bool name_matches_literal_or_prefix(PatternType pattern, const std::string& acl_name, const std::string& name) {
  if (pattern == PatternType::kLiteral) return acl_name == name || acl_name == kWildcardResource;
  if (pattern == PatternType::kPrefixed) return name.compare(0, acl_name.size(), acl_name) == 0;
  return false;
}

}  // namespace

std::string invalid_binding_reason(const AclBinding& b) {
  if (!concrete_resource(b.resource_type)) return "Invalid resource type " + std::to_string(int(b.resource_type));
  if (b.pattern_type != PatternType::kLiteral && b.pattern_type != PatternType::kPrefixed) {
    return "Invalid pattern type " + std::to_string(int(b.pattern_type));
  }
  if (!concrete_operation(b.operation)) return "Invalid operation " + std::to_string(int(b.operation));
  if (b.permission != AclPermission::kAllow && b.permission != AclPermission::kDeny) {
    return "Invalid permission type " + std::to_string(int(b.permission));
  }
  if (b.resource_name.empty()) return "Resource name should not be empty";
  if (b.principal.empty()) return "Principal should not be empty";
  if (!principal_well_formed(b.principal)) return "Could not parse principal from `" + b.principal + "`";
  if (b.host.empty()) return "Host should not be empty";
  if (b.resource_type == ResourceType::kCluster && b.resource_name != kClusterResourceName) {
    return "The only valid name for the CLUSTER resource is " + std::string(kClusterResourceName);
  }
  if (b.pattern_type == PatternType::kPrefixed && b.resource_name == kWildcardResource) {
    return "Prefixed ACLs with the wildcard resource name are not allowed";
  }
  return {};
}

std::string invalid_filter_reason(const AclBindingFilter& f) {
  if (f.resource_type == ResourceType::kUnknown) return "Invalid resource type";
  if (f.pattern_type == PatternType::kUnknown) return "Invalid pattern type";
  if (f.operation == AclOperation::kUnknown) return "Invalid operation";
  if (f.permission == AclPermission::kUnknown) return "Invalid permission type";
  if (int(f.resource_type) < 0 || int(f.resource_type) > int(ResourceType::kUser)) return "Invalid resource type";
  if (int(f.pattern_type) < 0 || int(f.pattern_type) > int(PatternType::kPrefixed)) return "Invalid pattern type";
  if (int(f.operation) < 0 || int(f.operation) > int(AclOperation::kDescribeTokens)) return "Invalid operation";
  if (int(f.permission) < 0 || int(f.permission) > int(AclPermission::kAllow)) return "Invalid permission type";
  return {};
}

bool filter_matches(const AclBindingFilter& f, const AclBinding& b) {
  if (f.resource_type != ResourceType::kAny && f.resource_type != b.resource_type) return false;
  if (f.operation != AclOperation::kAny && f.operation != b.operation) return false;
  if (f.permission != AclPermission::kAny && f.permission != b.permission) return false;
  if (f.has_principal && f.principal != b.principal) return false;
  if (f.has_host && f.host != b.host) return false;
  switch (f.pattern_type) {
    case PatternType::kAny:
      return !f.has_resource_name || f.resource_name == b.resource_name;
    case PatternType::kMatch:
      if (!f.has_resource_name) return true;
      return name_matches_literal_or_prefix(b.pattern_type, b.resource_name, f.resource_name);
    case PatternType::kLiteral:
    case PatternType::kPrefixed:
      return f.pattern_type == b.pattern_type && (!f.has_resource_name || f.resource_name == b.resource_name);
    default:
      return false;
  }
}

std::string_view to_string(ResourceType t) {
  switch (t) {
    case ResourceType::kAny: return "ANY";
    case ResourceType::kTopic: return "TOPIC";
    case ResourceType::kGroup: return "GROUP";
    case ResourceType::kCluster: return "CLUSTER";
    case ResourceType::kTransactionalId: return "TRANSACTIONAL_ID";
    case ResourceType::kDelegationToken: return "DELEGATION_TOKEN";
    case ResourceType::kUser: return "USER";
    default: return "UNKNOWN";
  }
}

std::string_view to_string(PatternType t) {
  switch (t) {
    case PatternType::kAny: return "ANY";
    case PatternType::kMatch: return "MATCH";
    case PatternType::kLiteral: return "LITERAL";
    case PatternType::kPrefixed: return "PREFIXED";
    default: return "UNKNOWN";
  }
}

std::string_view to_string(AclOperation o) {
  switch (o) {
    case AclOperation::kAny: return "ANY";
    case AclOperation::kAll: return "ALL";
    case AclOperation::kRead: return "READ";
    case AclOperation::kWrite: return "WRITE";
    case AclOperation::kCreate: return "CREATE";
    case AclOperation::kDelete: return "DELETE";
    case AclOperation::kAlter: return "ALTER";
    case AclOperation::kDescribe: return "DESCRIBE";
    case AclOperation::kClusterAction: return "CLUSTER_ACTION";
    case AclOperation::kDescribeConfigs: return "DESCRIBE_CONFIGS";
    case AclOperation::kAlterConfigs: return "ALTER_CONFIGS";
    case AclOperation::kIdempotentWrite: return "IDEMPOTENT_WRITE";
    case AclOperation::kCreateTokens: return "CREATE_TOKENS";
    case AclOperation::kDescribeTokens: return "DESCRIBE_TOKENS";
    default: return "UNKNOWN";
  }
}

std::string_view to_string(AclPermission p) {
  switch (p) {
    case AclPermission::kAny: return "ANY";
    case AclPermission::kDeny: return "DENY";
    case AclPermission::kAllow: return "ALLOW";
    default: return "UNKNOWN";
  }
}

}  // namespace eddy::security
