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

Coordinator::~Coordinator() {
  *alive_ = false;
  stop();
}

Status Coordinator::start() {
  EDDY_DCHECK_ON_LOOP(executor_);
  stop();
  std::vector<TransactionMetadata> loaded;
  Status s = store_->load_all(&loaded);
  if (!s.ok()) return s.with_context("loading the transaction coordinator's state");
  ++generation_;
  active_ = true;
  size_t resumed = 0;
  for (TransactionMetadata& m : loaded) {
    by_producer_id_[m.producer_id] = m.transactional_id;
    const std::string id = m.transactional_id;
    transactions_[id] = std::move(m);
  }
  for (const auto& [id, m] : transactions_) {
    if (m.state == S::kPrepareCommit || m.state == S::kPrepareAbort) {
      EDDY_LOG_INFO("transactions: '{}' (producer {} epoch {}) was in {}: writing its markers again", id,
                    m.producer_id, m.producer_epoch, state_name(m.state));
      ++resumed;
    }
  }
  // Completions start after the loop: a marker answered at once may finish
  // one (and change transactions_) while they are being started.
  std::vector<TransactionMetadata> to_complete;
  for (const auto& [id, m] : transactions_) {
    if (m.state == S::kPrepareCommit || m.state == S::kPrepareAbort) to_complete.push_back(m);
  }
  for (const TransactionMetadata& m : to_complete) begin_completion(m);
  if (!transactions_.empty()) {
    EDDY_LOG_INFO("transactions: {} transactional ids loaded, {} being completed", transactions_.size(), resumed);
  }
  schedule_sweeps();
  return Status();
}

void Coordinator::stop() {
  ++generation_;
  active_ = false;
  executor_.cancel(abort_timer_);
  executor_.cancel(expiry_timer_);
  abort_timer_ = expiry_timer_ = 0;
  std::vector<Parked> parked;
  for (auto& [id, c] : completing_) {
    executor_.cancel(c.retry_timer);
    for (Parked& p : c.parked) parked.push_back(std::move(p));
  }
  completing_.clear();
  transactions_.clear();
  by_producer_id_.clear();
  saving_.clear();
  doubtful_.clear();
  for (Parked& p : parked) {
    executor_.cancel(p.timer);
    p.refuse(ErrorCode::kNotCoordinator);
  }
}

const TransactionMetadata* Coordinator::find(const std::string& transactional_id) const {
  auto it = transactions_.find(transactional_id);
  return it == transactions_.end() ? nullptr : &it->second;
}

const TransactionMetadata* Coordinator::current(const std::string& transactional_id, bool* failed) {
  *failed = false;
  if (doubtful_.count(transactional_id) == 0) return find(transactional_id);
  std::optional<TransactionMetadata> stored;
  if (Status s = store_->load(transactional_id, &stored); !s.ok()) {
    EDDY_LOG_WARN("transactions: reading '{}' again from the store: {}", transactional_id, s.message());
    *failed = true;
    return nullptr;
  }
  doubtful_.erase(transactional_id);
  auto it = transactions_.find(transactional_id);
  if (it != transactions_.end()) {
    by_producer_id_.erase(it->second.producer_id);
    transactions_.erase(it);
  }
  if (!stored) return nullptr;
  by_producer_id_[stored->producer_id] = transactional_id;
  return &(transactions_[transactional_id] = std::move(*stored));
}

void Coordinator::apply(const TransactionMetadata& next, std::set<std::string> completed_groups, Answer then) {
  const std::string id = next.transactional_id;
  saving_.insert(id);
  const uint64_t generation = generation_;
  store_->save(next, completed_groups, [this, alive = alive_, generation, next, then](const Status& s) {
    if (!*alive || generation != generation_) {
      then(ErrorCode::kNotCoordinator);  // stopped meanwhile: the next coordinator reads the store
      return;
    }
    saving_.erase(next.transactional_id);
    if (!s.ok()) {
      EDDY_LOG_ERROR("transactions: storing '{}' in {}: {}", next.transactional_id, state_name(next.state),
                     s.message());
      doubtful_.insert(next.transactional_id);
      then(ErrorCode::kCoordinatorNotAvailable);
      return;
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
    then(ErrorCode::kNone);
  });
}

void Coordinator::init_producer_id(const std::string& transactional_id, int32_t timeout_ms,
                                   int64_t expected_producer_id, int16_t expected_epoch, InitAnswer done) {
  EDDY_DCHECK_ON_LOOP(executor_);
  auto fail = [&](ErrorCode code) {
    InitResult result;
    result.error = code;
    done(result);
  };
  if (!active_) return fail(ErrorCode::kNotCoordinator);
  if (transactional_id.empty()) return fail(ErrorCode::kInvalidRequest);
  // Kafka takes any non-empty string; eddy.db cannot keep one with a NUL
  // (SQLite's length() of a TEXT stops there, and its CHECK refuses an id
  // that starts with one), so it is refused here, before anything is
  // stored, rather than failing in the store on every attempt.
  if (transactional_id.find('\0') != std::string::npos) return fail(ErrorCode::kInvalidRequest);
  if (timeout_ms <= 0 || timeout_ms > options_.max_timeout_ms) return fail(ErrorCode::kInvalidTransactionTimeout);
  if (saving_.count(transactional_id) > 0) return fail(ErrorCode::kConcurrentTransactions);
  bool failed = false;
  const TransactionMetadata* found = current(transactional_id, &failed);
  if (failed) return fail(ErrorCode::kCoordinatorNotAvailable);
  TransactionMetadata now;
  if (found != nullptr) {
    now = *found;
  } else {
    now.transactional_id = transactional_id;
    now.timeout_ms = timeout_ms;
    now.last_update_ms = executor_.now_ms();
    if (!allocate_(&now.producer_id).ok()) return fail(ErrorCode::kCoordinatorNotAvailable);
  }
  TransactionMetadata next;
  ErrorCode code = init_transition(now, timeout_ms, expected_producer_id, expected_epoch, &next);
  if (code != ErrorCode::kNone) return fail(code);
  if (next.state == S::kPrepareEpochFence) {
    // Abort the open transaction with the bumped epoch first; the client
    // retries and gets the epoch bumped once more.
    EDDY_LOG_INFO("transactions: InitProducerId for '{}' while a transaction is open: aborting it (producer {} "
                  "fenced at epoch {})",
                  transactional_id, now.producer_id, next.producer_epoch);
    prepare_end(now, false, next.producer_epoch, [done](ErrorCode c) {
      InitResult result;
      result.error = c == ErrorCode::kNone ? ErrorCode::kConcurrentTransactions : c;
      done(result);
    });
    return;
  }
  apply(next, {}, [next, done](ErrorCode c) {
    InitResult result;
    result.error = c;
    if (c == ErrorCode::kNone) {
      EDDY_LOG_INFO("transactions: initialized '{}' with producer id {} epoch {}", next.transactional_id,
                    next.producer_id, next.producer_epoch);
      result.producer_id = next.producer_id;
      result.producer_epoch = next.producer_epoch;
    }
    done(result);
  });
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
                                             int16_t epoch, const TransactionMetadata** m) {
  if (!active_) return ErrorCode::kNotCoordinator;
  if (transactional_id.empty()) return ErrorCode::kInvalidRequest;
  if (saving_.count(transactional_id) > 0) return ErrorCode::kConcurrentTransactions;
  bool failed = false;
  const TransactionMetadata* found = current(transactional_id, &failed);
  if (failed) return ErrorCode::kCoordinatorNotAvailable;
  if (found == nullptr || found->producer_id != producer_id) return ErrorCode::kInvalidProducerIdMapping;
  if (found->producer_epoch != epoch) return ErrorCode::kProducerFenced;
  if (found->state == S::kPrepareCommit || found->state == S::kPrepareAbort) {
    return ErrorCode::kConcurrentTransactions;
  }
  *m = found;
  return ErrorCode::kNone;
}

void Coordinator::add_partitions(const std::string& transactional_id, int64_t producer_id, int16_t epoch,
                                 const std::vector<meta::TopicPartition>& partitions, Answer done) {
  EDDY_DCHECK_ON_LOOP(executor_);
  const TransactionMetadata* m = nullptr;
  ErrorCode code = check_ongoing_request(transactional_id, producer_id, epoch, &m);
  if (code == ErrorCode::kConcurrentTransactions &&
      park(
          transactional_id,
          [this, transactional_id, producer_id, epoch, partitions, done] {
            add_partitions(transactional_id, producer_id, epoch, partitions, done);
          },
          done)) {
    return;
  }
  if (code != ErrorCode::kNone) return done(code);
  add_to_transaction(*m, partitions, nullptr, std::move(done));
}

void Coordinator::add_offsets(const std::string& transactional_id, int64_t producer_id, int16_t epoch,
                              const std::string& group_id, Answer done) {
  EDDY_DCHECK_ON_LOOP(executor_);
  const TransactionMetadata* m = nullptr;
  ErrorCode code = check_ongoing_request(transactional_id, producer_id, epoch, &m);
  if (code == ErrorCode::kConcurrentTransactions &&
      park(
          transactional_id,
          [this, transactional_id, producer_id, epoch, group_id, done] {
            add_offsets(transactional_id, producer_id, epoch, group_id, done);
          },
          done)) {
    return;
  }
  if (code != ErrorCode::kNone) return done(code);
  add_to_transaction(*m, {}, &group_id, std::move(done));
}

void Coordinator::add_to_transaction(const TransactionMetadata& now,
                                     const std::vector<meta::TopicPartition>& partitions, const std::string* group,
                                     Answer done) {
  bool known = now.state == S::kOngoing && (group == nullptr || now.groups.count(*group) > 0);
  for (const auto& tp : partitions) known = known && now.partitions.count(tp) > 0;
  if (known) return done(ErrorCode::kNone);  // nothing new: no write
  TransactionMetadata next = now;
  const int64_t at = executor_.now_ms();
  if (now.state != S::kOngoing) next.start_ms = at;
  next.last_update_ms = at;
  next.partitions.insert(partitions.begin(), partitions.end());
  if (group != nullptr) next.groups.insert(*group);
  if (!next.set_state(S::kOngoing)) return done(ErrorCode::kInvalidTxnState);
  apply(next, {}, std::move(done));
}

void Coordinator::end_transaction(const std::string& transactional_id, int64_t producer_id, int16_t epoch,
                                  bool commit, Answer done) {
  EDDY_DCHECK_ON_LOOP(executor_);
  if (!active_) return done(ErrorCode::kNotCoordinator);
  if (transactional_id.empty()) return done(ErrorCode::kInvalidRequest);
  if (saving_.count(transactional_id) > 0) return done(ErrorCode::kConcurrentTransactions);
  bool failed = false;
  const TransactionMetadata* m = current(transactional_id, &failed);
  if (failed) return done(ErrorCode::kCoordinatorNotAvailable);
  if (m == nullptr || m->producer_id != producer_id) return done(ErrorCode::kInvalidProducerIdMapping);
  if (m->producer_epoch != epoch) return done(ErrorCode::kProducerFenced);
  switch (m->state) {
    case S::kOngoing: return prepare_end(*m, commit, -1, std::move(done));
    case S::kCompleteCommit: return done(commit ? ErrorCode::kNone : ErrorCode::kInvalidTxnState);  // a retry
    case S::kCompleteAbort: return done(commit ? ErrorCode::kInvalidTxnState : ErrorCode::kNone);
    case S::kPrepareCommit: return done(commit ? ErrorCode::kConcurrentTransactions : ErrorCode::kInvalidTxnState);
    case S::kPrepareAbort: return done(commit ? ErrorCode::kInvalidTxnState : ErrorCode::kConcurrentTransactions);
    case S::kEmpty:
    case S::kDead:
    case S::kPrepareEpochFence: break;
  }
  done(ErrorCode::kInvalidTxnState);
}

void Coordinator::prepare_end(const TransactionMetadata& now, bool commit, int16_t fence_epoch, Answer done) {
  TransactionMetadata next = now;
  if (fence_epoch >= 0) {
    next.producer_epoch = fence_epoch;
    next.last_producer_epoch = -1;
  }
  next.last_update_ms = executor_.now_ms();
  if (!next.set_state(commit ? S::kPrepareCommit : S::kPrepareAbort)) return done(ErrorCode::kInvalidTxnState);
  apply(next, {}, [this, next, done](ErrorCode code) {
    if (code == ErrorCode::kNone) {
      EDDY_LOG_DEBUG("transactions: '{}' {} with {} partitions and {} groups", next.transactional_id,
                     state_name(next.state), next.partitions.size(), next.groups.size());
      // Answered before the markers: EndTxn's answer says the outcome is
      // decided, as Kafka answers once PrepareCommit is in its log.
      done(code);
      begin_completion(next);
      return;
    }
    done(code);
  });
}

ErrorCode Coordinator::verify_offset_commit(const std::string& transactional_id, int64_t producer_id, int16_t epoch,
                                            const std::string& group_id) const {
  if (!active_) return ErrorCode::kNotCoordinator;
  const TransactionMetadata* m = find(transactional_id);
  if (m == nullptr || m->producer_id != producer_id) return ErrorCode::kInvalidProducerIdMapping;
  if (m->producer_epoch != epoch) return ErrorCode::kInvalidProducerEpoch;
  if (m->state == S::kPrepareCommit || m->state == S::kPrepareAbort) return ErrorCode::kConcurrentTransactions;
  if (m->state != S::kOngoing || m->groups.count(group_id) == 0) return ErrorCode::kInvalidTxnState;
  return ErrorCode::kNone;
}

ErrorCode Coordinator::verify_produce(int64_t producer_id, int16_t epoch, PartitionRef tp) const {
  if (!active_) return ErrorCode::kNone;
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
