#include "meta/transaction_store.h"

#include <map>

namespace eddy::meta {

namespace {

Status check_shape(const TransactionRow& row) {
  if (row.transactional_id.empty()) return Status::invalid_argument("empty transactional id");
  if (row.state < 0 || row.state > 7) {
    return Status::invalid_argument("transaction state " + std::to_string(row.state) + " of '" +
                                    row.transactional_id + "' is not a Kafka TransactionState");
  }
  if (row.timeout_ms <= 0) return Status::invalid_argument("transaction timeout must be positive");
  for (const TopicPartition& tp : row.partitions) {
    if (tp.topic.empty() || tp.partition < 0) return Status::invalid_argument("bad partition in transaction");
  }
  return Status();
}

Status delete_members(Database* db, const std::string& id) {
  for (const char* sql : {"DELETE FROM transaction_partitions WHERE transactional_id = ?",
                          "DELETE FROM transaction_groups WHERE transactional_id = ?"}) {
    Statement st;
    Status s = db->prepare(sql, &st);
    if (!s.ok()) return s;
    st.bind_text(1, id);
    if (s = st.run(); !s.ok()) return s;
  }
  return Status();
}

}  // namespace

Status TransactionStore::save(const TransactionRow& row) {
  Status s = check_shape(row);
  if (!s.ok()) return s;
  Transaction tx(db_);
  if (s = tx.begin(); !s.ok()) return s;
  Statement st;
  s = db_->prepare(
      "INSERT INTO transactions (transactional_id, producer_id, last_producer_id, producer_epoch, "
      "last_producer_epoch, timeout_ms, state, start_ms, last_update_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
      "ON CONFLICT (transactional_id) DO UPDATE SET producer_id = excluded.producer_id, "
      "last_producer_id = excluded.last_producer_id, producer_epoch = excluded.producer_epoch, "
      "last_producer_epoch = excluded.last_producer_epoch, timeout_ms = excluded.timeout_ms, "
      "state = excluded.state, start_ms = excluded.start_ms, last_update_ms = excluded.last_update_ms",
      &st);
  if (!s.ok()) return s;
  st.bind_text(1, row.transactional_id);
  st.bind_int64(2, row.producer_id);
  st.bind_int64(3, row.last_producer_id);
  st.bind_int64(4, row.producer_epoch);
  st.bind_int64(5, row.last_producer_epoch);
  st.bind_int64(6, row.timeout_ms);
  st.bind_int64(7, row.state);
  st.bind_int64(8, row.start_ms);
  st.bind_int64(9, row.last_update_ms);
  if (s = st.run(); !s.ok()) return s;
  if (s = delete_members(db_, row.transactional_id); !s.ok()) return s;
  for (const TopicPartition& tp : row.partitions) {
    Statement p;
    s = db_->prepare(
        "INSERT OR IGNORE INTO transaction_partitions (transactional_id, topic, partition) VALUES (?, ?, ?)", &p);
    if (!s.ok()) return s;
    p.bind_text(1, row.transactional_id);
    p.bind_text(2, tp.topic);
    p.bind_int64(3, tp.partition);
    if (s = p.run(); !s.ok()) return s;
  }
  for (const std::string& group : row.groups) {
    Statement g;
    s = db_->prepare("INSERT OR IGNORE INTO transaction_groups (transactional_id, group_id) VALUES (?, ?)", &g);
    if (!s.ok()) return s;
    g.bind_text(1, row.transactional_id);
    g.bind_text(2, group);
    if (s = g.run(); !s.ok()) return s;
  }
  return tx.commit();
}

Status TransactionStore::remove(const std::string& transactional_id) {
  Transaction tx(db_);
  Status s = tx.begin();
  if (!s.ok()) return s;
  if (s = delete_members(db_, transactional_id); !s.ok()) return s;
  Statement st;
  if (s = db_->prepare("DELETE FROM transactions WHERE transactional_id = ?", &st); !s.ok()) return s;
  st.bind_text(1, transactional_id);
  if (s = st.run(); !s.ok()) return s;
  return tx.commit();
}

Status TransactionStore::load(const std::string& transactional_id, TransactionRow* out, bool* found) {
  // Rare (after a cluster proposal of unknown outcome): the whole table is
  // read rather than keeping a second set of queries for one row.
  *found = false;
  std::vector<TransactionRow> rows;
  Status s = load_all(&rows);
  if (!s.ok()) return s;
  for (TransactionRow& r : rows) {
    if (r.transactional_id != transactional_id) continue;
    *out = std::move(r);
    *found = true;
    break;
  }
  return Status();
}

Status TransactionStore::remove_all() {
  Transaction tx(db_);
  Status s = tx.begin();
  if (!s.ok()) return s;
  for (const char* sql : {"DELETE FROM transaction_partitions", "DELETE FROM transaction_groups",
                          "DELETE FROM transactions"}) {
    Statement st;
    if (s = db_->prepare(sql, &st); !s.ok()) return s;
    if (s = st.run(); !s.ok()) return s;
  }
  return tx.commit();
}

Status TransactionStore::load_all(std::vector<TransactionRow>* out) {
  out->clear();
  Statement st;
  Status s = db_->prepare(
      "SELECT transactional_id, producer_id, last_producer_id, producer_epoch, last_producer_epoch, timeout_ms, "
      "state, start_ms, last_update_ms FROM transactions ORDER BY transactional_id",
      &st);
  if (!s.ok()) return s;
  bool row = false;
  while ((s = st.step(&row)).ok() && row) {
    TransactionRow r;
    r.transactional_id = st.column_text(0);
    r.producer_id = st.column_int64(1);
    r.last_producer_id = st.column_int64(2);
    r.producer_epoch = static_cast<int16_t>(st.column_int64(3));
    r.last_producer_epoch = static_cast<int16_t>(st.column_int64(4));
    r.timeout_ms = static_cast<int32_t>(st.column_int64(5));
    r.state = static_cast<int8_t>(st.column_int64(6));
    r.start_ms = st.column_int64(7);
    r.last_update_ms = st.column_int64(8);
    out->push_back(std::move(r));
  }
  if (!s.ok()) return s;
  return load_members(out);
}

Status TransactionStore::load_members(std::vector<TransactionRow>* rows) {
  std::map<std::string, TransactionRow*> by_id;
  for (TransactionRow& r : *rows) by_id[r.transactional_id] = &r;
  Statement st;
  Status s = db_->prepare(
      "SELECT transactional_id, topic, partition FROM transaction_partitions ORDER BY transactional_id, topic, "
      "partition",
      &st);
  if (!s.ok()) return s;
  bool row = false;
  while ((s = st.step(&row)).ok() && row) {
    auto it = by_id.find(st.column_text(0));
    if (it != by_id.end()) {
      it->second->partitions.push_back(TopicPartition{st.column_text(1), static_cast<int32_t>(st.column_int64(2))});
    }
  }
  if (!s.ok()) return s;
  Statement g;
  s = db_->prepare("SELECT transactional_id, group_id FROM transaction_groups ORDER BY transactional_id, group_id",
                   &g);
  if (!s.ok()) return s;
  while ((s = g.step(&row)).ok() && row) {
    auto it = by_id.find(g.column_text(0));
    if (it != by_id.end()) it->second->groups.push_back(g.column_text(1));
  }
  return s;
}

}  // namespace eddy::meta
