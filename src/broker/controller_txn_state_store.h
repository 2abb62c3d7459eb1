// The transaction coordinator's state in a cluster (txn/state_store.h):
// each save or removal is a TransactionStateRecord proposed to the
// controller log, answered once it is committed and applied on this node
// (the coordinator runs on the controller leader). Every node applies the
// record to its own eddy.db (Broker::apply_controller_record), so reads
// (load_all at a takeover, load after an unknown outcome) come from eddy.db
// as on a single node.
//
// Threading: reactor thread (ControllerClient's).
#pragma once

#include <set>
#include <string>

#include "broker/controller_client.h"
#include "txn/state_store.h"

namespace eddy::broker {

// The record that stores metadata (completing completed_groups' staged
// offsets), or forgets transactional_id; and a record back into a row.
protocol::TransactionStateRecord to_transaction_state_record(const txn::TransactionMetadata& metadata,
                                                            const std::set<std::string>& completed_groups);
meta::TransactionRow to_transaction_row(const protocol::TransactionStateRecord& record);

class ControllerTxnStateStore final : public txn::StateStore {
 public:
  // REQUIRES: controller and meta outlive it.
  ControllerTxnStateStore(ControllerClient* controller, meta::MetaStore* meta) : controller_(controller), local_(meta) {}
  Status load_all(std::vector<txn::TransactionMetadata>* out) override { return local_.load_all(out); }
  Status load(const std::string& transactional_id, std::optional<txn::TransactionMetadata>* out) override {
    return local_.load(transactional_id, out);
  }
  void save(const txn::TransactionMetadata& metadata, const std::set<std::string>& completed_groups,
            Done done) override;
  void remove(const std::string& transactional_id, Done done) override;

 private:
  ControllerClient* controller_;
  txn::MetaStateStore local_;  // eddy.db, which the applied records keep
};

}  // namespace eddy::broker
