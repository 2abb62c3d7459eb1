// The numbers of every forwarding link, in one place: each link's thread
// publishes a fresh LinkStatus, `eddy forward status` (through the control
// socket) and, later, the metrics endpoint read snapshots. Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "port/mutex.h"
#include "port/thread_annotations.h"

namespace eddy::forward {

enum class LinkState : uint8_t {
  kConnecting,  // bootstrap / metadata / producer id in progress
  kConnected,   // forwarding (or idle with nothing to send)
  kBackingOff,  // waiting after a failure (last_error says which)
  kStopped,
};
const char* link_state_name(LinkState state);

struct PartitionStatus {
  std::string topic;
  int32_t partition = 0;
  std::string remote_topic;
  int32_t priority = 0;
  int64_t forwarded_offset = 0;  // next local offset not yet acknowledged by the central cluster
  int64_t log_start_offset = 0;
  int64_t local_end_offset = 0;  // the local log end offset
  int64_t backlog_messages = 0;  // local_end_offset - forwarded_offset
  uint64_t backlog_bytes = 0;
  int64_t dropped_messages = 0;  // lost to eddy.full.policy=drop-oldest before forwarding
  uint64_t rejected_appends = 0;  // local produces refused by eddy.full.policy=reject (since start)
  uint64_t skipped_invalid_batches = 0;  // stored batches with malformed records, not sent (since start)
  uint64_t lost_after_forwarding = 0;    // forwarded, then lost from the local log by a power cut (since start)
  std::string paused;            // why the partition is paused; empty: not paused
  std::string last_error;
  int64_t forwarded_messages = 0;  // since start
  uint64_t forwarded_bytes = 0;    // since start
};

struct LinkStatus {
  std::string name;
  std::string bootstrap;
  // "PLAINTEXT", "SSL", "SASL_SSL SCRAM-SHA-512 as gateway-7": the
  // security protocol, mechanism and user name (never a password).
  std::string security = "PLAINTEXT";
  LinkState state = LinkState::kConnecting;
  std::string last_error;
  int64_t retry_in_ms = 0;  // kBackingOff: when the next attempt starts
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  uint64_t producer_resets = 0;  // the central cluster forgot the producer id
  // Batches found in the central log that were sent and never acknowledged
  // (the answer lost with the connection): counted as forwarded, not sent again.
  uint64_t found_unacknowledged = 0;
  uint64_t connects = 0;
  int64_t bandwidth_bytes_per_sec = 0;  // 0: no cap
  double rate_bytes_per_sec = 0;        // over the last few seconds
  double rate_messages_per_sec = 0;
  std::vector<PartitionStatus> partitions;  // sorted by topic, partition
};

// The data directory's disk budget (eddy.disk.budget.bytes), shown above
// the links: the room left for buffering while a link is down.
struct DiskBudgetStatus {
  uint64_t limit_bytes = 0;
  uint64_t used_bytes = 0;
  uint64_t free_bytes = 0;
};

class StatusBoard {
 public:
  void publish(LinkStatus status) EXCLUDES(mu_);
  std::vector<LinkStatus> snapshot() const EXCLUDES(mu_);

  // For people: the disk budget (when given), one block per link, one row
  // per partition.
  std::string render_text(const DiskBudgetStatus* disk = nullptr) const EXCLUDES(mu_);
  // For programs: {"disk_budget":{...},"links":[{...,"partitions":[...]}]}
  // ("disk_budget" only when given).
  std::string render_json(const DiskBudgetStatus* disk = nullptr) const EXCLUDES(mu_);

 private:
  mutable port::Mutex mu_;
  std::map<std::string, LinkStatus> links_ GUARDED_BY(mu_);
};

// Bytes and messages per second over the last five seconds, from cumulative
// totals sampled at each publish. Times are caller-supplied monotonic
// milliseconds.
class RateMeter {
 public:
  static constexpr int64_t kWindowMs = 5000;

  void sample(int64_t now_ms, uint64_t total_bytes, int64_t total_messages);
  double bytes_per_sec() const { return bytes_per_sec_; }
  double messages_per_sec() const { return messages_per_sec_; }

 private:
  struct Sample {
    int64_t ms;
    uint64_t bytes;
    int64_t messages;
  };
  std::deque<Sample> samples_;
  double bytes_per_sec_ = 0;
  double messages_per_sec_ = 0;
};

// One link's entry on the board, kept by the link's thread: its LinkStatus,
// published at most every kPublishMs unless forced, with the rates of what
// the link forwarded.
class LinkStatusPublisher {
 public:
  static constexpr int64_t kPublishMs = 250;

  // Publishes initial at once. REQUIRES: board outlives the publisher.
  LinkStatusPublisher(StatusBoard* board, LinkStatus initial);

  LinkStatus& status() { return status_; }
  const LinkStatus& status() const { return status_; }
  // Batches the central cluster acknowledged (for the rates).
  void count_forwarded(uint64_t bytes, int64_t messages);

  // When forced or due: fill(&status()) brings the status up to date (its
  // partitions, the producer), then it goes to the board with fresh rates.
  template <typename Fill>
  void publish(bool force, Fill&& fill) {
    if (!due(force)) return;
    fill(&status_);
    board_->publish(status_);
  }

 private:
  // Whether a publish is due; when it is, samples the rates.
  bool due(bool force);

  StatusBoard* const board_;
  LinkStatus status_;
  int64_t last_publish_ms_ = 0;
  RateMeter rates_;
  uint64_t total_bytes_ = 0;
  int64_t total_messages_ = 0;
};

}  // namespace eddy::forward
