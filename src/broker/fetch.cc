// Fetch: record batches straight from the segment files as file regions
// (sent with sendfile on plaintext connections), never copied by the broker.
// A fetch that finds fewer than min_bytes is parked, without a thread, until
// data arrives on one of its partitions or max_wait_ms passes.
//
// Isolation (v4+): read_uncommitted reads up to the high watermark;
// read_committed up to the last stable offset, with the aborted transactions
// overlapping the returned range ([fetch offset, next offset), as Kafka's
// collectAbortedTransactions) so that the client drops their batches. A
// parked read_committed fetch is woken when the LSO moves: by the durability
// listener (the HW moved) or the stable offset listener (a marker was
// appended), see Broker::on_partition_opened.
//
// A replicated partition (partition_replication.h) is read only on its
// group's leader, up to its high watermark (the group's commit index), and
// checks the consumer's CurrentLeaderEpoch (KIP-320): FENCED_LEADER_EPOCH,
// UNKNOWN_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER with KIP-951's leader hint
// (v12+; NodeEndpoints v16+). Its parked fetches are woken when the group's
// high watermark or leadership moves (Broker::on_replicated_high_watermark).
// The followers' own fetches do not come here: they travel on the
// controller listener to the partition groups' runtime.
#include "broker/broker.h"
#include "broker/replicated_partition.h"
#include "port/log.h"
#include "protocol/errors.h"

namespace eddy::broker {

using protocol::ErrorCode;
using protocol::FetchRequest;
using protocol::FetchResponse;

namespace {

// read_committed: the aborted transactions overlapping the returned range
// [from, to), as Kafka's collectAbortedTransactions lists them.
void add_aborted_transactions(const storage::PartitionLog& log, int64_t from, int64_t to,
                              FetchResponse::PartitionData* out) {
  if (!log.has_aborted_transactions()) return;
  log.transactions().for_each_aborted(from, to, [out](const storage::AbortedTransaction& a) {
    FetchResponse::AbortedTransaction entry;
    entry.producer_id = a.producer_id;
    entry.first_offset = a.first_offset;
    out->aborted_transactions->push_back(entry);
  });
}

}  // namespace

bool Broker::try_answer_fetch(FetchWaiter& waiter, bool force) {
  const FetchRequest& body = waiter.body;
  const int16_t version = waiter.request->version();
  const bool read_committed = version >= 4 && body.isolation_level == 1;
  FetchResponse response;
  if (version >= 7 && body.session_id != 0) {
    // Eddy keeps no fetch sessions: every fetch is a full fetch, and the
    // response's session id 0 tells clients so.
    response.error_code = protocol::to_int(ErrorCode::kFetchSessionIdNotFound);
    respond(*waiter.request, response);
    return true;
  }
  int64_t budget = version >= 3 ? std::max<int32_t>(body.max_bytes, 0) : INT32_MAX;
  bool first_data = true;
  bool errors = false;
  uint64_t total = 0;
  std::set<int32_t> hinted_leaders;  // KIP-951, v16+
  for (size_t t = 0; t < body.topics.size(); ++t) {
    const auto& fetch_topic = body.topics[t];
    FetchResponse::FetchableTopicResponse topic_out;
    topic_out.topic = fetch_topic.topic;
    Topic* topic = topics_.find(fetch_topic.topic);
    const bool refused = !waiter.topic_refused.empty() && waiter.topic_refused[t];
    for (const auto& fp : fetch_topic.partitions) {
      FetchResponse::PartitionData out;
      out.partition_index = fp.partition;
      out.aborted_transactions.reset();
      if (refused || topic == nullptr || topic->local(fp.partition) == nullptr) {
        out.error_code = protocol::to_int(refused ? ErrorCode::kTopicAuthorizationFailed
                                                  : partition_error(topic, fp.partition));
        out.high_watermark = -1;
        errors = true;
        topic_out.partitions.push_back(std::move(out));
        continue;
      }
      storage::PartitionLog* log = topic->local(fp.partition);
      if (const ReplicaStatus status = replica_status(*topic, fp.partition, log); status.replicated) {
        const ErrorCode refusal = leader_error(status, fp.current_leader_epoch);
        if (refusal != ErrorCode::kNone) {
          out.error_code = protocol::to_int(refusal);
          out.high_watermark = -1;
          LeaderHint hint;
          if (version >= 12 && leader_hint(status, refusal, options_.node_id, &hint)) {
            out.current_leader.leader_id = hint.leader_id;
            out.current_leader.leader_epoch = hint.leader_epoch;
            if (version >= 16) hinted_leaders.insert(hint.leader_id);
          }
          errors = true;
          topic_out.partitions.push_back(std::move(out));
          continue;
        }
      }
      out.high_watermark = log->high_watermark();
      out.last_stable_offset = log->last_stable_offset();
      out.log_start_offset = log->log_start_offset();
      // Kafka answers read_committed with a list (maybe empty), else null.
      if (read_committed) out.aborted_transactions.emplace();
      size_t limit = static_cast<size_t>(std::max<int32_t>(fp.partition_max_bytes, 0));
      if (!first_data) limit = std::min<size_t>(limit, static_cast<size_t>(std::max<int64_t>(budget, 0)));
      storage::ReadResult read;
      Status s;
      const int64_t upper = read_committed ? out.last_stable_offset : -1;
      if (limit > 0 || first_data) s = log->read(fp.fetch_offset, std::max<size_t>(limit, 1), upper, &read);
      if (s.code() == Status::Code::kOutOfRange) {
        out.error_code = protocol::to_int(ErrorCode::kOffsetOutOfRange);
        errors = true;
      } else if (!s.ok()) {
        out.error_code = protocol::to_int(ErrorCode::kKafkaStorageError);
        errors = true;
      } else if (read.bytes > 0 && (first_data || static_cast<int64_t>(read.bytes) <= budget)) {
        // Kafka's rule: the first batch of the first partition with data is
        // returned even when larger than the limits, so a consumer can always
        // make progress; later partitions get only what fits.
        first_data = false;
        budget -= static_cast<int64_t>(read.bytes);
        total += read.bytes;
        topic->traffic.bytes_out += read.bytes;
        if (read.next_offset > fp.fetch_offset) {
          topic->traffic.messages_out += static_cast<uint64_t>(read.next_offset - fp.fetch_offset);
        }
        protocol::Records records;
        records.file_regions = std::move(read.regions);
        out.records = std::move(records);
        if (read_committed) add_aborted_transactions(*log, fp.fetch_offset, read.next_offset, &out);
      }
      if (!out.records) out.records = protocol::Records{};
      topic_out.partitions.push_back(std::move(out));
    }
    response.responses.push_back(std::move(topic_out));
  }
  if (!force && !errors && total < static_cast<uint64_t>(std::max<int32_t>(body.min_bytes, 0))) return false;
  add_leader_endpoints(waiter.request->client.listener, hinted_leaders, &response.node_endpoints);
  respond(*waiter.request, response);
  return true;
}

void Broker::handle_fetch(RequestPtr request) {
  FetchWaiter waiter;
  if (!decode(*request, &waiter.body)) return;
  if (authorizer_) {  // without one nothing is refused, and nothing is allocated for it
    waiter.topic_refused.reserve(waiter.body.topics.size());
    for (const auto& t : waiter.body.topics) {
      waiter.topic_refused.push_back(
          !authorized(*request, security::AclOperation::kRead, security::ResourceType::kTopic, t.topic));
    }
  }
  waiter.request = std::move(request);
  bool can_wait = waiter.body.max_wait_ms > 0 && waiter.body.min_bytes > 0;
  if (try_answer_fetch(waiter, !can_wait)) return;
  // The request frame is no longer needed: the decoded body owns its names.
  waiter.request->frame.clear();
  waiter.request->frame.shrink_to_fit();
  fetch_waiters_.push_back(std::move(waiter));
  auto it = std::prev(fetch_waiters_.end());
  it->timer = executor_.schedule_after(it->body.max_wait_ms, [this, it] {
    try_answer_fetch(*it, true);
    fetch_waiters_.erase(it);
  });
}

void Broker::wake_fetch_waiters(const std::string& topic, int32_t partition) {
  for (auto it = fetch_waiters_.begin(); it != fetch_waiters_.end();) {
    bool interested = false;
    for (const auto& t : it->body.topics) {
      if (t.topic != topic) continue;
      for (const auto& p : t.partitions) interested |= partition < 0 || p.partition == partition;
    }
    if (interested && try_answer_fetch(*it, false)) {
      executor_.cancel(it->timer);
      it = fetch_waiters_.erase(it);
    } else {
      ++it;
    }
  }
}

void Broker::on_connection_closed(uint64_t connection_id) {
  EDDY_DCHECK_ON_LOOP(executor_);
  sasl_sessions_.erase(connection_id);
  for (auto it = fetch_waiters_.begin(); it != fetch_waiters_.end();) {
    if (it->request->client.connection_id == connection_id) {
      executor_.cancel(it->timer);
      it->request->reply->send_nothing();
      it = fetch_waiters_.erase(it);
    } else {
      ++it;
    }
  }
}

void Broker::drain() {
  EDDY_DCHECK_ON_LOOP(executor_);
  drain_groups();
  for (auto it = fetch_waiters_.begin(); it != fetch_waiters_.end(); it = fetch_waiters_.erase(it)) {
    executor_.cancel(it->timer);
    try_answer_fetch(*it, true);
  }
  complete_produce_waiters(false);
  while (!produce_waiters_.empty()) {
    executor_.cancel(produce_waiters_.front().timer);
    finish_produce_waiter(produce_waiters_.begin(), true);
  }
  complete_marker_waiters(/*timed_out=*/true);
  snapshot_producer_state(true);
  if (replication_ != nullptr) {
    // The logs are closed once the reactor stopped: their groups let go of
    // them first (a partition without a group is then led by nobody here).
    for (const Topic* topic : topics_.all()) {
      for (storage::PartitionLog* log : topic->partitions) {
        if (log != nullptr) replication_->closing(log);
      }
    }
  }
}

}  // namespace eddy::broker
