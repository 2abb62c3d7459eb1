#include "app/partition_groups.h"

#include <algorithm>
#include <random>

#include "meta/node_ids.h"
#include "port/log.h"
#include "port/port.h"
#include "protocol/record_batch.h"

namespace eddy::app {

namespace {

Status not_leader(const std::string& why) {
  return Status::kafka(Status::Code::kBrokerError, raft::kNotLeaderOrFollower, true, why);
}


}  // namespace

PartitionGroups::PartitionGroups(PartitionGroupsOptions options, port::Executor* reactor,
                                 const SenderFactory& senders, const FetcherFactory& fetchers)
    : options_(std::move(options)), reactor_(reactor) {
  fetch_max_wait_ms_ = std::max<int64_t>(0, std::min(options_.fetch_max_wait_ms, options_.fetch_timeout_ms / 5));
  std::weak_ptr<bool> alive = alive_;
  fetchers_ = fetchers([this, alive](int32_t peer, std::vector<raft::GroupFetch> fetches,
                                     std::vector<std::optional<raft::Payload>> answers) {
    // A fetcher thread: the answers go to the reactor, which owns the groups.
    reactor_->post([this, alive, peer, fetches = std::move(fetches), answers = std::move(answers)]() mutable {
      auto a = alive.lock();
      if (!a || !*a) return;
      on_fetched(peer, std::move(fetches), std::move(answers));
    });
  });
  senders_ = senders([this, alive](const raft::GroupAddress& group, const raft::Message& request,
                                   raft::Payload answer) {
    // A sender thread: the answer goes to the reactor, which owns the groups.
    reactor_->post([this, alive, group, request, answer = std::move(answer)]() mutable {
      auto a = alive.lock();
      if (!a || !*a) return;
      on_answer(group, request, std::move(answer));
    });
  });
}

PartitionGroups::~PartitionGroups() {
  *alive_ = false;
  stop();
}

void PartitionGroups::start() {
  if (started_ || stopped_) return;
  started_ = true;
  senders_->start();
  fetchers_->start();
  schedule_poll();
}

void PartitionGroups::stop() {
  if (stopped_) return;
  stopped_ = true;
  if (poll_timer_ != 0) reactor_->cancel(poll_timer_);
  poll_timer_ = 0;
  // Leaders resign, so that the others elect at once instead of after an
  // election timeout (as the controller's leader does on SIGTERM).
  const int64_t now = port::monotonic_millis();
  size_t resigned = 0;
  for (auto& [key, g] : groups_) {
    if (g->failed || g->replica->role() != raft::Role::kLeader) continue;
    if (!g->replica->resign(now).ok()) continue;
    ++resigned;
    for (raft::Message& m : g->replica->take_outbox()) {
      if (raft::is_request(m.payload)) senders_->send(g->address, std::move(m));
    }
  }
  if (started_ && resigned > 0) senders_->drain(500);
  senders_->stop();
  fetchers_->stop();
  answer_held_fetches(now, /*all=*/true);
}

void PartitionGroups::add(const std::string& topic, const protocol::Uuid& topic_id, int32_t partition,
                          const std::vector<int32_t>& replicas, storage::PartitionLog* log) {
  if (replicas.size() < 2 || by_log_.count(log) > 0) return;
  auto g = std::make_unique<Group>();
  g->topic = topic;
  g->partition = partition;
  g->address.topic_name = topic;
  g->address.topic_id = topic_id;
  g->address.partition = partition;
  g->address.entries = raft::EntryForm::kBatch;
  g->replicas = replicas;
  g->log = log;
  const std::string where = topic + "-" + std::to_string(partition);
  Status s = raft::BatchLog::open(log, raft::BatchLogOptions{}, &g->batch_log);
  raft::ReplicaOptions o;
  o.id = options_.node_id;
  o.name = topic + "-" + std::to_string(partition);
  o.voters = replicas;
  std::sort(o.voters.begin(), o.voters.end());
  o.election_timeout_ms = options_.election_timeout_ms;
  o.fetch_timeout_ms = options_.fetch_timeout_ms;
  // A follower asks again at once after an answer without entries: its
  // leader holds the next Fetch until there is something to answer.
  o.fetch_retry_ms = 0;
  o.fetch_resend_ms = options_.fetch_resend_ms;
  o.leader_reads_entries = false;
  o.bootstrap = options_.bootstrap;
  auto rng = std::make_shared<std::mt19937_64>(std::random_device{}());
  g->store = std::make_unique<raft::FileQuorumStateStore>(log->directory());
  if (s.ok()) {
    s = raft::Replica::open(
        o, g->batch_log.get(), g->batch_log.get(), g->store.get(),
        [rng](uint64_t bound) { return (*rng)() % bound; }, port::monotonic_millis(), &g->replica);
  }
  if (!s.ok()) {
    EDDY_LOG_ERROR("partition {}: its replica cannot start ({}); it answers NOT_LEADER_OR_FOLLOWER", where,
                   s.to_string());
    return;
  }
  g->known_end = log->log_end_offset();
  const storage::PartitionStats stats = log->stats();
  g->known_cuts = stats.truncations + stats.resets;
  EDDY_LOG_INFO("partition {}: replica of a group over nodes {} (epoch {})", where, meta::join_node_ids(o.voters),
                g->replica->epoch());
  Group* raw = g.get();
  by_log_[log] = raw;
  groups_[Key{topic, partition}] = std::move(g);
  // Its high watermark is the group's from now on (the log start until it
  // hears otherwise).
  after_step(*raw, Status(), nullptr, nullptr, nullptr);
}

PartitionGroups::Group* PartitionGroups::find(const std::string& topic, int32_t partition) {
  auto it = groups_.find(Key{topic, partition});
  return it == groups_.end() ? nullptr : it->second.get();
}

PartitionGroups::Group* PartitionGroups::find_named(const std::string& topic, const protocol::Uuid& topic_id,
                                                    int32_t partition) {
  if (!topic.empty()) return find(topic, partition);
  for (auto& [key, group] : groups_) {
    if (group->address.topic_id == topic_id && group->partition == partition) return group.get();
  }
  return nullptr;
}

void PartitionGroups::schedule_poll() {
  poll_timer_ = reactor_->schedule_after(options_.poll_interval_ms, [this] {
    poll_timer_ = 0;
    if (stopped_) return;
    poll_all();
    schedule_poll();
  });
}

void PartitionGroups::poll_all() {
  const int64_t now = port::monotonic_millis();
  for (auto& [key, g] : groups_) {
    if (g->failed) continue;
    after_step(*g, g->replica->poll(now), nullptr, nullptr, nullptr);
  }
  answer_held_fetches(now, /*all=*/false);
}

void PartitionGroups::after_step(Group& g, const Status& step, const raft::Message* answered_by,
                                 raft::Payload* answer, bool* answered) {
  if (!step.ok()) {
    if (step.code() == Status::Code::kLogFull) {
      // A follower whose disk budget is full of data its links have not
      // forwarded (eddy.full.policy=reject): nothing was appended, and it
      // fetches the same entries again until forwarding frees a segment,
      // out of the ISR meanwhile, as the leader refuses produce then.
      const int64_t now = port::monotonic_millis();
      if (now - g.full_logged_ms >= kFullLogIntervalMs) {
        g.full_logged_ms = now;
        EDDY_LOG_WARN("partition {}-{}: this replica cannot take its leader's entries now: {}; it tries again",
                      g.topic, g.partition, step.message());
      }
    } else if (step.code() != Status::Code::kInvalidArgument) {
      fail(g, step);
      return;
    } else {
      EDDY_LOG_WARN("partition {}-{}: a message ignored: {}", g.topic, g.partition, step.message());
    }
  }
  for (raft::Message& m : g.replica->take_outbox()) {
    if (answered_by != nullptr && !*answered && raft::answers(m, *answered_by)) {
      *answer = std::move(m.payload);
      *answered = true;
    } else if (raft::is_request(m.payload) && started_ && !stopped_) {
      if (std::holds_alternative<raft::FetchRequest>(m.payload)) {
        route_fetch(g, std::move(m));
      } else {
        senders_->send(g.address, std::move(m));
      }
    }
    // Any other answer (its request is gone): its peer resends.
  }
  const raft::Replica& r = *g.replica;
  if (r.leader_id() != raft::kNoNode && r.role() != raft::Role::kResigned) {
    g.last_leader = r.leader_id();
    g.last_leader_epoch = r.epoch();
  }
  const int64_t hw = r.high_watermark();
  const bool role_changed = r.role() != g.published_role || r.epoch() != g.published_epoch;
  const bool moved = hw != g.published_high_watermark || role_changed || r.leader_id() != g.published_leader;
  if (hw != g.published_high_watermark) {
    g.published_high_watermark = hw;
    g.log->set_replicated_high_watermark(hw);
  }
  if (moved) {
    // Waiting produces and fetches are decided again (a leader that lost its
    // epoch answers them NOT_LEADER_OR_FOLLOWER).
    g.published_role = r.role();
    g.published_epoch = r.epoch();
    g.published_leader = r.leader_id();
    if (options_.on_high_watermark) options_.on_high_watermark(g.log);
  }
  // What replication did to a follower's log, for the broker's producer
  // state (the leader's own appends come through append(), which the
  // broker records itself).
  const storage::PartitionStats stats = g.log->stats();
  const uint64_t cuts = stats.truncations + stats.resets;
  const int64_t end = g.log->log_end_offset();
  if (cuts != g.known_cuts) {
    g.known_cuts = cuts;
    g.known_end = end;
    if (options_.on_log_changed) options_.on_log_changed(g.log, end, true);
  } else if (end > g.known_end) {
    const int64_t from = g.known_end;
    g.known_end = end;
    if (options_.on_log_changed) options_.on_log_changed(g.log, from, false);
  }
  // Last: answering held fetches runs other groups' cores (and this one's).
  // What wakes them: a leader's new entries or high watermark, any
  // group's new role or epoch.
  const bool leads = r.role() == raft::Role::kLeader;
  const bool news = (leads && (moved || end != g.signalled_end)) || role_changed;
  g.signalled_end = end;
  if (news && !held_fetches_.empty()) wake_held_fetches(g);
}

void PartitionGroups::on_answer(const raft::GroupAddress& group, const raft::Message& request, raft::Payload answer) {
  Group* g = find(group.topic_name, group.partition);
  // Another group of the same name (the topic deleted and created again)
  // must not take the old one's answers.
  if (g == nullptr || g->failed || stopped_ || g->address.topic_id != group.topic_id) return;
  raft::Message m;
  m.from = request.to;
  m.to = options_.node_id;
  m.correlation_id = request.correlation_id;
  m.payload = std::move(answer);
  const auto* fetched = std::get_if<raft::FetchResponse>(&m.payload);
  if (fetched != nullptr) {
    g->last_fetch_quiet = fetched->error == raft::FetchError::kNone && fetched->entries.empty() &&
                          !fetched->diverging && fetched->snapshot_id.empty();
    g->quiet_leader = request.to;
  }
  const int64_t now = port::monotonic_millis();
  after_step(*g, g->replica->handle(m, now), nullptr, nullptr, nullptr);
  // The next fetch goes at once (fetch_retry_ms is 0), not at the next poll.
  if (fetched != nullptr && !g->failed) after_step(*g, g->replica->poll(now), nullptr, nullptr, nullptr);
}

void PartitionGroups::fail(Group& g, const Status& s) {
  if (g.failed) return;
  g.failed = true;
  EDDY_LOG_ERROR("partition {}-{}: its replica stopped: {} (it no longer votes or answers; restart the node "
                 "once the cause is fixed)",
                 g.topic, g.partition, s.to_string());
}

broker::ReplicaStatus PartitionGroups::status(const storage::PartitionLog* log) const {
  broker::ReplicaStatus out;
  auto it = by_log_.find(log);
  if (it == by_log_.end()) return out;
  const Group& g = *it->second;
  out.replicated = true;
  out.replicas = g.replicas;
  if (g.failed) return out;
  const raft::Replica& r = *g.replica;
  out.leader = r.role() == raft::Role::kLeader;
  out.leader_id = r.role() == raft::Role::kResigned ? -1 : r.leader_id();
  out.leader_epoch = r.epoch();
  if (out.leader_id == -1 && g.last_leader == options_.node_id) {
    // It led the latest epoch it knows of and lost its majority (no other
    // leader can be elected without one): see ReplicaStatus::without_majority.
    out.without_majority = true;
    out.leader_id = options_.node_id;
    out.leader_epoch = g.last_leader_epoch;
    out.isr = {options_.node_id};
    return out;
  }
  if (out.leader) {
    const int64_t now = port::monotonic_millis();
    for (const raft::VoterProgressView& v : r.voter_progress()) {
      const bool caught_up = v.last_caught_up_ms >= 0 && now - v.last_caught_up_ms <= options_.replica_lag_time_max_ms;
      if (v.id == options_.node_id || caught_up) out.isr.push_back(v.id);
    }
  }
  return out;
}

void PartitionGroups::durable(storage::PartitionLog* log) {
  // A sync completed: the group runs now rather than at the next poll (up
  // to poll_interval_ms later), so that a follower's fetch reports it, and
  // a leader's high watermark counts it, at once. That is what an acks=all
  // produce waits for, twice.
  auto it = by_log_.find(log);
  if (it == by_log_.end() || it->second->failed || !started_ || stopped_) return;
  Group& g = *it->second;
  after_step(g, g.replica->poll(port::monotonic_millis()), nullptr, nullptr, nullptr);
}

void PartitionGroups::led_here(std::vector<Led>* out) const {
  out->clear();
  for (const auto& [key, g] : groups_) {
    if (g->failed || g->replica->role() != raft::Role::kLeader) continue;
    broker::ReplicaStatus st = status(g->log);
    if (!st.leader) continue;
    std::sort(st.isr.begin(), st.isr.end());
    out->push_back(Led{g->address.topic_id, g->partition, st.leader_epoch, std::move(st.isr)});
  }
}

Status PartitionGroups::append(storage::PartitionLog* log, std::span<const uint8_t> batch,
                               storage::AppendResult* result) {
  auto it = by_log_.find(log);
  if (it == by_log_.end() || it->second->failed) {
    return not_leader("the partition's replica is not running on this node");
  }
  Group& g = *it->second;
  protocol::RecordBatchView view;
  if (protocol::RecordBatchView::parse(batch, &view) != protocol::BatchError::kOk || view.size() != batch.size()) {
    return Status::invalid_argument("not one record batch");
  }
  raft::Offset offset = -1;
  const int32_t offsets = view.last_offset_delta() + 1;
  Status s = g.replica->append(std::string(reinterpret_cast<const char*>(batch.data()), batch.size()), &offset, offsets);
  if (!s.ok()) return s;
  result->base_offset = offset;
  result->last_offset = offset + offsets - 1;
  result->log_append_time_ms = -1;
  result->log_start_offset = log->log_start_offset();
  g.known_end = log->log_end_offset();
  // A poll asks for the sync of the new entries now (not at the next
  // poll): the high watermark counts the leader's own durable offset.
  after_step(g, g.replica->poll(port::monotonic_millis()), nullptr, nullptr, nullptr);
  return Status();
}

void PartitionGroups::closing(storage::PartitionLog* log) {
  auto it = by_log_.find(log);
  if (it == by_log_.end()) return;
  const Key key{it->second->topic, it->second->partition};
  by_log_.erase(it);
  groups_.erase(key);
  pending_fetches_.erase(key);
}

}  // namespace eddy::app
