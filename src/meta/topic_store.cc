#include "meta/topic_store.h"

#include "meta/node_ids.h"
#include "meta/topic_name.h"

namespace eddy::meta {

namespace {

constexpr char kSelectTopic[] = "SELECT name, topic_id, partition_count, replication_factor FROM topics";

Status validate_config_key(const std::string& key) {
  if (key.empty()) return Status::invalid_argument("Config key must not be empty");
  return Status();
}

}  // namespace

Status TopicStore::read_topic(Statement* st, const std::string& missing, TopicRecord* out) {
  bool row = false;
  Status s = st->step(&row);
  if (!s.ok()) return s;
  if (!row) return Status::not_found(missing);
  TopicRecord record;
  record.name = st->column_text(0);
  std::vector<uint8_t> id = st->column_blob(1);
  if (id.size() != record.id.bytes.size()) {
    return Status::corruption(db_->path() + ": topic '" + record.name + "' has a topic id of " +
                              std::to_string(id.size()) + " bytes");
  }
  std::copy(id.begin(), id.end(), record.id.bytes.begin());
  record.partition_count = static_cast<int32_t>(st->column_int64(2));
  record.replication_factor = static_cast<int16_t>(st->column_int64(3));
  *out = std::move(record);
  return Status();
}

Status TopicStore::load_configs(const Uuid& id, std::map<std::string, std::string>* out) {
  out->clear();
  Statement st;
  Status s = db_->prepare("SELECT key, value FROM topic_configs WHERE topic_id = ?", &st);
  if (!s.ok()) return s;
  st.bind_blob(1, id.bytes.data(), id.bytes.size());
  bool row = false;
  while ((s = st.step(&row)).ok() && row) (*out)[st.column_text(0)] = st.column_text(1);
  return s;
}

Status TopicStore::create(const NewTopic& topic, TopicRecord* out) {
  std::string name_error = topic_name_error(topic.name);
  if (!name_error.empty()) return Status::invalid_argument(std::move(name_error));
  if (topic.partition_count < 1) return Status::invalid_argument("Number of partitions must be larger than 0.");
  if (topic.replication_factor < 1) return Status::invalid_argument("Replication factor must be larger than 0.");
  if (!topic.replicas.empty() && topic.replicas.size() != static_cast<size_t>(topic.partition_count)) {
    return Status::invalid_argument("Replicas are needed for each partition.");
  }
  for (const auto& [key, value] : topic.configs) {
    Status s = validate_config_key(key);
    if (!s.ok()) return s;
  }

  Transaction tx(db_);
  Status s = tx.begin();
  if (s.ok()) s = check_name_is_free(topic.name);
  if (!s.ok()) return s;
  TopicRecord record;
  record.name = topic.name;
  record.partition_count = topic.partition_count;
  record.replication_factor = topic.replication_factor;
  record.configs = topic.configs;
  s = choose_id(topic.id, &record.id);
  if (s.ok()) s = insert(record);
  if (s.ok()) s = insert_replicas(record.id, 0, topic.replicas);
  if (s.ok()) s = tx.commit();
  if (!s.ok()) return s;
  if (out != nullptr) *out = std::move(record);
  return Status();
}

Status TopicStore::check_name_is_free(const std::string& name) {
  // An exact match first (TOPIC_ALREADY_EXISTS), then a '.'/'_' collision
  // (INVALID_TOPIC_EXCEPTION); the first query also matches the second way.
  Statement st;
  Status s =
      db_->prepare("SELECT name FROM topics WHERE replace(name, '.', '_') = replace(?, '.', '_') ORDER BY name", &st);
  if (!s.ok()) return s;
  st.bind_text(1, name);
  bool row = false;
  std::string colliding;
  while ((s = st.step(&row)).ok() && row) {
    std::string existing = st.column_text(0);
    if (existing == name) return Status::already_exists("Topic '" + name + "' already exists.");
    if (colliding.empty()) colliding = std::move(existing);
  }
  if (!s.ok()) return s;
  if (!colliding.empty()) return Status::invalid_argument("Topic '" + name + "' collides with existing topic: " + colliding);
  return Status();
}

Status TopicStore::choose_id(const Uuid& wanted, Uuid* id) {
  TopicRecord existing;
  if (!wanted.is_zero()) {
    *id = wanted;
    Status s = get_by_id(wanted, &existing);
    if (s.ok()) {
      return Status::already_exists("Topic id " + wanted.to_string() + " is already used by topic '" + existing.name +
                                    "'.");
    }
    return s.is_not_found() ? Status() : s;
  }
  // Retry the (astronomically unlikely) clash of a random id.
  for (;;) {
    *id = Uuid::random();
    Status s = get_by_id(*id, &existing);
    if (s.is_not_found()) return Status();
    if (!s.ok()) return s;
  }
}

Status TopicStore::insert(const TopicRecord& record) {
  Statement st;
  Status s =
      db_->prepare("INSERT INTO topics (topic_id, name, partition_count, replication_factor) VALUES (?, ?, ?, ?)", &st);
  if (!s.ok()) return s;
  st.bind_blob(1, record.id.bytes.data(), record.id.bytes.size());
  st.bind_text(2, record.name);
  st.bind_int64(3, record.partition_count);
  st.bind_int64(4, record.replication_factor);
  s = st.run();
  for (auto it = record.configs.begin(); s.ok() && it != record.configs.end(); ++it) {
    Statement config;
    s = db_->prepare("INSERT INTO topic_configs (topic_id, key, value) VALUES (?, ?, ?)", &config);
    if (!s.ok()) return s;
    config.bind_blob(1, record.id.bytes.data(), record.id.bytes.size());
    config.bind_text(2, it->first);
    config.bind_text(3, it->second);
    s = config.run();
  }
  return s;
}

Status TopicStore::get(const std::string& name, TopicRecord* out) {
  Statement st;
  Status s = db_->prepare(std::string(kSelectTopic) + " WHERE name = ?", &st);
  if (!s.ok()) return s;
  st.bind_text(1, name);
  s = read_topic(&st, "Topic '" + name + "' does not exist.", out);
  if (!s.ok()) return s;
  return load_configs(out->id, &out->configs);
}

Status TopicStore::get_by_id(const Uuid& id, TopicRecord* out) {
  Statement st;
  Status s = db_->prepare(std::string(kSelectTopic) + " WHERE topic_id = ?", &st);
  if (!s.ok()) return s;
  st.bind_blob(1, id.bytes.data(), id.bytes.size());
  s = read_topic(&st, "Topic id " + id.to_string() + " does not exist.", out);
  if (!s.ok()) return s;
  return load_configs(out->id, &out->configs);
}

Status TopicStore::list(std::vector<TopicRecord>* out) {
  out->clear();
  Statement st;
  Status s = db_->prepare(std::string(kSelectTopic) + " ORDER BY name", &st);
  if (!s.ok()) return s;
  for (;;) {
    TopicRecord record;
    s = read_topic(&st, std::string(), &record);
    if (s.is_not_found()) break;
    if (!s.ok()) return s;
    out->push_back(std::move(record));
  }
  for (TopicRecord& record : *out) {
    s = load_configs(record.id, &record.configs);
    if (!s.ok()) return s;
  }
  return Status();
}

Status TopicStore::remove(const std::string& name) {
  Transaction tx(db_);
  Status s = tx.begin();
  if (!s.ok()) return s;
  // topic_configs rows go with the topic (ON DELETE CASCADE).
  static const char* const kDeletes[] = {
      "DELETE FROM topics WHERE name = ?",
      "DELETE FROM committed_offsets WHERE topic = ?",
      "DELETE FROM producer_snapshots WHERE topic = ?",
      "DELETE FROM pending_offsets WHERE topic = ?",
  };
  for (const char* sql : kDeletes) {
    Statement st;
    s = db_->prepare(sql, &st);
    if (!s.ok()) return s;
    st.bind_text(1, name);
    s = st.run();
    if (!s.ok()) return s;
    if (sql == kDeletes[0] && db_->changes() == 0) return Status::not_found("Topic '" + name + "' does not exist.");
  }
  return tx.commit();
}

Status TopicStore::insert_replicas(const Uuid& id, int32_t first, const std::vector<std::vector<int32_t>>& replicas) {
  Status s;
  for (size_t i = 0; s.ok() && i < replicas.size(); ++i) {
    const std::string ids = join_node_ids(replicas[i]);
    Statement st;
    s = db_->prepare("INSERT OR REPLACE INTO partition_replicas (topic_id, partition, replicas) VALUES (?, ?, ?)", &st);
    if (!s.ok()) return s;
    st.bind_blob(1, id.bytes.data(), id.bytes.size());
    st.bind_int64(2, first + static_cast<int64_t>(i));
    st.bind_text(3, ids);
    s = st.run();
  }
  return s;
}

Status TopicStore::set_partition_count(const std::string& name, int32_t partition_count,
                                       const std::vector<std::vector<int32_t>>& new_replicas) {
  Transaction tx(db_);
  Status s = tx.begin();
  if (!s.ok()) return s;
  TopicRecord current;
  s = get(name, &current);
  if (!s.ok()) return s;
  if (partition_count == current.partition_count) {
    return Status::invalid_argument("Topic already has " + std::to_string(current.partition_count) + " partitions.");
  }
  if (partition_count < current.partition_count) {
    return Status::invalid_argument("Topic currently has " + std::to_string(current.partition_count) +
                                    " partitions, which is higher than the requested " +
                                    std::to_string(partition_count) + ".");
  }
  Statement st;
  s = db_->prepare("UPDATE topics SET partition_count = ? WHERE name = ?", &st);
  if (!s.ok()) return s;
  st.bind_int64(1, partition_count);
  st.bind_text(2, name);
  s = st.run();
  if (s.ok() && !new_replicas.empty()) {
    if (new_replicas.size() != static_cast<size_t>(partition_count - current.partition_count)) {
      return Status::invalid_argument("Replicas are needed for each new partition.");
    }
    s = insert_replicas(current.id, current.partition_count, new_replicas);
  }
  if (!s.ok()) return s;
  return tx.commit();
}

Status TopicStore::alter_configs(const std::string& name, const std::vector<ConfigChange>& changes) {
  for (const ConfigChange& change : changes) {
    Status s = validate_config_key(change.key);
    if (!s.ok()) return s;
  }
  Transaction tx(db_);
  Status s = tx.begin();
  if (!s.ok()) return s;
  TopicRecord topic;
  s = get(name, &topic);
  if (!s.ok()) return s;
  for (const ConfigChange& change : changes) {
    Statement st;
    if (change.op == ConfigChange::Op::kSet) {
      s = db_->prepare(
          "INSERT INTO topic_configs (topic_id, key, value) VALUES (?, ?, ?) "
          "ON CONFLICT (topic_id, key) DO UPDATE SET value = excluded.value",
          &st);
      if (!s.ok()) return s;
      st.bind_text(3, change.value);
    } else {
      s = db_->prepare("DELETE FROM topic_configs WHERE topic_id = ? AND key = ?", &st);
      if (!s.ok()) return s;
    }
    st.bind_blob(1, topic.id.bytes.data(), topic.id.bytes.size());
    st.bind_text(2, change.key);
    s = st.run();
    if (!s.ok()) return s;
  }
  return tx.commit();
}

}  // namespace eddy::meta
