// PartitionGroups, the leader's side of follower fetches: a Fetch from a
// follower node names any number of groups (one partition each; Kafka's
// replica fetch). Each partition goes to its group's core as the single
// fetch it stands for (raft::single_fetch); the answer carries the log's
// batches from the fetch offset as file regions, sent with sendfile like a
// client's fetch (the core does not read them: leader_reads_entries).
//
// Long poll: a Fetch with MaxWaitMs > 0 whose every partition has nothing
// the follower does not know yet (no entries past its fetch offset, no new
// high watermark, no error, divergence or snapshot) is held, up to
// MaxWaitMs, until a group that the follower replicates changes (entries
// appended, high watermark moved, role or epoch changed: after_step) or
// the deadline passes. Then its partitions go to their cores again (a
// fresh answer; the core counts the fetch again, as it would a new one)
// and it is answered.
//
// Invariants:
//  - only the group's other replicas fetch from it (anything else is
//    INVALID_REQUEST): what the leader keeps per fetcher is bounded;
//  - at most kMaxHeldFetches are held, and at most one per follower node:
//    a new held Fetch from the same node answers the older one first (a
//    connection its follower gave up);
//  - a held partition goes to its core again only while it is that
//    group's latest fetch from the node (Group::fetches_seen): an older
//    fetch offset must never overwrite what a newer fetch told the leader
//    (a follower restarted on a wiped disk fetches from 0);
//  - every Fetch gets exactly one answer (held ones too, on stop()).
#include <algorithm>

#include "app/partition_groups.h"
#include "port/log.h"
#include "port/port.h"
#include "protocol/errors.h"
#include "protocol/generated/apis.h"
#include "raft/kafka_wire.h"

namespace eddy::app {

namespace {

using protocol::ErrorCode;

int16_t error_of(const Status& s) {
  const int16_t code = s.kafka_error_code();
  return code != 0 ? code : protocol::to_int(ErrorCode::kInvalidRequest);
}

}  // namespace

void PartitionGroups::on_fetch(net::ConnectionContext& connection, const protocol::FrameBytes& frame,
                               const protocol::ParsedRequestHeader& h, net::ResponseSlot slot) {
  protocol::FetchRequest request;
  Status s = protocol::decode_request_body(frame, h, &request);
  size_t parts = 0;
  for (const auto& t : request.topics) parts += t.partitions.size();
  if (s.ok() && (parts == 0 || parts > kMaxFetchParts)) {
    s = Status::invalid_argument("a follower's Fetch names " + std::to_string(parts) + " partitions");
  }
  if (!s.ok()) {
    EDDY_LOG_WARN("controller listener: closing {}: {}", connection.peer(), s.message());
    slot.close_connection();
    return;
  }
  HeldFetch f;
  f.replica = request.replica_state.replica_id != -1 ? request.replica_state.replica_id : request.replica_id;
  f.version = h.header.request_api_version;
  f.correlation_id = h.header.correlation_id;
  f.max_bytes = std::max(request.max_bytes, 1);
  f.slot = std::move(slot);
  f.parts.reserve(parts);
  for (size_t ti = 0; ti < request.topics.size(); ++ti) {
    const auto& t = request.topics[ti];
    for (size_t pi = 0; pi < t.partitions.size(); ++pi) {
      FetchPart part;
      part.topic = t.topic;
      part.topic_id = t.topic_id;
      part.partition = t.partitions[pi].partition;
      part.max_bytes = std::max(t.partitions[pi].partition_max_bytes, 1);
      Group* g = find_named(part.topic, part.topic_id, part.partition);
      if (g == nullptr || g->failed || stopped_) {
        // Not here (yet: the topic's record may still be on its way), or
        // stopped: the follower's core asks again.
        part.error = protocol::to_int(ErrorCode::kUnknownTopicOrPartition);
      } else if (std::find(g->replicas.begin(), g->replicas.end(), f.replica) == g->replicas.end() ||
                 f.replica == options_.node_id) {
        // Only the group's other replicas fetch (what the leader keeps per
        // fetcher stays bounded by them).
        part.error = protocol::to_int(ErrorCode::kInvalidRequest);
      } else if (s = raft::from_kafka(raft::single_fetch(request, ti, pi), g->address, &part.request); !s.ok()) {
        EDDY_LOG_DEBUG("controller listener: Fetch of {}-{} from {} refused: {}", g->topic, g->partition,
                       connection.peer(), s.message());
        part.error = error_of(s);
      }
      f.parts.push_back(std::move(part));
    }
  }
  deliver_fetch(f, /*again=*/false);
  if (request.max_wait_ms > 0 && !stopped_ && nothing_to_answer(f)) {
    for (auto it = held_fetches_.begin(); it != held_fetches_.end(); ++it) {
      if (it->replica != f.replica) continue;
      HeldFetch older = std::move(*it);
      held_fetches_.erase(it);
      answer_fetch(older);
      break;
    }
    if (held_fetches_.size() < kMaxHeldFetches) {
      f.deadline_ms = port::monotonic_millis() + std::min<int64_t>(request.max_wait_ms, fetch_max_wait_ms_);
      held_fetches_.push_back(std::move(f));
      return;
    }
  }
  answer_fetch(f);
}

void PartitionGroups::deliver_fetch(HeldFetch& f, bool again) {
  const int64_t now = port::monotonic_millis();
  for (FetchPart& part : f.parts) {
    if (part.error != 0) continue;
    Group* g = find_named(part.topic, part.topic_id, part.partition);
    if (g == nullptr || g->failed || stopped_) {
      part.error = protocol::to_int(ErrorCode::kUnknownTopicOrPartition);
      continue;
    }
    uint64_t& seen = g->fetches_seen[f.replica];
    if (again && part.seen != seen) continue;  // superseded: its first answer stands
    part.seen = ++seen;
    raft::Message m;
    m.from = f.replica;
    m.to = options_.node_id;
    m.payload = part.request;
    raft::Payload answer;
    bool answered = false;
    after_step(*g, g->replica->handle(m, now), &m, &answer, &answered);
    if (!answered || g->failed) {
      part.answered = false;
      part.error = protocol::to_int(ErrorCode::kInvalidRequest);
      continue;
    }
    part.answer = std::move(std::get<raft::FetchResponse>(answer));
    part.answered = true;
  }
}

bool PartitionGroups::nothing_to_answer(const HeldFetch& f) {
  for (const FetchPart& part : f.parts) {
    if (part.error != 0 || !part.answered) return false;
    const raft::FetchResponse& a = part.answer;
    if (a.error != raft::FetchError::kNone || a.diverging || !a.snapshot_id.empty() || !a.entries.empty()) return false;
    const Group* g = find_named(part.topic, part.topic_id, part.partition);
    if (g == nullptr) return false;
    if (a.entries_in_log && a.base_offset < g->log->log_end_offset()) return false;
    auto sent = g->high_watermark_sent.find(f.replica);
    if (sent == g->high_watermark_sent.end() || a.high_watermark > sent->second) return false;
  }
  return true;
}

void PartitionGroups::answer_fetch(HeldFetch& f) {
  protocol::FetchResponse response;
  response.responses.reserve(f.parts.size());
  std::vector<std::vector<uint8_t>> encoded(f.parts.size());  // entries the core read (none here)
  int64_t budget = f.max_bytes;
  for (size_t i = 0; i < f.parts.size(); ++i) {
    FetchPart& part = f.parts[i];
    Group* g = part.error == 0 ? find_named(part.topic, part.topic_id, part.partition) : nullptr;
    protocol::FetchResponse::PartitionData data;
    if (g == nullptr) {
      data.partition_index = part.partition;
      data.error_code = part.error != 0 ? part.error : protocol::to_int(ErrorCode::kUnknownTopicOrPartition);
      response.responses.push_back({part.topic, part.topic_id, {std::move(data)}, {}});
      continue;
    }
    protocol::FetchResponse one;
    if (Status s = raft::to_kafka(part.answer, g->address, raft::EntryEncoding{}, &encoded[i], &one); !s.ok()) {
      EDDY_LOG_ERROR("partition {}-{}: cannot encode a fetch answer: {}", g->topic, g->partition, s.to_string());
      data.partition_index = part.partition;
      data.error_code = error_of(s);
      response.responses.push_back({part.topic, part.topic_id, {std::move(data)}, {}});
      continue;
    }
    data = std::move(one.responses[0].partitions[0]);
    const raft::Offset base = part.answer.base_offset;
    if (part.answer.entries_in_log && budget > 0 && base < g->log->log_end_offset()) {
      if (g->batch_log->boundary_at_or_below(base) != base) {
        // Never for a follower's log end (it ends where a batch ends); its
        // core finds out by the empty answer's epochs next time.
        EDDY_LOG_WARN("partition {}-{}: a fetch from node {} at offset {} inside a batch", g->topic, g->partition,
                      f.replica, base);
      } else {
        storage::ReadResult read;
        const size_t max = static_cast<size_t>(std::min<int64_t>(part.max_bytes, budget));
        if (Status s = g->log->read(base, max, g->log->log_end_offset(), &read); s.ok()) {
          budget -= static_cast<int64_t>(read.bytes);
          data.records = protocol::Records{{}, std::move(read.regions)};
        } else {
          EDDY_LOG_WARN("partition {}-{}: cannot read from offset {} for node {}: {}", g->topic, g->partition, base,
                        f.replica, s.to_string());
        }
      }
    }
    g->high_watermark_sent[f.replica] = part.answer.high_watermark;
    response.responses.push_back({std::move(one.responses[0].topic), one.responses[0].topic_id, {std::move(data)}, {}});
  }
  protocol::OutputBuffer out;
  Status s = protocol::encode_response_frame(response, f.version, f.correlation_id, &out);
  if (!s.ok()) EDDY_LOG_ERROR("controller listener: cannot encode FetchResponse: {}", s.message());
  f.slot.respond(std::move(out));
}

void PartitionGroups::wake_held_fetches(const Group& g) {
  std::vector<HeldFetch> woken;
  for (auto it = held_fetches_.begin(); it != held_fetches_.end();) {
    const bool follows = it->replica != options_.node_id &&
                         std::find(g.replicas.begin(), g.replicas.end(), it->replica) != g.replicas.end();
    if (follows) {
      woken.push_back(std::move(*it));
      it = held_fetches_.erase(it);
    } else {
      ++it;
    }
  }
  for (HeldFetch& f : woken) {
    deliver_fetch(f, /*again=*/true);
    answer_fetch(f);
  }
}

void PartitionGroups::answer_held_fetches(int64_t now, bool all) {
  if (held_fetches_.empty()) return;
  std::vector<HeldFetch> due;
  for (auto it = held_fetches_.begin(); it != held_fetches_.end();) {
    if (all || it->deadline_ms <= now) {
      due.push_back(std::move(*it));
      it = held_fetches_.erase(it);
    } else {
      ++it;
    }
  }
  for (HeldFetch& f : due) {
    if (!stopped_) deliver_fetch(f, /*again=*/true);
    answer_fetch(f);
  }
}

}  // namespace eddy::app
