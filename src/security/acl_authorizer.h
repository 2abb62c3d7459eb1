// Authorization decisions with Kafka's StandardAuthorizer semantics, over a
// set of ACLs held in memory (loaded from and written through
// meta/acl_store.h by the broker):
//   - super users (super.users, "User:a;User:b") may do everything;
//   - a DENY binding that matches wins over any ALLOW;
//   - an ALLOW binding matches when its operation is the one asked, ALL, or
//     implies it: READ, WRITE, DELETE and ALTER imply DESCRIBE;
//     ALTER_CONFIGS implies DESCRIBE_CONFIGS (a DENY matches only its own
//     operation or ALL, as in Kafka);
//   - a binding applies to a resource when its type is the resource's and
//     its name is the resource's (LITERAL), "*" (LITERAL), or a prefix of it
//     (PREFIXED); its principal is the request's or "User:*"; its host is
//     the client's address or "*";
//   - when no binding at all exists for the resource (any principal, any
//     operation), allow_everyone_if_no_acl_found decides (Kafka's default:
//     false, deny).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "security/acl.h"

namespace eddy::security {

// Who asks: the connection's principal ("User:ANONYMOUS", "User:alice") and
// the client's IP address as text.
struct RequestContext {
  std::string_view principal;
  std::string_view host;
};

class AclAuthorizer {
 public:
  // super_users: Kafka's super.users value, principals separated by ';'
  // (blanks around each are ignored).
  AclAuthorizer(std::string_view super_users, bool allow_everyone_if_no_acl_found);

  // Replaces the ACLs consulted (the broker keeps them equal to the store).
  void set_acls(std::vector<AclBinding> acls);
  const std::vector<AclBinding>& acls() const { return acls_; }

  // Whether who may do operation on the resource (type, name).
  // REQUIRES: operation and type concrete (not kAny/kUnknown).
  bool authorize(const RequestContext& who, AclOperation operation, ResourceType type,
                 std::string_view name) const;

  // Kafka's Authorizer.authorizeByResourceType: whether some resource of
  // the type allows the operation to who (an ALLOW binding that applies and
  // no DENY of the same scope cancelling it) — what InitProducerId uses for
  // "WRITE on any topic".
  bool authorize_any(const RequestContext& who, AclOperation operation, ResourceType type) const;

  bool is_super_user(std::string_view principal) const;
  const std::vector<std::string>& super_users() const { return super_users_; }

 private:
  std::vector<std::string> super_users_;
  bool allow_everyone_if_no_acl_found_;
  std::vector<AclBinding> acls_;
};

// Whether a binding's resource pattern applies to the resource name.
bool pattern_applies(const AclBinding& binding, ResourceType type, std::string_view name);

// Whether granting `granted` also grants `asked` (ALL implies everything,
// READ/WRITE/DELETE/ALTER imply DESCRIBE, ALTER_CONFIGS implies
// DESCRIBE_CONFIGS).
bool operation_implies(AclOperation granted, AclOperation asked);

}  // namespace eddy::security
