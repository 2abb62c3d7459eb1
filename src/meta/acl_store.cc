#include "meta/acl_store.h"

namespace eddy::meta {
namespace {

// The table's CHECK constraints, with messages.
Status check_row(const AclRow& row) {
  if (row.resource_type < 2 || row.resource_type > 7) {
    return Status::invalid_argument("invalid ACL resource type " + std::to_string(row.resource_type));
  }
  if (row.pattern_type != 3 && row.pattern_type != 4) {
    return Status::invalid_argument("invalid ACL pattern type " + std::to_string(row.pattern_type));
  }
  if (row.operation < 2 || row.operation > 14) {
    return Status::invalid_argument("invalid ACL operation " + std::to_string(row.operation));
  }
  if (row.permission != 2 && row.permission != 3) {
    return Status::invalid_argument("invalid ACL permission type " + std::to_string(row.permission));
  }
  if (row.resource_name.empty() || row.principal.empty() || row.host.empty()) {
    return Status::invalid_argument("ACL resource name, principal and host must not be empty");
  }
  return Status();
}

void bind_row(Statement* st, const AclRow& row) {
  st->bind_int64(1, row.resource_type);
  st->bind_text(2, row.resource_name);
  st->bind_int64(3, row.pattern_type);
  st->bind_text(4, row.principal);
  st->bind_text(5, row.host);
  st->bind_int64(6, row.operation);
  st->bind_int64(7, row.permission);
}

Status run_for_each(Database* db, const char* sql, const std::vector<AclRow>& rows) {
  for (const AclRow& row : rows) {
    Statement st;
    if (Status s = db->prepare(sql, &st); !s.ok()) return s;
    bind_row(&st, row);
    if (Status s = st.run(); !s.ok()) return s;
  }
  return Status();
}

}  // namespace

Status AclStore::alter(const std::vector<AclRow>& deletions, const std::vector<AclRow>& additions) {
  for (const AclRow& row : additions) {
    if (Status s = check_row(row); !s.ok()) return s;
  }
  Transaction tx(db_);
  Status s = tx.begin();
  if (!s.ok()) return s;
  s = run_for_each(db_,
                   "DELETE FROM acls WHERE resource_type = ? AND resource_name = ? AND pattern_type = ? AND "
                   "principal = ? AND host = ? AND operation = ? AND permission = ?",
                   deletions);
  if (!s.ok()) return s;
  s = run_for_each(db_,
                   "INSERT OR IGNORE INTO acls (resource_type, resource_name, pattern_type, principal, host, "
                   "operation, permission) VALUES (?, ?, ?, ?, ?, ?, ?)",
                   additions);
  if (!s.ok()) return s;
  return tx.commit();
}

Status AclStore::list(std::vector<AclRow>* out) {
  out->clear();
  Statement st;
  Status s = db_->prepare(
      "SELECT resource_type, resource_name, pattern_type, principal, host, operation, permission FROM acls "
      "ORDER BY resource_type, resource_name, pattern_type, principal, host, operation, permission",
      &st);
  if (!s.ok()) return s;
  bool row = false;
  while ((s = st.step(&row)).ok() && row) {
    AclRow r;
    r.resource_type = static_cast<int8_t>(st.column_int64(0));
    r.resource_name = st.column_text(1);
    r.pattern_type = static_cast<int8_t>(st.column_int64(2));
    r.principal = st.column_text(3);
    r.host = st.column_text(4);
    r.operation = static_cast<int8_t>(st.column_int64(5));
    r.permission = static_cast<int8_t>(st.column_int64(6));
    out->push_back(std::move(r));
  }
  return s;
}

}  // namespace eddy::meta
