#include "meta/cluster_store.h"

#include <algorithm>

#include "meta/node_ids.h"

namespace eddy::meta {

Status ClusterStore::register_broker(const ClusterBroker& broker) {
  Transaction tx(db_);
  Status s = tx.begin();
  if (!s.ok()) return s;
  Statement st;
  s = db_->prepare(
      "INSERT INTO cluster_brokers (node_id, rack) VALUES (?, ?) ON CONFLICT (node_id) DO UPDATE SET rack = "
      "excluded.rack",
      &st);
  if (!s.ok()) return s;
  st.bind_int64(1, broker.node_id);
  if (broker.rack) {
    st.bind_text(2, *broker.rack);
  } else {
    st.bind_null(2);
  }
  if (s = st.run(); !s.ok()) return s;
  Statement del;
  if (s = db_->prepare("DELETE FROM cluster_broker_endpoints WHERE node_id = ?", &del); !s.ok()) return s;
  del.bind_int64(1, broker.node_id);
  if (s = del.run(); !s.ok()) return s;
  for (const BrokerEndpoint& e : broker.endpoints) {
    Statement ins;
    s = db_->prepare(
        "INSERT INTO cluster_broker_endpoints (node_id, listener, host, port, security_protocol) VALUES (?, ?, ?, ?, ?)",
        &ins);
    if (!s.ok()) return s;
    ins.bind_int64(1, broker.node_id);
    ins.bind_text(2, e.listener);
    ins.bind_text(3, e.host);
    ins.bind_int64(4, e.port);
    ins.bind_int64(5, e.security_protocol);
    if (s = ins.run(); !s.ok()) return s;
  }
  return tx.commit();
}

Status ClusterStore::brokers(std::vector<ClusterBroker>* out) {
  out->clear();
  Statement st;
  Status s = db_->prepare("SELECT node_id, rack FROM cluster_brokers ORDER BY node_id", &st);
  if (!s.ok()) return s;
  bool row = false;
  while ((s = st.step(&row)).ok() && row) {
    ClusterBroker b;
    b.node_id = static_cast<int32_t>(st.column_int64(0));
    if (!st.column_is_null(1)) b.rack = st.column_text(1);
    out->push_back(std::move(b));
  }
  if (!s.ok()) return s;
  Statement ep;
  s = db_->prepare(
      "SELECT node_id, listener, host, port, security_protocol FROM cluster_broker_endpoints ORDER BY node_id, "
      "listener",
      &ep);
  if (!s.ok()) return s;
  while ((s = ep.step(&row)).ok() && row) {
    const auto node = static_cast<int32_t>(ep.column_int64(0));
    auto it = std::find_if(out->begin(), out->end(), [&](const ClusterBroker& b) { return b.node_id == node; });
    if (it == out->end()) continue;
    it->endpoints.push_back({ep.column_text(1), ep.column_text(2), static_cast<int32_t>(ep.column_int64(3)),
                             static_cast<int16_t>(ep.column_int64(4))});
  }
  return s;
}

Status ClusterStore::replicas(const Uuid& topic_id, std::map<int32_t, std::vector<int32_t>>* out) {
  out->clear();
  Statement st;
  Status s = db_->prepare("SELECT partition, replicas FROM partition_replicas WHERE topic_id = ?", &st);
  if (!s.ok()) return s;
  st.bind_blob(1, topic_id.bytes.data(), topic_id.bytes.size());
  bool row = false;
  while ((s = st.step(&row)).ok() && row) {
    std::vector<int32_t> ids;
    if (Status p = split_node_ids(st.column_text(1), "partition_replicas", &ids); !p.ok()) return p;
    (*out)[static_cast<int32_t>(st.column_int64(0))] = std::move(ids);
  }
  return s;
}

Status ClusterStore::applied_offset(int64_t* next) {
  *next = 0;
  Statement st;
  Status s = db_->prepare("SELECT next_offset FROM controller_applied WHERE singleton = 0", &st);
  if (!s.ok()) return s;
  bool row = false;
  if (s = st.step(&row); !s.ok()) return s;
  if (row) *next = st.column_int64(0);
  return Status();
}

Status ClusterStore::set_applied_offset(int64_t next) {
  Statement st;
  Status s = db_->prepare(
      "INSERT INTO controller_applied (singleton, next_offset, cluster_id) VALUES (0, ?, NULL) ON CONFLICT "
      "(singleton) DO UPDATE SET next_offset = excluded.next_offset",
      &st);
  if (!s.ok()) return s;
  st.bind_int64(1, next);
  return st.run();
}

Status ClusterStore::producer_ids_end(int64_t* end) {
  Status s = db_->query_int64("SELECT next_producer_id_block FROM cluster WHERE singleton = 0", end);
  return s.is_not_found() ? Status::corruption(db_->path() + ": the cluster row is missing") : s;
}

Status ClusterStore::set_producer_ids_end(int64_t end) {
  Statement st;
  Status s = db_->prepare("UPDATE cluster SET next_producer_id_block = ? WHERE singleton = 0", &st);
  if (!s.ok()) return s;
  st.bind_int64(1, end);
  return st.run();
}

Status ClusterStore::log_cluster_id(std::string* out) {
  out->clear();
  Statement st;
  Status s = db_->prepare("SELECT cluster_id FROM controller_applied WHERE singleton = 0", &st);
  if (!s.ok()) return s;
  bool row = false;
  if (s = st.step(&row); !s.ok()) return s;
  if (row && !st.column_is_null(0)) *out = st.column_text(0);
  return Status();
}

Status ClusterStore::set_log_cluster_id(const std::string& cluster_id) {
  Statement st;
  Status s = db_->prepare(
      "INSERT INTO controller_applied (singleton, next_offset, cluster_id) VALUES (0, 0, ?) ON CONFLICT (singleton) "
      "DO UPDATE SET cluster_id = excluded.cluster_id",
      &st);
  if (!s.ok()) return s;
  st.bind_text(1, cluster_id);
  return st.run();
}

}  // namespace eddy::meta

namespace eddy::meta {

Status ClusterStore::merge_forward_cursor(const ClusterForwardCursor& c, bool* kept) {
  *kept = false;
  if (c.partition < 0 || c.next_offset < 0 || c.next_sequence < 0 || c.dropped_messages < 0) {
    return Status::invalid_argument("forward cursor of " + c.link + " on " + c.topic + "-" +
                                    std::to_string(c.partition) + ": a negative field");
  }
  Statement known;
  Status s = db_->prepare("SELECT 1 FROM topics WHERE topic_id = ?", &known);
  if (!s.ok()) return s;
  known.bind_blob(1, c.topic_id.bytes.data(), c.topic_id.bytes.size());
  bool row = false;
  if (s = known.step(&row); !s.ok() || !row) return s;
  Statement st;
  s = db_->prepare(
      "INSERT INTO cluster_forward_cursors (link, topic_id, partition, topic, next_offset, producer_id, "
      "producer_epoch, next_sequence, remote_next_offset, dropped_messages) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
      "ON CONFLICT (link, topic_id, partition) DO UPDATE SET topic = excluded.topic, next_offset = "
      "excluded.next_offset, producer_id = excluded.producer_id, producer_epoch = excluded.producer_epoch, "
      "next_sequence = excluded.next_sequence, remote_next_offset = excluded.remote_next_offset, "
      "dropped_messages = excluded.dropped_messages WHERE excluded.next_offset >= cluster_forward_cursors.next_offset",
      &st);
  if (!s.ok()) return s;
  st.bind_text(1, c.link);
  st.bind_blob(2, c.topic_id.bytes.data(), c.topic_id.bytes.size());
  st.bind_int64(3, c.partition);
  st.bind_text(4, c.topic);
  st.bind_int64(5, c.next_offset);
  st.bind_int64(6, c.producer_id);
  st.bind_int64(7, c.producer_epoch);
  st.bind_int64(8, c.next_sequence);
  st.bind_int64(9, c.remote_next_offset);
  st.bind_int64(10, c.dropped_messages);
  if (s = st.run(); !s.ok()) return s;
  *kept = db_->changes() > 0;
  return Status();
}

Status ClusterStore::forward_cursors(std::vector<ClusterForwardCursor>* out) {
  out->clear();
  Statement st;
  Status s = db_->prepare(
      "SELECT link, topic_id, topic, partition, next_offset, producer_id, producer_epoch, next_sequence, "
      "remote_next_offset, dropped_messages FROM cluster_forward_cursors ORDER BY link, topic_id, partition",
      &st);
  if (!s.ok()) return s;
  bool row = false;
  while ((s = st.step(&row)).ok() && row) {
    ClusterForwardCursor c;
    c.link = st.column_text(0);
    const std::vector<uint8_t> id = st.column_blob(1);
    if (id.size() != c.topic_id.bytes.size()) return Status::corruption("cluster_forward_cursors: bad topic id");
    std::copy(id.begin(), id.end(), c.topic_id.bytes.begin());
    c.topic = st.column_text(2);
    c.partition = static_cast<int32_t>(st.column_int64(3));
    c.next_offset = st.column_int64(4);
    c.producer_id = st.column_int64(5);
    c.producer_epoch = static_cast<int16_t>(st.column_int64(6));
    c.next_sequence = static_cast<int32_t>(st.column_int64(7));
    c.remote_next_offset = st.column_int64(8);
    c.dropped_messages = st.column_int64(9);
    out->push_back(std::move(c));
  }
  return s;
}

Status ClusterStore::remove_all_forward_cursors() { return db_->exec("DELETE FROM cluster_forward_cursors"); }


Status ClusterStore::merge_partition_leader(const PartitionLeader& l, bool* kept) {
  *kept = false;
  if (l.partition < 0 || l.leader < 0 || l.leader_epoch < 0 ||
      std::any_of(l.isr.begin(), l.isr.end(), [](int32_t id) { return id < 0; })) {
    return Status::invalid_argument("partition leader of partition " + std::to_string(l.partition) +
                                    ": a negative field");
  }
  Statement st;
  Status s = db_->prepare(
      "INSERT INTO partition_leaders (topic_id, partition, leader, leader_epoch, isr) SELECT ?, ?, ?, ?, ? WHERE "
      "EXISTS (SELECT 1 FROM topics WHERE topic_id = ?1) ON CONFLICT (topic_id, partition) DO UPDATE SET leader = "
      "excluded.leader, leader_epoch = excluded.leader_epoch, isr = excluded.isr WHERE excluded.leader_epoch >= "
      "partition_leaders.leader_epoch",
      &st);
  if (!s.ok()) return s;
  st.bind_blob(1, l.topic_id.bytes.data(), l.topic_id.bytes.size());
  st.bind_int64(2, l.partition);
  st.bind_int64(3, l.leader);
  st.bind_int64(4, l.leader_epoch);
  st.bind_text(5, join_node_ids(l.isr));
  if (s = st.run(); !s.ok()) return s;
  *kept = db_->changes() > 0;
  return Status();
}

Status ClusterStore::partition_leaders(std::vector<PartitionLeader>* out) {
  out->clear();
  Statement st;
  Status s = db_->prepare(
      "SELECT topic_id, partition, leader, leader_epoch, isr FROM partition_leaders ORDER BY topic_id, partition", &st);
  if (!s.ok()) return s;
  bool row = false;
  while ((s = st.step(&row)).ok() && row) {
    PartitionLeader l;
    const std::vector<uint8_t> id = st.column_blob(0);
    if (id.size() != l.topic_id.bytes.size()) return Status::corruption("partition_leaders: bad topic id");
    std::copy(id.begin(), id.end(), l.topic_id.bytes.begin());
    l.partition = static_cast<int32_t>(st.column_int64(1));
    l.leader = static_cast<int32_t>(st.column_int64(2));
    l.leader_epoch = static_cast<int32_t>(st.column_int64(3));
    if (Status p = split_node_ids(st.column_text(4), "partition_leaders", &l.isr); !p.ok()) return p;
    out->push_back(std::move(l));
  }
  return s;
}

Status ClusterStore::remove_all_partition_leaders() { return db_->exec("DELETE FROM partition_leaders"); }

Status ClusterStore::set_fenced(int32_t node_id, bool fenced) {
  if (node_id < 0) return Status::invalid_argument("fencing node " + std::to_string(node_id) + ": a negative id");
  Statement st;
  Status s = db_->prepare(fenced ? "INSERT OR IGNORE INTO cluster_fenced_nodes (node_id) VALUES (?)"
                                 : "DELETE FROM cluster_fenced_nodes WHERE node_id = ?",
                          &st);
  if (!s.ok()) return s;
  st.bind_int64(1, node_id);
  return st.run();
}

Status ClusterStore::fenced_nodes(std::vector<int32_t>* out) {
  out->clear();
  Statement st;
  Status s = db_->prepare("SELECT node_id FROM cluster_fenced_nodes ORDER BY node_id", &st);
  if (!s.ok()) return s;
  bool row = false;
  while ((s = st.step(&row)).ok() && row) out->push_back(static_cast<int32_t>(st.column_int64(0)));
  return s;
}

Status ClusterStore::unfence_all() { return db_->exec("DELETE FROM cluster_fenced_nodes"); }

}  // namespace eddy::meta
