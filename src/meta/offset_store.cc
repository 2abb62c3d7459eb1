#include "meta/offset_store.h"

namespace eddy::meta {

namespace {

CommittedOffset read_offset(const Statement& st) {
  CommittedOffset o;
  o.topic = st.column_text(0);
  o.partition = static_cast<int32_t>(st.column_int64(1));
  o.offset = st.column_int64(2);
  o.leader_epoch = static_cast<int32_t>(st.column_int64(3));
  o.metadata = st.column_text(4);
  o.commit_timestamp_ms = st.column_int64(5);
  return o;
}

constexpr char kSelectGroupOffsets[] =
    "SELECT topic, partition, committed_offset, leader_epoch, metadata, commit_timestamp_ms FROM committed_offsets "
    "WHERE group_id = ? ORDER BY topic, partition";
constexpr char kSelectPartitionOffset[] =
    "SELECT topic, partition, committed_offset, leader_epoch, metadata, commit_timestamp_ms FROM committed_offsets "
    "WHERE group_id = ? AND topic = ? AND partition = ?";

}  // namespace

Status OffsetStore::commit(const std::string& group, const std::vector<CommittedOffset>& offsets) {
  Transaction tx(db_);
  Status s = tx.begin();
  if (!s.ok()) return s;
  for (const CommittedOffset& o : offsets) {
    Statement st;
    s = db_->prepare(
        "INSERT INTO committed_offsets (group_id, topic, partition, committed_offset, leader_epoch, metadata, "
        "commit_timestamp_ms) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (group_id, topic, partition) DO UPDATE SET "
        "committed_offset = excluded.committed_offset, leader_epoch = excluded.leader_epoch, "
        "metadata = excluded.metadata, commit_timestamp_ms = excluded.commit_timestamp_ms",
        &st);
    if (!s.ok()) return s;
    st.bind_text(1, group);
    st.bind_text(2, o.topic);
    st.bind_int64(3, o.partition);
    st.bind_int64(4, o.offset);
    st.bind_int64(5, o.leader_epoch);
    st.bind_text(6, o.metadata);
    st.bind_int64(7, o.commit_timestamp_ms);
    s = st.run();
    if (!s.ok()) return s;
  }
  return tx.commit();
}

Status OffsetStore::fetch_all(const std::string& group, std::vector<CommittedOffset>* out) {
  out->clear();
  Statement st;
  Status s = db_->prepare(kSelectGroupOffsets, &st);
  if (!s.ok()) return s;
  st.bind_text(1, group);
  bool row = false;
  while ((s = st.step(&row)).ok() && row) out->push_back(read_offset(st));
  return s;
}

Status OffsetStore::fetch(const std::string& group, const std::vector<TopicPartition>& partitions,
                          std::vector<CommittedOffset>* out) {
  out->clear();
  for (const TopicPartition& tp : partitions) {
    Statement st;
    Status s = db_->prepare(kSelectPartitionOffset, &st);
    if (!s.ok()) return s;
    st.bind_text(1, group);
    st.bind_text(2, tp.topic);
    st.bind_int64(3, tp.partition);
    bool row = false;
    s = st.step(&row);
    if (!s.ok()) return s;
    if (row) out->push_back(read_offset(st));
  }
  return Status();
}

Status OffsetStore::remove_group(const std::string& group, int64_t* removed) {
  Statement st;
  Status s = db_->prepare("DELETE FROM committed_offsets WHERE group_id = ?", &st);
  if (!s.ok()) return s;
  st.bind_text(1, group);
  s = st.run();
  if (s.ok() && removed != nullptr) *removed = db_->changes();
  return s;
}

Status OffsetStore::remove(const std::string& group, const std::vector<TopicPartition>& partitions,
                           int64_t* removed) {
  int64_t count = 0;
  Transaction tx(db_);
  Status s = tx.begin();
  if (!s.ok()) return s;
  for (const TopicPartition& tp : partitions) {
    Statement st;
    s = db_->prepare("DELETE FROM committed_offsets WHERE group_id = ? AND topic = ? AND partition = ?", &st);
    if (!s.ok()) return s;
    st.bind_text(1, group);
    st.bind_text(2, tp.topic);
    st.bind_int64(3, tp.partition);
    s = st.run();
    if (!s.ok()) return s;
    count += db_->changes();
  }
  s = tx.commit();
  if (s.ok() && removed != nullptr) *removed = count;
  return s;
}

Status OffsetStore::list_groups(std::vector<std::string>* out) {
  out->clear();
  Statement st;
  // The primary key starts with group_id: DISTINCT walks it in order.
  Status s = db_->prepare("SELECT DISTINCT group_id FROM committed_offsets ORDER BY group_id", &st);
  if (!s.ok()) return s;
  bool row = false;
  while ((s = st.step(&row)).ok() && row) out->push_back(st.column_text(0));
  return s;
}

Status OffsetStore::find_expired(const std::vector<std::string>& empty_groups, int64_t cutoff_ms,
                                 std::vector<GroupTopicPartition>* out) {
  out->clear();
  for (const std::string& group : empty_groups) {
    Statement st;
    Status s = db_->prepare(
        "SELECT topic, partition FROM committed_offsets WHERE group_id = ? AND commit_timestamp_ms < ? "
        "ORDER BY topic, partition",
        &st);
    if (!s.ok()) return s;
    st.bind_text(1, group);
    st.bind_int64(2, cutoff_ms);
    bool row = false;
    while ((s = st.step(&row)).ok() && row) {
      out->push_back({group, {st.column_text(0), static_cast<int32_t>(st.column_int64(1))}});
    }
    if (!s.ok()) return s;
  }
  return Status();
}

Status OffsetStore::expire(const std::vector<std::string>& empty_groups, int64_t cutoff_ms,
                           std::vector<GroupTopicPartition>* expired) {
  if (expired != nullptr) expired->clear();
  Transaction tx(db_);
  Status s = tx.begin();
  if (!s.ok()) return s;
  if (expired != nullptr) {
    if (s = find_expired(empty_groups, cutoff_ms, expired); !s.ok()) return s;
  }
  for (const std::string& group : empty_groups) {
    Statement st;
    s = db_->prepare("DELETE FROM committed_offsets WHERE group_id = ? AND commit_timestamp_ms < ?", &st);
    if (!s.ok()) return s;
    st.bind_text(1, group);
    st.bind_int64(2, cutoff_ms);
    s = st.run();
    if (!s.ok()) return s;
  }
  s = tx.commit();
  if (!s.ok() && expired != nullptr) expired->clear();
  return s;
}

}  // namespace eddy::meta
