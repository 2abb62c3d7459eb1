#include "txn/state_store.h"

#include "port/log.h"

namespace eddy::txn {
namespace {

Status from_row_checked(const meta::MetaStore& meta, const meta::TransactionRow& row, TransactionMetadata* out) {
  if (TransactionMetadata::from_row(row, out)) return Status();
  return Status::corruption(meta.path() + ": transactional id '" + row.transactional_id + "' has the unknown state " +
                            std::to_string(row.state));
}

}  // namespace

Status MetaStateStore::load_all(std::vector<TransactionMetadata>* out) {
  out->clear();
  std::vector<meta::TransactionRow> rows;
  Status s = meta_->transactions().load_all(&rows);
  if (!s.ok()) return s;
  for (const meta::TransactionRow& row : rows) {
    TransactionMetadata m;
    if (s = from_row_checked(*meta_, row, &m); !s.ok()) return s;
    out->push_back(std::move(m));
  }
  return Status();
}

Status MetaStateStore::load(const std::string& transactional_id, std::optional<TransactionMetadata>* out) {
  out->reset();
  meta::TransactionRow row;
  bool found = false;
  Status s = meta_->transactions().load(transactional_id, &row, &found);
  if (!s.ok() || !found) return s;
  TransactionMetadata m;
  if (s = from_row_checked(*meta_, row, &m); !s.ok()) return s;
  *out = std::move(m);
  return Status();
}

Status MetaStateStore::store(meta::MetaStore* meta, const meta::TransactionRow& row,
                             const std::set<std::string>& completed_groups) {
  const auto state = state_from_id(row.state);
  const bool completes = state == TransactionState::kCompleteCommit || state == TransactionState::kCompleteAbort;
  if (completes) {
    for (const std::string& group : completed_groups) {
      int64_t rows = 0;
      const bool commit = state == TransactionState::kCompleteCommit;
      Status s = meta->pending_offsets().complete(group, row.producer_id, commit, &rows);
      if (!s.ok()) return s.with_context("completing the offsets of group '" + group + "'");
      if (rows > 0) {
        EDDY_LOG_DEBUG("group {}: {} transactional offsets of producer {} {}", group, rows, row.producer_id,
                       commit ? "committed" : "dropped");
      }
    }
  }
  return meta->transactions().save(row);
}

void MetaStateStore::save(const TransactionMetadata& metadata, const std::set<std::string>& completed_groups,
                          Done done) {
  done(store(meta_, metadata.to_row(), completed_groups));
}

}  // namespace eddy::txn
