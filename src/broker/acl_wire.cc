#include "broker/acl_wire.h"

#include <optional>
#include <string>

namespace eddy::broker {

using security::AclBinding;
using security::AclBindingFilter;

namespace {

void set_optional(const std::optional<std::string>& value, bool* has, std::string* out) {
  *has = value.has_value();
  if (value) *out = *value;
}

AclBindingFilter filter_of(int8_t resource_type, const std::optional<std::string>& name, int8_t pattern_type,
                           const std::optional<std::string>& principal, const std::optional<std::string>& host,
                           int8_t operation, int8_t permission) {
  AclBindingFilter f;
  f.resource_type = static_cast<security::ResourceType>(resource_type);
  set_optional(name, &f.has_resource_name, &f.resource_name);
  f.pattern_type = static_cast<security::PatternType>(pattern_type);
  set_optional(principal, &f.has_principal, &f.principal);
  set_optional(host, &f.has_host, &f.host);
  f.operation = static_cast<security::AclOperation>(operation);
  f.permission = static_cast<security::AclPermission>(permission);
  return f;
}

}  // namespace

AclBindingFilter acl_filter_from(const protocol::DescribeAclsRequest& r) {
  return filter_of(r.resource_type_filter, r.resource_name_filter, r.pattern_type_filter, r.principal_filter,
                   r.host_filter, r.operation, r.permission_type);
}

AclBindingFilter acl_filter_from(const protocol::DeleteAclsRequest::DeleteAclsFilter& r) {
  return filter_of(r.resource_type_filter, r.resource_name_filter, r.pattern_type_filter, r.principal_filter,
                   r.host_filter, r.operation, r.permission_type);
}

AclBinding acl_binding_from(const protocol::CreateAclsRequest::AclCreation& c) {
  AclBinding b;
  b.resource_type = static_cast<security::ResourceType>(c.resource_type);
  b.resource_name = c.resource_name;
  b.pattern_type = static_cast<security::PatternType>(c.resource_pattern_type);
  b.principal = c.principal;
  b.host = c.host;
  b.operation = static_cast<security::AclOperation>(c.operation);
  b.permission = static_cast<security::AclPermission>(c.permission_type);
  return b;
}

meta::AclRow acl_row_from(const AclBinding& b) {
  meta::AclRow r;
  r.resource_type = static_cast<int8_t>(b.resource_type);
  r.resource_name = b.resource_name;
  r.pattern_type = static_cast<int8_t>(b.pattern_type);
  r.principal = b.principal;
  r.host = b.host;
  r.operation = static_cast<int8_t>(b.operation);
  r.permission = static_cast<int8_t>(b.permission);
  return r;
}

AclBinding acl_binding_from(const meta::AclRow& r) {
  AclBinding b;
  b.resource_type = static_cast<security::ResourceType>(r.resource_type);
  b.resource_name = r.resource_name;
  b.pattern_type = static_cast<security::PatternType>(r.pattern_type);
  b.principal = r.principal;
  b.host = r.host;
  b.operation = static_cast<security::AclOperation>(r.operation);
  b.permission = static_cast<security::AclPermission>(r.permission);
  return b;
}

std::vector<AclBinding> matching_acls(const std::vector<AclBinding>& acls, const AclBindingFilter& filter) {
  std::vector<AclBinding> out;
  for (const AclBinding& b : acls) {
    if (security::filter_matches(filter, b)) out.push_back(b);
  }
  return out;
}

std::vector<protocol::DescribeAclsResponse::DescribeAclsResource> describe_resources(
    const std::vector<AclBinding>& bindings) {
  std::vector<protocol::DescribeAclsResponse::DescribeAclsResource> out;
  for (const AclBinding& b : bindings) {
    const int8_t type = static_cast<int8_t>(b.resource_type);
    const int8_t pattern = static_cast<int8_t>(b.pattern_type);
    auto* resource = [&]() -> protocol::DescribeAclsResponse::DescribeAclsResource* {
      for (auto& r : out) {
        if (r.resource_type == type && r.pattern_type == pattern && r.resource_name == b.resource_name) return &r;
      }
      return nullptr;
    }();
    if (resource == nullptr) {
      resource = &out.emplace_back();
      resource->resource_type = type;
      resource->resource_name = b.resource_name;
      resource->pattern_type = pattern;
    }
    protocol::DescribeAclsResponse::AclDescription d;
    d.principal = b.principal;
    d.host = b.host;
    d.operation = static_cast<int8_t>(b.operation);
    d.permission_type = static_cast<int8_t>(b.permission);
    resource->acls.push_back(std::move(d));
  }
  return out;
}

protocol::DeleteAclsResponse::DeleteAclsMatchingAcl deleted_acl(const AclBinding& b) {
  protocol::DeleteAclsResponse::DeleteAclsMatchingAcl m;
  m.error_message = std::nullopt;
  m.resource_type = static_cast<int8_t>(b.resource_type);
  m.resource_name = b.resource_name;
  m.pattern_type = static_cast<int8_t>(b.pattern_type);
  m.principal = b.principal;
  m.host = b.host;
  m.operation = static_cast<int8_t>(b.operation);
  m.permission_type = static_cast<int8_t>(b.permission);
  return m;
}

}  // namespace eddy::broker
