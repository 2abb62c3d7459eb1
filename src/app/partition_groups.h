// The partition groups of a cluster node (issue #16; src/raft/README.md,
// "Partition groups"): one Raft group per replicated partition this node
// holds a replica of, all driven on the reactor thread that owns the
// partitions' logs.
//
// Each group: the core's Replica over a raft::BatchLog on the partition's
// own PartitionLog (the broker's), its quorum state in the partition's
// directory (quorum-state), its voters the partition's replicas. The
// reactor polls every group every poll_interval_ms and hands it the
// requests that arrive on the controller listener for its topic-partition
// (on_frame) and the answers to the requests it sent; requests go out
// through PeerSenders, one thread and one connection per other node for all
// groups. After each step the group's high watermark becomes the
// partition's (PartitionLog::set_replicated_high_watermark) and the broker
// hears of it, and of what a follower's log gained or lost by replication.
//
// Follower fetches (Kafka's replica fetcher; partition_group_fetching.cc):
// a follower node fetches for all the groups it follows on one leader node
// with one Fetch at a time, on a connection of its own (PeerFetchers), and
// the leader holds it up to fetch_max_wait_ms until one of those groups has
// something to say (partition_group_fetches.cc). A group whose fetch
// reports news (entries it made durable) while that Fetch is held goes at
// once on the PeerSenders connection instead. The leader answers with the
// log's batches as file regions (the zero-copy read path of clients'
// fetches): the core does not read them (ReplicaOptions::leader_reads_entries).
//
// Invariants:
//  - everything here runs on the reactor, except PeerSenders' threads,
//    which only post to it;
//  - a group exists exactly while its partition's log is open here and
//    has more than one replica (add() on open, closing() before close);
//  - a group whose log or quorum state failed stops (no votes, no
//    answers: the others see a dead replica), is logged once, and answers
//    NOT_LEADER_OR_FOLLOWER to the broker.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "broker/partition_replication.h"
#include "net/frame_handler.h"
#include "port/executor.h"
#include "protocol/headers.h"
#include "protocol/wire.h"
#include "raft/batch_log.h"
#include "raft/peer_fetchers.h"
#include "raft/peer_senders.h"
#include "raft/quorum_state_store.h"
#include "raft/replica.h"

namespace eddy::app {

struct PartitionGroupsOptions {
  int32_t node_id = 0;
  // The other nodes (their controller listeners carry the groups' RPCs).
  std::vector<int32_t> peers;
  // A group whose quorum state is missing starts as a new group (true) or
  // recovers first, as a wiped replica (false: it neither votes nor stands
  // until it caught up; raft/README.md "Wiped disks").
  bool bootstrap = true;
  int64_t poll_interval_ms = 10;
  // controller.quorum.election.timeout.ms, controller.quorum.fetch.timeout.ms
  int64_t election_timeout_ms = 1000;
  int64_t fetch_timeout_ms = 2000;
  // The longest a leader holds a follower node's Fetch that has nothing to
  // answer yet (Kafka's replica.fetch.wait.max.ms is 500); at most a fifth
  // of fetch_timeout_ms, so that a held fetch never looks like silence.
  int64_t fetch_max_wait_ms = 400;
  // A fetch unanswered this long is sent again (longer than a leader may
  // hold it).
  int64_t fetch_resend_ms = 1000;
  // replica.lag.time.max.ms: a follower is in sync while it reached the
  // leader's log end this recently.
  int64_t replica_lag_time_max_ms = 30000;
  // The broker's hooks (reactor thread): the partition's high watermark
  // moved; a follower's log grew from `from` or was cut by replication.
  std::function<void(storage::PartitionLog* log)> on_high_watermark;
  std::function<void(storage::PartitionLog* log, int64_t from, bool truncated)> on_log_changed;
};

class PartitionGroups final : public broker::PartitionReplication {
 public:
  using SenderFactory = std::function<std::unique_ptr<raft::PeerSenders>(raft::PeerSenders::Answered answered)>;
  using FetcherFactory = std::function<std::unique_ptr<raft::PeerFetchers>(raft::PeerFetchers::Done done)>;
  // senders: makes the PeerSenders that carry the groups' requests, given
  // where their answers go; fetchers: the PeerFetchers that carry the
  // follower fetches.
  PartitionGroups(PartitionGroupsOptions options, port::Executor* reactor, const SenderFactory& senders,
                  const FetcherFactory& fetchers);
  ~PartitionGroups() override;

  // Starts the senders and the polling (reactor thread).
  void start();
  // Stops both; leaders resign first (EndQuorumEpoch, best effort).
  // Idempotent.
  void stop();

  // A partition log opened here (the broker's partition observer): its group
  // starts when it has more than one replica. A group that cannot open is
  // logged and left out (the partition answers NOT_LEADER_OR_FOLLOWER).
  void add(const std::string& topic, const protocol::Uuid& topic_id, int32_t partition,
           const std::vector<int32_t>& replicas, storage::PartitionLog* log);

  // Whether a Raft request on the controller listener names a partition
  // group rather than the controller's __cluster_metadata.
  static bool names_partition_group(const protocol::FrameBytes& frame, const protocol::ParsedRequestHeader& h);
  // Such a request (reactor thread): answered at once; a malformed one
  // closes the connection, one for a group not here gets an error answer.
  void on_frame(net::ConnectionContext& connection, const protocol::FrameBytes& frame,
                const protocol::ParsedRequestHeader& h, net::ResponseSlot slot);

  // broker::PartitionReplication
  broker::ReplicaStatus status(const storage::PartitionLog* log) const override;
  Status append(storage::PartitionLog* log, std::span<const uint8_t> batch, storage::AppendResult* result) override;
  void closing(storage::PartitionLog* log) override;
  void durable(storage::PartitionLog* log) override;

  size_t size() const { return groups_.size(); }

  // The groups this node leads now (their partitions' leaders publish
  // themselves through the controller log: cluster_partition_leaders.cc).
  struct Led {
    protocol::Uuid topic_id;
    int32_t partition = 0;
    int32_t leader_epoch = -1;
    std::vector<int32_t> isr;  // sorted
  };
  void led_here(std::vector<Led>* out) const;

 private:
  // A follower whose log is full says so at most this often.
  static constexpr int64_t kFullLogIntervalMs = 10000;
  // Fetches held at once (one per follower node in a healthy cluster; a
  // peer cannot make the leader hold more).
  static constexpr size_t kMaxHeldFetches = 16;
  // Partitions one Fetch may name (more: the connection is closed).
  static constexpr size_t kMaxFetchParts = 100000;
  struct Group {
    std::string topic;
    int32_t partition = 0;
    raft::GroupAddress address;
    std::vector<int32_t> replicas;
    storage::PartitionLog* log = nullptr;
    std::unique_ptr<raft::BatchLog> batch_log;
    std::unique_ptr<raft::FileQuorumStateStore> store;
    std::unique_ptr<raft::Replica> replica;
    bool failed = false;
    int64_t published_high_watermark = -1;
    int64_t known_end = 0;    // the log end the broker knows of
    uint64_t known_cuts = 0;  // the partition's truncations and resets seen
    // The latest leader this replica knew of, and its epoch (it stays when
    // the group has no leader now).
    int32_t last_leader = -1;
    int32_t last_leader_epoch = -1;
    // Role, epoch and leader as the broker last heard of them.
    raft::Role published_role = raft::Role::kUnattached;
    int32_t published_epoch = -1;
    int32_t published_leader = -1;
    int64_t full_logged_ms = -kFullLogIntervalMs;  // the last "cannot take its leader's entries" line
    // Follower: whether the last answer to its fetch from quiet_leader said
    // nothing new (then its next fetch waits for the leader's held Fetch).
    bool last_fetch_quiet = false;
    int32_t quiet_leader = -1;
    // Leader: per follower node, the high watermark its last fetch answer
    // carried, and the number of its fetches handled (a held fetch of an
    // older number is not handed to the core again).
    std::map<int32_t, int64_t> high_watermark_sent;
    std::map<int32_t, uint64_t> fetches_seen;
    // The log end held fetches last heard of (a change wakes them).
    int64_t signalled_end = -1;
  };
  // One partition of a follower node's Fetch (leader side).
  struct FetchPart {
    protocol::Uuid topic_id;
    std::string topic;  // empty when named by id
    int32_t partition = -1;
    int32_t max_bytes = 0;
    int16_t error = 0;  // refused before the core saw it
    raft::FetchRequest request;
    bool answered = false;
    raft::FetchResponse answer;
    uint64_t seen = 0;  // its number in Group::fetches_seen
  };
  // A follower node's Fetch being answered or held (leader side).
  struct HeldFetch {
    int32_t replica = -1;
    int16_t version = 0;
    int32_t correlation_id = 0;
    int32_t max_bytes = 0;
    int64_t deadline_ms = 0;
    std::vector<FetchPart> parts;
    net::ResponseSlot slot;
  };
  using Key = std::pair<std::string, int32_t>;

  Group* find(const std::string& topic, int32_t partition);
  // The group a request names by name, or by topic id when the name is empty.
  Group* find_named(const std::string& topic, const protocol::Uuid& topic_id, int32_t partition);

  // -- Leader side of follower fetches (partition_group_fetches.cc) --
  void on_fetch(net::ConnectionContext& connection, const protocol::FrameBytes& frame,
                const protocol::ParsedRequestHeader& h, net::ResponseSlot slot);
  // Hands each part to its group's core; again: a held fetch being
  // answered, whose parts a newer fetch of the same group superseded keep
  // their first answers.
  void deliver_fetch(HeldFetch& f, bool again);
  // Whether no part has anything the follower does not know yet.
  bool nothing_to_answer(const HeldFetch& f);
  // Answers f, the log's batches as file regions.
  void answer_fetch(HeldFetch& f);
  // g changed (entries, high watermark, role): held fetches of its
  // followers are answered now.
  void wake_held_fetches(const Group& g);
  // Held fetches past their deadline are answered (all of them: stopping).
  void answer_held_fetches(int64_t now, bool all);

  // -- Follower side (partition_group_fetching.cc) --
  // A follower group's fetch: into the next Fetch from its leader node, or
  // at once on the PeerSenders connection when it has news and a Fetch is
  // in flight.
  void route_fetch(Group& g, raft::Message fetch);
  // Starts the Fetch of peer's pending groups unless one is in flight.
  void fetch_pending(int32_t peer);
  // A Fetch of many groups ended (posted by its fetcher thread).
  void on_fetched(int32_t peer, std::vector<raft::GroupFetch> fetches,
                  std::vector<std::optional<raft::Payload>> answers);
  void schedule_poll();
  void poll_all();
  // After the core ran for g: failures, its outbox (answered_by: the
  // request on_frame is answering, whose answer goes to *answer), the
  // high watermark and the log's changes to the broker.
  void after_step(Group& g, const Status& step, const raft::Message* answered_by, raft::Payload* answer,
                  bool* answered);
  // An answer from a peer, posted by a sender thread.
  void on_answer(const raft::GroupAddress& group, const raft::Message& request, raft::Payload answer);
  void fail(Group& g, const Status& s);

  PartitionGroupsOptions options_;
  port::Executor* reactor_;
  std::unique_ptr<raft::PeerSenders> senders_;
  std::unique_ptr<raft::PeerFetchers> fetchers_;
  int64_t fetch_max_wait_ms_ = 0;
  std::map<int32_t, bool> fetching_;                  // follower: a Fetch in flight, per leader node
  std::map<Key, raft::GroupFetch> pending_fetches_;   // follower: one per group, waiting for the next Fetch
  std::vector<HeldFetch> held_fetches_;               // leader
  std::map<Key, std::unique_ptr<Group>> groups_;
  std::unordered_map<const storage::PartitionLog*, Group*> by_log_;
  port::Executor::TimerId poll_timer_ = 0;
  bool started_ = false;
  bool stopped_ = false;
  // Outlives posted answers: they check it before touching the groups.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace eddy::app
