#include "raft/quorum_runtime.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <type_traits>
#include <utility>

#include "port/log.h"
#include "port/port.h"

namespace eddy::raft {

QuorumRuntime::QuorumRuntime(QuorumRuntimeOptions options, std::unique_ptr<RaftLog> log,
                             std::unique_ptr<SnapshotStore> snapshots, std::unique_ptr<QuorumStateStore> store)
    : options_(std::move(options)), log_(std::move(log)), snapshots_(std::move(snapshots)), store_(std::move(store)) {}

Status QuorumRuntime::open(QuorumRuntimeOptions options, std::unique_ptr<RaftLog> log,
                           std::unique_ptr<SnapshotStore> snapshots, std::unique_ptr<QuorumStateStore> store,
                           ChannelFactory channels, std::unique_ptr<QuorumRuntime>* out) {
  if (options.poll_interval_ms <= 0) return Status::invalid_argument("raft: poll interval must be positive");
  if (options.on_committed && !options.on_snapshot) {
    return Status::invalid_argument("raft: a caller of committed entries must load snapshots too");
  }
  std::unique_ptr<QuorumRuntime> rt(
      new QuorumRuntime(std::move(options), std::move(log), std::move(snapshots), std::move(store)));
  auto rng = std::make_shared<std::mt19937_64>(std::random_device{}());
  Replica::Random random = [rng](uint64_t bound) { return (*rng)() % bound; };
  Status s = Replica::open(rt->options_.replica, rt->log_.get(), rt->snapshots_.get(), rt->store_.get(),
                           std::move(random), port::monotonic_millis(), &rt->replica_);
  if (!s.ok()) return s;
  for (NodeId peer : rt->options_.replica.voters) {
    if (peer == rt->options_.replica.id) continue;
    auto sender = std::make_unique<Sender>();
    sender->peer = peer;
    sender->channel = channels(peer);
    if (!sender->channel) return Status::invalid_argument("raft: no channel to node " + std::to_string(peer));
    rt->senders_.emplace(peer, std::move(sender));
  }
  rt->next_committed_ = std::max<Offset>(0, rt->options_.committed_from);
  rt->publish_view();
  *out = std::move(rt);
  return Status();
}

QuorumRuntime::~QuorumRuntime() { stop(); }

void QuorumRuntime::start() {
  if (started_) return;
  started_ = true;
  for (auto& [peer, sender] : senders_) {
    Sender* s = sender.get();
    s->thread = std::thread([this, s] { run_sender(s); });
  }
  group_thread_ = std::thread([this] { run_group(); });
}

void QuorumRuntime::stop(int64_t grace_ms) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (stopping_) return;
    if (started_ && grace_ms > 0) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(grace_ms);
      resign_requested_ = true;
      wake_.notify_all();
      resigned_.wait_until(lock, until, [this] { return resign_done_; });
      resigned_.wait_until(lock, until, [this] { return senders_idle(); });
    }
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& [peer, sender] : senders_) {
    sender->channel->interrupt();
    sender->wake.notify_all();
  }
  if (group_thread_.joinable()) group_thread_.join();
  for (auto& [peer, sender] : senders_) {
    if (sender->thread.joinable()) sender->thread.join();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  inbox_.clear();
  proposals_.clear();
  snapshot_requests_.clear();
  appended_.clear();
  pending_proposals_ = 0;
}

void QuorumRuntime::take_snapshot(Offset end_offset, std::string bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    // Only the newest matters: an older one waiting is replaced.
    snapshot_requests_.clear();
    snapshot_requests_.push_back(SnapshotRequest{end_offset, std::move(bytes)});
  }
  wake_.notify_one();
}

void QuorumRuntime::deliver(Message request, Answer answer) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    inbox_.push_back(Arrival{std::move(request), std::move(answer)});
  }
  wake_.notify_one();
}

void QuorumRuntime::propose(std::string payload, Proposed done) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!stopping_ && pending_proposals_ < kMaxPendingProposals) {
      ++pending_proposals_;
      proposals_.push_back(Proposal{std::move(payload), std::move(done)});
      wake_.notify_one();
      return;
    }
  }
  done(Status::kafka(Status::Code::kBrokerError, kNotLeaderOrFollower, true,
                     "raft " + options_.name + ": too many changes waiting to be committed"),
       -1);
}

QuorumView QuorumRuntime::view() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return view_;
}

Leadership QuorumRuntime::leadership() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return leadership_;
}

void QuorumRuntime::run_group() {
  int64_t next_poll = 0;
  for (;;) {
    std::deque<Arrival> arrivals;
    std::deque<Proposal> proposals;
    std::deque<SnapshotRequest> snapshots;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      const int64_t wait_ms = std::max<int64_t>(0, next_poll - port::monotonic_millis());
      wake_.wait_for(lock, std::chrono::milliseconds(wait_ms), [this] {
        return stopping_ || !inbox_.empty() || !proposals_.empty() || !snapshot_requests_.empty() ||
               (resign_requested_ && !resign_done_);
      });
      if (stopping_) return;
      arrivals.swap(inbox_);
      proposals.swap(proposals_);
      snapshots.swap(snapshot_requests_);
    }
    for (SnapshotRequest& r : snapshots) store_snapshot(r);
    for (Arrival& a : arrivals) step(std::move(a), port::monotonic_millis());
    append_proposals(std::move(proposals), port::monotonic_millis());
    const int64_t now = port::monotonic_millis();
    resign_if_asked(now);
    if (now >= next_poll) {
      poll(now);
      next_poll = now + options_.poll_interval_ms;
    }
    publish_commits(now);
    answer_held_fetches(port::monotonic_millis(), /*all=*/false);
    publish_view();
  }
}

void QuorumRuntime::step(Arrival arrival, int64_t now_ms) {
  if (failed_) {
    if (arrival.answer) arrival.answer(nullptr);
    return;
  }
  Status s = replica_->handle(arrival.message, now_ms);
  if (!s.ok() && s.code() != Status::Code::kInvalidArgument) {
    fail(s);
  } else if (!s.ok()) {
    EDDY_LOG_WARN("raft {}: message from node {} ignored: {}", options_.name, arrival.message.from, s.message());
  }
  std::vector<Message> outbox = failed_ ? std::vector<Message>() : replica_->take_outbox();
  // Only voters' fetches are held and remembered: a Fetch on the controller
  // listener may name any replica id, and what is kept per fetcher must
  // stay bounded by the voters.
  const auto& voters = options_.replica.voters;
  if (options_.hold_fetch_ms > 0 && arrival.answer && std::holds_alternative<FetchRequest>(arrival.message.payload) &&
      arrival.message.from != options_.replica.id &&
      std::find(voters.begin(), voters.end(), arrival.message.from) != voters.end()) {
    // A newer Fetch from the same follower: the one held answers first,
    // with what it had (the follower gave up on it and fetches on).
    auto older = held_fetches_.find(arrival.message.from);
    if (older != held_fetches_.end()) {
      HeldFetch h = std::move(older->second);
      held_fetches_.erase(older);
      h.arrival.answer(&h.answer);
    }
    if (hold_if_nothing_new(arrival, outbox, now_ms)) return;
    note_fetch_answers(outbox);
  }
  route(std::move(outbox), arrival.answer ? &arrival : nullptr);
  if (arrival.answer) arrival.answer(nullptr);  // the core gave no answer (route() clears it when it did)
}

bool QuorumRuntime::nothing_new(const Message& answer) const {
  const auto* f = std::get_if<FetchResponse>(&answer.payload);
  if (f == nullptr || f->error != FetchError::kNone || f->diverging || !f->snapshot_id.empty() ||
      !f->entries.empty() || f->entries_in_log) {
    return false;
  }
  auto told = high_watermark_told_.find(answer.to);
  return told != high_watermark_told_.end() && f->high_watermark <= told->second;
}

bool QuorumRuntime::hold_if_nothing_new(Arrival& arrival, std::vector<Message>& outbox, int64_t now_ms) {
  if (replica_->role() != Role::kLeader) return false;
  for (auto it = outbox.begin(); it != outbox.end(); ++it) {
    if (!answers(*it, arrival.message)) continue;
    if (!nothing_new(*it)) return false;
    HeldFetch h;
    h.answer = std::move(it->payload);
    outbox.erase(it);
    route(std::move(outbox), nullptr);
    h.arrival = std::move(arrival);
    h.deadline_ms = now_ms + options_.hold_fetch_ms;
    h.log_end = log_->end_offset();
    h.high_watermark = replica_->high_watermark();
    h.epoch = replica_->epoch();
    const NodeId from = h.arrival.message.from;
    held_fetches_[from] = std::move(h);
    return true;
  }
  return false;
}

void QuorumRuntime::note_fetch_answers(const std::vector<Message>& outbox) {
  for (const Message& m : outbox) {
    if (const auto* f = std::get_if<FetchResponse>(&m.payload)) high_watermark_told_[m.to] = f->high_watermark;
  }
}

void QuorumRuntime::answer_held_fetches(int64_t now_ms, bool all) {
  if (held_fetches_.empty()) return;
  const Offset log_end = log_->end_offset();
  const Offset hw = replica_->high_watermark();
  const Epoch epoch = replica_->epoch();
  const bool leading = replica_->role() == Role::kLeader;
  std::vector<HeldFetch> due;
  for (auto it = held_fetches_.begin(); it != held_fetches_.end();) {
    const HeldFetch& h = it->second;
    if (all || failed_ || !leading || now_ms >= h.deadline_ms || log_end != h.log_end || hw != h.high_watermark ||
        epoch != h.epoch) {
      due.push_back(std::move(it->second));
      it = held_fetches_.erase(it);
    } else {
      ++it;
    }
  }
  for (HeldFetch& h : due) {
    if (failed_) {
      h.arrival.answer(nullptr);
      continue;
    }
    // Through the core again: a fresh answer (the core counts the fetch
    // again, as it would a new one at the same offset).
    Status s = replica_->handle(h.arrival.message, now_ms);
    if (!s.ok() && s.code() != Status::Code::kInvalidArgument) fail(s);
    std::vector<Message> outbox = failed_ ? std::vector<Message>() : replica_->take_outbox();
    note_fetch_answers(outbox);
    route(std::move(outbox), &h.arrival);
    if (h.arrival.answer) h.arrival.answer(nullptr);
  }
}

void QuorumRuntime::poll(int64_t now_ms) {
  if (failed_) return;
  Status s = replica_->poll(now_ms);
  if (!s.ok()) {
    fail(s);
    return;
  }
  route(replica_->take_outbox(), nullptr);
}

void QuorumRuntime::append_proposals(std::deque<Proposal> proposals, int64_t now_ms) {
  size_t refused = 0;
  for (Proposal& p : proposals) {
    Offset offset = -1;
    Status s = failed_ ? Status::kafka(Status::Code::kBrokerError, kNotLeaderOrFollower, true,
                                       "raft " + options_.name + ": the group stopped on this node")
                       : replica_->append(std::move(p.payload), &offset);
    if (s.ok()) {
      appended_.push_back(Appended{offset, replica_->epoch(), now_ms + options_.proposal_timeout_ms, std::move(p.done)});
      continue;
    }
    if (s.kafka_error_code() == kNotLeaderOrFollower) {
      p.done(s, -1);
    } else {
      fail(s);  // the log failed under the append
      p.done(Status::kafka(Status::Code::kBrokerError, kNotLeaderOrFollower, true, s.message()), -1);
    }
    ++refused;
  }
  if (refused > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_proposals_ -= refused;
  }
  // The leader's own appends go out with the next fetch answers; polling
  // now flushes them (the high watermark counts the leader's flushed end).
  if (!proposals.empty() && !appended_.empty()) poll(now_ms);
}

void QuorumRuntime::store_snapshot(const SnapshotRequest& request) {
  if (failed_ || request.end_offset <= log_->start().end_offset) return;
  Status s = request.end_offset <= log_->end_offset()
                 ? replica_->store_snapshot(SnapshotId{request.end_offset, log_->epoch_at(request.end_offset - 1)},
                                            request.bytes)
                 : Status::invalid_argument("past the log end " + std::to_string(log_->end_offset()));
  // The log keeps its entries: nothing is lost, the disk is only not freed.
  if (!s.ok()) EDDY_LOG_WARN("raft {}: snapshot at offset {} not taken: {}", options_.name, request.end_offset,
                             s.to_string());
}

void QuorumRuntime::publish_snapshot() {
  const SnapshotId start = log_->start();
  if (!options_.on_committed || next_committed_ >= start.end_offset) return;
  // The entries the caller still needs are gone (a snapshot from the leader,
  // or a restart after this node's own): it loads the snapshot first.
  std::string bytes;
  Status s = snapshots_->read(start, 0, static_cast<size_t>(snapshots_->latest_size()), &bytes);
  if (!s.ok()) {
    fail(s.with_context("raft: reading the snapshot the log starts at"));
    return;
  }
  options_.on_snapshot(start, std::move(bytes));
  next_committed_ = start.end_offset;
}

void QuorumRuntime::publish_commits(int64_t now_ms) {
  if (failed_) return;
  publish_snapshot();
  if (failed_) return;
  const Offset hw = replica_->high_watermark();
  std::vector<Entry> entries;
  while (options_.on_committed && next_committed_ < hw) {
    const size_t count = static_cast<size_t>(std::min<Offset>(64, hw - next_committed_));
    if (Status s = log_->read(next_committed_, count, &entries); !s.ok() || entries.empty()) {
      fail(s.ok() ? Status::corruption("raft: committed entries missing from the log") : s);
      return;
    }
    for (const Entry& e : entries) options_.on_committed(next_committed_++, e);
  }
  if (!options_.on_committed) next_committed_ = std::max(next_committed_, hw);
  size_t resolved = 0;
  const Offset start = log_->start().end_offset;
  for (auto it = appended_.begin(); it != appended_.end();) {
    const bool present = it->offset >= start && it->offset < log_->end_offset() &&
                         log_->epoch_at(it->offset) == it->epoch;
    if (it->offset < start) {
      // A snapshot covers it now: committed, unless another leader's entry
      // replaced it first, which this node can no longer tell.
      it->done(Status::timeout("raft " + options_.name + ": the change's outcome is unknown (a snapshot covers its "
                               "offset now)"),
               -1);
    } else if (present && it->offset < hw) {
      it->done(Status(), it->offset);
    } else if (!present) {
      it->done(Status::kafka(Status::Code::kBrokerError, kNotLeaderOrFollower, true,
                             "raft " + options_.name + ": leadership changed before the change was committed"),
               -1);
    } else if (now_ms >= it->deadline_ms) {
      it->done(Status::timeout("raft " + options_.name + ": the change was not committed in time (its outcome is "
                               "unknown: it may still be committed)"),
               -1);
    } else {
      ++it;
      continue;
    }
    it = appended_.erase(it);
    ++resolved;
  }
  if (resolved > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_proposals_ -= resolved;
  }
}

void QuorumRuntime::route(std::vector<Message> outbox, Arrival* answered_by) {
  for (Message& m : outbox) {
    if (answered_by != nullptr && answered_by->answer && answers(m, answered_by->message)) {
      Answer answer = std::move(answered_by->answer);
      answered_by->answer = nullptr;
      answer(&m.payload);
    } else if (is_request(m.payload)) {
      enqueue(std::move(m));
    }
    // Any other answer (one whose request is gone) is dropped: its peer
    // retries on its own timers.
  }
}

void QuorumRuntime::enqueue(Message request) {
  auto it = senders_.find(request.to);
  if (it == senders_.end()) return;
  Sender* sender = it->second.get();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (sender->queue.size() >= kMaxQueuedPerPeer) sender->queue.pop_front();
    sender->queue.push_back(std::move(request));
  }
  sender->wake.notify_one();
}

void QuorumRuntime::run_sender(Sender* sender) {
  for (;;) {
    Message request;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      sender->wake.wait(lock, [&] { return stopping_ || !sender->queue.empty(); });
      if (stopping_) return;
      request = std::move(sender->queue.front());
      sender->queue.pop_front();
      sender->calling = true;
    }
    Payload response;
    bool answered = false;
    Status s = sender->channel->call(request, &response, &answered);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      sender->calling = false;
    }
    resigned_.notify_all();
    if (!s.ok()) {
      EDDY_LOG_DEBUG("raft {}: to node {}: {}", options_.name, sender->peer, s.to_string());
      continue;
    }
    if (!answered) continue;
    Message answer{sender->peer, options_.replica.id, request.correlation_id, std::move(response)};
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
      inbox_.push_back(Arrival{std::move(answer), nullptr});
    }
    wake_.notify_one();
  }
}

void QuorumRuntime::resign_if_asked(int64_t now_ms) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!resign_requested_ || resign_done_) return;
  }
  if (!failed_ && replica_->role() == Role::kLeader) {
    Status s = replica_->resign(now_ms);
    if (s.ok()) route(replica_->take_outbox(), nullptr);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  resign_done_ = true;
  resigned_.notify_all();
}

bool QuorumRuntime::senders_idle() const {
  for (const auto& [peer, sender] : senders_) {
    if (!sender->queue.empty() || sender->calling) return false;
  }
  return true;
}

void QuorumRuntime::fail(const Status& status) {
  failed_ = true;
  EDDY_LOG_ERROR("raft {}: stopped on node {}: {} (the node no longer votes or replicates; restart it)",
                 options_.name, options_.replica.id, status.to_string());
}

void QuorumRuntime::publish_view() {
  QuorumView v;
  v.id = replica_->id();
  v.role = replica_->role();
  v.epoch = replica_->epoch();
  v.leader_id = replica_->leader_id();
  v.voted_for = replica_->voted_for();
  v.recovering = replica_->recovering();
  v.failed = failed_;
  v.high_watermark = replica_->high_watermark();
  v.log_end_offset = log_->end_offset();
  v.voters = options_.replica.voters;
  const int64_t mono = port::monotonic_millis();
  const int64_t wall = port::wall_clock_millis();
  auto to_wall = [&](int64_t t) { return t < 0 ? int64_t{-1} : wall - (mono - t); };
  for (const VoterProgressView& p : replica_->voter_progress()) {
    v.voter_progress.push_back({p.id, p.log_end_offset, to_wall(p.last_fetch_ms), to_wall(p.last_caught_up_ms)});
  }
  std::lock_guard<std::mutex> lock(mutex_);
  leadership_ = Leadership{v.leader_id, v.role == Role::kLeader && !v.failed};
  view_ = std::move(v);
}

}  // namespace eddy::raft
