// Where the coordinator keeps its state: the one seam between the
// transaction coordinator and durability. On a single node it is eddy.db
// (MetaStateStore); in a cluster it becomes the replicated controller
// state, and the coordinator does not change.
//
// Contract: save() returns ok only once the row is durable; after a crash,
// load_all() returns every row saved and not removed since.
#pragma once

#include <string>
#include <vector>

#include "meta/meta_store.h"
#include "port/status.h"
#include "txn/transaction_metadata.h"

namespace eddy::txn {

class StateStore {
 public:
  virtual ~StateStore() = default;
  virtual Status load_all(std::vector<TransactionMetadata>* out) = 0;
  virtual Status save(const TransactionMetadata& metadata) = 0;
  virtual Status remove(const std::string& transactional_id) = 0;
};

// The state in eddy.db (meta/transaction_store.h). REQUIRES meta outlives it.
class MetaStateStore : public StateStore {
 public:
  explicit MetaStateStore(meta::MetaStore* meta) : meta_(meta) {}
  Status load_all(std::vector<TransactionMetadata>* out) override;
  Status save(const TransactionMetadata& metadata) override;
  Status remove(const std::string& transactional_id) override;

 private:
  meta::MetaStore* meta_;
};

}  // namespace eddy::txn
