#include "security/acl_authorizer.h"

#include <utility>

namespace eddy::security {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool principal_applies(const AclBinding& b, std::string_view principal) {
  return b.principal == principal || b.principal == kWildcardPrincipal;
}

bool host_applies(const AclBinding& b, std::string_view host) {
  return b.host == kWildcardHost || b.host == host;
}

// Whether binding b's operation covers `asked` for its permission: an ALLOW
// through implication, a DENY only for its own operation or ALL (Kafka's
// StandardAuthorizerData.findResult).
bool operation_applies(const AclBinding& b, AclOperation asked) {
  if (b.permission == AclPermission::kAllow) return operation_implies(b.operation, asked);
  return b.operation == AclOperation::kAll || b.operation == asked;
}

}  // namespace

bool operation_implies(AclOperation granted, AclOperation asked) {
  if (granted == AclOperation::kAll || granted == asked) return true;
  if (asked == AclOperation::kDescribe) {
    return granted == AclOperation::kRead || granted == AclOperation::kWrite || granted == AclOperation::kDelete ||
           granted == AclOperation::kAlter;
  }
  if (asked == AclOperation::kDescribeConfigs) return granted == AclOperation::kAlterConfigs;
  return false;
}

bool pattern_applies(const AclBinding& b, ResourceType type, std::string_view name) {
  if (b.resource_type != type) return false;
  if (b.pattern_type == PatternType::kLiteral) return b.resource_name == name || b.resource_name == kWildcardResource;
  if (b.pattern_type == PatternType::kPrefixed) return name.substr(0, b.resource_name.size()) == b.resource_name;
  return false;
}

AclAuthorizer::AclAuthorizer(std::string_view super_users, bool allow_everyone_if_no_acl_found)
    : allow_everyone_if_no_acl_found_(allow_everyone_if_no_acl_found) {
  while (!super_users.empty()) {
    const size_t semicolon = super_users.find(';');
    std::string_view one = trim(super_users.substr(0, semicolon));
    if (!one.empty()) super_users_.emplace_back(one);
    if (semicolon == std::string_view::npos) break;
    super_users.remove_prefix(semicolon + 1);
  }
}

void AclAuthorizer::set_acls(std::vector<AclBinding> acls) { acls_ = std::move(acls); }

bool AclAuthorizer::is_super_user(std::string_view principal) const {
  for (const std::string& s : super_users_) {
    if (s == principal) return true;
  }
  return false;
}

bool AclAuthorizer::authorize(const RequestContext& who, AclOperation operation, ResourceType type,
                              std::string_view name) const {
  if (is_super_user(who.principal)) return true;
  bool found_resource_acls = false;
  bool allowed = false;
  for (const AclBinding& b : acls_) {
    if (!pattern_applies(b, type, name)) continue;
    found_resource_acls = true;
    if (!principal_applies(b, who.principal) || !host_applies(b, who.host)) continue;
    if (!operation_applies(b, operation)) continue;
    if (b.permission == AclPermission::kDeny) return false;  // deny wins
    allowed = true;
  }
  if (!found_resource_acls) return allow_everyone_if_no_acl_found_;
  return allowed;
}

bool AclAuthorizer::authorize_any(const RequestContext& who, AclOperation operation, ResourceType type) const {
  // As Kafka's default Authorizer.authorizeByResourceType: a resource no
  // binding names ("hardcode") decides first, which covers super users,
  // "*" bindings and allow_everyone_if_no_acl_found.
  if (authorize(who, operation, type, "hardcode")) return true;
  // Kafka's rule: a DENY of the operation on the literal "*" name denies
  // every resource; otherwise an ALLOW on some pattern that is not
  // cancelled by a DENY on the same or a covering pattern grants.
  auto applies_to_who = [&](const AclBinding& b) {
    return b.resource_type == type && principal_applies(b, who.principal) && host_applies(b, who.host) &&
           operation_applies(b, operation);
  };
  for (const AclBinding& b : acls_) {
    if (applies_to_who(b) && b.permission == AclPermission::kDeny && b.pattern_type == PatternType::kLiteral &&
        b.resource_name == kWildcardResource) {
      return false;
    }
  }
  for (const AclBinding& allow : acls_) {
    if (!applies_to_who(allow) || allow.permission != AclPermission::kAllow) continue;
    bool cancelled = false;
    for (const AclBinding& deny : acls_) {
      if (!applies_to_who(deny) || deny.permission != AclPermission::kDeny) continue;
      // The deny covers every name the allow's pattern covers.
      const bool covers = deny.pattern_type == PatternType::kPrefixed
                              ? allow.resource_name.compare(0, deny.resource_name.size(), deny.resource_name) == 0
                              : (allow.pattern_type == PatternType::kLiteral && deny.resource_name == allow.resource_name);
      if (covers) {
        cancelled = true;
        break;
      }
    }
    if (!cancelled) return true;
  }
  return false;
}

}  // namespace eddy::security
