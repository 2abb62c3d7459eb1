// Link: batches sent but never acknowledged (link.h, send_window.h
// "unsettled"). Before a partition sends after a restart or after a rewind
// that forgot batches in flight, the link looks at the central log from the
// cursor's remote_next_offset: each batch there of its own producer, epoch
// and next sequence whose CRC is that of the next stored batch as it would
// be sent again was written by the central cluster, and counts as
// acknowledged instead of being sent a second time. This keeps exactly-once
// when the central cluster forgot the producer meanwhile (Kafka 4 takes a
// forgotten producer's resend as new data, without a sign) and when the link
// resets its producer. README.md, "Beyond the central cluster's memory".
#include "forward/link.h"

#include "forward/central_log.h"
#include "port/log.h"
#include "protocol/errors.h"
#include "protocol/record_batch.h"

namespace eddy::forward {

namespace {

// Per Fetch, and in all per partition and look: the link's own unacknowledged
// batches (at most max.in.flight) follow its last acknowledged one unless
// other producers write the same central partition in between.
constexpr int32_t kFetchBytes = 1 << 20;
constexpr size_t kMaxLookBytes = 16u << 20;

}  // namespace

bool Link::settle_all() {
  if (!any_unsettled_) return true;
  bool left = false;
  // The central end offsets first, one ListOffsets per leader: only a
  // partition whose central log grew past where its cursor's batches would
  // lie is read back.
  std::map<int32_t, std::vector<Partition*>> by_leader;
  for (auto& [key, p] : partitions_) {
    if (!p.window.unsettled()) continue;
    if (!p.window.idle() || !p.paused.empty() || p.leader < 0) {
      left = true;  // looked at once it may send again
      continue;
    }
    if (p.window.acked().producer_id < 0) {
      p.window.settle();  // nothing was ever sent under this cursor
      continue;
    }
    by_leader[p.leader].push_back(&p);
  }
  for (auto& [node, parts] : by_leader) {
    std::vector<EndOffsetQuery> ends;
    std::vector<EndOffsetQuery> starts;  // for cursors without a known remote_next_offset
    std::vector<size_t> start_of(parts.size(), SIZE_MAX);
    for (size_t i = 0; i < parts.size(); ++i) {
      const Partition* p = parts[i];
      ends.push_back({p->remote_topic, p->partition, -1, -1, Status()});
      if (p->window.acked().remote_next_offset < 0) {
        start_of[i] = starts.size();
        starts.push_back({p->remote_topic, p->partition, -2, -1, Status()});
      }
    }
    Status s = central_end_offsets(client_.get(), node, &ends);
    if (s.ok() && !starts.empty()) s = central_end_offsets(client_.get(), node, &starts);
    for (size_t i = 0; i < parts.size(); ++i) {
      Partition& p = *parts[i];
      const EndOffsetQuery* start = start_of[i] == SIZE_MAX ? nullptr : &starts[start_of[i]];
      Status answer = s.ok() ? ends[i].status : s;
      if (answer.ok() && start != nullptr) answer = start->status;
      if (!answer.ok()) {
        if (!settle_failed(p, answer)) return false;
        continue;
      }
      // No acknowledgement under this cursor yet (a first start, or a
      // cursor another node of a cluster shared before its first one): its
      // batches, if any was written, lie after the central log's start.
      const int64_t from = start == nullptr ? p.window.acked().remote_next_offset : start->end;
      if (!settle(p, from, ends[i].end)) return false;
    }
  }
  any_unsettled_ = left;
  return true;
}

bool Link::settle(Partition& p, int64_t from, int64_t end) {
  const meta::ForwardCursor start = p.window.acked();
  if (from >= end) {
    // Nothing written after the last acknowledgement. A cursor that had
    // none learns where its batches will lie, saved (and, in a cluster,
    // shared) before anything is sent under it.
    p.window.settle();
    if (start.remote_next_offset >= 0) return true;
    p.window.learn_remote_next_offset(end);
    return save({&p});
  }
  p.read_ahead.clear();
  const int64_t looked_from = from;
  size_t looked = 0;
  int64_t found_batches = 0;
  int64_t found_messages = 0;
  bool done = false;
  while (!done && from < end && looked < kMaxLookBytes) {
    std::vector<CentralBatch> batches;
    int64_t next = from;
    size_t bytes = 0;
    Status s = read_central_batches(client_.get(), p.leader, p.remote_topic, p.partition, from, kFetchBytes,
                                    &batches, &next, &bytes);
    if (s.is_not_found()) break;  // the central log starts after from: nothing of ours there
    if (!s.ok()) return settle_failed(p, s);
    if (batches.empty()) break;
    looked += bytes;
    from = next;
    for (const CentralBatch& b : batches) {
      if (b.producer_id != start.producer_id || b.producer_epoch != start.producer_epoch ||
          b.base_sequence != p.window.send_sequence()) {
        continue;  // another producer's, or one of ours acknowledged before
      }
      StoredBatch local;
      if (!next_batch(p, &local)) {
        if (store_->stopping() || !connected_) return false;
        done = true;
        break;
      }
      const int32_t sequence = p.window.send_sequence();
      protocol::rewrite_producer(local.bytes, start.producer_id, start.producer_epoch, sequence);
      protocol::RecordBatchView view;
      if (protocol::RecordBatchView::parse(local.bytes, &view) != protocol::BatchError::kOk ||
          view.crc() != b.crc || view.last_offset_delta() != b.last_offset_delta) {
        // Same producer and sequence, other bytes: not the batch stored here
        // (the central topic rewrote it: LogAppendTime, recompression).
        done = true;
        break;
      }
      const uint64_t tag = next_tag_++;
      p.window.send(tag, local.base_offset, local.next_offset, local.bytes.size());
      p.read_ahead.consume(local.bytes.size());
      SendWindow::Batch acked{};
      p.window.acknowledge(tag, &acked, b.base_offset);
      ++found_batches;
      found_messages += acked.next_offset - acked.base_offset;
    }
  }
  if (!done && from < end && looked >= kMaxLookBytes) {
    EDDY_LOG_WARN("forward link {}: {}-{}: looked at {} bytes of {}-{} after offset {} without reaching its end "
                  "({}): batches sent before the last cut and not found by then may be written twice",
                  options_.name, p.topic, p.partition, looked, p.remote_topic, p.partition,
                  looked_from, end);
  }
  p.window.rewind();  // what was found is acknowledged; nothing is in flight
  p.read_ahead.clear();
  p.window.settle();
  if (found_batches == 0) {
    if (start.remote_next_offset >= 0) return true;
    p.window.learn_remote_next_offset(end);
    return save({&p});
  }
  EDDY_LOG_INFO("forward link {}: {}-{}: the central cluster had written {} batches ({} messages, offsets {}..{}) "
                "that were never acknowledged; they are not sent again",
                options_.name, p.topic, p.partition, found_batches, found_messages, start.next_offset,
                p.window.acked().next_offset - 1);
  p.forwarded_messages += found_messages;
  status_.status().found_unacknowledged += static_cast<uint64_t>(found_batches);
  return save({&p});
}

bool Link::settle_failed(Partition& p, const Status& s) {
  if (s.retriable()) {
    fail("looking for unacknowledged batches of " + p.topic + "-" + std::to_string(p.partition) +
         " on the central cluster: " + s.message());
    return false;
  }
  // Refused (say the link's user may write but not read the central topic):
  // what was in flight is sent again, at-least-once for it, as before.
  EDDY_LOG_WARN("forward link {}: {}-{}: cannot look for batches sent before the cut on the central cluster ({}); "
                "they are sent again and may be written twice",
                options_.name, p.topic, p.partition, s.message());
  p.window.settle();
  return true;
}

}  // namespace eddy::forward
