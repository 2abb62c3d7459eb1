// Idempotent-producer state per partition: for each producer id the epoch
// and the last sequence and offset it wrote, saved so that duplicate
// detection survives a restart. One row per (topic, partition, producer_id).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "meta/sqlite_db.h"
#include "port/status.h"

namespace eddy::meta {

struct ProducerSnapshot {
  std::string topic;
  int32_t partition = 0;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t last_sequence = -1;
  int64_t last_offset = -1;
  int64_t timestamp_ms = 0;  // of the producer's last write (for producer id expiry)

  friend bool operator==(const ProducerSnapshot&, const ProducerSnapshot&) = default;
};

class ProducerSnapshotStore {
 public:
  explicit ProducerSnapshotStore(Database* db) : db_(db) {}

  // Inserts or replaces the given rows, in one transaction.
  Status save(const std::vector<ProducerSnapshot>& entries);
  // Replaces the whole state of (topic, partition) with entries (whose topic
  // and partition must match; invalid_argument otherwise), in one transaction.
  Status replace_partition(const std::string& topic, int32_t partition, const std::vector<ProducerSnapshot>& entries);

  // The state of one partition, sorted by producer id.
  Status load(const std::string& topic, int32_t partition, std::vector<ProducerSnapshot>* out);
  // Everything, sorted by topic, partition, producer id.
  Status load_all(std::vector<ProducerSnapshot>* out);

  Status remove_partition(const std::string& topic, int32_t partition);
  // Deletes rows whose timestamp_ms < cutoff_ms (producer id expiry).
  Status remove_older_than(int64_t cutoff_ms, int64_t* removed = nullptr);

 private:
  Status insert_all(const std::vector<ProducerSnapshot>& entries);

  Database* db_;
};

}  // namespace eddy::meta
