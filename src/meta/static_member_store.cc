#include "meta/static_member_store.h"

namespace eddy::meta {

Status StaticMemberStore::save(const std::vector<StaticMember>& members) {
  Transaction tx(db_);
  Status s = tx.begin();
  if (!s.ok()) return s;
  for (const StaticMember& m : members) {
    Statement st;
    s = db_->prepare(
        "INSERT INTO static_members (group_id, group_instance_id, member_id, client_id, client_host, protocol_type, "
        "protocol_name, generation_id, session_timeout_ms, rebalance_timeout_ms, subscription, assignment) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (group_id, group_instance_id) DO UPDATE SET "
        "member_id = excluded.member_id, client_id = excluded.client_id, client_host = excluded.client_host, "
        "protocol_type = excluded.protocol_type, protocol_name = excluded.protocol_name, "
        "generation_id = excluded.generation_id, session_timeout_ms = excluded.session_timeout_ms, "
        "rebalance_timeout_ms = excluded.rebalance_timeout_ms, subscription = excluded.subscription, "
        "assignment = excluded.assignment",
        &st);
    if (!s.ok()) return s;
    st.bind_text(1, m.group_id);
    st.bind_text(2, m.group_instance_id);
    st.bind_text(3, m.member_id);
    st.bind_text(4, m.client_id);
    st.bind_text(5, m.client_host);
    st.bind_text(6, m.protocol_type);
    st.bind_text(7, m.protocol_name);
    st.bind_int64(8, m.generation_id);
    st.bind_int64(9, m.session_timeout_ms);
    st.bind_int64(10, m.rebalance_timeout_ms);
    st.bind_blob(11, m.subscription.data(), m.subscription.size());
    st.bind_blob(12, m.assignment.data(), m.assignment.size());
    s = st.run();
    if (!s.ok()) return s;
  }
  return tx.commit();
}

Status StaticMemberStore::load_where(const std::string& where, const std::string* group_id,
                                     std::vector<StaticMember>* out) {
  out->clear();
  Statement st;
  Status s = db_->prepare(
      "SELECT group_id, group_instance_id, member_id, client_id, client_host, protocol_type, protocol_name, "
      "generation_id, session_timeout_ms, rebalance_timeout_ms, subscription, assignment FROM static_members " +
          where + " ORDER BY group_id, group_instance_id",
      &st);
  if (!s.ok()) return s;
  if (group_id != nullptr) st.bind_text(1, *group_id);
  bool row = false;
  while ((s = st.step(&row)).ok() && row) {
    StaticMember m;
    m.group_id = st.column_text(0);
    m.group_instance_id = st.column_text(1);
    m.member_id = st.column_text(2);
    m.client_id = st.column_text(3);
    m.client_host = st.column_text(4);
    m.protocol_type = st.column_text(5);
    m.protocol_name = st.column_text(6);
    m.generation_id = static_cast<int32_t>(st.column_int64(7));
    m.session_timeout_ms = static_cast<int32_t>(st.column_int64(8));
    m.rebalance_timeout_ms = static_cast<int32_t>(st.column_int64(9));
    m.subscription = st.column_blob(10);
    m.assignment = st.column_blob(11);
    out->push_back(std::move(m));
  }
  return s;
}

Status StaticMemberStore::load(const std::string& group_id, std::vector<StaticMember>* out) {
  return load_where("WHERE group_id = ?", &group_id, out);
}

Status StaticMemberStore::load_all(std::vector<StaticMember>* out) { return load_where("", nullptr, out); }

Status StaticMemberStore::remove(const std::string& group_id, const std::string& group_instance_id, bool* removed) {
  Statement st;
  Status s = db_->prepare("DELETE FROM static_members WHERE group_id = ? AND group_instance_id = ?", &st);
  if (!s.ok()) return s;
  st.bind_text(1, group_id);
  st.bind_text(2, group_instance_id);
  s = st.run();
  if (s.ok() && removed != nullptr) *removed = db_->changes() > 0;
  return s;
}

Status StaticMemberStore::remove_group(const std::string& group_id) {
  Statement st;
  Status s = db_->prepare("DELETE FROM static_members WHERE group_id = ?", &st);
  if (!s.ok()) return s;
  st.bind_text(1, group_id);
  return st.run();
}

Status StaticMemberStore::remove_all() {
  Statement st;
  Status s = db_->prepare("DELETE FROM static_members", &st);
  return s.ok() ? st.run() : s;
}

}  // namespace eddy::meta
