// Ending a transaction: the markers, their durability, then the Complete
// state with the groups' offsets (steps 2-3 of coordinator.h).
#include "port/log.h"
#include "txn/coordinator.h"

namespace eddy::txn {

using S = TransactionState;

namespace {

const char* marker_name(protocol::ControlType type) {
  return type == protocol::ControlType::kCommit ? "COMMIT" : "ABORT";
}

}  // namespace

void Coordinator::begin_completion(const TransactionMetadata& m) {
  Completion& c = completing_[m.transactional_id];
  executor_.cancel(c.retry_timer);
  std::vector<Parked> parked = std::move(c.parked);
  c = Completion{};
  c.parked = std::move(parked);
  c.round = ++rounds_;
  c.type = m.state == S::kPrepareCommit ? protocol::ControlType::kCommit : protocol::ControlType::kAbort;
  c.producer_id = m.producer_id;
  c.epoch = m.producer_epoch;
  send_markers(m.transactional_id, std::vector<meta::TopicPartition>(m.partitions.begin(), m.partitions.end()));
}

// Invariant: c.outstanding holds every partition asked for and not yet
// answered; answers for others (or of an older round) change nothing.
void Coordinator::send_markers(const std::string& transactional_id, std::vector<meta::TopicPartition> partitions) {
  auto it = completing_.find(transactional_id);
  if (it == completing_.end()) return;
  Completion& c = it->second;
  if (partitions.empty()) {
    finish(transactional_id);
    return;
  }
  c.outstanding.insert(partitions.begin(), partitions.end());
  // c may be gone when write returns: every answer may come at once.
  sink_.write(partitions, c.type, c.producer_id, c.epoch,
              [this, alive = alive_, transactional_id, round = c.round](
                  const meta::TopicPartition& tp, MarkerSink::Outcome outcome, const std::string& why) {
                if (*alive) on_marker(transactional_id, round, tp, outcome, why);
              });
}

void Coordinator::on_marker(const std::string& transactional_id, uint64_t round, const meta::TopicPartition& tp,
                            MarkerSink::Outcome outcome, const std::string& why) {
  auto it = completing_.find(transactional_id);
  if (it == completing_.end() || it->second.round != round) return;
  Completion& c = it->second;
  if (c.outstanding.erase(tp) == 0) return;
  switch (outcome) {
    case MarkerSink::Outcome::kDurable: break;
    case MarkerSink::Outcome::kPartitionGone:
      EDDY_LOG_INFO("transactions: '{}': {}-{} no longer exists; no marker written there", transactional_id,
                    tp.topic, tp.partition);
      break;
    case MarkerSink::Outcome::kFailed:
      EDDY_LOG_WARN("transactions: '{}': the {} marker for {}-{} was refused ({}); retrying in {} ms",
                    transactional_id, marker_name(c.type), tp.topic, tp.partition, why, options_.marker_retry_ms);
      c.refused.push_back(tp);
      break;
  }
  if (!c.outstanding.empty()) return;
  if (!c.refused.empty()) {
    schedule_retry(transactional_id, c);
    return;
  }
  finish(transactional_id);
}

void Coordinator::schedule_retry(const std::string& transactional_id, Completion& c) {
  if (!active_ || c.retry_timer != 0) return;
  c.retry_timer = executor_.schedule_after(options_.marker_retry_ms, [this, transactional_id] {
    auto it = completing_.find(transactional_id);
    if (it == completing_.end()) return;
    it->second.retry_timer = 0;
    retry(transactional_id);
  });
}

// The refused markers again, or, when none is left, the Complete state.
void Coordinator::retry(const std::string& transactional_id) {
  auto it = completing_.find(transactional_id);
  if (it == completing_.end()) return;
  Completion& c = it->second;
  if (!c.outstanding.empty() || c.finishing) return;
  std::vector<meta::TopicPartition> again = std::move(c.refused);
  c.refused.clear();
  send_markers(transactional_id, std::move(again));
}

// Every marker is durable: the Complete state, and with it the groups'
// offsets. A failed store is tried again after marker_retry_ms (the state
// stays Prepare).
void Coordinator::finish(const std::string& transactional_id) {
  auto it = completing_.find(transactional_id);
  if (it == completing_.end()) return;
  auto found = transactions_.find(transactional_id);
  if (found == transactions_.end()) {
    end_completion(it);
    return;
  }
  const TransactionMetadata& now = found->second;
  const bool commit = it->second.type == protocol::ControlType::kCommit;
  TransactionMetadata next = now;
  next.partitions.clear();
  next.groups.clear();
  next.last_update_ms = executor_.now_ms();
  if (!next.set_state(commit ? S::kCompleteCommit : S::kCompleteAbort)) {
    EDDY_LOG_ERROR("transactions: '{}' is in {}, not completing it", transactional_id, state_name(now.state));
    end_completion(it);
    return;
  }
  it->second.finishing = true;
  const uint64_t round = it->second.round;
  apply(next, now.groups, [this, alive = alive_, transactional_id, round, next](protocol::ErrorCode code) {
    if (!*alive) return;  // answered after the coordinator's end (NOT_COORDINATOR)
    auto c = completing_.find(transactional_id);
    if (c == completing_.end() || c->second.round != round) return;
    c->second.finishing = false;
    if (code != protocol::ErrorCode::kNone) {
      schedule_retry(transactional_id, c->second);  // retries the state write (nothing is refused)
      return;
    }
    EDDY_LOG_DEBUG("transactions: '{}' {} (producer {} epoch {})", transactional_id, state_name(next.state),
                   next.producer_id, next.producer_epoch);
    end_completion(c);
  });
}

void Coordinator::end_completion(std::map<std::string, Completion>::iterator it) {
  executor_.cancel(it->second.retry_timer);
  std::vector<Parked> parked = std::move(it->second.parked);
  completing_.erase(it);
  for (Parked& p : parked) {
    executor_.cancel(p.timer);
    p.retry();
  }
}

bool Coordinator::park(const std::string& transactional_id, std::function<void()> retry, Answer refuse) {
  auto it = completing_.find(transactional_id);
  if (it == completing_.end() || it->second.parked.size() >= kMaxParkedPerId) return false;
  Parked p;
  p.ticket = ++parked_tickets_;
  p.retry = std::move(retry);
  p.refuse = std::move(refuse);
  p.timer = executor_.schedule_after(kMaxParkMs, [this, transactional_id, ticket = p.ticket] {
    auto c = completing_.find(transactional_id);
    if (c == completing_.end()) return;
    auto& parked = c->second.parked;
    for (auto q = parked.begin(); q != parked.end(); ++q) {
      if (q->ticket != ticket) continue;
      Answer refuse = std::move(q->refuse);
      parked.erase(q);
      refuse(protocol::ErrorCode::kConcurrentTransactions);
      return;
    }
  });
  it->second.parked.push_back(std::move(p));
  return true;
}

}  // namespace eddy::txn
