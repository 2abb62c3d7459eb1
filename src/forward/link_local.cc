// Link: the local side of each partition (link.h): the partitions listed
// through LocalStore (new, re-created, deleted), their cursors moved when the
// local log dropped or lost offsets, and the next stored batch to send, with
// those that must not be sent skipped.
#include "forward/link.h"

#include <algorithm>

#include "port/log.h"
#include "port/port.h"
#include "protocol/errors.h"
#include "protocol/record_batch.h"
#include "protocol/record_validator.h"

namespace eddy::forward {

using protocol::ErrorCode;

namespace {

// Read-ahead per partition: enough for a full request, not more.
constexpr size_t kMinReadBytes = 64 * 1024;
constexpr size_t kMaxReadBytes = 512 * 1024;

}  // namespace

std::map<Link::Key, int64_t> Link::acked_offsets() const {
  std::map<Key, int64_t> out;
  for (const auto& [key, p] : partitions_) out[key] = p.window.acked().next_offset;
  return out;
}

bool Link::refresh_local(bool full) {
  std::vector<LocalPartition> listed;
  if (!store_->list(options_.name, acked_offsets(), full, &listed)) return false;
  if (full) next_local_refresh_ms_ = port::monotonic_millis() + kLocalRefreshMs;
  for (auto& [key, p] : partitions_) p.seen = false;
  std::set<std::string> new_remote_topics;
  for (LocalPartition& l : listed) {
    Key key{l.topic, l.partition};
    auto it = partitions_.find(key);
    if (it != partitions_.end() && it->second.topic_id != l.topic_id && it->second.window.idle()) {
      // Deleted and created again under the same name: a new log.
      partitions_.erase(it);
      it = partitions_.end();
    }
    if (it != partitions_.end() && (!l.forwarded_here || it->second.leader_epoch != l.leader_epoch)) {
      // In a cluster (README.md, "In a cluster"): another node leads the
      // partition now, or did since this node last forwarded it. Whatever
      // is in flight is left to the central cluster (its answers are
      // ignored); the cursor stays saved. Led here again, the partition is
      // taken up from the furthest cursor the cluster knows.
      let_go(it->second);
      partitions_.erase(it);
      it = partitions_.end();
    }
    if (!l.forwarded_here) continue;
    Partition* p = it != partitions_.end() ? &it->second : nullptr;
    if (p == nullptr) {
      bool rewound = false;
      p = &add_partition(l, &rewound);
      if (!p->remote_topic.empty()) new_remote_topics.insert(p->remote_topic);
      // Saved at once: a later restart must not find the old cursor below a
      // log end that new appends have carried past it.
      if (rewound && !save({p})) return false;
    }
    p->seen = true;
    p->high_watermark = l.high_watermark;
    p->log_start_offset = l.log_start_offset;
    p->log_end_offset = l.log_end_offset;
    if (full) p->backlog_bytes = l.backlog_bytes;
    p->rejected_appends = l.rejected_appends;
  }
  forget_unseen();
  if (connected_ && !new_remote_topics.empty()) return refresh_metadata(new_remote_topics) || !stop_.load();
  return true;
}

Link::Partition& Link::add_partition(const LocalPartition& l, bool* rewound) {
  Partition p(SendWindow(l.cursor, identity_, options_.max_in_flight));
  p.topic = l.topic;
  p.topic_id = l.topic_id;
  p.partition = l.partition;
  p.leader_epoch = l.leader_epoch;
  *rewound = rewind_past_lost_tail(p, l.log_end_offset);
  if (l.leader_epoch >= 0) {
    const meta::ForwardCursor& c = p.window.acked();
    EDDY_LOG_INFO("forward link {}: {}-{}: forwarded by this node (its replica group's leader in epoch {}) from "
                  "offset {}, producer id {} epoch {} sequence {}",
                  options_.name, l.topic, l.partition, l.leader_epoch, c.next_offset, c.producer_id, c.producer_epoch,
                  c.next_sequence);
  }
  p.priority = mapping_.priority(l.topic);
  std::string error;
  p.remote_topic = mapping_.remote_name(l.topic, &error);
  if (p.remote_topic.empty()) pause(p, error);
  any_unsettled_ = true;  // a window from a saved cursor starts unsettled
  return partitions_.emplace(Key{l.topic, l.partition}, std::move(p)).first->second;
}

void Link::let_go(Partition& p) {
  for (auto it = tags_.begin(); it != tags_.end();) {
    it = it->second == Key{p.topic, p.partition} ? tags_.erase(it) : std::next(it);
  }
  if (p.leader_epoch >= 0) {
    EDDY_LOG_INFO("forward link {}: {}-{}: no longer forwarded by this node (its replica group's leader epoch {} "
                  "ended here) at offset {}",
                  options_.name, p.topic, p.partition, p.leader_epoch, p.window.acked().next_offset);
  }
}

void Link::forget_unseen() {
  std::vector<Key> gone;
  for (auto it = partitions_.begin(); it != partitions_.end();) {
    if (!it->second.seen && it->second.window.idle()) {
      gone.push_back(it->first);  // the topic was deleted locally
      it = partitions_.erase(it);
    } else {
      ++it;
    }
  }
  for (const Key& key : gone) {
    Status s = progress_->remove_cursor(options_.name, key.first, key.second);
    if (!s.ok()) EDDY_LOG_WARN("forward link {}: {}", options_.name, s.message());
  }
  if (!gone.empty()) store_->cursors_forgotten(options_.name, gone);
}

bool Link::rewind_past_lost_tail(Partition& p, int64_t log_end_offset) {
  const int64_t acked = p.window.acked().next_offset;
  if (acked <= log_end_offset) return false;
  // The link forwarded offsets the local log no longer has: with
  // eddy.acks.all.waits.for=page-cache it sends what is not yet synced, and a
  // power cut took that tail. The central cluster has those records; the
  // offsets from the log's end on will hold new ones, which must be sent.
  // The producer sequence goes on where the central partition left it.
  p.lost_after_forwarding += static_cast<uint64_t>(acked - log_end_offset);
  EDDY_LOG_WARN("forward link {}: {}-{}: forwarded up to offset {} but the local log ends at {} (its unsynced "
                "tail was lost after forwarding): forwarding resumes from {}",
                options_.name, p.topic, p.partition, acked,
                log_end_offset, log_end_offset);
  p.window.move_cursor(log_end_offset);
  return true;
}

bool Link::has_unsent(const Partition& p) const {
  return !p.read_ahead.empty() || p.window.send_offset() < p.high_watermark;
}

bool Link::next_batch(Partition& p, StoredBatch* out) {
  if (p.read_ahead.empty() && p.window.send_offset() >= p.high_watermark) return false;
  const size_t want = std::clamp(static_cast<size_t>(options_.max_request_bytes), kMinReadBytes, kMaxReadBytes);
  protocol::RecordBatchView view;
  int64_t log_start_offset = 0;
  std::string error;
  switch (p.read_ahead.next(store_, p.topic, p.partition, p.window.send_offset(), want, &view, &log_start_offset,
                            &error)) {
    case ReadAhead::Result::kBatch: break;
    case ReadAhead::Result::kStopping:
    case ReadAhead::Result::kRaced: return false;
    case ReadAhead::Result::kReadError:
      p.last_error = error;
      p.high_watermark = p.window.send_offset();  // look again at the next refresh
      return false;
    case ReadAhead::Result::kNone: p.high_watermark = p.window.send_offset(); return false;
    case ReadAhead::Result::kDropped: return skip_dropped(p, log_start_offset) && next_batch(p, out);
  }
  // Transactions (README.md): markers and aborted data stay local; what is
  // read lies below the last stable offset, so the rest is committed data.
  // An empty batch (a partition leader's first of its epoch) has nothing to
  // send, and Kafka refuses empty batches from producers.
  if (view.is_control() || view.is_empty() || p.read_ahead.in_aborted_transaction(view)) {
    return skip_transactional(p, view) && next_batch(p, out);
  }
  // The records are walked as on append (structure only: timestamps were
  // judged then): a batch stored before record validation existed, or with
  // eddy.validate.compressed.records=false, that fails is not sent. The
  // central cluster would refuse it and pause the partition, or store it
  // for its consumers to choke on.
  protocol::RecordRules rules;
  rules.open_stream = &options_.open_record_stream;
  rules.max_decompressed_batch_bytes = options_.max_decompressed_batch_bytes;
  protocol::RecordVerdict verdict = protocol::validate_batch_records(view, rules);
  if (verdict.error != ErrorCode::kNone) return skip_malformed(p, view, verdict) && next_batch(p, out);
  out->bytes = p.read_ahead.mutable_bytes(view);
  if (view.is_transactional()) {
    // Committed: sent as the link's own idempotent data (the uplink producer
    // rewrites producer id, epoch, sequence and the CRC).
    const auto attributes = static_cast<uint16_t>(view.attributes() & ~protocol::batch_attributes::kTransactional);
    protocol::store_be16(out->bytes.data() + protocol::batch_layout::kAttributes, attributes);
  }
  out->base_offset = view.base_offset();
  out->next_offset = view.last_offset() + 1;
  return true;
}

bool Link::skip_dropped(Partition& p, int64_t log_start_offset) {
  // The full policy (or DeleteRecords, or retention) dropped data this link
  // had not forwarded. Counted once: the jump is saved before anything after
  // it is sent.
  if (!p.window.idle()) return false;  // settle what is in flight first
  const int64_t from = p.window.send_offset();
  const int64_t lost = log_start_offset - from;
  EDDY_LOG_WARN("forward link {}: {}-{}: {} messages (offsets {}..{}) were dropped locally before they "
                "were forwarded",
                options_.name, p.topic, p.partition, lost,
                from, log_start_offset - 1);
  p.window.move_cursor(log_start_offset, lost);
  return save({&p});
}

bool Link::skip_transactional(Partition& p, const protocol::RecordBatchView& view) {
  // As skip_malformed: once what is in flight is settled (the window's
  // offsets stay consecutive), saved before anything after it is sent.
  if (!p.window.idle()) return false;
  p.read_ahead.consume(view.size());
  p.window.move_cursor(view.next_offset());
  return save({&p});
}

bool Link::skip_malformed(Partition& p, const protocol::RecordBatchView& view,
                          const protocol::RecordVerdict& verdict) {
  // The cursor moves past it once what is in flight is settled (the skip is
  // saved before anything after it is sent).
  if (!p.window.idle()) return false;
  if (view.last_offset() > p.skipped_through) {
    ++p.skipped_invalid_batches;
    EDDY_LOG_WARN("forward link {}: {}-{}: skipping the batch at offsets {}..{}, not sent: {}: {}",
                  options_.name, p.topic, p.partition, view.base_offset(),
                  view.last_offset(), protocol::error_name(verdict.error),
                  verdict.message);
  }
  p.skipped_through = view.last_offset();
  p.read_ahead.consume(view.size());
  p.window.move_cursor(view.next_offset());
  return save({&p});
}

}  // namespace eddy::forward
