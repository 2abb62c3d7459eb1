#include "meta/scram_credential_store.h"

namespace eddy::meta {
namespace {

// The checks of the table's CHECK constraints, with messages.
Status check_row(const ScramCredentialRow& row) {
  if (row.user.empty()) return Status::invalid_argument("SCRAM user name must not be empty");
  if (row.mechanism != 1 && row.mechanism != 2) {
    return Status::invalid_argument("unknown SCRAM mechanism id " + std::to_string(row.mechanism));
  }
  if (row.iterations < 4096) return Status::invalid_argument("SCRAM iterations below 4096");
  if (row.salt.empty() || row.stored_key.empty() || row.server_key.empty()) {
    return Status::invalid_argument("SCRAM salt and keys must not be empty");
  }
  return Status();
}

}  // namespace

Status ScramCredentialStore::alter(const std::vector<ScramCredentialKey>& deletions,
                                   const std::vector<ScramCredentialRow>& upsertions) {
  for (const ScramCredentialRow& row : upsertions) {
    if (Status s = check_row(row); !s.ok()) return s;
  }
  Transaction tx(db_);
  Status s = tx.begin();
  if (!s.ok()) return s;
  for (const ScramCredentialKey& key : deletions) {
    Statement st;
    s = db_->prepare("DELETE FROM scram_credentials WHERE user = ? AND mechanism = ?", &st);
    if (!s.ok()) return s;
    st.bind_text(1, key.user);
    st.bind_int64(2, key.mechanism);
    if (s = st.run(); !s.ok()) return s;
  }
  for (const ScramCredentialRow& row : upsertions) {
    Statement st;
    s = db_->prepare(
        "INSERT INTO scram_credentials (user, mechanism, salt, stored_key, server_key, iterations) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (user, mechanism) DO UPDATE SET salt = excluded.salt, "
        "stored_key = excluded.stored_key, server_key = excluded.server_key, iterations = excluded.iterations",
        &st);
    if (!s.ok()) return s;
    st.bind_text(1, row.user);
    st.bind_int64(2, row.mechanism);
    st.bind_blob(3, row.salt.data(), row.salt.size());
    st.bind_blob(4, row.stored_key.data(), row.stored_key.size());
    st.bind_blob(5, row.server_key.data(), row.server_key.size());
    st.bind_int64(6, row.iterations);
    if (s = st.run(); !s.ok()) return s;
  }
  return tx.commit();
}

namespace {

void read_row(const Statement& st, ScramCredentialRow* out) {
  out->user = st.column_text(0);
  out->mechanism = static_cast<int8_t>(st.column_int64(1));
  out->salt = st.column_blob(2);
  out->stored_key = st.column_blob(3);
  out->server_key = st.column_blob(4);
  out->iterations = static_cast<int32_t>(st.column_int64(5));
}

}  // namespace

Status ScramCredentialStore::get(const std::string& user, int8_t mechanism, ScramCredentialRow* out, bool* found) {
  *found = false;
  Statement st;
  Status s = db_->prepare(
      "SELECT user, mechanism, salt, stored_key, server_key, iterations FROM scram_credentials "
      "WHERE user = ? AND mechanism = ?",
      &st);
  if (!s.ok()) return s;
  st.bind_text(1, user);
  st.bind_int64(2, mechanism);
  bool row = false;
  if (s = st.step(&row); !s.ok() || !row) return s;
  read_row(st, out);
  *found = true;
  return Status();
}

Status ScramCredentialStore::list(std::vector<ScramCredentialRow>* out) {
  out->clear();
  Statement st;
  Status s = db_->prepare(
      "SELECT user, mechanism, salt, stored_key, server_key, iterations FROM scram_credentials "
      "ORDER BY user, mechanism",
      &st);
  if (!s.ok()) return s;
  bool row = false;
  while ((s = st.step(&row)).ok() && row) {
    out->emplace_back();
    read_row(st, &out->back());
  }
  return s;
}

Status ScramCredentialStore::secret(const std::string& name, const std::vector<uint8_t>& fresh,
                                    std::vector<uint8_t>* out) {
  Statement st;
  Status s = db_->prepare("SELECT value FROM security_secrets WHERE name = ?", &st);
  if (!s.ok()) return s;
  st.bind_text(1, name);
  bool row = false;
  if (s = st.step(&row); !s.ok()) return s;
  if (row) {
    *out = st.column_blob(0);
    return Status();
  }
  if (fresh.size() < 16) return Status::invalid_argument("a secret needs at least 16 bytes");
  Statement insert;
  if (s = db_->prepare("INSERT INTO security_secrets (name, value) VALUES (?, ?)", &insert); !s.ok()) return s;
  insert.bind_text(1, name);
  insert.bind_blob(2, fresh.data(), fresh.size());
  if (s = insert.run(); !s.ok()) return s;
  *out = fresh;
  return Status();
}

}  // namespace eddy::meta
