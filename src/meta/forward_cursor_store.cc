#include "meta/forward_cursor_store.h"

namespace eddy::meta {

Status ForwardCursorStore::save(const std::string& link, const std::vector<ForwardCursor>& cursors) {
  Transaction tx(db_);
  Status s = tx.begin();
  if (!s.ok()) return s;
  for (const ForwardCursor& c : cursors) {
    Statement st;
    s = db_->prepare(
        "INSERT INTO forward_cursors (link, topic, partition, next_offset) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (link, topic, partition) DO UPDATE SET next_offset = excluded.next_offset",
        &st);
    if (!s.ok()) return s;
    st.bind_text(1, link);
    st.bind_text(2, c.topic);
    st.bind_int64(3, c.partition);
    st.bind_int64(4, c.next_offset);
    s = st.run();
    if (!s.ok()) return s;
  }
  return tx.commit();
}

Status ForwardCursorStore::load(const std::string& link, std::vector<ForwardCursor>* out) {
  out->clear();
  Statement st;
  Status s = db_->prepare(
      "SELECT topic, partition, next_offset FROM forward_cursors WHERE link = ? ORDER BY topic, partition", &st);
  if (!s.ok()) return s;
  st.bind_text(1, link);
  bool row = false;
  while ((s = st.step(&row)).ok() && row) {
    out->push_back({st.column_text(0), static_cast<int32_t>(st.column_int64(1)), st.column_int64(2)});
  }
  return s;
}

Status ForwardCursorStore::get(const std::string& link, const std::string& topic, int32_t partition,
                               int64_t* next_offset) {
  Statement st;
  Status s = db_->prepare(
      "SELECT next_offset FROM forward_cursors WHERE link = ? AND topic = ? AND partition = ?", &st);
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
  *next_offset = st.column_int64(0);
  return Status();
}

Status ForwardCursorStore::list_links(std::vector<std::string>* out) {
  out->clear();
  Statement st;
  Status s = db_->prepare("SELECT DISTINCT link FROM forward_cursors ORDER BY link", &st);
  if (!s.ok()) return s;
  bool row = false;
  while ((s = st.step(&row)).ok() && row) out->push_back(st.column_text(0));
  return s;
}

Status ForwardCursorStore::remove_link(const std::string& link) {
  Statement st;
  Status s = db_->prepare("DELETE FROM forward_cursors WHERE link = ?", &st);
  if (!s.ok()) return s;
  st.bind_text(1, link);
  return st.run();
}

}  // namespace eddy::meta
