// Access control lists (what CreateAcls writes and DeleteAcls removes; the
// broker's authorizer, security/acl_authorizer.h, holds a copy in memory).
// A row is one Kafka AclBinding with Kafka's wire codes; the store is a set:
// adding a binding that is there already changes nothing, as in Kafka.
//
// The store checks shapes only (codes of concrete values, non-empty
// strings); the broker checks Kafka's rules (security/acl.h) before writing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "meta/sqlite_db.h"
#include "port/status.h"

namespace eddy::meta {

struct AclRow {
  int8_t resource_type = 0;  // Kafka's ResourceType: 2 TOPIC .. 7 USER
  std::string resource_name;
  int8_t pattern_type = 0;  // 3 LITERAL, 4 PREFIXED
  std::string principal;
  std::string host;
  int8_t operation = 0;   // Kafka's AclOperation: 2 ALL .. 14 DESCRIBE_TOKENS
  int8_t permission = 0;  // 2 DENY, 3 ALLOW

  bool operator==(const AclRow&) const = default;
  auto operator<=>(const AclRow&) const = default;
};

class AclStore {
 public:
  explicit AclStore(Database* db) : db_(db) {}

  // Removes `deletions` then adds `additions`, in one transaction; nothing
  // is written when one addition is invalid (invalid_argument). Removing
  // what is not there, or adding what is, is not an error.
  Status alter(const std::vector<AclRow>& deletions, const std::vector<AclRow>& additions);
  Status add(const std::vector<AclRow>& rows) { return alter({}, rows); }
  Status remove(const std::vector<AclRow>& rows) { return alter(rows, {}); }

  // Every binding, in AclRow order.
  Status list(std::vector<AclRow>* out);

 private:
  Database* db_;
};

}  // namespace eddy::meta
