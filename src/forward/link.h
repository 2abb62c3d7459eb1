// One store-and-forward link: a thread that reads what local producers wrote
// (through LocalStore) and sends it, batch by batch as stored, to the central
// cluster with an idempotent UplinkProducer, then saves how far the central
// cluster acknowledged. See README.md for the guarantees and the states.
//
// Invariant (what makes restarts exactly-once): per partition, the batches
// sent but not covered by the saved cursor are at most max_in_flight (<= 5),
// all sent with the saved producer id/epoch and consecutive sequences from
// the saved next_sequence. After any failure or restart the link resends
// from the saved cursor with the same sequences, and the central cluster,
// which remembers the last 5 batches per producer and partition, answers the
// ones it already has as duplicates.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "client/client.h"
#include "client/uplink_producer.h"
#include "forward/backoff.h"
#include "forward/link_options.h"
#include "forward/link_status.h"
#include "forward/local_store.h"
#include "forward/token_bucket.h"
#include "forward/topic_mapping.h"
#include "meta/forward_progress.h"

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
  void request_stop();
  void join();

  const LinkOptions& options() const { return options_; }

 private:
  // A batch sent and not yet acknowledged.
  struct Pending {
    uint64_t tag;
    int64_t offset;       // its local base offset
    int64_t next_offset;  // local offset after it
    int32_t next_sequence;
    uint64_t bytes;
  };
  struct Partition {
    std::string topic;
    protocol::Uuid topic_id;
    int32_t partition = 0;
    std::string remote_topic;  // empty while the name is invalid (paused)
    int32_t priority = 0;
    meta::ForwardCursor acked;  // as saved
    int64_t send_offset = 0;
    int32_t send_sequence = 0;
    std::deque<Pending> pending;
    // Whole batches read ahead from send_offset: buffer[buffer_pos..].
    std::vector<uint8_t> buffer;
    size_t buffer_pos = 0;
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
    // Whether the central partition has acknowledged a batch since the last
    // rewind. Until then only one batch is in flight: a partition that holds
    // no state for this producer (new, or its state expired) accepts any
    // sequence, so a second batch must not overtake a first that fails.
    bool confirmed = false;
  };
  using Key = TopicPartitionKey;

  void run();
  bool connect();
  // Re-lists the local partitions; measures backlog bytes (and counts as
  // the periodic refresh) when full.
  bool refresh_local(bool full = true);
  // Moves a cursor loaded from forward.db back to the local log's end when
  // it is beyond it; true when it did (the caller saves it).
  bool rewind_past_lost_tail(Partition& p, int64_t log_end_offset);
  bool refresh_metadata(const std::set<std::string>& topics);
  // Points each partition at its central leader; returns the remote topics
  // the central cluster does not have (their partitions are not paused yet).
  std::set<std::string> apply_leaders();
  // create.topics: creates the missing remote topics with the local
  // partition count; pauses the partitions of those it could not create.
  // Returns whether any was created.
  bool create_remote_topics(const std::set<std::string>& missing);
  void pause_topic(const std::string& remote_topic, const std::string& why);
  // Sends what the windows, priorities and the bandwidth cap allow; false on
  // a failure (already handled).
  bool fill(bool* sent_any, int64_t* wait_ms);
  bool receive_oldest();
  // Takes the next stored batch of p into *batch (a span of p.buffer); false
  // when there is none now.
  bool next_batch(Partition& p, std::span<uint8_t>* batch, int64_t* base_offset, int64_t* next_offset);
  bool has_unsent(const Partition& p) const;
  // Batches p may have in flight now (see Partition::confirmed).
  size_t window(const Partition& p) const;
  bool save(const std::vector<Partition*>& changed, const meta::ForwardProducer* producer);
  bool reset_producer(const std::string& why);
  // Forgets everything in flight; every partition resends from its cursor.
  void rewind();
  void fail(const std::string& why);
  void pause(Partition& p, const std::string& why);
  void sleep_ms(int64_t ms);
  void publish(bool force);
  std::map<Key, int64_t> acked_offsets() const;

  const LinkOptions options_;
  const TopicMapping mapping_;
  LocalStore* const store_;
  meta::ForwardProgress* const progress_;
  StatusBoard* const board_;

  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex sleep_mu_;
  std::condition_variable sleep_cv_;

  // Transports of the current client, so that request_stop() can interrupt them.
  struct Transports;
  std::shared_ptr<Transports> transports_;

  // Link thread only.
  std::unique_ptr<client::Client> client_;
  std::unique_ptr<client::UplinkProducer> producer_;
  bool connected_ = false;
  int64_t retry_at_ms_ = 0;  // while !connected_: when to try again
  meta::ForwardProducer identity_;
  std::map<Key, Partition> partitions_;
  std::map<uint64_t, Key> tags_;  // pending batch tag -> partition
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
  LinkStatus status_;
  int64_t last_publish_ms_ = 0;
  struct RateSample {
    int64_t ms;
    uint64_t bytes;
    int64_t messages;
  };
  std::deque<RateSample> rate_samples_;
  uint64_t total_bytes_ = 0;
  int64_t total_messages_ = 0;
};

}  // namespace eddy::forward
