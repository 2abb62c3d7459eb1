// The Raft rules one at a time, with hand-delivered messages.
#include <gtest/gtest.h>

#include <memory>

#include "raft/memory_log.h"
#include "raft/memory_snapshot_store.h"
#include "raft/quorum_state_store.h"
#include "raft/replica.h"

namespace eddy::raft {
namespace {

struct Node {
  MemoryLog log;
  MemorySnapshotStore snapshots;
  MemoryQuorumStateStore store;
  std::unique_ptr<Replica> replica;
};

ReplicaOptions options(NodeId id, std::vector<NodeId> voters = {1, 2, 3}, bool bootstrap = true) {
  ReplicaOptions o;
  o.id = id;
  o.voters = std::move(voters);
  o.election_timeout_ms = 100;
  o.fetch_timeout_ms = 200;
  o.fetch_retry_ms = 20;
  o.bootstrap = bootstrap;
  return o;
}

Replica::Random fixed_random() {
  return [](uint64_t) { return uint64_t{0}; };
}

void open(Node& n, ReplicaOptions o, int64_t now = 0) {
  Status s = Replica::open(std::move(o), &n.log, &n.snapshots, &n.store, fixed_random(), now, &n.replica);
  ASSERT_TRUE(s.ok()) << s.to_string();
}

void fill(Node& n, std::vector<Epoch> epochs) {
  for (Epoch e : epochs) ASSERT_TRUE(n.log.append({Entry{e, EntryKind::kData, "e" + std::to_string(e)}}).ok());
  ASSERT_TRUE(n.log.flush().ok());
}

template <typename T>
std::vector<T> sent(Replica& r, NodeId to = kNoNode) {
  std::vector<T> out;
  for (Message& m : r.take_outbox()) {
    if (std::holds_alternative<T>(m.payload) && (to == kNoNode || m.to == to)) out.push_back(std::get<T>(m.payload));
  }
  return out;
}

// Makes n (id 1 of {1,2,3}) the leader of epoch `epoch` with 2's vote.
void elect(Node& n, Epoch epoch, int64_t now, ReplicaOptions o = options(1)) {
  ASSERT_TRUE(n.store.write(QuorumState{epoch - 1, kNoNode, kNoNode, false}).ok());
  open(n, std::move(o), now);
  ASSERT_TRUE(n.replica->poll(now + 100).ok());  // election timeout: candidate
  ASSERT_EQ(n.replica->role(), Role::kCandidate);
  ASSERT_EQ(n.replica->epoch(), epoch);
  (void)n.replica->take_outbox();
  ASSERT_TRUE(n.replica->handle(Message{2, 1, 0, VoteResponse{epoch, kNoNode, true}}, now + 101).ok());
  ASSERT_EQ(n.replica->role(), Role::kLeader);
}

FetchResponse fetch(Node& leader, NodeId from, Offset offset, Epoch last_epoch, int64_t now, bool recovering = false) {
  Status s = leader.replica->handle(
      Message{from, 1, 7, FetchRequest{leader.replica->epoch(), from, offset, last_epoch, recovering}}, now);
  EXPECT_TRUE(s.ok()) << s.to_string();
  auto answers = sent<FetchResponse>(*leader.replica, from);
  EXPECT_EQ(answers.size(), 1u);
  return answers.empty() ? FetchResponse{} : answers[0];
}

TEST(Replica, OpenRefusesBadOptions) {
  Node n;
  std::unique_ptr<Replica> r;
  EXPECT_TRUE(Replica::open(options(4), &n.log, &n.snapshots, &n.store, fixed_random(), 0, &r).is_invalid_argument());
  EXPECT_TRUE(Replica::open(options(1, {1, 1, 2}), &n.log, &n.snapshots, &n.store, fixed_random(), 0, &r).is_invalid_argument());
  EXPECT_TRUE(Replica::open(options(1, {}), &n.log, &n.snapshots, &n.store, fixed_random(), 0, &r).is_invalid_argument());
  ReplicaOptions o = options(1);
  o.fetch_timeout_ms = 0;
  EXPECT_TRUE(Replica::open(o, &n.log, &n.snapshots, &n.store, fixed_random(), 0, &r).is_invalid_argument());
  // Fetching again at once needs a resend time of its own.
  o = options(1);
  o.fetch_retry_ms = 0;
  EXPECT_TRUE(Replica::open(o, &n.log, &n.snapshots, &n.store, fixed_random(), 0, &r).is_invalid_argument());
  o.fetch_resend_ms = 500;
  EXPECT_TRUE(Replica::open(o, &n.log, &n.snapshots, &n.store, fixed_random(), 0, &r).ok());
  EXPECT_TRUE(Replica::open(options(1), &n.log, &n.snapshots, &n.store, nullptr, 0, &r).is_invalid_argument());
}

TEST(Replica, RefusesMisaddressedAndMalformedMessages) {
  Node n;
  open(n, options(1));
  EXPECT_TRUE(n.replica->handle(Message{2, 3, 0, VoteRequest{1, 2, 0, 0}}, 1).is_invalid_argument());
  // The claimed candidate is not the sender.
  EXPECT_TRUE(n.replica->handle(Message{2, 1, 0, VoteRequest{1, 3, 0, 0}}, 1).is_invalid_argument());
  EXPECT_TRUE(n.replica->handle(Message{2, 1, 0, VoteRequest{1, 2, 0, -5}}, 1).is_invalid_argument());
  EXPECT_TRUE(n.replica->handle(Message{2, 1, 0, FetchRequest{0, 2, -1, 0}}, 1).is_invalid_argument());
  EXPECT_TRUE(n.replica->handle(Message{2, 1, 0, BeginQuorumEpochRequest{1, 3}}, 1).is_invalid_argument());
  EXPECT_EQ(n.replica->epoch(), 0);
}

TEST(Replica, VoteRefusedToAStaleLog) {
  Node n;
  fill(n, {1, 1, 2});
  open(n, options(1));
  // Older last epoch, even with a longer log.
  ASSERT_TRUE(n.replica->handle(Message{2, 1, 0, VoteRequest{3, 2, 1, 9}}, 1).ok());
  auto answer = sent<VoteResponse>(*n.replica);
  ASSERT_EQ(answer.size(), 1u);
  EXPECT_FALSE(answer[0].vote_granted);
  EXPECT_EQ(answer[0].leader_epoch, 3);  // the epoch was adopted all the same
  // Same last epoch, shorter log.
  ASSERT_TRUE(n.replica->handle(Message{3, 1, 0, VoteRequest{4, 3, 2, 2}}, 2).ok());
  EXPECT_FALSE(sent<VoteResponse>(*n.replica)[0].vote_granted);
  // Same last epoch and length: granted, and durably.
  ASSERT_TRUE(n.replica->handle(Message{3, 1, 0, VoteRequest{5, 3, 2, 3}}, 3).ok());
  EXPECT_TRUE(sent<VoteResponse>(*n.replica)[0].vote_granted);
  QuorumState stored;
  ASSERT_TRUE(n.store.read(&stored).ok());
  EXPECT_EQ(stored, (QuorumState{5, 3, kNoNode, false}));
}

TEST(Replica, OneVotePerEpochEvenAcrossARestart) {
  Node n;
  open(n, options(1));
  ASSERT_TRUE(n.replica->handle(Message{2, 1, 0, VoteRequest{1, 2, 0, 0}}, 1).ok());
  EXPECT_TRUE(sent<VoteResponse>(*n.replica)[0].vote_granted);
  ASSERT_TRUE(n.replica->handle(Message{3, 1, 0, VoteRequest{1, 3, 0, 0}}, 2).ok());
  EXPECT_FALSE(sent<VoteResponse>(*n.replica)[0].vote_granted);
  // A retried request from the same candidate is granted again.
  ASSERT_TRUE(n.replica->handle(Message{2, 1, 0, VoteRequest{1, 2, 0, 0}}, 3).ok());
  EXPECT_TRUE(sent<VoteResponse>(*n.replica)[0].vote_granted);
  open(n, options(1), 4);
  ASSERT_TRUE(n.replica->handle(Message{3, 1, 0, VoteRequest{1, 3, 0, 0}}, 5).ok());
  EXPECT_FALSE(sent<VoteResponse>(*n.replica)[0].vote_granted);
  // A stale epoch is refused with the current one.
  ASSERT_TRUE(n.replica->handle(Message{3, 1, 0, VoteRequest{2, 3, 0, 0}}, 6).ok());
  ASSERT_TRUE(n.replica->handle(Message{2, 1, 0, VoteRequest{1, 2, 0, 0}}, 7).ok());
  auto answers = sent<VoteResponse>(*n.replica);
  EXPECT_FALSE(answers.back().vote_granted);
  EXPECT_EQ(answers.back().leader_epoch, 2);
}

TEST(Replica, ElectionWithRandomizedTimeoutAndLeaderChangeEntry) {
  Node n;
  uint64_t asked = 0;
  Status s = Replica::open(options(1), &n.log, &n.snapshots, &n.store,
                           [&](uint64_t bound) { asked = bound; return uint64_t{37}; }, 0, &n.replica);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(asked, 100u);
  ASSERT_TRUE(n.replica->poll(136).ok());
  EXPECT_EQ(n.replica->role(), Role::kUnattached);  // 100 + 37 not reached
  ASSERT_TRUE(n.replica->poll(137).ok());
  EXPECT_EQ(n.replica->role(), Role::kCandidate);
  auto votes = sent<VoteRequest>(*n.replica);
  ASSERT_EQ(votes.size(), 2u);
  EXPECT_EQ(votes[0].candidate_epoch, 1);
  ASSERT_TRUE(n.replica->handle(Message{3, 1, 0, VoteResponse{1, kNoNode, true}}, 140).ok());
  EXPECT_EQ(n.replica->role(), Role::kLeader);
  EXPECT_EQ(sent<BeginQuorumEpochRequest>(*n.replica).size(), 2u);
  ASSERT_EQ(n.log.end_offset(), 1);
  EXPECT_EQ(n.log.entries()[0].kind, EntryKind::kLeaderChange);
  EXPECT_EQ(n.log.entries()[0].epoch, 1);
}

// A replica waiting to stand that refuses a candidate whose log is behind
// keeps its own deadline: a hopeless candidacy must not push back the one
// that can win (the replication fault runs saw 8-second elections when
// every refused vote reset the timer).
TEST(Replica, ARefusedCandidateDoesNotPushBackAMoreUpToDateReplicasElection) {
  Node n;
  fill(n, {1, 1});
  ASSERT_TRUE(n.store.write(QuorumState{1, kNoNode, kNoNode, false}).ok());
  open(n, options(1), 0);  // unattached in epoch 1, stands at 100
  ASSERT_EQ(n.replica->role(), Role::kUnattached);
  ASSERT_TRUE(n.replica->handle(Message{2, 1, 0, VoteRequest{2, 2, 1, 1}}, 50).ok());
  auto answers = sent<VoteResponse>(*n.replica, 2);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_FALSE(answers[0].vote_granted) << "node 2's log ends at 1, this one's at 2";
  EXPECT_EQ(n.replica->epoch(), 2);
  ASSERT_TRUE(n.replica->poll(100).ok());
  EXPECT_EQ(n.replica->role(), Role::kCandidate) << "at its own deadline, not 100 ms after the refusal";
  EXPECT_EQ(n.replica->epoch(), 3);
  // A candidate whose log is as good gets the vote, and the voter waits again.
  Node m;
  fill(m, {1, 1});
  ASSERT_TRUE(m.store.write(QuorumState{1, kNoNode, kNoNode, false}).ok());
  open(m, options(1), 0);
  ASSERT_TRUE(m.replica->handle(Message{2, 1, 0, VoteRequest{2, 2, 1, 2}}, 50).ok());
  EXPECT_TRUE(sent<VoteResponse>(*m.replica, 2).at(0).vote_granted);
  ASSERT_TRUE(m.replica->poll(100).ok());
  EXPECT_EQ(m.replica->role(), Role::kUnattached) << "it voted: its deadline moved on";
}

TEST(Replica, AHigherEpochVoteResponseEndsTheCandidacy) {
  Node n;
  open(n, options(1));
  ASSERT_TRUE(n.replica->poll(200).ok());
  ASSERT_EQ(n.replica->role(), Role::kCandidate);
  ASSERT_TRUE(n.replica->handle(Message{2, 1, 0, VoteResponse{4, 3, false}}, 201).ok());
  EXPECT_EQ(n.replica->role(), Role::kFollower);
  EXPECT_EQ(n.replica->epoch(), 4);
  EXPECT_EQ(n.replica->leader_id(), 3);
}

TEST(Replica, DivergingFollowerTruncatesToTheLeadersEpochEnd) {
  Node leader;
  fill(leader, {1, 1, 2, 2});
  elect(leader, 4, 0);  // leader-change entry at offset 4
  // The follower wrote two more epoch-2 entries the leader never had, and
  // an epoch-3 entry of a leader that never committed.
  Node follower;
  fill(follower, {1, 1, 2, 2, 2, 2, 3});
  ASSERT_TRUE(follower.store.write(QuorumState{4, kNoNode, 1, false}).ok());
  open(follower, options(2), 200);
  ASSERT_EQ(follower.replica->role(), Role::kFollower);
  ASSERT_TRUE(follower.replica->poll(200).ok());
  auto fetches = sent<FetchRequest>(*follower.replica, 1);
  ASSERT_EQ(fetches.size(), 1u);
  EXPECT_EQ(fetches[0].fetch_offset, 7);
  EXPECT_EQ(fetches[0].last_fetched_epoch, 3);
  // Epoch 3 is not in the leader's log: it answers its largest epoch below.
  FetchResponse r = fetch(leader, 2, 7, 3, 201);
  ASSERT_TRUE(r.diverging);
  EXPECT_EQ(r.diverging_epoch, (EpochEndOffset{2, 4}));
  ASSERT_TRUE(follower.replica->handle(Message{1, 2, 1, r}, 202).ok());
  EXPECT_EQ(follower.log.end_offset(), 4);  // by epoch, not one entry at a time
  ASSERT_TRUE(follower.replica->poll(203).ok());
  fetches = sent<FetchRequest>(*follower.replica, 1);
  ASSERT_EQ(fetches.size(), 1u);
  EXPECT_EQ(fetches[0].fetch_offset, 4);
  EXPECT_EQ(fetches[0].last_fetched_epoch, 2);
  r = fetch(leader, 2, 4, 2, 204);
  ASSERT_FALSE(r.diverging);
  ASSERT_EQ(r.entries.size(), 1u);
  ASSERT_TRUE(follower.replica->handle(Message{1, 2, 2, r}, 205).ok());
  EXPECT_EQ(follower.log.entries(), leader.log.entries());
  // The same answer delivered twice (a duplicate) changes nothing.
  ASSERT_TRUE(follower.replica->handle(Message{1, 2, 2, r}, 206).ok());
  EXPECT_EQ(follower.log.entries(), leader.log.entries());
}

TEST(Replica, HighWatermarkWaitsForTheLeadersOwnEpoch) {
  Node leader;
  fill(leader, {1, 1, 2});  // older epochs, never known to be committed
  elect(leader, 3, 0);      // leader-change entry at offset 3
  ASSERT_TRUE(leader.replica->poll(110).ok());  // flushes its own log
  // A majority (leader + 2) holds offsets 0..2, but not this epoch's entry.
  FetchResponse r = fetch(leader, 2, 3, 2, 111);
  EXPECT_EQ(r.high_watermark, 0);
  EXPECT_EQ(leader.replica->high_watermark(), 0);
  // Once the leader-change entry is on a majority, everything below it is.
  r = fetch(leader, 2, 4, 3, 112);
  EXPECT_EQ(r.high_watermark, 4);
  // A follower's lower (repeated, late) fetch never moves it back.
  r = fetch(leader, 2, 3, 2, 113);
  EXPECT_EQ(leader.replica->high_watermark(), 4);
}

TEST(Replica, ALeaderThatDoesNotReadItsEntriesNamesWhereTheyStart) {
  Node leader;
  fill(leader, {1, 1, 2});
  ReplicaOptions o = options(1);
  o.leader_reads_entries = false;
  elect(leader, 3, 0, o);  // leader-change entry at offset 3
  ASSERT_TRUE(leader.replica->poll(110).ok());
  FetchResponse r = fetch(leader, 2, 1, 1, 111);
  EXPECT_TRUE(r.entries_in_log);
  EXPECT_TRUE(r.entries.empty());
  EXPECT_EQ(r.base_offset, 1);
  // Not for a diverging fetch: there is nothing to send.
  r = fetch(leader, 2, 3, 1, 112);  // epoch 1 ends at 2 here
  EXPECT_TRUE(r.diverging);
  EXPECT_FALSE(r.entries_in_log);
  // A follower never takes such an answer as its entries.
  Node follower;
  open(follower, options(2));
  ASSERT_TRUE(follower.replica->handle(Message{1, 2, 0, BeginQuorumEpochRequest{3, 1}}, 1).ok());
  ASSERT_TRUE(follower.replica->poll(2).ok());
  auto fetches = sent<FetchRequest>(*follower.replica, 1);
  ASSERT_EQ(fetches.size(), 1u);
  FetchResponse in_log;
  in_log.leader_epoch = 3;
  in_log.leader_id = 1;
  in_log.entries_in_log = true;
  EXPECT_TRUE(follower.replica->handle(Message{1, 2, 1, in_log}, 3).is_invalid_argument());
}

TEST(Replica, ASnapshotChunkIsBoundedByTheFetchersMaxBytes) {
  Node leader;
  fill(leader, {1, 1, 2});
  elect(leader, 3, 0);
  ASSERT_TRUE(leader.replica->poll(110).ok());
  ASSERT_EQ(fetch(leader, 2, 4, 3, 111).high_watermark, 4);
  const SnapshotId id{4, 3};
  ASSERT_TRUE(leader.replica->store_snapshot(id, "0123456789").ok());
  auto chunk = [&](int64_t position, int32_t max_bytes) {
    FetchSnapshotRequest req{3, 2, id, position};
    if (max_bytes > 0) req.max_bytes = max_bytes;
    Status s = leader.replica->handle(Message{2, 1, 9, req}, 120);
    EXPECT_TRUE(s.ok()) << s.to_string();
    auto answers = sent<FetchSnapshotResponse>(*leader.replica, 2);
    EXPECT_EQ(answers.size(), 1u);
    if (answers.empty()) return std::string("(none)");
    EXPECT_EQ(answers[0].error, FetchError::kNone);
    EXPECT_EQ(answers[0].size, 10);
    EXPECT_EQ(answers[0].position, position);
    return answers[0].bytes;
  };
  EXPECT_EQ(chunk(0, 4), "0123");
  EXPECT_EQ(chunk(4, 4), "4567");
  EXPECT_EQ(chunk(8, 4), "89");
  EXPECT_EQ(chunk(0, 0), "0123456789") << "no MaxBytes given: the leader's chunk size";
}

TEST(Replica, HighWatermarkCountsOnlyDurableEntries) {
  Node leader;
  elect(leader, 1, 0);
  ASSERT_TRUE(leader.replica->poll(110).ok());
  Offset offset = -1;
  ASSERT_TRUE(leader.replica->append("a", &offset).ok());
  EXPECT_EQ(offset, 1);
  // Follower 2 holds both entries durably, the leader has not flushed "a":
  // only the leader-change entry is on a durable majority.
  FetchResponse r = fetch(leader, 2, 2, 1, 111);
  EXPECT_EQ(r.high_watermark, 1);  // leader durable 1, follower 2: the LC entry only
  ASSERT_TRUE(leader.replica->poll(112).ok());
  EXPECT_EQ(leader.replica->high_watermark(), 2);
}

// A log whose flush only asks (a partition's flusher thread syncs it): the
// follower fetches, and a candidate stands, only once its log is durable,
// since the fetch offset counts for the leader's high watermark.
TEST(Replica, WithAnAsynchronousLogAFollowerFetchesAndStandsOnlyWhenDurable) {
  Node follower;
  follower.log.set_async_flush(true);
  ASSERT_TRUE(follower.store.write(QuorumState{1, kNoNode, 1, false}).ok());
  open(follower, options(2), 0);
  ASSERT_EQ(follower.replica->role(), Role::kFollower);
  ASSERT_TRUE(follower.replica->poll(1).ok());
  ASSERT_EQ(sent<FetchRequest>(*follower.replica, 1).size(), 1u);
  // The leader's answer: two entries of epoch 1.
  FetchResponse resp;
  resp.leader_epoch = 1;
  resp.leader_id = 1;
  resp.entries = {Entry{1, EntryKind::kLeaderChange, {}}, Entry{1, EntryKind::kData, "a"}};
  ASSERT_TRUE(follower.replica->handle(Message{1, 2, 1, resp}, 2).ok());
  EXPECT_EQ(follower.log.end_offset(), 2);
  ASSERT_TRUE(follower.replica->poll(3).ok());
  EXPECT_TRUE(sent<FetchRequest>(*follower.replica, 1).empty()) << "not before the two entries are durable";
  follower.log.complete_flush();
  ASSERT_TRUE(follower.replica->poll(4).ok());
  std::vector<FetchRequest> fetches = sent<FetchRequest>(*follower.replica, 1);
  ASSERT_EQ(fetches.size(), 1u);
  EXPECT_EQ(fetches[0].fetch_offset, 2);
  // The leader goes silent with a new entry unflushed: no candidacy until durable.
  resp.entries = {Entry{1, EntryKind::kData, "b"}};
  resp.base_offset = 2;
  ASSERT_TRUE(follower.replica->handle(Message{1, 2, 2, resp}, 5).ok());
  ASSERT_TRUE(follower.replica->poll(400).ok());
  EXPECT_EQ(follower.replica->role(), Role::kFollower) << "the end offset it would advertise is not durable yet";
  follower.log.complete_flush();
  ASSERT_TRUE(follower.replica->poll(401).ok());
  EXPECT_EQ(follower.replica->role(), Role::kCandidate);
  EXPECT_EQ(follower.replica->epoch(), 2);
}

// fetch_retry_ms paces fetches after an empty answer; an unanswered fetch
// is sent again only after fetch_resend_ms (a partition group polls every
// few ms but must not pile fetches up behind a slow answer).
TEST(Replica, AnUnansweredFetchIsSentAgainAfterTheResendTimeNotTheRetryTime) {
  Node follower;
  ASSERT_TRUE(follower.store.write(QuorumState{1, kNoNode, 1, false}).ok());
  ReplicaOptions o = options(2);
  o.fetch_retry_ms = 5;
  o.fetch_resend_ms = 100;
  open(follower, o, 0);
  ASSERT_TRUE(follower.replica->poll(1).ok());
  ASSERT_EQ(sent<FetchRequest>(*follower.replica, 1).size(), 1u);
  ASSERT_TRUE(follower.replica->poll(50).ok());
  EXPECT_TRUE(sent<FetchRequest>(*follower.replica, 1).empty()) << "still waiting for the answer";
  ASSERT_TRUE(follower.replica->poll(101).ok());
  ASSERT_EQ(sent<FetchRequest>(*follower.replica, 1).size(), 1u) << "sent again";
  // An empty answer: the next fetch fetch_retry_ms later.
  FetchResponse empty;
  empty.leader_epoch = 1;
  empty.leader_id = 1;
  ASSERT_TRUE(follower.replica->handle(Message{1, 2, 2, empty}, 102).ok());
  ASSERT_TRUE(follower.replica->poll(106).ok());
  EXPECT_TRUE(sent<FetchRequest>(*follower.replica, 1).empty());
  ASSERT_TRUE(follower.replica->poll(107).ok());
  EXPECT_EQ(sent<FetchRequest>(*follower.replica, 1).size(), 1u);
}

TEST(Replica, AnIsolatedLeaderResigns) {
  Node leader;
  elect(leader, 1, 0);
  (void)leader.replica->take_outbox();
  // Follower 2 fetches every 50 ms: a majority with the leader.
  for (int64_t t = 110; t <= 500; t += 50) {
    (void)fetch(leader, 2, 0, 0, t);
    ASSERT_TRUE(leader.replica->poll(t).ok());
    ASSERT_EQ(leader.replica->role(), Role::kLeader) << t;
  }
  // Then nothing for the fetch timeout (200 ms).
  ASSERT_TRUE(leader.replica->poll(650).ok());
  EXPECT_EQ(leader.replica->role(), Role::kLeader);
  ASSERT_TRUE(leader.replica->poll(700).ok());
  EXPECT_EQ(leader.replica->role(), Role::kResigned);
  auto ends = sent<EndQuorumEpochRequest>(*leader.replica);
  EXPECT_EQ(ends.size(), 2u);
  Offset offset;
  Status s = leader.replica->append("late", &offset);
  EXPECT_EQ(s.kafka_error_code(), 6) << s.to_string();  // NOT_LEADER_OR_FOLLOWER
  // A resigned leader refuses fetches and later stands again.
  FetchResponse r = fetch(leader, 2, 0, 0, 701);
  EXPECT_EQ(r.error, FetchError::kNotLeader);
  ASSERT_TRUE(leader.replica->poll(900).ok());
  EXPECT_EQ(leader.replica->role(), Role::kCandidate);
  EXPECT_EQ(leader.replica->epoch(), 2);
}

TEST(Replica, ARestartedLeaderResignsAndAFollowerFollowsAgain) {
  Node leader;
  elect(leader, 1, 0);
  open(leader, options(1), 200);
  EXPECT_EQ(leader.replica->role(), Role::kResigned);
  Node follower;
  ASSERT_TRUE(follower.store.write(QuorumState{1, kNoNode, 1, false}).ok());
  open(follower, options(2), 0);
  EXPECT_EQ(follower.replica->role(), Role::kFollower);
  EXPECT_EQ(follower.replica->leader_id(), 1);
}

TEST(Replica, EndQuorumEpochMakesTheSuccessorStandEarly) {
  Node follower;
  ASSERT_TRUE(follower.store.write(QuorumState{1, kNoNode, 1, false}).ok());
  open(follower, options(2), 0);
  ASSERT_TRUE(follower.replica->handle(Message{1, 2, 0, EndQuorumEpochRequest{1, 1, {2, 3}}}, 10).ok());
  ASSERT_TRUE(follower.replica->poll(10).ok());  // rank 0, random 0: at once
  EXPECT_EQ(follower.replica->role(), Role::kCandidate);
  EXPECT_EQ(follower.replica->epoch(), 2);
}

TEST(Replica, AWipedReplicaNeitherVotesNorStandsNorCountsUntilCaughtUp) {
  Node leader;
  elect(leader, 1, 0);
  ASSERT_TRUE(leader.replica->poll(110).ok());
  (void)fetch(leader, 2, 1, 1, 111);  // follower 2 holds the LC entry: HW 1
  Offset offset;
  ASSERT_TRUE(leader.replica->append("x", &offset).ok());
  ASSERT_TRUE(leader.replica->poll(112).ok());
  ASSERT_EQ(leader.replica->high_watermark(), 1);

  Node wiped;  // node 3 after losing its disk: no quorum state, no log
  open(wiped, options(3, {1, 2, 3}, /*bootstrap=*/false), 100);
  EXPECT_TRUE(wiped.replica->recovering());
  ASSERT_TRUE(wiped.replica->handle(Message{2, 3, 0, VoteRequest{2, 2, 1, 2}}, 101).ok());
  EXPECT_FALSE(sent<VoteResponse>(*wiped.replica)[0].vote_granted);
  ASSERT_TRUE(wiped.replica->poll(1000).ok());
  EXPECT_NE(wiped.replica->role(), Role::kCandidate);

}

TEST(Replica, ARecoveringFetchDoesNotAdvanceTheHighWatermark) {
  Node leader;
  elect(leader, 1, 0);
  Offset offset;
  ASSERT_TRUE(leader.replica->append("x", &offset).ok());
  ASSERT_TRUE(leader.replica->poll(110).ok());
  FetchResponse r = fetch(leader, 3, 2, 1, 111, /*recovering=*/true);
  EXPECT_EQ(r.high_watermark, 0);
  r = fetch(leader, 3, 2, 1, 112, /*recovering=*/false);
  EXPECT_EQ(r.high_watermark, 2);
}

TEST(Replica, AWipedReplicaVotesAgainOnceAtTheLeadersHighWatermark) {
  Node leader;
  elect(leader, 1, 0);
  ASSERT_TRUE(leader.replica->poll(110).ok());
  (void)fetch(leader, 2, 1, 1, 111);
  ASSERT_EQ(leader.replica->high_watermark(), 1);
  Node wiped;
  open(wiped, options(3, {1, 2, 3}, false), 100);
  ASSERT_TRUE(wiped.replica->handle(Message{1, 3, 0, BeginQuorumEpochRequest{1, 1}}, 112).ok());
  for (int64_t t = 113; t < 200 && wiped.replica->recovering(); ++t) {
    ASSERT_TRUE(wiped.replica->poll(t).ok());
    for (Message& m : wiped.replica->take_outbox()) {
      if (!std::holds_alternative<FetchRequest>(m.payload)) continue;
      ASSERT_TRUE(leader.replica->handle(m, t).ok());
      for (Message& answer : leader.replica->take_outbox()) {
        if (answer.to == 3) ASSERT_TRUE(wiped.replica->handle(answer, t).ok());
      }
    }
  }
  EXPECT_FALSE(wiped.replica->recovering());
  EXPECT_EQ(wiped.log.entries(), leader.log.entries());
  QuorumState stored;
  ASSERT_TRUE(wiped.store.read(&stored).ok());
  EXPECT_FALSE(stored.recovering);
}

}  // namespace
}  // namespace eddy::raft
