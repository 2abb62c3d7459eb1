// The ACL APIs' messages (DescribeAcls, CreateAcls, DeleteAcls) in terms
// of the ACL model (security/acl.h) and the ACL store's rows: pure
// conversions and the grouping of DescribeAcls' answer, no broker state.
#pragma once

#include <vector>

#include "meta/acl_store.h"
#include "protocol/generated/messages.h"
#include "security/acl.h"

namespace eddy::broker {

// The wire codes carried over unchanged; a null name/principal/host
// (absent) matches anything.
security::AclBindingFilter acl_filter_from(const protocol::DescribeAclsRequest& request);
security::AclBindingFilter acl_filter_from(const protocol::DeleteAclsRequest::DeleteAclsFilter& filter);
security::AclBinding acl_binding_from(const protocol::CreateAclsRequest::AclCreation& creation);

meta::AclRow acl_row_from(const security::AclBinding& binding);
security::AclBinding acl_binding_from(const meta::AclRow& row);

// The bindings of acls that filter selects, in acls' order.
std::vector<security::AclBinding> matching_acls(const std::vector<security::AclBinding>& acls,
                                                const security::AclBindingFilter& filter);

// DescribeAcls' answer: one entry per resource pattern (type, name,
// pattern type), in the order of their first binding, each with its
// bindings' principal, host, operation and permission.
std::vector<protocol::DescribeAclsResponse::DescribeAclsResource> describe_resources(
    const std::vector<security::AclBinding>& bindings);

// DeleteAcls' description of one deleted binding (error code 0).
protocol::DeleteAclsResponse::DeleteAclsMatchingAcl deleted_acl(const security::AclBinding& binding);

}  // namespace eddy::broker
