// A SegmentLog over a PartitionLog in a temporary directory, for the raft
// tests: small segments (batches roll often), page-cache durability (only
// flush() and rolls sync), no retention.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "protocol/control_batch.h"
#include "raft/kafka_entries.h"
#include "raft/segment_log.h"
#include "storage/flusher.h"
#include "storage/partition_log.h"
#include "tests/unit/port/test_dir.h"

namespace eddy::raft::testing {

inline std::string leader_change_payload(NodeId leader, std::vector<NodeId> voters) {
  std::vector<uint8_t> bytes = leader_change_message(leader, voters);
  return std::string(bytes.begin(), bytes.end());
}

inline storage::LogConfig raft_log_config() {
  storage::LogConfig config;
  config.segment_bytes = 4096;
  config.retention_bytes = storage::kNoLimit;
  config.retention_ms = storage::kNoLimit;
  config.index_interval_bytes = 256;
  config.acks_all_waits_for = storage::AcksAllWaitsFor::kPageCache;
  return config;
}

class SegmentLogFixture {
 public:
  // Under base (nullptr: $TMPDIR or /tmp).
  explicit SegmentLogFixture(const char* base = nullptr) : dir_(base) {
    flusher_.start();
    open();
  }
  std::string directory() const { return dir_.file("raft-0"); }
  RaftLog& log() { return *log_; }
  SegmentLog& segment_log() { return *log_; }
  storage::PartitionLog& partition() { return *log_->partition_log(); }

  // (Re)opens the SegmentLog, starting at start (the latest snapshot).
  void open(SnapshotId start = {}) { ASSERT_TRUE(try_open(start).ok()); }
  Status try_open(SnapshotId start = {}) {
    log_.reset();
    return SegmentLog::open(directory(), raft_log_config(), &flusher_,
                            SegmentLogOptions{.local_id = 1, .voters = {1, 2, 3},
                                              .clock = [] { return int64_t{1700000000000}; }},
                            start, &log_);
  }
  void close() {
    ASSERT_TRUE(log_->close().ok());
    log_.reset();
  }
  // Drops the log without closing it, as a crash would.
  void crash() { log_.reset(); }

 private:
  eddy::testing::TempDir dir_;
  storage::Flusher flusher_;
  std::unique_ptr<SegmentLog> log_;
};

}  // namespace eddy::raft::testing
