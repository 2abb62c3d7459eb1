#include "broker/controller_txn_state_store.h"

namespace eddy::broker {

protocol::TransactionStateRecord to_transaction_state_record(const txn::TransactionMetadata& m,
                                                            const std::set<std::string>& completed_groups) {
  protocol::TransactionStateRecord r;
  r.transactional_id = m.transactional_id;
  r.removed = false;
  r.producer_id = m.producer_id;
  r.last_producer_id = m.last_producer_id;
  r.producer_epoch = m.producer_epoch;
  r.last_producer_epoch = m.last_producer_epoch;
  r.timeout_ms = m.timeout_ms;
  r.state = static_cast<int8_t>(m.state);
  r.start_ms = m.start_ms;
  r.last_update_ms = m.last_update_ms;
  for (const meta::TopicPartition& tp : m.partitions) r.partitions.push_back({tp.topic, tp.partition, {}});
  r.groups.assign(m.groups.begin(), m.groups.end());
  r.completed_groups.assign(completed_groups.begin(), completed_groups.end());
  return r;
}

meta::TransactionRow to_transaction_row(const protocol::TransactionStateRecord& r) {
  meta::TransactionRow row;
  row.transactional_id = r.transactional_id;
  row.producer_id = r.producer_id;
  row.last_producer_id = r.last_producer_id;
  row.producer_epoch = r.producer_epoch;
  row.last_producer_epoch = r.last_producer_epoch;
  row.timeout_ms = r.timeout_ms;
  row.state = r.state;
  row.start_ms = r.start_ms;
  row.last_update_ms = r.last_update_ms;
  // The store keeps them sorted and distinct (meta/transaction_store.h).
  std::set<meta::TopicPartition> partitions;
  for (const auto& p : r.partitions) partitions.insert({p.topic, p.partition});
  row.partitions.assign(partitions.begin(), partitions.end());
  const std::set<std::string> groups(r.groups.begin(), r.groups.end());
  row.groups.assign(groups.begin(), groups.end());
  return row;
}

void ControllerTxnStateStore::save(const txn::TransactionMetadata& metadata,
                                   const std::set<std::string>& completed_groups, Done done) {
  controller_->propose(to_transaction_state_record(metadata, completed_groups), std::move(done));
}

void ControllerTxnStateStore::remove(const std::string& transactional_id, Done done) {
  protocol::TransactionStateRecord r;
  r.transactional_id = transactional_id;
  r.removed = true;
  controller_->propose(r, std::move(done));
}

}  // namespace eddy::broker
