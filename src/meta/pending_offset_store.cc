#include "meta/pending_offset_store.h"

namespace eddy::meta {

Status PendingOffsetStore::stage(const std::string& group, int64_t producer_id,
                                 const std::vector<CommittedOffset>& offsets) {
  for (const CommittedOffset& o : offsets) {
    if (o.partition < 0) return Status::invalid_argument("negative partition " + std::to_string(o.partition));
  }
  Transaction tx(db_);
  Status s = tx.begin();
  if (!s.ok()) return s;
  for (const CommittedOffset& o : offsets) {
    Statement st;
    s = db_->prepare(
        "INSERT INTO pending_offsets (group_id, producer_id, topic, partition, committed_offset, leader_epoch, "
        "metadata, commit_timestamp_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (group_id, producer_id, topic, partition) DO UPDATE SET "
        "committed_offset = excluded.committed_offset, leader_epoch = excluded.leader_epoch, "
        "metadata = excluded.metadata, commit_timestamp_ms = excluded.commit_timestamp_ms",
        &st);
    if (!s.ok()) return s;
    st.bind_text(1, group);
    st.bind_int64(2, producer_id);
    st.bind_text(3, o.topic);
    st.bind_int64(4, o.partition);
    st.bind_int64(5, o.offset);
    st.bind_int64(6, o.leader_epoch);
    st.bind_text(7, o.metadata);
    st.bind_int64(8, o.commit_timestamp_ms);
    if (s = st.run(); !s.ok()) return s;
  }
  return tx.commit();
}

Status PendingOffsetStore::complete(const std::string& group, int64_t producer_id, bool commit, int64_t* applied) {
  Transaction tx(db_);
  Status s = tx.begin();
  if (!s.ok()) return s;
  if (commit) {
    Statement st;
    s = db_->prepare(
        "INSERT INTO committed_offsets (group_id, topic, partition, committed_offset, leader_epoch, metadata, "
        "commit_timestamp_ms) SELECT group_id, topic, partition, committed_offset, leader_epoch, metadata, "
        "commit_timestamp_ms FROM pending_offsets WHERE group_id = ? AND producer_id = ? "
        "ON CONFLICT (group_id, topic, partition) DO UPDATE SET committed_offset = excluded.committed_offset, "
        "leader_epoch = excluded.leader_epoch, metadata = excluded.metadata, "
        "commit_timestamp_ms = excluded.commit_timestamp_ms",
        &st);
    if (!s.ok()) return s;
    st.bind_text(1, group);
    st.bind_int64(2, producer_id);
    if (s = st.run(); !s.ok()) return s;
  }
  Statement del;
  s = db_->prepare("DELETE FROM pending_offsets WHERE group_id = ? AND producer_id = ?", &del);
  if (!s.ok()) return s;
  del.bind_text(1, group);
  del.bind_int64(2, producer_id);
  if (s = del.run(); !s.ok()) return s;
  if (applied != nullptr) *applied = db_->changes();
  return tx.commit();
}

Status PendingOffsetStore::pending_partitions(const std::string& group, std::vector<TopicPartition>* out) {
  out->clear();
  Statement st;
  Status s = db_->prepare(
      "SELECT DISTINCT topic, partition FROM pending_offsets WHERE group_id = ? ORDER BY topic, partition", &st);
  if (!s.ok()) return s;
  st.bind_text(1, group);
  bool row = false;
  while ((s = st.step(&row)).ok() && row) {
    out->push_back(TopicPartition{st.column_text(0), static_cast<int32_t>(st.column_int64(1))});
  }
  return s;
}

Status PendingOffsetStore::staged(const std::string& group, int64_t producer_id, std::vector<CommittedOffset>* out) {
  out->clear();
  Statement st;
  Status s = db_->prepare(
      "SELECT topic, partition, committed_offset, leader_epoch, metadata, commit_timestamp_ms FROM pending_offsets "
      "WHERE group_id = ? AND producer_id = ? ORDER BY topic, partition",
      &st);
  if (!s.ok()) return s;
  st.bind_text(1, group);
  st.bind_int64(2, producer_id);
  bool row = false;
  while ((s = st.step(&row)).ok() && row) {
    CommittedOffset o;
    o.topic = st.column_text(0);
    o.partition = static_cast<int32_t>(st.column_int64(1));
    o.offset = st.column_int64(2);
    o.leader_epoch = static_cast<int32_t>(st.column_int64(3));
    o.metadata = st.column_text(4);
    o.commit_timestamp_ms = st.column_int64(5);
    out->push_back(std::move(o));
  }
  return s;
}

Status PendingOffsetStore::stagers(std::vector<std::pair<std::string, int64_t>>* out) {
  out->clear();
  Statement st;
  Status s = db_->prepare(
      "SELECT DISTINCT group_id, producer_id FROM pending_offsets ORDER BY group_id, producer_id", &st);
  if (!s.ok()) return s;
  bool row = false;
  while ((s = st.step(&row)).ok() && row) out->emplace_back(st.column_text(0), st.column_int64(1));
  return s;
}

Status PendingOffsetStore::remove_group(const std::string& group) {
  Statement st;
  Status s = db_->prepare("DELETE FROM pending_offsets WHERE group_id = ?", &st);
  if (!s.ok()) return s;
  st.bind_text(1, group);
  return st.run();
}

Status PendingOffsetStore::remove_all() {
  Statement st;
  Status s = db_->prepare("DELETE FROM pending_offsets", &st);
  return s.ok() ? st.run() : s;
}

}  // namespace eddy::meta
