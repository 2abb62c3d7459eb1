// The numbers of every forwarding link, in one place: each link's thread
// publishes a fresh LinkStatus, `eddy forward status` (through the control
// socket) and, later, the metrics endpoint read snapshots. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

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
  LinkState state = LinkState::kConnecting;
  std::string last_error;
  int64_t retry_in_ms = 0;  // kBackingOff: when the next attempt starts
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  uint64_t producer_resets = 0;  // the central cluster forgot the producer id
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
  void publish(LinkStatus status);
  std::vector<LinkStatus> snapshot() const;

  // For people: the disk budget (when given), one block per link, one row
  // per partition.
  std::string render_text(const DiskBudgetStatus* disk = nullptr) const;
  // For programs: {"disk_budget":{...},"links":[{...,"partitions":[...]}]}
  // ("disk_budget" only when given).
  std::string render_json(const DiskBudgetStatus* disk = nullptr) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, LinkStatus> links_;
};

}  // namespace eddy::forward
