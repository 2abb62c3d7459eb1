#include "meta/forward_progress.h"

#include "meta/schema.h"
#include "port/log.h"

namespace eddy::meta {

namespace {

constexpr char kColumns[] =
    "topic, partition, next_offset, producer_id, producer_epoch, next_sequence, dropped_messages, "
    "remote_next_offset";

ForwardCursor read_cursor(const Statement& st) {
  ForwardCursor c;
  c.topic = st.column_text(0);
  c.partition = static_cast<int32_t>(st.column_int64(1));
  c.next_offset = st.column_int64(2);
  c.producer_id = st.column_int64(3);
  c.producer_epoch = static_cast<int16_t>(st.column_int64(4));
  c.next_sequence = static_cast<int32_t>(st.column_int64(5));
  c.dropped_messages = st.column_int64(6);
  c.remote_next_offset = st.column_int64(7);
  return c;
}

}  // namespace

Status ForwardProgress::open(const std::string& path, std::unique_ptr<ForwardProgress>* out,
                             const char* sqlite_vfs) {
  std::unique_ptr<Database> db;
  int64_t version = 0;
  Status s = open_database(path, forward_progress_schema(), &db, &version, sqlite_vfs);
  if (!s.ok()) return s;
  if (version == 0) EDDY_LOG_INFO("meta: created forward progress database {}", path);
  out->reset(new ForwardProgress(std::move(db)));
  return Status();
}

ForwardProgress::~ForwardProgress() {
  Status s = close();
  if (!s.ok()) EDDY_LOG_WARN("meta: {}", s.message());
}

Status ForwardProgress::close() {
  port::MutexLock lock(mu_);
  return db_ == nullptr ? Status() : db_->close();  // closing twice does nothing
}

Status ForwardProgress::save(const std::string& link, const std::vector<ForwardCursor>& cursors,
                             const ForwardProducer* producer) {
  port::MutexLock lock(mu_);
  if (producer != nullptr && (producer->producer_id < 0 || producer->producer_epoch < 0)) {
    return Status::invalid_argument("invalid uplink producer for link '" + link + "'");
  }
  for (const ForwardCursor& c : cursors) {
    if (c.partition < 0 || c.next_offset < 0 || c.next_sequence < 0 || c.dropped_messages < 0 ||
        c.remote_next_offset < -1) {
      return Status::invalid_argument("invalid forward cursor for link '" + link + "', " + c.topic + "-" +
                                      std::to_string(c.partition));
    }
  }
  Transaction tx(db_.get());
  Status s = tx.begin();
  if (!s.ok()) return s;
  if (producer != nullptr) {
    s = save_producer_locked(link, *producer);
    if (!s.ok()) return s;
  }
  for (const ForwardCursor& c : cursors) {
    Statement st;
    s = db_->prepare(
        "INSERT INTO forward_cursors (link, topic, partition, next_offset, producer_id, producer_epoch, "
        "next_sequence, dropped_messages, remote_next_offset) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (link, topic, partition) DO UPDATE SET next_offset = excluded.next_offset, "
        "producer_id = excluded.producer_id, producer_epoch = excluded.producer_epoch, "
        "next_sequence = excluded.next_sequence, dropped_messages = excluded.dropped_messages, "
        "remote_next_offset = excluded.remote_next_offset",
        &st);
    if (!s.ok()) return s;
    st.bind_text(1, link);
    st.bind_text(2, c.topic);
    st.bind_int64(3, c.partition);
    st.bind_int64(4, c.next_offset);
    st.bind_int64(5, c.producer_id);
    st.bind_int64(6, c.producer_epoch);
    st.bind_int64(7, c.next_sequence);
    st.bind_int64(8, c.dropped_messages);
    st.bind_int64(9, c.remote_next_offset);
    s = st.run();
    if (!s.ok()) return s;
  }
  return tx.commit();
}

Status ForwardProgress::load(const std::string& link, std::vector<ForwardCursor>* out) {
  port::MutexLock lock(mu_);
  out->clear();
  Statement st;
  Status s = db_->prepare(std::string("SELECT ") + kColumns +
                              " FROM forward_cursors WHERE link = ? ORDER BY topic, partition",
                          &st);
  if (!s.ok()) return s;
  st.bind_text(1, link);
  bool row = false;
  while ((s = st.step(&row)).ok() && row) out->push_back(read_cursor(st));
  return s;
}

Status ForwardProgress::get(const std::string& link, const std::string& topic, int32_t partition,
                             ForwardCursor* out) {
  port::MutexLock lock(mu_);
  Statement st;
  Status s = db_->prepare(std::string("SELECT ") + kColumns +
                              " FROM forward_cursors WHERE link = ? AND topic = ? AND partition = ?",
                          &st);
  if (!s.ok()) return s;
  st.bind_text(1, link);
  st.bind_text(2, topic);
  st.bind_int64(3, partition);
  bool row = false;
  s = st.step(&row);
  if (!s.ok()) return s;
  if (!row) {
    return Status::not_found("no forward cursor for link '" + link + "', " + topic + "-" + std::to_string(partition));
  }
  *out = read_cursor(st);
  return Status();
}

Status ForwardProgress::save_producer(const std::string& link, const ForwardProducer& producer) {
  port::MutexLock lock(mu_);
  return save_producer_locked(link, producer);
}

Status ForwardProgress::save_producer_locked(const std::string& link, const ForwardProducer& producer) {
  if (producer.producer_id < 0 || producer.producer_epoch < 0) {
    return Status::invalid_argument("invalid uplink producer for link '" + link + "'");
  }
  Statement st;
  Status s = db_->prepare(
      "INSERT INTO forward_links (link, producer_id, producer_epoch) VALUES (?, ?, ?) "
      "ON CONFLICT (link) DO UPDATE SET producer_id = excluded.producer_id, producer_epoch = excluded.producer_epoch",
      &st);
  if (!s.ok()) return s;
  st.bind_text(1, link);
  st.bind_int64(2, producer.producer_id);
  st.bind_int64(3, producer.producer_epoch);
  return st.run();
}

Status ForwardProgress::load_producer(const std::string& link, ForwardProducer* out) {
  port::MutexLock lock(mu_);
  Statement st;
  Status s = db_->prepare("SELECT producer_id, producer_epoch FROM forward_links WHERE link = ?", &st);
  if (!s.ok()) return s;
  st.bind_text(1, link);
  bool row = false;
  s = st.step(&row);
  if (!s.ok()) return s;
  if (!row) return Status::not_found("no uplink producer for link '" + link + "'");
  out->producer_id = st.column_int64(0);
  out->producer_epoch = static_cast<int16_t>(st.column_int64(1));
  return Status();
}

Status ForwardProgress::list_links(std::vector<std::string>* out) {
  port::MutexLock lock(mu_);
  out->clear();
  Statement st;
  Status s = db_->prepare(
      "SELECT link FROM forward_cursors UNION SELECT link FROM forward_links ORDER BY link", &st);
  if (!s.ok()) return s;
  bool row = false;
  while ((s = st.step(&row)).ok() && row) out->push_back(st.column_text(0));
  return s;
}

Status ForwardProgress::remove_cursor(const std::string& link, const std::string& topic, int32_t partition) {
  port::MutexLock lock(mu_);
  Statement st;
  Status s = db_->prepare("DELETE FROM forward_cursors WHERE link = ? AND topic = ? AND partition = ?", &st);
  if (!s.ok()) return s;
  st.bind_text(1, link);
  st.bind_text(2, topic);
  st.bind_int64(3, partition);
  return st.run();
}

Status ForwardProgress::remove_link(const std::string& link) {
  port::MutexLock lock(mu_);
  Transaction tx(db_.get());
  Status s = tx.begin();
  if (!s.ok()) return s;
  for (const char* sql : {"DELETE FROM forward_cursors WHERE link = ?", "DELETE FROM forward_links WHERE link = ?"}) {
    Statement st;
    s = db_->prepare(sql, &st);
    if (!s.ok()) return s;
    st.bind_text(1, link);
    s = st.run();
    if (!s.ok()) return s;
  }
  return tx.commit();
}

}  // namespace eddy::meta
