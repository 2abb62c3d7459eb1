// Ending a transaction: the markers, their durability, the group offsets,
// then the Complete state (steps 2-4 of coordinator.h).
#include "port/log.h"
#include "txn/coordinator.h"

namespace eddy::txn {

using S = TransactionState;

void Coordinator::begin_completion(const TransactionMetadata& m) {
  Completion& c = completing_[m.transactional_id];
  executor_.cancel(c.retry_timer);
  c = Completion{};
  c.type = m.state == S::kPrepareCommit ? protocol::ControlType::kCommit : protocol::ControlType::kAbort;
  c.producer_id = m.producer_id;
  c.epoch = m.producer_epoch;
  c.unwritten.assign(m.partitions.begin(), m.partitions.end());
  write_markers(m.transactional_id);
}

void Coordinator::write_markers(const std::string& transactional_id) {
  auto it = completing_.find(transactional_id);
  if (it == completing_.end()) return;
  Completion& c = it->second;
  std::vector<meta::TopicPartition> refused;
  for (const meta::TopicPartition& tp : c.unwritten) {
    int64_t offset = -1;
    std::string why;
    switch (sink_.write(tp, c.type, c.producer_id, c.epoch, &offset, &why)) {
      case MarkerSink::Outcome::kWritten: c.unsynced.emplace_back(tp, offset); break;
      case MarkerSink::Outcome::kPartitionGone:
        EDDY_LOG_INFO("transactions: '{}': {}-{} no longer exists; no marker written there", transactional_id,
                      tp.topic, tp.partition);
        break;
      case MarkerSink::Outcome::kFailed:
        EDDY_LOG_WARN("transactions: '{}': the {} marker for {}-{} was refused ({}); retrying in {} ms",
                      transactional_id, c.type == protocol::ControlType::kCommit ? "COMMIT" : "ABORT", tp.topic,
                      tp.partition, why, options_.marker_retry_ms);
        refused.push_back(tp);
        break;
    }
  }
  c.unwritten = std::move(refused);
  if (!c.unwritten.empty()) schedule_marker_retry(transactional_id, c);
  maybe_finish(transactional_id);
}

void Coordinator::schedule_marker_retry(const std::string& transactional_id, Completion& c) {
  if (stopped_ || c.retry_timer != 0) return;
  c.retry_timer = executor_.schedule_after(options_.marker_retry_ms, [this, transactional_id] {
    auto it = completing_.find(transactional_id);
    if (it == completing_.end()) return;
    it->second.retry_timer = 0;
    write_markers(transactional_id);
  });
}

void Coordinator::on_partition_durable() {
  if (completing_.empty()) return;
  std::vector<std::string> ids;
  ids.reserve(completing_.size());
  for (const auto& [id, c] : completing_) ids.push_back(id);
  for (const std::string& id : ids) maybe_finish(id);
}

void Coordinator::maybe_finish(const std::string& transactional_id) {
  auto it = completing_.find(transactional_id);
  if (it == completing_.end()) return;
  Completion& c = it->second;
  auto& unsynced = c.unsynced;
  for (size_t i = 0; i < unsynced.size();) {
    if (sink_.durable(unsynced[i].first, unsynced[i].second)) {
      unsynced[i] = unsynced.back();
      unsynced.pop_back();
    } else {
      ++i;
    }
  }
  if (!c.unwritten.empty() || !c.unsynced.empty()) return;
  if (!finish(transactional_id, c)) {
    schedule_marker_retry(transactional_id, c);  // retries the groups and the state write
    return;
  }
  executor_.cancel(c.retry_timer);
  completing_.erase(it);
}

// Every marker is durable: the groups' offsets, then the Complete state.
// false when a write failed (retried later; the state stays Prepare).
bool Coordinator::finish(const std::string& transactional_id, const Completion& c) {
  auto found = transactions_.find(transactional_id);
  if (found == transactions_.end()) return true;
  const TransactionMetadata& current = found->second;
  const bool commit = c.type == protocol::ControlType::kCommit;
  for (const std::string& group : current.groups) {
    Status s = sink_.complete_offsets(group, current.producer_id, commit);
    if (!s.ok()) {
      EDDY_LOG_ERROR("transactions: '{}': {} the offsets of group '{}': {}", transactional_id,
                     commit ? "committing" : "dropping", group, s.message());
      return false;
    }
  }
  TransactionMetadata next = current;
  next.partitions.clear();
  next.groups.clear();
  next.last_update_ms = executor_.now_ms();
  if (!next.set_state(commit ? S::kCompleteCommit : S::kCompleteAbort)) {
    EDDY_LOG_ERROR("transactions: '{}' is in {}, not completing it", transactional_id, state_name(current.state));
    return true;
  }
  if (apply(next) != protocol::ErrorCode::kNone) return false;
  EDDY_LOG_DEBUG("transactions: '{}' {} (producer {} epoch {})", transactional_id, state_name(next.state),
                 next.producer_id, next.producer_epoch);
  return true;
}

}  // namespace eddy::txn
