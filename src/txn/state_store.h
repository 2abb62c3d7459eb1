// Where the coordinator keeps its state: the one seam between the
// transaction coordinator and durability. On a single node it is eddy.db
// (MetaStateStore, answering at once); in a cluster it is the controller
// log (broker/controller_txn_state_store.h: each save is a
// TransactionStateRecord every node applies to its eddy.db, answered once
// committed and applied on the coordinator's node).
//
// Contract: save() and remove() call done exactly once, on the
// coordinator's loop thread, possibly before they return: ok once the
// change is durable (and, in a cluster, committed); otherwise the change
// may or may not have been made (a cluster's proposal whose outcome is
// unknown), and load() tells what stands. After a crash, load_all()
// returns every row saved and not removed since.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "meta/meta_store.h"
#include "port/status.h"
#include "txn/transaction_metadata.h"

namespace eddy::txn {

class StateStore {
 public:
  using Done = std::function<void(const Status&)>;
  virtual ~StateStore() = default;
  virtual Status load_all(std::vector<TransactionMetadata>* out) = 0;
  // The stored row of transactional_id (nullopt when there is none).
  virtual Status load(const std::string& transactional_id, std::optional<TransactionMetadata>* out) = 0;
  // Stores metadata. When it completes a transaction (CompleteCommit,
  // CompleteAbort), the offsets its producer staged in completed_groups are
  // applied to those groups' committed offsets (commit) or dropped (abort)
  // first, in the same step as far as a crash can tell: doing it again
  // changes nothing.
  virtual void save(const TransactionMetadata& metadata, const std::set<std::string>& completed_groups,
                    Done done) = 0;
  virtual void remove(const std::string& transactional_id, Done done) = 0;
};

// The state in eddy.db (meta/transaction_store.h, the staged offsets in
// meta/pending_offset_store.h). REQUIRES meta outlives it.
class MetaStateStore : public StateStore {
 public:
  explicit MetaStateStore(meta::MetaStore* meta) : meta_(meta) {}
  Status load_all(std::vector<TransactionMetadata>* out) override;
  Status load(const std::string& transactional_id, std::optional<TransactionMetadata>* out) override;
  void save(const TransactionMetadata& metadata, const std::set<std::string>& completed_groups, Done done) override;
  void remove(const std::string& transactional_id, Done done) override { done(store_removal(transactional_id)); }

  // The synchronous steps, shared with the cluster's applying of
  // TransactionStateRecords (broker/controller_apply.cc).
  static Status store(meta::MetaStore* meta, const meta::TransactionRow& row, const std::set<std::string>& completed_groups);
  Status store_removal(const std::string& transactional_id) { return meta_->transactions().remove(transactional_id); }

 private:
  meta::MetaStore* meta_;
};

}  // namespace eddy::txn
