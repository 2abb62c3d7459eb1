// The sweeper: transactions open longer than their timeout are aborted
// with the epoch bumped (the producer that left them is fenced), and
// transactional ids idle longer than transactional.id.expiration.ms are
// forgotten (Kafka's abortTimedOutTransactions and
// removeExpiredTransactionalIds).
#include "port/log.h"
#include "txn/coordinator.h"

namespace eddy::txn {

using S = TransactionState;

void Coordinator::schedule_sweeps() {
  if (!active_) return;
  if (abort_timer_ == 0 && options_.abort_timed_out_interval_ms > 0) {
    abort_timer_ = executor_.schedule_after(options_.abort_timed_out_interval_ms, [this] {
      abort_timer_ = 0;
      abort_timed_out_transactions();
      schedule_sweeps();
    });
  }
  if (expiry_timer_ == 0 && options_.remove_expired_interval_ms > 0) {
    expiry_timer_ = executor_.schedule_after(options_.remove_expired_interval_ms, [this] {
      expiry_timer_ = 0;
      remove_expired_transactional_ids();
      schedule_sweeps();
    });
  }
}

void Coordinator::abort_timed_out_transactions() {
  EDDY_DCHECK_ON_LOOP(executor_);
  const int64_t now = executor_.now_ms();
  std::vector<std::string> timed_out;
  for (const auto& [id, m] : transactions_) {
    if (m.state == S::kOngoing && m.start_ms >= 0 && m.start_ms + m.timeout_ms < now && saving_.count(id) == 0) {
      timed_out.push_back(id);
    }
  }
  for (const std::string& id : timed_out) {
    bool failed = false;
    const TransactionMetadata* found = Coordinator::current(id, &failed);  // read again if doubtful
    if (found == nullptr || found->state != S::kOngoing) continue;
    const TransactionMetadata current = *found;
    if (current.producer_epoch == INT16_MAX) continue;  // cannot be bumped: Kafka refuses too
    const int16_t fence = static_cast<int16_t>(current.producer_epoch + 1);
    EDDY_LOG_INFO("transactions: '{}' (producer {} epoch {}) open for {} ms, longer than its timeout of {} ms: "
                  "aborting it with epoch {}",
                  id, current.producer_id, current.producer_epoch, now - current.start_ms, current.timeout_ms,
                  fence);
    prepare_end(current, false, fence, [id](protocol::ErrorCode code) {
      if (code != protocol::ErrorCode::kNone) {
        EDDY_LOG_WARN("transactions: aborting '{}' at its timeout: {} (tried again at the next sweep)", id,
                      protocol::error_name(code));
      }
    });
  }
}

void Coordinator::remove_expired_transactional_ids() {
  EDDY_DCHECK_ON_LOOP(executor_);
  const int64_t now = executor_.now_ms();
  std::vector<std::string> expired;
  for (const auto& [id, m] : transactions_) {
    if (is_expiration_allowed(m.state) && m.last_update_ms + options_.transactional_id_expiration_ms <= now &&
        saving_.count(id) == 0) {
      expired.push_back(id);
    }
  }
  for (const std::string& id : expired) {
    saving_.insert(id);
    store_->remove(id, [this, alive = alive_, generation = generation_, id](const Status& s) {
      if (!*alive || generation != generation_) return;
      saving_.erase(id);
      if (!s.ok()) {
        EDDY_LOG_WARN("transactions: removing the expired transactional id '{}': {}", id, s.message());
        doubtful_.insert(id);
        return;
      }
      auto it = transactions_.find(id);
      if (it == transactions_.end()) return;
      by_producer_id_.erase(it->second.producer_id);
      EDDY_LOG_INFO("transactions: transactional id '{}' (producer {}) expired: idle for more than {} ms", id,
                    it->second.producer_id, options_.transactional_id_expiration_ms);
      transactions_.erase(it);
    });
  }
}

}  // namespace eddy::txn
