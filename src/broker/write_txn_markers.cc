// WriteTxnMarkers v0-1 (Kafka's KafkaApis.handleWriteTxnMarkersRequest):
// COMMIT / ABORT markers a transaction coordinator asks a partition's
// leader to write (kafka-transactions abort; another node's coordinator
// through the controller listener, Broker::write_txn_markers). Each marker
// is written by write_txn_marker (txn_markers.cc), as this node's own
// coordinator writes its markers, and answered once durable; the response
// goes when every partition has its answer.
//
// What a request can make the broker hold: its response and one Pending
// per written marker (both bounded by the frame, which the decoder never
// allocates beyond), for at most options().txn_marker_timeout_ms (Kafka's
// request.timeout.ms, 30 s by default), and at most kMaxParkedTxnMarkers
// requests at a time.
#include <map>
#include <utility>

#include "broker/broker.h"
#include "port/log.h"
#include "protocol/errors.h"

namespace eddy::broker {

using protocol::ErrorCode;
using protocol::WriteTxnMarkersRequest;
using protocol::WriteTxnMarkersResponse;

namespace {

// The response's skeleton: every partition of the request, answered code.
WriteTxnMarkersResponse answer_all(const WriteTxnMarkersRequest& body, ErrorCode code) {
  WriteTxnMarkersResponse response;
  response.markers.reserve(body.markers.size());
  for (const auto& marker : body.markers) {
    auto& rm = response.markers.emplace_back();
    rm.producer_id = marker.producer_id;
    rm.topics.reserve(marker.topics.size());
    for (const auto& topic : marker.topics) {
      auto& rt = rm.topics.emplace_back();
      rt.name = topic.name;
      rt.partitions.reserve(topic.partition_indexes.size());
      for (int32_t p : topic.partition_indexes) {
        auto& rp = rt.partitions.emplace_back();
        rp.partition_index = p;
        rp.error_code = protocol::to_int(code);
      }
    }
  }
  return response;
}

}  // namespace

void Broker::handle_write_txn_markers(RequestPtr request) {
  WriteTxnMarkersRequest body;
  if (!decode(*request, &body)) return;
  // As Kafka: ALTER on the cluster (not logged when refused), else
  // CLUSTER_ACTION; without either every partition is refused.
  if (!authorized_on_cluster(*request, security::AclOperation::kAlter, /*quietly=*/true) &&
      !authorized_on_cluster(*request, security::AclOperation::kClusterAction)) {
    respond(*request, answer_all(body, ErrorCode::kClusterAuthorizationFailed));
    return;
  }
  std::shared_ptr<Request> parked(std::move(request));
  write_txn_markers(body, [this, parked](WriteTxnMarkersResponse response) {
    if (parked->reply->connection_closed()) {
      note_errors(*parked, response);
      parked->reply->send_nothing();
      return;
    }
    respond(*parked, response);
  });
}

void Broker::write_txn_markers(const WriteTxnMarkersRequest& body, std::function<void(WriteTxnMarkersResponse)> done) {
  EDDY_DCHECK_ON_LOOP(executor_);
  if (marker_waiters_.size() >= kMaxParkedTxnMarkers) {
    if (!marker_waiters_full_logged_) {
      EDDY_LOG_WARN("WriteTxnMarkers: {} requests already wait for their markers to be durable; further ones are "
                    "answered REQUEST_TIMED_OUT, nothing written, until fewer wait",
                    marker_waiters_.size());
      marker_waiters_full_logged_ = true;
    }
    done(answer_all(body, ErrorCode::kRequestTimedOut));
    return;
  }
  marker_waiters_full_logged_ = false;
  MarkerWaiter waiter;
  waiter.response = answer_all(body, ErrorCode::kNone);
  for (size_t m = 0; m < body.markers.size(); ++m) {
    const auto& marker = body.markers[m];
    const protocol::ControlType type =
        marker.transaction_result ? protocol::ControlType::kCommit : protocol::ControlType::kAbort;
    // Each partition's write in this marker: one marker per partition,
    // whatever the request repeats.
    std::map<std::pair<std::string, int32_t>, TxnMarkerWrite> written;
    for (size_t t = 0; t < marker.topics.size(); ++t) {
      const auto& topic = marker.topics[t];
      for (size_t p = 0; p < topic.partition_indexes.size(); ++p) {
        const int32_t partition = topic.partition_indexes[p];
        auto [it, fresh] = written.try_emplace({topic.name, partition});
        if (fresh) {
          it->second = write_txn_marker(meta::TopicPartition{topic.name, partition}, type, marker.producer_id,
                                        marker.producer_epoch, marker.coordinator_epoch);
          if (it->second.error != ErrorCode::kNone) {
            EDDY_LOG_DEBUG("WriteTxnMarkers: {} marker of producer {} epoch {} (coordinator epoch {}) for {}-{}: "
                           "{}: {}",
                           marker.transaction_result ? "COMMIT" : "ABORT", marker.producer_id, marker.producer_epoch,
                           marker.coordinator_epoch, topic.name, partition, protocol::error_name(it->second.error),
                           it->second.why);
          }
        }
        const TxnMarkerWrite& w = it->second;
        waiter.response.markers[m].topics[t].partitions[p].error_code = protocol::to_int(w.error);
        if (w.error != ErrorCode::kNone) continue;
        const MarkerWaiter::Pending pending{m, t, p, w.log, w.offset, w.replicated, w.leader_epoch};
        const std::optional<ErrorCode> outcome = marker_outcome(waiter, pending);
        if (outcome) {
          waiter.response.markers[m].topics[t].partitions[p].error_code = protocol::to_int(*outcome);
        } else {
          waiter.pending.push_back(pending);
        }
      }
    }
  }
  if (waiter.pending.empty()) {
    done(std::move(waiter.response));
    return;
  }
  waiter.done = std::move(done);
  marker_waiters_.push_back(std::move(waiter));
  auto it = std::prev(marker_waiters_.end());
  it->timer = executor_.schedule_after(options_.txn_marker_timeout_ms, [this, it] { time_out_marker_waiter(it); });
}

std::optional<ErrorCode> Broker::marker_outcome(const MarkerWaiter& waiter, const MarkerWaiter::Pending& pending) {
  const auto& topic_result = waiter.response.markers[pending.marker].topics[pending.topic];
  const int32_t partition = topic_result.partitions[pending.partition].partition_index;
  Topic* topic = topics_.find(topic_result.name);
  storage::PartitionLog* log = topic == nullptr ? nullptr : topic->local(partition);
  if (log == nullptr || log != pending.log) {
    // Deleted (maybe re-created) since: the marker went with its log.
    return ErrorCode::kUnknownTopicOrPartition;
  }
  if (!pending.replicated) {
    if (log->durable_offset() > pending.offset) return ErrorCode::kNone;
    return std::nullopt;
  }
  // Committed in the epoch it was appended in, while this node still leads
  // it (as acks=all produce: a high watermark that passed the offset in a
  // later epoch may cover another leader's batch there).
  const ReplicaStatus status = replica_status(*topic, partition, log);
  if (!status.replicated || !status.leader || status.leader_epoch != pending.leader_epoch) {
    return ErrorCode::kNotLeaderOrFollower;
  }
  if (log->high_watermark() > pending.offset) return ErrorCode::kNone;
  return std::nullopt;
}

void Broker::complete_marker_waiters(bool timed_out) {
  // Finished waiters leave the list before their done runs: done may
  // write markers (and park or finish waiters) itself.
  std::list<MarkerWaiter> finished;
  for (auto it = marker_waiters_.begin(); it != marker_waiters_.end();) {
    auto next = std::next(it);
    auto& pending = it->pending;
    for (size_t i = 0; i < pending.size();) {
      std::optional<ErrorCode> outcome = marker_outcome(*it, pending[i]);
      if (!outcome && timed_out) outcome = ErrorCode::kRequestTimedOut;
      if (outcome) {
        it->response.markers[pending[i].marker].topics[pending[i].topic].partitions[pending[i].partition].error_code =
            protocol::to_int(*outcome);
        pending[i] = pending.back();
        pending.pop_back();
      } else {
        ++i;
      }
    }
    if (pending.empty()) {
      executor_.cancel(it->timer);
      finished.splice(finished.end(), marker_waiters_, it);
    }
    it = next;
  }
  for (MarkerWaiter& w : finished) w.done(std::move(w.response));
}

void Broker::time_out_marker_waiter(std::list<MarkerWaiter>::iterator it) {
  std::list<MarkerWaiter> finished;
  finished.splice(finished.end(), marker_waiters_, it);
  MarkerWaiter& w = finished.front();
  for (const MarkerWaiter::Pending& pending : w.pending) {
    // Decided now if it can be (a flusher report may be queued behind this
    // timer); REQUEST_TIMED_OUT otherwise.
    const ErrorCode code = marker_outcome(w, pending).value_or(ErrorCode::kRequestTimedOut);
    w.response.markers[pending.marker].topics[pending.topic].partitions[pending.partition].error_code =
        protocol::to_int(code);
  }
  w.pending.clear();
  EDDY_LOG_DEBUG("WriteTxnMarkers: markers not durable within {} ms (request.timeout.ms)",
                 options_.txn_marker_timeout_ms);
  w.done(std::move(w.response));
}

}  // namespace eddy::broker
