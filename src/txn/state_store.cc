#include "txn/state_store.h"

namespace eddy::txn {

Status MetaStateStore::load_all(std::vector<TransactionMetadata>* out) {
  out->clear();
  std::vector<meta::TransactionRow> rows;
  Status s = meta_->transactions().load_all(&rows);
  if (!s.ok()) return s;
  for (const meta::TransactionRow& row : rows) {
    TransactionMetadata m;
    if (!TransactionMetadata::from_row(row, &m)) {
      return Status::corruption(meta_->path() + ": transactional id '" + row.transactional_id +
                                "' has the unknown state " + std::to_string(row.state));
    }
    out->push_back(std::move(m));
  }
  return Status();
}

Status MetaStateStore::save(const TransactionMetadata& metadata) {
  return meta_->transactions().save(metadata.to_row());
}

Status MetaStateStore::remove(const std::string& transactional_id) {
  return meta_->transactions().remove(transactional_id);
}

}  // namespace eddy::txn
