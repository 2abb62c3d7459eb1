// Store-and-forward in a cluster: the links' progress goes through the
// controller log, so that whichever node leads a partition next continues
// where the cluster got (src/forward/README.md, "In a cluster").
//
// A link forwards a replicated partition only where its replica group is led.
// What it saves in forward.db there (the next local offset the central
// cluster acknowledged, with the producer id, epoch and sequence it went out
// under and the central offset after it) is shared every
// kShareForwardCursorsMs as a ForwardCursorsRecord: proposed by the
// controller leader, carried to it in an Envelope from any other node.
// Applied on every node, the furthest cursor per (link, topic id, partition)
// is kept in eddy.db and handed to the forwarder (set_forward_cursor_observer),
// which starts from it when this node takes the partition over.
//
// A cursor shared late only makes a new leader look further back in the
// central log: it goes on under the same producer and sequences, so the
// batches the previous leader sent meanwhile are found there (link_settle.cc)
// or answered as duplicates, never written twice.
#include <utility>

#include "app/cluster_controller.h"
#include "port/log.h"

namespace eddy::app {
namespace {

using protocol::ErrorCode;

// How often saved cursors are shared: a controller log entry per interval
// while a link forwards, and at most this much of the central log for a new
// leader to look through more than it would otherwise.
constexpr int64_t kShareForwardCursorsMs = 250;

meta::Uuid to_meta(const protocol::Uuid& id) {
  meta::Uuid out;
  out.bytes = id.bytes;
  return out;
}

protocol::Uuid to_protocol(const meta::Uuid& id) {
  protocol::Uuid out;
  out.bytes = id.bytes;
  return out;
}

}  // namespace

void ClusterController::set_forward_cursor_observer(ForwardCursorObserver observer) {
  forward_cursor_observer_ = std::move(observer);
  std::vector<meta::ClusterForwardCursor> held;
  if (Status s = meta_->cluster().forward_cursors(&held); !s.ok()) {
    EDDY_LOG_WARN("forward: the cursors the controller log carried cannot be read: {}", s.to_string());
    return;
  }
  for (const meta::ClusterForwardCursor& c : held) forward_cursor_observer_(c);
}

void ClusterController::share_forward_cursors(std::vector<meta::ClusterForwardCursor> cursors) {
  for (meta::ClusterForwardCursor& c : cursors) {
    auto key = std::make_tuple(c.link, c.topic_id, c.partition);
    unshared_cursors_[std::move(key)] = std::move(c);
  }
  if (sharing_cursors_ || unshared_cursors_.empty()) return;
  sharing_cursors_ = true;
  reactor_->schedule_after(kShareForwardCursorsMs, [this] { send_forward_cursors(); });
}

void ClusterController::send_forward_cursors() {
  if (failed_ || unshared_cursors_.empty()) {
    sharing_cursors_ = false;
    return;
  }
  if (leader_id() < 0) {
    reactor_->schedule_after(kShareForwardCursorsMs, [this] { send_forward_cursors(); });
    return;
  }
  // One record for the first link's cursors; the others' go next turn.
  protocol::ForwardCursorsRecord record;
  record.link = std::get<0>(unshared_cursors_.begin()->first);
  auto sent = std::make_shared<std::vector<meta::ClusterForwardCursor>>();
  for (auto it = unshared_cursors_.begin(); it != unshared_cursors_.end() && it->second.link == record.link;) {
    const meta::ClusterForwardCursor& c = it->second;
    record.cursors.push_back({c.topic, to_protocol(c.topic_id), c.partition, c.next_offset, c.producer_id,
                              c.producer_epoch, c.next_sequence, c.remote_next_offset, c.dropped_messages, {}});
    sent->push_back(std::move(it->second));
    it = unshared_cursors_.erase(it);
  }
  auto outcome = [this, sent](ErrorCode code) {
    if (code != ErrorCode::kNone) {
      EDDY_LOG_DEBUG("forward: cursors not shared through the controller log ({}); again in {} ms",
                     protocol::error_name(code), kShareForwardCursorsMs);
      // Kept unless a newer one of the same partition came meanwhile.
      for (meta::ClusterForwardCursor& c : *sent) {
        unshared_cursors_.try_emplace(std::make_tuple(c.link, c.topic_id, c.partition), std::move(c));
      }
    }
    if (unshared_cursors_.empty()) {
      sharing_cursors_ = false;
      return;
    }
    reactor_->schedule_after(kShareForwardCursorsMs, [this] { send_forward_cursors(); });
  };
  propose_from_this_node(record, outcome);
}

Status ClusterController::apply_forward_cursors(const protocol::ForwardCursorsRecord& record) {
  for (const auto& c : record.cursors) {
    meta::ClusterForwardCursor cursor{record.link,      to_meta(c.topic_id), c.topic,
                                      c.partition,      c.next_offset,       c.producer_id,
                                      c.producer_epoch, c.next_sequence,     c.remote_next_offset,
                                      c.dropped_messages};
    bool kept = false;
    Status s = meta_->cluster().merge_forward_cursor(cursor, &kept);
    if (s.code() == Status::Code::kInvalidArgument) {
      // The same outcome on every node: skipped everywhere.
      EDDY_LOG_ERROR("controller log: {}; skipped", s.message());
      continue;
    }
    if (!s.ok()) return s;
    if (kept && forward_cursor_observer_) forward_cursor_observer_(cursor);
  }
  return Status();
}

Status ClusterController::forward_cursor_records(std::vector<broker::ControllerRecord>* out) {
  std::vector<meta::ClusterForwardCursor> held;
  if (Status s = meta_->cluster().forward_cursors(&held); !s.ok()) return s;
  protocol::ForwardCursorsRecord* record = nullptr;
  for (const meta::ClusterForwardCursor& c : held) {
    if (record == nullptr || record->link != c.link) {
      out->push_back(protocol::ForwardCursorsRecord{c.link, {}, {}});
      record = &std::get<protocol::ForwardCursorsRecord>(out->back());
    }
    record->cursors.push_back({c.topic, to_protocol(c.topic_id), c.partition, c.next_offset, c.producer_id,
                               c.producer_epoch, c.next_sequence, c.remote_next_offset, c.dropped_messages, {}});
  }
  return Status();
}

Status ClusterController::load_forward_cursors(const std::vector<protocol::ForwardCursorsRecord>& records) {
  if (Status s = meta_->cluster().remove_all_forward_cursors(); !s.ok()) return s;
  for (const protocol::ForwardCursorsRecord& r : records) {
    if (Status s = apply_forward_cursors(r); !s.ok()) return s;
  }
  return Status();
}

}  // namespace eddy::app
