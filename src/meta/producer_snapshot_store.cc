#include "meta/producer_snapshot_store.h"

namespace eddy::meta {

namespace {

constexpr char kSelect[] =
    "SELECT topic, partition, producer_id, producer_epoch, last_sequence, last_offset, timestamp_ms "
    "FROM producer_snapshots";

ProducerSnapshot read_snapshot(const Statement& st) {
  ProducerSnapshot p;
  p.topic = st.column_text(0);
  p.partition = static_cast<int32_t>(st.column_int64(1));
  p.producer_id = st.column_int64(2);
  p.producer_epoch = static_cast<int16_t>(st.column_int64(3));
  p.last_sequence = static_cast<int32_t>(st.column_int64(4));
  p.last_offset = st.column_int64(5);
  p.timestamp_ms = st.column_int64(6);
  return p;
}

}  // namespace

// REQUIRES: inside a transaction.
Status ProducerSnapshotStore::insert_all(const std::vector<ProducerSnapshot>& entries) {
  for (const ProducerSnapshot& p : entries) {
    Statement st;
    Status s = db_->prepare(
        "INSERT INTO producer_snapshots (topic, partition, producer_id, producer_epoch, last_sequence, last_offset, "
        "timestamp_ms) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (topic, partition, producer_id) DO UPDATE SET "
        "producer_epoch = excluded.producer_epoch, last_sequence = excluded.last_sequence, "
        "last_offset = excluded.last_offset, timestamp_ms = excluded.timestamp_ms",
        &st);
    if (!s.ok()) return s;
    st.bind_text(1, p.topic);
    st.bind_int64(2, p.partition);
    st.bind_int64(3, p.producer_id);
    st.bind_int64(4, p.producer_epoch);
    st.bind_int64(5, p.last_sequence);
    st.bind_int64(6, p.last_offset);
    st.bind_int64(7, p.timestamp_ms);
    s = st.run();
    if (!s.ok()) return s;
  }
  return Status();
}

Status ProducerSnapshotStore::save(const std::vector<ProducerSnapshot>& entries) {
  Transaction tx(db_);
  Status s = tx.begin();
  if (s.ok()) s = insert_all(entries);
  if (s.ok()) s = tx.commit();
  return s;
}

Status ProducerSnapshotStore::replace_partition(const std::string& topic, int32_t partition,
                                                const std::vector<ProducerSnapshot>& entries) {
  for (const ProducerSnapshot& p : entries) {
    if (p.topic != topic || p.partition != partition) {
      return Status::invalid_argument("producer snapshot of " + p.topic + "-" + std::to_string(p.partition) +
                                      " given to replace " + topic + "-" + std::to_string(partition));
    }
  }
  Transaction tx(db_);
  Status s = tx.begin();
  if (!s.ok()) return s;
  {
    Statement st;
    s = db_->prepare("DELETE FROM producer_snapshots WHERE topic = ? AND partition = ?", &st);
    if (!s.ok()) return s;
    st.bind_text(1, topic);
    st.bind_int64(2, partition);
    s = st.run();
    if (!s.ok()) return s;
  }
  s = insert_all(entries);
  if (!s.ok()) return s;
  return tx.commit();
}

Status ProducerSnapshotStore::load(const std::string& topic, int32_t partition, std::vector<ProducerSnapshot>* out) {
  out->clear();
  Statement st;
  Status s = db_->prepare(std::string(kSelect) + " WHERE topic = ? AND partition = ? ORDER BY producer_id", &st);
  if (!s.ok()) return s;
  st.bind_text(1, topic);
  st.bind_int64(2, partition);
  bool row = false;
  while ((s = st.step(&row)).ok() && row) out->push_back(read_snapshot(st));
  return s;
}

Status ProducerSnapshotStore::load_all(std::vector<ProducerSnapshot>* out) {
  out->clear();
  Statement st;
  Status s = db_->prepare(std::string(kSelect) + " ORDER BY topic, partition, producer_id", &st);
  if (!s.ok()) return s;
  bool row = false;
  while ((s = st.step(&row)).ok() && row) out->push_back(read_snapshot(st));
  return s;
}

Status ProducerSnapshotStore::remove_partition(const std::string& topic, int32_t partition) {
  Statement st;
  Status s = db_->prepare("DELETE FROM producer_snapshots WHERE topic = ? AND partition = ?", &st);
  if (!s.ok()) return s;
  st.bind_text(1, topic);
  st.bind_int64(2, partition);
  return st.run();
}

Status ProducerSnapshotStore::remove_older_than(int64_t cutoff_ms, int64_t* removed) {
  Statement st;
  Status s = db_->prepare("DELETE FROM producer_snapshots WHERE timestamp_ms < ?", &st);
  if (!s.ok()) return s;
  st.bind_int64(1, cutoff_ms);
  s = st.run();
  if (s.ok() && removed != nullptr) *removed = db_->changes();
  return s;
}

}  // namespace eddy::meta
