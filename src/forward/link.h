// One store-and-forward link: a thread that reads what local producers wrote
// (through LocalStore) and sends it, batch by batch as stored, to the central
// cluster with an idempotent UplinkProducer, then saves how far the central
// cluster acknowledged. See README.md for the guarantees and the states.
//
// Each partition's SendWindow (send_window.h) keeps the exactly-once
// invariant. The link keeps its side of it: a window's acked() cursor is
// what forward.db holds (saved after every move, acknowledgement or skip,
// before anything more is sent), nothing is sent while progress cannot be
// saved, and every window rewinds on any failure.
//
// link.cc: the thread, the connection and producer lifecycle, sending and
// what an answer means; link_local.cc: the local partitions and the next
// stored batch; link_metadata.cc: the central cluster's leaders and topics
// (missing ones created or paused).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "client/client.h"
#include "client/uplink_producer.h"
#include "forward/backoff.h"
#include "forward/interruptible_transports.h"
#include "forward/link_options.h"
#include "forward/link_status.h"
#include "forward/local_store.h"
#include "forward/read_ahead.h"
#include "forward/send_window.h"
#include "forward/token_bucket.h"
#include "forward/topic_mapping.h"
#include "meta/forward_progress.h"
#include "port/mutex.h"
#include "port/thread_annotations.h"
#include "protocol/record_validator.h"

namespace eddy::forward {

class Link {
 public:
  // REQUIRES: store, progress and board outlive the link.
  Link(LinkOptions options, TopicMapping mapping, LocalStore* store, meta::ForwardProgress* progress,
       StatusBoard* board);
  ~Link();
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  void start();
  // Thread-safe, does not block: the thread ends promptly (blocked network
  // calls are interrupted). join() waits for it.
  void request_stop() EXCLUDES(sleep_mu_);
  void join();

  const LinkOptions& options() const { return options_; }

 private:
  struct Partition {
    explicit Partition(SendWindow w) : window(std::move(w)) {}

    std::string topic;
    protocol::Uuid topic_id;
    int32_t partition = 0;
    int32_t leader_epoch = -1;  // LocalPartition::leader_epoch when it was added
    std::string remote_topic;  // empty while the name is invalid (paused)
    int32_t priority = 0;
    SendWindow window;  // what is in flight; its acked() cursor is as saved
    ReadAhead read_ahead;
    int64_t high_watermark = 0;
    int64_t log_start_offset = 0;
    int64_t log_end_offset = 0;
    uint64_t backlog_bytes = 0;
    uint64_t rejected_appends = 0;
    // Batches with malformed records (stored before record validation, or
    // with it off) skipped rather than sent, since start; the last offset
    // of the last one (so that a rewind does not count it twice).
    uint64_t skipped_invalid_batches = 0;
    int64_t skipped_through = -1;
    // Offsets forwarded and then lost from the local log (a power cut took
    // its unsynced tail), since start; see rewind_past_lost_tail.
    uint64_t lost_after_forwarding = 0;
    int32_t leader = -1;
    std::string paused;
    int64_t paused_until_ms = 0;
    std::string last_error;
    int64_t forwarded_messages = 0;
    uint64_t forwarded_bytes = 0;
    bool seen = true;  // still listed locally
  };
  using Key = TopicPartitionKey;
  // How often a busy link re-lists local partitions (new topics, status) and
  // refreshes metadata for topics it forwards.
  static constexpr int64_t kLocalRefreshMs = 1000;
  static constexpr int64_t kMetadataRefreshMs = 60000;
  // A stored batch ready to go: bytes in p's read-ahead.
  struct StoredBatch {
    std::span<uint8_t> bytes;
    int64_t base_offset = 0;
    int64_t next_offset = 0;
  };

  void run();
  // One turn of the connected loop; false when the link must stop.
  bool run_connected();
  bool connect();

  // link_local.cc
  // Re-lists the local partitions; measures backlog bytes (and counts as
  // the periodic refresh) when full.
  bool refresh_local(bool full = true);
  // A partition listed for the first time: its window from the saved cursor.
  Partition& add_partition(const LocalPartition& l, bool* rewound);
  // Moves a cursor loaded from forward.db back to the local log's end when
  // it is beyond it; true when it did (the caller saves it).
  bool rewind_past_lost_tail(Partition& p, int64_t log_end_offset);
  // Drops partitions no longer listed locally (and nothing in flight).
  void forget_unseen();
  // Before p is dropped because another node forwards it: its batches in
  // flight are no longer followed.
  void let_go(Partition& p);
  std::map<Key, int64_t> acked_offsets() const;
  // Takes the next stored batch of p; false when there is none now.
  bool next_batch(Partition& p, StoredBatch* out);
  // A stored batch that must not be sent: counted, then the cursor moves
  // past it (once nothing is in flight). False when it could not yet.
  bool skip_malformed(Partition& p, const protocol::RecordBatchView& view, const protocol::RecordVerdict& verdict);
  // A control batch, an empty batch, or data of an aborted transaction:
  // never forwarded.
  bool skip_transactional(Partition& p, const protocol::RecordBatchView& view);
  // The local log dropped offsets from p's send offset to log_start_offset
  // before they were forwarded: counted, then the cursor jumps (once nothing
  // is in flight). False when it could not yet.
  bool skip_dropped(Partition& p, int64_t log_start_offset);
  bool has_unsent(const Partition& p) const;

  // link_settle.cc
  // Looks for the unsettled partitions' unacknowledged batches in the central
  // log (send_window.h) before they send; false on a failure (already
  // handled through fail()).
  bool settle_all();
  // Reads p's central log from from (its cursor's remote_next_offset, or
  // the log's start when that is not known) up to end.
  bool settle(Partition& p, int64_t from, int64_t end);
  bool settle_failed(Partition& p, const Status& s);

  // link_metadata.cc
  bool refresh_metadata(const std::set<std::string>& topics);
  // Points each partition at its central leader; returns the remote topics
  // the central cluster does not have (their partitions are not paused yet).
  std::set<std::string> apply_leaders();
  // create.topics: creates the missing remote topics with the local
  // partition count; pauses the partitions of those it could not create.
  // Returns whether any was created.
  bool create_remote_topics(const std::set<std::string>& missing);
  void pause_topic(const std::string& remote_topic, const std::string& why);
  void pause(Partition& p, const std::string& why);

  // Sends what the windows, priorities and the bandwidth cap allow; false on
  // a failure (already handled).
  bool fill(bool* sent_any, int64_t* wait_ms);
  // The highest priority with something to deliver; false when none has.
  bool top_priority(int32_t* top) const;
  // One request's batches for a leader: the next batch of each of parts
  // whose window has room, up to max.request.bytes and the bandwidth cap
  // (*wait_ms when it stopped there). False on a failure (already handled).
  bool collect_request(const std::vector<Partition*>& parts, std::vector<client::UplinkBatch>* batches,
                       int64_t* wait_ms);
  bool receive_oldest();
  // What the failed batches of one answer call for (at most one of each).
  struct FailedAnswers {
    bool any = false;
    std::string retry_reason;  // a retriable error: reconnect after a backoff
    std::string reset_reason;  // the producer is lost or fenced: a new one
  };
  // The oldest batch in p's window failed with status.
  void note_failure(Partition& p, const SendWindow::Batch& batch, const Status& status,
                    FailedAnswers* failed);
  std::set<std::string> remote_topics() const;
  bool save(const std::vector<Partition*>& changed);
  bool save_cursors(const std::vector<meta::ForwardCursor>& cursors, const meta::ForwardProducer* producer);
  bool reset_producer(const std::string& why);
  // Forgets everything in flight; every partition resends from its cursor.
  void rewind();
  void fail(const std::string& why);
  void sleep_ms(int64_t ms) EXCLUDES(sleep_mu_);
  void publish(bool force);

  const LinkOptions options_;
  const TopicMapping mapping_;
  LocalStore* const store_;
  meta::ForwardProgress* const progress_;

  std::thread thread_;
  std::atomic<bool> stop_{false};
  // sleep_mu_ guards no state (stop_ is atomic): request_stop() takes it to
  // notify, so that a sleep_ms() between its look at stop_ and its wait
  // cannot miss the wake-up.
  port::Mutex sleep_mu_;
  std::condition_variable sleep_cv_;

  // Transports of the current client, so that request_stop() can interrupt them.
  const std::shared_ptr<InterruptibleTransports> transports_;

  // Link thread only.
  std::unique_ptr<client::Client> client_;
  std::unique_ptr<client::UplinkProducer> producer_;
  bool connected_ = false;
  int64_t retry_at_ms_ = 0;  // while !connected_: when to try again
  meta::ForwardProducer identity_;
  std::map<Key, Partition> partitions_;
  std::map<uint64_t, Key> tags_;  // tag of a batch in flight -> its partition
  uint64_t next_tag_ = 1;
  Backoff backoff_;
  TokenBucket bucket_;
  int64_t next_local_refresh_ms_ = 0;
  int64_t next_metadata_refresh_ms_ = 0;
  int64_t next_idle_check_ms_ = 0;  // while idle: when to look for closed connections
  // Remote topics this link created that the metadata has not shown yet
  // (a new topic takes a moment to reach every central broker).
  std::set<std::string> created_remote_topics_;
  size_t rotation_ = 0;
  bool any_unsettled_ = true;  // some window may be unsettled (settle_all looks)
  LinkStatusPublisher status_;
};

}  // namespace eddy::forward
