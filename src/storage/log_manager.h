// All partition logs of one data directory (log.dirs; Eddy uses a single
// directory): layout <dir>/<topic>-<partition>/, a lock file so that two
// processes never open the same directory, and the flusher thread.
//
// Threading: owned and called by the reactor thread, like the logs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "port/port.h"
#include "port/status.h"
#include "storage/disk_budget.h"
#include "storage/flusher.h"
#include "storage/log_config.h"
#include "storage/partition_log.h"

namespace eddy::storage {

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;
  bool operator<(const TopicPartition& o) const {
    return topic < o.topic || (topic == o.topic && partition < o.partition);
  }
  bool operator==(const TopicPartition& o) const { return topic == o.topic && partition == o.partition; }
};

// Kafka's rule: 1..249 characters of [a-zA-Z0-9._-], not "." or "..".
bool is_valid_topic_name(const std::string& topic);
// "<topic>-<partition>"
std::string partition_directory_name(const TopicPartition& tp);
bool parse_partition_directory_name(const std::string& name, TopicPartition* tp);

class LogManager {
 public:
  // Creates the directory when missing, takes its lock (kLocked when another
  // process holds it), finishes interrupted topic deletions and starts the
  // flusher. Partitions are opened by open_partition().
  static Status open(const std::string& data_directory, std::unique_ptr<LogManager>* out);
  // Without close(): partitions are left as after a crash.
  ~LogManager();
  // Clean shutdown of every partition, then the flusher stops and the lock
  // is released.
  Status close();

  // Partitions that have a directory (from an earlier run).
  std::vector<TopicPartition> partitions_on_disk() const;
  // Opens the partition (recovering it) or creates it. Returns the open log
  // when it is already open (config then updated).
  Status open_partition(const TopicPartition& tp, const LogConfig& config, PartitionLog** log);
  // nullptr when not open.
  PartitionLog* find(const TopicPartition& tp) const;
  const std::map<TopicPartition, std::unique_ptr<PartitionLog>>& partitions() const { return logs_; }

  // Closes the partition and removes its directory. Readers holding file
  // regions keep their (unlinked) files until they release them.
  Status delete_partition(const TopicPartition& tp);
  // Every partition of topic, open or only on disk.
  Status delete_topic(const std::string& topic);

  // retention.ms for every open partition; returns segments dropped.
  size_t apply_retention(int64_t now_ms);

  // The disk budget every open partition is charged to (unlimited until the
  // app sets its limit, before it opens partitions).
  DiskBudget& budget() { return budget_; }
  const DiskBudget& budget() const { return budget_; }

  // The loop whose thread owns every partition (PartitionLog::set_owner),
  // for those open now and those opened later. REQUIRES owner outlives
  // every later owner-thread call; the destructors check nothing, so an
  // owner destroyed before the manager is safe.
  void set_owner(const port::Executor* owner);

  Flusher& flusher() { return flusher_; }
  const Flusher& flusher() const { return flusher_; }
  const std::string& directory() const { return directory_; }

 private:
  explicit LogManager(std::string directory) : directory_(std::move(directory)) {}

  const std::string directory_;
  port::File lock_;
  Flusher flusher_;
  // Declared before logs_: each log releases its charge when destroyed.
  DiskBudget budget_;
  std::map<TopicPartition, std::unique_ptr<PartitionLog>> logs_;
  const port::Executor* owner_ = nullptr;
  bool closed_ = false;
};

}  // namespace eddy::storage
