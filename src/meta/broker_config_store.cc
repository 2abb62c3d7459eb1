#include "meta/broker_config_store.h"

namespace eddy::meta {

Status BrokerConfigStore::alter(const std::vector<ConfigChange>& changes) {
  for (const ConfigChange& change : changes) {
    if (change.key.empty()) return Status::invalid_argument("Config key must not be empty");
  }
  Transaction tx(db_);
  Status s = tx.begin();
  if (!s.ok()) return s;
  for (const ConfigChange& change : changes) {
    Statement st;
    if (change.op == ConfigChange::Op::kSet) {
      s = db_->prepare(
          "INSERT INTO broker_configs (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
          &st);
      if (!s.ok()) return s;
      st.bind_text(2, change.value);
    } else {
      s = db_->prepare("DELETE FROM broker_configs WHERE key = ?", &st);
      if (!s.ok()) return s;
    }
    st.bind_text(1, change.key);
    s = st.run();
    if (!s.ok()) return s;
  }
  return tx.commit();
}

Status BrokerConfigStore::list(std::map<std::string, std::string>* out) {
  out->clear();
  Statement st;
  Status s = db_->prepare("SELECT key, value FROM broker_configs", &st);
  if (!s.ok()) return s;
  bool row = false;
  while ((s = st.step(&row)).ok() && row) (*out)[st.column_text(0)] = st.column_text(1);
  return s;
}

}  // namespace eddy::meta
