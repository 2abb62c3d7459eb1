#include "raft/replica.h"

#include <algorithm>

#include "port/log.h"

namespace eddy::raft {
namespace {

// Raft's up-to-date rule: compare the last epochs, then the end offsets.
bool at_least_as_up_to_date(Epoch epoch, Offset end, Epoch other_epoch, Offset other_end) {
  return epoch != other_epoch ? epoch > other_epoch : end >= other_end;
}

}  // namespace

const char* role_name(Role role) {
  switch (role) {
    case Role::kUnattached: return "unattached";
    case Role::kFollower: return "follower";
    case Role::kCandidate: return "candidate";
    case Role::kLeader: return "leader";
    case Role::kResigned: return "resigned";
  }
  return "unknown";
}

Replica::Replica(ReplicaOptions options, RaftLog* log, SnapshotStore* snapshots, QuorumStateStore* store,
                 Random random)
    : options_(std::move(options)),
      log_name_(options_.name.empty() ? std::to_string(options_.id) : options_.name),
      log_(log),
      snapshots_(snapshots),
      store_(store),
      random_(std::move(random)) {}

Status Replica::open(ReplicaOptions options, RaftLog* log, SnapshotStore* snapshots, QuorumStateStore* store,
                     Random random, int64_t now_ms, std::unique_ptr<Replica>* out) {
  std::vector<NodeId> sorted = options.voters;
  std::sort(sorted.begin(), sorted.end());
  if (sorted.empty() || std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end() ||
      !std::binary_search(sorted.begin(), sorted.end(), options.id)) {
    return Status::invalid_argument("raft: the voters must be distinct and include the replica's own id");
  }
  // A fetch_retry_ms of 0 (ask again at once: a leader that holds fetches)
  // needs a resend time of its own.
  if (options.election_timeout_ms <= 0 || options.fetch_timeout_ms <= 0 || options.fetch_retry_ms < 0 ||
      (options.fetch_retry_ms == 0 && options.fetch_resend_ms <= 0) ||
      options.max_fetch_entries == 0 || options.max_snapshot_chunk_bytes == 0 || options.max_snapshot_bytes <= 0) {
    return Status::invalid_argument("raft: timeouts and max_fetch_entries must be positive");
  }
  if (log == nullptr || snapshots == nullptr || store == nullptr || !random) {
    return Status::invalid_argument("raft: log, snapshots, store and random needed");
  }
  std::unique_ptr<Replica> r(new Replica(std::move(options), log, snapshots, store, std::move(random)));
  r->now_ = now_ms;
  Status s = r->start_log_at_snapshot();
  if (!s.ok()) return s;
  QuorumState state;
  s = store->read(&state);
  if (s.is_not_found()) {
    state = QuorumState{};
    state.recovering = !r->options_.bootstrap;
    s = store->write(state);
  }
  if (!s.ok()) return s;
  r->state_ = state;
  // A restarted leader does not know what it acknowledged: it resigns its
  // epoch (as KRaft does). A follower resumes following.
  if (state.leader_id == r->id()) {
    r->role_ = Role::kResigned;
    r->election_deadline_ = now_ms + r->random_election_timeout();
  } else if (state.leader_id != kNoNode) {
    r->role_ = Role::kFollower;
    r->last_leader_contact_ = now_ms;
    r->next_fetch_at_ = now_ms;
  } else {
    r->role_ = Role::kUnattached;
    r->election_deadline_ = now_ms + r->random_election_timeout();
  }
  EDDY_LOG_INFO("raft {}: open in epoch {} as {}{}", r->log_name_, state.epoch, role_name(r->role_),
                state.recovering ? " (recovering after a wiped disk)" : "");
  *out = std::move(r);
  return Status();
}

Status Replica::start_log_at_snapshot() {
  const SnapshotId latest = snapshots_->latest();
  const SnapshotId start = log_->start();
  if (latest.end_offset < start.end_offset) {
    return Status::corruption("raft: the log starts at " + std::to_string(start.end_offset) +
                              ", past its latest snapshot (" + std::to_string(latest.end_offset) + ")");
  }
  if (latest.end_offset > start.end_offset) {
    // A crash between storing a snapshot and starting the log there (or a
    // follower's between storing the leader's and resetting its log).
    const bool held = latest.end_offset <= log_->end_offset() && log_->epoch_at(latest.end_offset - 1) == latest.epoch;
    Status s = held ? log_->delete_before(latest) : log_->reset_to(latest);
    if (!s.ok()) return s.with_context("raft: starting the log at its latest snapshot");
  }
  // A snapshot holds committed entries only.
  high_watermark_ = log_->start().end_offset;
  return Status();
}

Status Replica::store_snapshot(SnapshotId id, const std::string& bytes) {
  if (id.end_offset <= snapshots_->latest().end_offset) return Status();
  if (id.end_offset > high_watermark_) {
    return Status::invalid_argument("raft: a snapshot at " + std::to_string(id.end_offset) +
                                    " covers entries above the high watermark " + std::to_string(high_watermark_));
  }
  if (Status s = check_deletable(*log_, id); !s.ok()) return s;
  if (Status s = snapshots_->store(id, bytes); !s.ok()) return s.with_context("raft: storing a snapshot");
  Status s = log_->delete_before(id);
  if (!s.ok()) return s.with_context("raft: starting the log at a snapshot");
  EDDY_LOG_INFO("raft {}: snapshot at offset {} (epoch {}, {} bytes): the log starts there", log_name_, id.end_offset,
                id.epoch, bytes.size());
  return Status();
}

std::vector<VoterProgressView> Replica::voter_progress() const {
  std::vector<VoterProgressView> out;
  if (role_ != Role::kLeader) return out;
  out.push_back(VoterProgressView{id(), log_->end_offset(), now_, now_});
  for (const auto& [voter, p] : progress_) {
    out.push_back(VoterProgressView{voter, p.fetched, p.fetched_once ? p.last_fetch_ms : -1, p.caught_up_ms});
  }
  return out;
}

std::vector<Message> Replica::take_outbox() {
  std::vector<Message> out;
  out.swap(outbox_);
  return out;
}

void Replica::send(NodeId to, Payload payload, int32_t correlation_id) {
  outbox_.push_back(Message{id(), to, correlation_id, std::move(payload)});
}

bool Replica::is_voter(NodeId node) const {
  return std::find(options_.voters.begin(), options_.voters.end(), node) != options_.voters.end();
}

int64_t Replica::random_election_timeout() {
  uint64_t t = static_cast<uint64_t>(options_.election_timeout_ms);
  return options_.election_timeout_ms + static_cast<int64_t>(random_(t));
}

Status Replica::persist(const QuorumState& state) {
  if (state == state_) return Status();
  Status s = store_->write(state);
  if (!s.ok()) return s.with_context("raft: writing the quorum state");
  state_ = state;
  return Status();
}

// ---------------------------------------------------------------------------
// Transitions
// ---------------------------------------------------------------------------

Status Replica::become_unattached(Epoch epoch) {
  QuorumState next = state_;
  next.epoch = epoch;
  next.voted_for = kNoNode;
  next.leader_id = kNoNode;
  Status s = persist(next);
  if (!s.ok()) return s;
  role_ = Role::kUnattached;
  epoch_start_offset_ = -1;
  election_deadline_ = now_ + random_election_timeout();
  return Status();
}

Status Replica::become_follower(Epoch epoch, NodeId leader) {
  QuorumState next = state_;
  if (epoch != state_.epoch) next.voted_for = kNoNode;
  next.epoch = epoch;
  next.leader_id = leader;
  Status s = persist(next);
  if (!s.ok()) return s;
  role_ = Role::kFollower;
  epoch_start_offset_ = -1;
  last_leader_contact_ = now_;
  next_fetch_at_ = now_;
  early_election_at_ = -1;
  leader_high_watermark_ = 0;
  validated_end_ = 0;
  snapshot_fetch_.reset();
  EDDY_LOG_DEBUG("raft {}: follower of {} in epoch {}", log_name_, leader, epoch);
  return Status();
}

Status Replica::become_candidate() {
  if (state_.recovering) {
    // A replica that lost its disk may not have the committed entries it
    // voted for before: it stays out of elections until it caught up.
    election_deadline_ = now_ + random_election_timeout();
    return Status();
  }
  // The end offset a candidate advertises must survive a crash: it stands
  // once its log is durable (the next poll looks again).
  Status s = log_->flush();
  if (!s.ok()) return s.with_context("raft: flushing before an election");
  if (log_->durable_offset() < log_->end_offset()) return Status();
  s = persist(QuorumState{state_.epoch + 1, id(), kNoNode, false});
  if (!s.ok()) return s;
  role_ = Role::kCandidate;
  epoch_start_offset_ = -1;
  votes_ = {id()};
  election_deadline_ = now_ + random_election_timeout();
  EDDY_LOG_DEBUG("raft {}: candidate in epoch {}", log_name_, state_.epoch);
  if (votes_.size() >= majority()) return become_leader();
  VoteRequest req{state_.epoch, id(), log_->last_epoch(), log_->end_offset()};
  for (NodeId voter : options_.voters) {
    if (voter != id()) send(voter, req);
  }
  return Status();
}

Status Replica::become_leader() {
  Status s = persist(QuorumState{state_.epoch, id(), id(), false});
  if (!s.ok()) return s;
  role_ = Role::kLeader;
  epoch_start_offset_ = log_->end_offset();
  s = log_->append({Entry{state_.epoch, EntryKind::kLeaderChange, {}}});
  if (!s.ok()) return s.with_context("raft: appending the leader-change entry");
  leader_since_ = now_;
  progress_.clear();
  for (NodeId voter : options_.voters) {
    if (voter != id()) progress_[voter] = VoterProgress{-1, now_};
  }
  next_begin_epoch_resend_ = now_ + options_.fetch_timeout_ms / 4;
  EDDY_LOG_INFO("raft {}: leader of epoch {} from offset {}", log_name_, state_.epoch, epoch_start_offset_);
  for (NodeId voter : options_.voters) {
    if (voter != id()) send(voter, BeginQuorumEpochRequest{state_.epoch, id()});
  }
  update_leader_high_watermark();
  return Status();
}

Status Replica::resign(int64_t now_ms) {
  now_ = now_ms;
  if (role_ != Role::kLeader) return Status::invalid_argument("raft: only a leader can resign");
  role_ = Role::kResigned;
  election_deadline_ = now_ + random_election_timeout();
  std::vector<std::pair<Offset, NodeId>> ranked;
  for (const auto& [voter, p] : progress_) ranked.emplace_back(p.fetched, voter);
  std::sort(ranked.rbegin(), ranked.rend());
  EndQuorumEpochRequest req{state_.epoch, id(), {}};
  for (const auto& entry : ranked) req.preferred_successors.push_back(entry.second);
  for (NodeId voter : options_.voters) {
    if (voter != id()) send(voter, req);
  }
  EDDY_LOG_INFO("raft {}: resigned epoch {}", log_name_, state_.epoch);
  return Status();
}

Status Replica::observe_epoch(Epoch epoch, NodeId leader) {
  if (epoch <= state_.epoch) return Status();
  if (leader != kNoNode && leader != id()) return become_follower(epoch, leader);
  return become_unattached(epoch);
}

// ---------------------------------------------------------------------------
// Timers
// ---------------------------------------------------------------------------

Status Replica::poll(int64_t now_ms) {
  now_ = std::max(now_, now_ms);
  switch (role_) {
    case Role::kUnattached:
    case Role::kCandidate:
    case Role::kResigned:
      if (now_ >= election_deadline_) return become_candidate();
      return Status();
    case Role::kFollower:
      return poll_follower();
    case Role::kLeader:
      return poll_leader();
  }
  return Status();
}

Status Replica::poll_follower() {
  // The fetch offset promises durability: flush what the last answer gave.
  Status s = log_->flush();
  if (!s.ok()) return s.with_context("raft: flushing fetched entries");
  s = update_follower_high_watermark();
  if (!s.ok()) return s;
  bool leader_lost = now_ - last_leader_contact_ >= options_.fetch_timeout_ms;
  bool early = early_election_at_ >= 0 && now_ >= early_election_at_;
  if ((leader_lost || early) && !state_.recovering) return become_candidate();
  if (now_ < next_fetch_at_) return Status();
  // The fetch offset tells the leader what this replica holds durably (it
  // counts it for the high watermark): wait for the flush asked above.
  if (!snapshot_fetch_ && log_->durable_offset() < log_->end_offset()) return Status();
  ++last_fetch_id_;
  fetch_outstanding_ = true;
  if (snapshot_fetch_) {
    send(state_.leader_id,
         FetchSnapshotRequest{state_.epoch, id(), snapshot_fetch_->id,
                              static_cast<int64_t>(snapshot_fetch_->bytes.size())},
         last_fetch_id_);
  } else {
    send(state_.leader_id,
         FetchRequest{state_.epoch, id(), log_->end_offset(), log_->last_epoch(), state_.recovering}, last_fetch_id_);
  }
  next_fetch_at_ = now_ + (options_.fetch_resend_ms > 0 ? options_.fetch_resend_ms : options_.fetch_retry_ms);
  return Status();
}

Status Replica::poll_leader() {
  Status s = log_->flush();
  if (!s.ok()) return s.with_context("raft: flushing the leader's log");
  update_leader_high_watermark();
  if (now_ - leader_since_ >= options_.fetch_timeout_ms && !quorum_reached_recently()) {
    EDDY_LOG_WARN("raft {}: no fetches from a majority for {} ms in epoch {}: resigning", log_name_,
                  options_.fetch_timeout_ms, state_.epoch);
    return resign(now_);
  }
  if (now_ >= next_begin_epoch_resend_) {
    // Voters that have not fetched lately may not know this leader (lost
    // BeginQuorumEpoch, restart): tell them again.
    for (const auto& [voter, p] : progress_) {
      if (now_ - p.last_fetch_ms >= options_.fetch_timeout_ms / 4) {
        send(voter, BeginQuorumEpochRequest{state_.epoch, id()});
      }
    }
    next_begin_epoch_resend_ = now_ + options_.fetch_timeout_ms / 4;
  }
  return Status();
}

bool Replica::quorum_reached_recently() const {
  size_t heard = 1;  // the leader itself
  for (const auto& [voter, p] : progress_) {
    if (now_ - p.last_fetch_ms < options_.fetch_timeout_ms) ++heard;
  }
  return heard >= majority();
}

void Replica::update_leader_high_watermark() {
  std::vector<Offset> held{log_->durable_offset()};
  for (const auto& [voter, p] : progress_) held.push_back(std::max<Offset>(p.fetched, 0));
  std::sort(held.rbegin(), held.rend());
  Offset majority_held = held[majority() - 1];
  // Only once this epoch's leader-change entry is covered (Raft's "commit an
  // entry of the current term"), and never backwards.
  if (majority_held > epoch_start_offset_ && majority_held > high_watermark_) high_watermark_ = majority_held;
}

Status Replica::update_follower_high_watermark() {
  // Only entries known to match the leader's log count, and only durable ones.
  Offset hw = std::min({leader_high_watermark_, log_->durable_offset(), validated_end_});
  if (hw > high_watermark_) high_watermark_ = hw;
  if (!state_.recovering || log_->last_epoch() != state_.epoch) return Status();
  // Caught up after a wiped disk once this replica's high watermark reached
  // the leader's and covers the leader's leader-change entry (the first
  // entry of its epoch): every entry committed anywhere is below the
  // leader's high watermark then, so this replica durably holds it.
  // leader_high_watermark_ is 0 until the leader answered in this epoch (a
  // replica that opens at its snapshot has a high watermark before that).
  Offset epoch_start = log_->end_offset_for_epoch(state_.epoch - 1).end_offset;
  if (leader_high_watermark_ == 0 || high_watermark_ < leader_high_watermark_ || high_watermark_ <= epoch_start) {
    return Status();
  }
  QuorumState next = state_;
  next.recovering = false;
  Status s = persist(next);
  if (!s.ok()) return s;
  EDDY_LOG_INFO("raft {}: caught up to offset {} after a wiped disk: voting again", log_name_, high_watermark_);
  return Status();
}

// ---------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------

Status Replica::handle(const Message& message, int64_t now_ms) {
  if (message.to != id()) return Status::invalid_argument("raft: message addressed to another replica");
  now_ = std::max(now_, now_ms);
  NodeId from = message.from;
  return std::visit(
      [&](const auto& p) -> Status {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, VoteRequest>) return handle_vote_request(from, p);
        if constexpr (std::is_same_v<T, VoteResponse>) return handle_vote_response(from, p);
        if constexpr (std::is_same_v<T, BeginQuorumEpochRequest>) return handle_begin_epoch(from, p);
        if constexpr (std::is_same_v<T, BeginQuorumEpochResponse>) return observe_epoch(p.leader_epoch, p.leader_id);
        if constexpr (std::is_same_v<T, EndQuorumEpochRequest>) return handle_end_epoch(p);
        if constexpr (std::is_same_v<T, FetchRequest>) return handle_fetch_request(from, message.correlation_id, p);
        if constexpr (std::is_same_v<T, FetchResponse>) return handle_fetch_response(from, message.correlation_id, p);
        if constexpr (std::is_same_v<T, FetchSnapshotRequest>) {
          return handle_fetch_snapshot_request(from, message.correlation_id, p);
        }
        if constexpr (std::is_same_v<T, FetchSnapshotResponse>) {
          return handle_fetch_snapshot_response(from, message.correlation_id, p);
        }
        return Status();
      },
      message.payload);
}

Status Replica::handle_vote_request(NodeId from, const VoteRequest& req) {
  if (req.candidate_id != from || req.candidate_epoch <= 0 || req.last_offset < 0 || req.last_offset_epoch < 0) {
    return Status::invalid_argument("raft: malformed vote request from " + std::to_string(from));
  }
  // A replica already waiting to stand (candidate, or unattached) keeps its
  // deadline when it refuses a candidate whose log is behind its own: a
  // hopeless candidacy must not push back the one that can win (Raft resets
  // the timer only on a granted vote; the fault runs saw elections of 8 s
  // without this).
  const bool was_waiting = role_ == Role::kCandidate || role_ == Role::kUnattached;
  const int64_t deadline_before = election_deadline_;
  if (req.candidate_epoch > state_.epoch) {
    Status s = become_unattached(req.candidate_epoch);
    if (!s.ok()) return s;
  }
  const bool log_ok =
      at_least_as_up_to_date(req.last_offset_epoch, req.last_offset, log_->last_epoch(), log_->end_offset());
  bool grant = req.candidate_epoch == state_.epoch && role_ == Role::kUnattached && !state_.recovering &&
               is_voter(from) && (state_.voted_for == kNoNode || state_.voted_for == from) && log_ok;
  if (!grant && !log_ok && was_waiting) election_deadline_ = std::min(election_deadline_, deadline_before);
  if (grant) {
    QuorumState next = state_;
    next.voted_for = from;
    Status s = persist(next);
    if (!s.ok()) return s;
    election_deadline_ = now_ + random_election_timeout();
  }
  send(from, VoteResponse{state_.epoch, state_.leader_id, grant});
  return Status();
}

Status Replica::handle_vote_response(NodeId from, const VoteResponse& resp) {
  if (resp.leader_epoch > state_.epoch) return observe_epoch(resp.leader_epoch, resp.leader_id);
  if (role_ != Role::kCandidate || resp.leader_epoch != state_.epoch || !resp.vote_granted || !is_voter(from)) {
    return Status();
  }
  votes_.insert(from);
  if (votes_.size() >= majority()) return become_leader();
  return Status();
}

Status Replica::handle_begin_epoch(NodeId from, const BeginQuorumEpochRequest& req) {
  if (req.leader_id != from || req.leader_epoch <= 0) {
    return Status::invalid_argument("raft: malformed BeginQuorumEpoch from " + std::to_string(from));
  }
  if (req.leader_epoch == state_.epoch && (role_ == Role::kLeader || role_ == Role::kResigned)) {
    // Two leaders in one epoch cannot happen: each needs a majority of votes.
    return Status::corruption("raft: BeginQuorumEpoch from " + std::to_string(from) + " for this leader's epoch");
  }
  if (req.leader_epoch > state_.epoch || (req.leader_epoch == state_.epoch && role_ != Role::kFollower)) {
    Status s = become_follower(req.leader_epoch, req.leader_id);
    if (!s.ok()) return s;
  }
  send(from, BeginQuorumEpochResponse{state_.epoch, state_.leader_id});
  return Status();
}

Status Replica::handle_end_epoch(const EndQuorumEpochRequest& req) {
  if (req.leader_epoch > state_.epoch) return become_unattached(req.leader_epoch);
  if (req.leader_epoch < state_.epoch || role_ != Role::kFollower || state_.leader_id != req.leader_id) {
    return Status();
  }
  // Stand soon, the leader's preferred successors first (KRaft's backoff).
  auto it = std::find(req.preferred_successors.begin(), req.preferred_successors.end(), id());
  int64_t rank = it - req.preferred_successors.begin();
  int64_t slot = std::max<int64_t>(options_.election_timeout_ms / 4, 1);
  early_election_at_ = now_ + rank * slot + static_cast<int64_t>(random_(static_cast<uint64_t>(slot)));
  return Status();
}

Status Replica::handle_fetch_request(NodeId from, int32_t correlation_id, const FetchRequest& req) {
  if (req.replica_id != from || req.fetch_offset < 0 || req.last_fetched_epoch < 0 ||
      req.current_leader_epoch < 0) {
    return Status::invalid_argument("raft: malformed fetch from " + std::to_string(from));
  }
  if (req.current_leader_epoch > state_.epoch) {
    Status s = become_unattached(req.current_leader_epoch);
    if (!s.ok()) return s;
  }
  Status read_status;
  FetchResponse resp = answer_fetch(from, req, &read_status);
  if (!read_status.ok()) return read_status;
  send(from, std::move(resp), correlation_id);
  return Status();
}

FetchResponse Replica::answer_fetch(NodeId from, const FetchRequest& req, Status* read_status) {
  FetchResponse resp;
  resp.leader_epoch = state_.epoch;
  resp.leader_id = role_ == Role::kResigned ? kNoNode : state_.leader_id;
  resp.high_watermark = high_watermark_;
  if (req.current_leader_epoch < state_.epoch) {
    resp.error = FetchError::kFencedLeaderEpoch;
    return resp;
  }
  if (role_ != Role::kLeader) {
    resp.error = FetchError::kNotLeader;
    return resp;
  }
  auto progress = progress_.find(from);
  if (progress != progress_.end() && req.recovering) {
    // What it fetched before losing its disk is gone: it counts for nothing
    // until it has caught up (else a stale leader could "commit" with it).
    progress->second.fetched = -1;
    progress = progress_.end();
  }
  if (progress != progress_.end()) {
    progress->second.last_fetch_ms = now_;
    progress->second.fetched_once = true;
    if (req.fetch_offset >= log_->end_offset()) progress->second.caught_up_ms = now_;
  }
  if (needs_snapshot(req.fetch_offset, req.last_fetched_epoch)) {
    resp.snapshot_id = snapshots_->latest();
    return resp;
  }
  // Kafka's validateOffsetAndEpoch: the fetcher's last epoch must end at or
  // after its fetch offset in this log, else it diverged.
  if (req.fetch_offset > 0 || req.last_fetched_epoch > 0) {
    EpochEndOffset mine = log_->end_offset_for_epoch(req.last_fetched_epoch);
    if (mine.epoch != req.last_fetched_epoch || mine.end_offset < req.fetch_offset) {
      resp.diverging = true;
      resp.diverging_epoch = mine;
      return resp;
    }
  }
  if (progress != progress_.end()) {
    // The latest fetch, not the largest: a follower restarted on a wiped
    // disk fetches from 0 again and must not be counted for what it lost.
    progress->second.fetched = req.fetch_offset;
    update_leader_high_watermark();
    resp.high_watermark = high_watermark_;
  }
  resp.base_offset = req.fetch_offset;
  if (!options_.leader_reads_entries) {
    resp.entries_in_log = true;
    return resp;
  }
  *read_status = log_->read(req.fetch_offset, options_.max_fetch_entries, &resp.entries);
  return resp;
}

bool Replica::takes_answer(NodeId from, Epoch epoch, int32_t correlation_id) {
  if (epoch != state_.epoch || role_ != Role::kFollower || from != state_.leader_id) return false;
  if (!fetch_outstanding_ || correlation_id != last_fetch_id_) return false;  // duplicated or superseded
  fetch_outstanding_ = false;
  return true;
}

Status Replica::handle_fetch_response(NodeId from, int32_t correlation_id, const FetchResponse& resp) {
  if (resp.leader_epoch > state_.epoch) return observe_epoch(resp.leader_epoch, resp.leader_id);
  if (!takes_answer(from, resp.leader_epoch, correlation_id) || snapshot_fetch_) return Status();
  if (resp.error != FetchError::kNone) return Status();
  if (resp.entries_in_log) {
    // Only the leader's runtime sees such an answer: it sends the log's bytes.
    return Status::invalid_argument("raft: a fetch answer from " + std::to_string(from) + " without its entries");
  }
  if (resp.high_watermark < 0 || resp.base_offset < 0 || resp.snapshot_id.end_offset < 0 ||
      (!resp.snapshot_id.empty() && (resp.snapshot_id.epoch < 1 || resp.snapshot_id.epoch > state_.epoch))) {
    return Status::invalid_argument("raft: malformed fetch response from " + std::to_string(from));
  }
  last_leader_contact_ = now_;
  leader_high_watermark_ = std::max(leader_high_watermark_, resp.high_watermark);
  if (!resp.snapshot_id.empty()) {
    EDDY_LOG_INFO("raft {}: the entries after offset {} are gone from leader {}: fetching its snapshot at {}", log_name_,
                  log_->end_offset(), from, resp.snapshot_id.end_offset);
    snapshot_fetch_ = SnapshotFetch{resp.snapshot_id, -1, {}};
    next_fetch_at_ = now_;
    return Status();
  }
  if (resp.diverging) {
    EpochEndOffset mine = log_->end_offset_for_epoch(resp.diverging_epoch.epoch);
    Offset truncate_to = std::min({resp.diverging_epoch.end_offset, mine.end_offset, log_->end_offset()});
    // The whole entry holding that end goes (its offsets may be split
    // differently in the leader's log); the next fetch checks again.
    if (truncate_to >= high_watermark_) truncate_to = log_->boundary_at_or_below(truncate_to);
    if (truncate_to < high_watermark_) {
      return Status::corruption("raft: the leader's log diverges below the high watermark " +
                                std::to_string(high_watermark_) + " at " + std::to_string(truncate_to));
    }
    EDDY_LOG_INFO("raft {}: log diverged from leader {} in epoch {}: truncating to {}", log_name_, from,
                  resp.diverging_epoch.epoch, truncate_to);
    Status s = log_->truncate_to(truncate_to);
    if (!s.ok()) return s;
    validated_end_ = std::min(validated_end_, truncate_to);
    next_fetch_at_ = now_;
    return Status();
  }
  return append_fetched(resp);
}

Status Replica::append_fetched(const FetchResponse& resp) {
  // An answer to an older fetch (duplicated, reordered) that no longer fits.
  if (resp.base_offset != log_->end_offset()) return Status();
  if (!resp.entries.empty()) {
    Status s = log_->append(resp.entries);
    if (!s.ok()) return s.with_context("raft: appending fetched entries");
  }
  // The leader accepted the fetch at base_offset: the log matches its log
  // up to there, and the appended entries are its own.
  validated_end_ = log_->end_offset();
  next_fetch_at_ = resp.entries.empty() ? now_ + options_.fetch_retry_ms : now_;
  return update_follower_high_watermark();
}

Status Replica::append(std::string payload, Offset* offset, int32_t offsets) {
  if (role_ != Role::kLeader) {
    return Status::kafka(Status::Code::kBrokerError, kNotLeaderOrFollower, true,
                         std::string("raft: not the leader (") + role_name(role_) + ")");
  }
  *offset = log_->end_offset();
  return log_->append({Entry{state_.epoch, EntryKind::kData, std::move(payload), offsets}});
}

}  // namespace eddy::raft

namespace eddy::raft {

// ---------------------------------------------------------------------------
// Snapshots
// ---------------------------------------------------------------------------

bool Replica::needs_snapshot(Offset fetch_offset, Epoch last_fetched_epoch) const {
  const SnapshotId start = log_->start();
  if (start.empty()) return false;
  return fetch_offset < start.end_offset || (fetch_offset == start.end_offset && last_fetched_epoch != start.epoch) ||
         last_fetched_epoch < start.epoch;
}

Status Replica::handle_fetch_snapshot_request(NodeId from, int32_t correlation_id, const FetchSnapshotRequest& req) {
  if (req.replica_id != from || req.position < 0 || req.current_leader_epoch < 0 || req.snapshot_id.end_offset < 0) {
    return Status::invalid_argument("raft: malformed FetchSnapshot from " + std::to_string(from));
  }
  if (req.current_leader_epoch > state_.epoch) {
    Status s = become_unattached(req.current_leader_epoch);
    if (!s.ok()) return s;
  }
  FetchSnapshotResponse resp;
  resp.leader_epoch = state_.epoch;
  resp.leader_id = role_ == Role::kResigned ? kNoNode : state_.leader_id;
  resp.snapshot_id = req.snapshot_id;
  resp.position = req.position;
  if (req.current_leader_epoch < state_.epoch) {
    resp.error = FetchError::kFencedLeaderEpoch;
  } else if (role_ != Role::kLeader) {
    resp.error = FetchError::kNotLeader;
  } else if (req.snapshot_id.empty() || req.snapshot_id != snapshots_->latest()) {
    resp.error = FetchError::kSnapshotNotFound;
  } else if (req.position > snapshots_->latest_size()) {
    resp.error = FetchError::kPositionOutOfRange;
  } else {
    // A follower fetching a snapshot is alive for check-quorum, but holds
    // nothing of this epoch yet.
    auto progress = progress_.find(from);
    if (progress != progress_.end()) {
      progress->second.last_fetch_ms = now_;
      progress->second.fetched_once = true;
    }
    resp.size = snapshots_->latest_size();
    // The fetcher's MaxBytes bounds the chunk too (at least one byte, so
    // that the fetch moves on).
    const size_t chunk = std::min(options_.max_snapshot_chunk_bytes, static_cast<size_t>(std::max(req.max_bytes, 1)));
    Status s = snapshots_->read(req.snapshot_id, req.position, chunk, &resp.bytes);
    if (!s.ok()) return s.with_context("raft: reading a snapshot for " + std::to_string(from));
  }
  send(from, std::move(resp), correlation_id);
  return Status();
}

Status Replica::handle_fetch_snapshot_response(NodeId from, int32_t correlation_id,
                                               const FetchSnapshotResponse& resp) {
  if (resp.leader_epoch > state_.epoch) return observe_epoch(resp.leader_epoch, resp.leader_id);
  if (!takes_answer(from, resp.leader_epoch, correlation_id) || !snapshot_fetch_) return Status();
  if (resp.error == FetchError::kSnapshotNotFound || resp.error == FetchError::kPositionOutOfRange) {
    // The leader moved on to a newer snapshot: fetch again, which names it.
    snapshot_fetch_.reset();
    next_fetch_at_ = now_;
    return Status();
  }
  if (resp.error != FetchError::kNone) return Status();
  last_leader_contact_ = now_;
  SnapshotFetch& f = *snapshot_fetch_;
  const int64_t held = static_cast<int64_t>(f.bytes.size());
  if (resp.snapshot_id != f.id || resp.position != held) return Status();  // not the chunk asked for: ask again
  const int64_t chunk = static_cast<int64_t>(resp.bytes.size());
  if (resp.size <= 0 || resp.size > options_.max_snapshot_bytes || (f.size >= 0 && resp.size != f.size) ||
      chunk > resp.size - held || (chunk == 0 && held < resp.size)) {
    EDDY_LOG_WARN("raft {}: leader {} answered FetchSnapshot with a chunk of {} bytes at {} of a {}-byte snapshot "
                  "(at most {} accepted): starting over", log_name_, from, chunk, resp.position, resp.size, options_.max_snapshot_bytes);
    snapshot_fetch_.reset();
    next_fetch_at_ = now_ + options_.fetch_retry_ms;
    return Status();
  }
  f.size = resp.size;
  f.bytes.append(resp.bytes);
  next_fetch_at_ = now_;
  if (static_cast<int64_t>(f.bytes.size()) < f.size) return Status();
  return install_fetched_snapshot();
}

Status Replica::install_fetched_snapshot() {
  const SnapshotFetch f = std::move(*snapshot_fetch_);
  snapshot_fetch_.reset();
  Status s = snapshots_->store(f.id, f.bytes);
  if (!s.ok()) return s.with_context("raft: storing the leader's snapshot");
  s = log_->reset_to(f.id);
  if (!s.ok()) return s.with_context("raft: starting the log at the leader's snapshot");
  validated_end_ = f.id.end_offset;
  high_watermark_ = std::max(high_watermark_, f.id.end_offset);
  EDDY_LOG_INFO("raft {}: installed leader {}'s snapshot at offset {} (epoch {}, {} bytes)", log_name_, state_.leader_id,
                f.id.end_offset, f.id.epoch, f.bytes.size());
  return update_follower_high_watermark();
}

}  // namespace eddy::raft
