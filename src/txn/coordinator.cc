// The coordinator's request side: InitProducerId, AddPartitionsToTxn,
// AddOffsetsToTxn, EndTxn and the checks TxnOffsetCommit and Produce ask
// for (Kafka's TransactionCoordinator, in its order of checks).
#include "txn/coordinator.h"

#include "port/log.h"

namespace eddy::txn {

using protocol::ErrorCode;
using S = TransactionState;

Coordinator::Coordinator(port::Executor& executor, StateStore* store, AllocateProducerId allocate, MarkerSink sink,
                         CoordinatorOptions options)
    : executor_(executor),
      store_(store),
      allocate_(std::move(allocate)),
      sink_(std::move(sink)),
      options_(options) {}

Coordinator::~Coordinator() { stop(); }

Status Coordinator::start() {
  EDDY_DCHECK_ON_LOOP(executor_);
  std::vector<TransactionMetadata> loaded;
  Status s = store_->load_all(&loaded);
  if (!s.ok()) return s.with_context("loading the transaction coordinator's state");
  size_t resumed = 0;
  for (TransactionMetadata& m : loaded) {
    by_producer_id_[m.producer_id] = m.transactional_id;
    const std::string id = m.transactional_id;
    transactions_[id] = std::move(m);
  }
  for (const auto& [id, m] : transactions_) {
    if (m.state == S::kPrepareCommit || m.state == S::kPrepareAbort) {
      EDDY_LOG_INFO("transactions: '{}' (producer {} epoch {}) was in {} at shutdown: writing its markers again",
                    id, m.producer_id, m.producer_epoch, state_name(m.state));
      begin_completion(m);
      ++resumed;
    }
  }
  if (!transactions_.empty()) {
    EDDY_LOG_INFO("transactions: {} transactional ids loaded, {} being completed", transactions_.size(), resumed);
  }
  stopped_ = false;
  schedule_sweeps();
  return Status();
}

void Coordinator::stop() {
  stopped_ = true;
  executor_.cancel(abort_timer_);
  executor_.cancel(expiry_timer_);
  abort_timer_ = expiry_timer_ = 0;
  for (auto& [id, c] : completing_) {
    executor_.cancel(c.retry_timer);
    c.retry_timer = 0;
  }
}

const TransactionMetadata* Coordinator::find(const std::string& transactional_id) const {
  auto it = transactions_.find(transactional_id);
  return it == transactions_.end() ? nullptr : &it->second;
}

ErrorCode Coordinator::apply(const TransactionMetadata& next) {
  Status s = store_->save(next);
  if (!s.ok()) {
    EDDY_LOG_ERROR("transactions: storing '{}' in {}: {}", next.transactional_id, state_name(next.state),
                   s.message());
    return ErrorCode::kCoordinatorNotAvailable;
  }
  auto it = transactions_.find(next.transactional_id);
  if (it != transactions_.end() && it->second.state != next.state) {
    EDDY_LOG_DEBUG("transactions: '{}' {} -> {} (producer {} epoch {})", next.transactional_id,
                   state_name(it->second.state), state_name(next.state), next.producer_id, next.producer_epoch);
  }
  if (it != transactions_.end() && it->second.producer_id != next.producer_id) {
    by_producer_id_.erase(it->second.producer_id);
  }
  by_producer_id_[next.producer_id] = next.transactional_id;
  transactions_[next.transactional_id] = next;
  return ErrorCode::kNone;
}

InitResult Coordinator::init_producer_id(const std::string& transactional_id, int32_t timeout_ms,
                                         int64_t expected_producer_id, int16_t expected_epoch) {
  EDDY_DCHECK_ON_LOOP(executor_);
  InitResult result;
  auto fail = [&](ErrorCode code) {
    result.error = code;
    return result;
  };
  if (transactional_id.empty()) return fail(ErrorCode::kInvalidRequest);
  // Kafka takes any non-empty string; eddy.db cannot keep one with a NUL
  // (SQLite's length() of a TEXT stops there, and its CHECK refuses an id
  // that starts with one), so it is refused here, before anything is
  // stored, rather than failing in the store on every attempt.
  if (transactional_id.find('\0') != std::string::npos) return fail(ErrorCode::kInvalidRequest);
  if (timeout_ms <= 0 || timeout_ms > options_.max_timeout_ms) return fail(ErrorCode::kInvalidTransactionTimeout);
  TransactionMetadata current;
  if (const TransactionMetadata* found = find(transactional_id)) {
    current = *found;
  } else {
    current.transactional_id = transactional_id;
    current.timeout_ms = timeout_ms;
    current.last_update_ms = executor_.now_ms();
    if (!allocate_(&current.producer_id).ok()) return fail(ErrorCode::kCoordinatorNotAvailable);
  }
  TransactionMetadata next;
  ErrorCode code = init_transition(current, timeout_ms, expected_producer_id, expected_epoch, &next);
  if (code != ErrorCode::kNone) return fail(code);
  if (next.state == S::kPrepareEpochFence) {
    // Abort the open transaction with the bumped epoch first; the client
    // retries and gets the epoch bumped once more.
    EDDY_LOG_INFO("transactions: InitProducerId for '{}' while a transaction is open: aborting it (producer {} "
                  "fenced at epoch {})",
                  transactional_id, current.producer_id, next.producer_epoch);
    code = prepare_end(current, false, next.producer_epoch);
    return fail(code == ErrorCode::kNone ? ErrorCode::kConcurrentTransactions : code);
  }
  if (code = apply(next); code != ErrorCode::kNone) return fail(code);
  EDDY_LOG_INFO("transactions: initialized '{}' with producer id {} epoch {}", transactional_id, next.producer_id,
                next.producer_epoch);
  result.producer_id = next.producer_id;
  result.producer_epoch = next.producer_epoch;
  return result;
}

ErrorCode Coordinator::init_transition(const TransactionMetadata& current, int32_t timeout_ms,
                                       int64_t expected_producer_id, int16_t expected_epoch,
                                       TransactionMetadata* next) {
  const bool expected = expected_producer_id >= 0;
  if (expected && !(current.producer_epoch < 0 || expected_producer_id == current.producer_id ||
                    (expected_producer_id == current.last_producer_id && is_epoch_exhausted(expected_epoch)))) {
    return ErrorCode::kProducerFenced;
  }
  *next = current;
  next->last_update_ms = executor_.now_ms();
  switch (current.state) {
    case S::kPrepareCommit:
    case S::kPrepareAbort: return ErrorCode::kConcurrentTransactions;
    case S::kOngoing:
      next->producer_epoch = static_cast<int16_t>(current.producer_epoch + 1);
      next->state = S::kPrepareEpochFence;
      return ErrorCode::kNone;
    case S::kDead:
    case S::kPrepareEpochFence: return ErrorCode::kInvalidTxnState;  // never stored
    case S::kEmpty:
    case S::kCompleteCommit:
    case S::kCompleteAbort: break;
  }
  next->timeout_ms = timeout_ms;
  next->partitions.clear();
  next->groups.clear();
  next->start_ms = -1;
  next->set_state(S::kEmpty);
  if (is_epoch_exhausted(current.producer_epoch) && (!expected || expected_epoch == current.producer_epoch)) {
    int64_t id = -1;
    if (!allocate_(&id).ok()) return ErrorCode::kCoordinatorNotAvailable;
    next->last_producer_id = current.producer_id;
    next->last_producer_epoch = expected ? current.producer_epoch : int16_t{-1};
    next->producer_id = id;
    next->producer_epoch = 0;
    return ErrorCode::kNone;
  }
  if (!expected || current.producer_epoch < 0 || expected_epoch == current.producer_epoch) {
    next->last_producer_epoch = expected ? current.producer_epoch : int16_t{-1};
    next->producer_epoch = static_cast<int16_t>(current.producer_epoch + 1);
    return ErrorCode::kNone;
  }
  if (expected_epoch == current.last_producer_epoch) return ErrorCode::kNone;  // a retry of the bump made
  return ErrorCode::kProducerFenced;
}

ErrorCode Coordinator::check_ongoing_request(const std::string& transactional_id, int64_t producer_id,
                                             int16_t epoch, const TransactionMetadata** m) const {
  if (transactional_id.empty()) return ErrorCode::kInvalidRequest;
  const TransactionMetadata* found = find(transactional_id);
  if (found == nullptr || found->producer_id != producer_id) return ErrorCode::kInvalidProducerIdMapping;
  if (found->producer_epoch != epoch) return ErrorCode::kProducerFenced;
  if (found->state == S::kPrepareCommit || found->state == S::kPrepareAbort) {
    return ErrorCode::kConcurrentTransactions;
  }
  *m = found;
  return ErrorCode::kNone;
}

ErrorCode Coordinator::add_partitions(const std::string& transactional_id, int64_t producer_id, int16_t epoch,
                                      const std::vector<meta::TopicPartition>& partitions) {
  EDDY_DCHECK_ON_LOOP(executor_);
  const TransactionMetadata* m = nullptr;
  ErrorCode code = check_ongoing_request(transactional_id, producer_id, epoch, &m);
  if (code != ErrorCode::kNone) return code;
  return add_to_transaction(*m, partitions, nullptr);
}

ErrorCode Coordinator::add_offsets(const std::string& transactional_id, int64_t producer_id, int16_t epoch,
                                   const std::string& group_id) {
  EDDY_DCHECK_ON_LOOP(executor_);
  const TransactionMetadata* m = nullptr;
  ErrorCode code = check_ongoing_request(transactional_id, producer_id, epoch, &m);
  if (code != ErrorCode::kNone) return code;
  return add_to_transaction(*m, {}, &group_id);
}

ErrorCode Coordinator::add_to_transaction(const TransactionMetadata& current,
                                          const std::vector<meta::TopicPartition>& partitions,
                                          const std::string* group) {
  bool known = current.state == S::kOngoing && (group == nullptr || current.groups.count(*group) > 0);
  for (const auto& tp : partitions) known = known && current.partitions.count(tp) > 0;
  if (known) return ErrorCode::kNone;  // nothing new: no write
  TransactionMetadata next = current;
  const int64_t now = executor_.now_ms();
  if (current.state != S::kOngoing) next.start_ms = now;
  next.last_update_ms = now;
  next.partitions.insert(partitions.begin(), partitions.end());
  if (group != nullptr) next.groups.insert(*group);
  if (!next.set_state(S::kOngoing)) return ErrorCode::kInvalidTxnState;
  return apply(next);
}

ErrorCode Coordinator::end_transaction(const std::string& transactional_id, int64_t producer_id, int16_t epoch,
                                       bool commit) {
  EDDY_DCHECK_ON_LOOP(executor_);
  if (transactional_id.empty()) return ErrorCode::kInvalidRequest;
  const TransactionMetadata* m = find(transactional_id);
  if (m == nullptr || m->producer_id != producer_id) return ErrorCode::kInvalidProducerIdMapping;
  if (m->producer_epoch != epoch) return ErrorCode::kProducerFenced;
  switch (m->state) {
    case S::kOngoing: return prepare_end(*m, commit, -1);
    case S::kCompleteCommit: return commit ? ErrorCode::kNone : ErrorCode::kInvalidTxnState;  // a retry
    case S::kCompleteAbort: return commit ? ErrorCode::kInvalidTxnState : ErrorCode::kNone;
    case S::kPrepareCommit: return commit ? ErrorCode::kConcurrentTransactions : ErrorCode::kInvalidTxnState;
    case S::kPrepareAbort: return commit ? ErrorCode::kInvalidTxnState : ErrorCode::kConcurrentTransactions;
    case S::kEmpty:
    case S::kDead:
    case S::kPrepareEpochFence: break;
  }
  return ErrorCode::kInvalidTxnState;
}

ErrorCode Coordinator::prepare_end(const TransactionMetadata& current, bool commit, int16_t fence_epoch) {
  TransactionMetadata next = current;
  if (fence_epoch >= 0) {
    next.producer_epoch = fence_epoch;
    next.last_producer_epoch = -1;
  }
  next.last_update_ms = executor_.now_ms();
  if (!next.set_state(commit ? S::kPrepareCommit : S::kPrepareAbort)) return ErrorCode::kInvalidTxnState;
  ErrorCode code = apply(next);
  if (code != ErrorCode::kNone) return code;
  EDDY_LOG_DEBUG("transactions: '{}' {} with {} partitions and {} groups", next.transactional_id,
                 state_name(next.state), next.partitions.size(), next.groups.size());
  begin_completion(next);
  return ErrorCode::kNone;
}

ErrorCode Coordinator::verify_offset_commit(const std::string& transactional_id, int64_t producer_id, int16_t epoch,
                                            const std::string& group_id) const {
  const TransactionMetadata* m = find(transactional_id);
  if (m == nullptr || m->producer_id != producer_id) return ErrorCode::kInvalidProducerIdMapping;
  if (m->producer_epoch != epoch) return ErrorCode::kInvalidProducerEpoch;
  if (m->state == S::kPrepareCommit || m->state == S::kPrepareAbort) return ErrorCode::kConcurrentTransactions;
  if (m->state != S::kOngoing || m->groups.count(group_id) == 0) return ErrorCode::kInvalidTxnState;
  return ErrorCode::kNone;
}

ErrorCode Coordinator::verify_produce(int64_t producer_id, int16_t epoch, PartitionRef tp) const {
  auto id = by_producer_id_.find(producer_id);
  if (id == by_producer_id_.end()) return ErrorCode::kInvalidProducerIdMapping;
  const TransactionMetadata* m = find(id->second);
  if (m == nullptr || m->producer_id != producer_id) return ErrorCode::kInvalidProducerIdMapping;
  if (m->producer_epoch != epoch) return ErrorCode::kInvalidProducerEpoch;
  if (m->state == S::kPrepareCommit || m->state == S::kPrepareAbort) return ErrorCode::kNotEnoughReplicas;
  if (m->state != S::kOngoing || m->partitions.find(tp) == m->partitions.end()) return ErrorCode::kInvalidTxnState;
  return ErrorCode::kNone;
}

}  // namespace eddy::txn
