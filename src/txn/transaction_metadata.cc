#include "txn/transaction_metadata.h"

namespace eddy::txn {

bool TransactionMetadata::set_state(TransactionState next) {
  if (!is_valid_transition(state, next)) return false;
  state = next;
  return true;
}

meta::TransactionRow TransactionMetadata::to_row() const {
  meta::TransactionRow row;
  row.transactional_id = transactional_id;
  row.producer_id = producer_id;
  row.last_producer_id = last_producer_id;
  row.producer_epoch = producer_epoch;
  row.last_producer_epoch = last_producer_epoch;
  row.timeout_ms = timeout_ms;
  row.state = static_cast<int8_t>(state);
  row.start_ms = start_ms;
  row.last_update_ms = last_update_ms;
  row.partitions.assign(partitions.begin(), partitions.end());
  row.groups.assign(groups.begin(), groups.end());
  return row;
}

bool TransactionMetadata::from_row(const meta::TransactionRow& row, TransactionMetadata* out) {
  std::optional<TransactionState> state = state_from_id(row.state);
  if (!state) return false;
  TransactionMetadata m;
  m.transactional_id = row.transactional_id;
  m.producer_id = row.producer_id;
  m.last_producer_id = row.last_producer_id;
  m.producer_epoch = row.producer_epoch;
  m.last_producer_epoch = row.last_producer_epoch;
  m.timeout_ms = row.timeout_ms;
  m.state = *state;
  m.start_ms = row.start_ms;
  m.last_update_ms = row.last_update_ms;
  m.partitions.insert(row.partitions.begin(), row.partitions.end());
  m.groups.insert(row.groups.begin(), row.groups.end());
  *out = std::move(m);
  return true;
}

}  // namespace eddy::txn
