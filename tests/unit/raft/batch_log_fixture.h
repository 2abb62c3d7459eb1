// A BatchLog over a PartitionLog in a temporary directory, for the raft
// tests: small segments, page-cache durability (only flush() and rolls
// sync), no retention; and the batches its entries are.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "protocol/record_batch.h"
#include "raft/batch_log.h"
#include "segment_log_fixture.h"
#include "storage/flusher.h"
#include "storage/partition_log.h"
#include "tests/unit/port/test_dir.h"

namespace eddy::raft::testing {

inline constexpr int64_t kBatchTime = 1700000000000;

// A producer's batch of `records` records whose values are value, value+"1",
// ...: as the log stores it at offset `at` in epoch (base offset and
// partitionLeaderEpoch are not covered by the CRC: a batch built with
// other ones is the same batch to append).
inline std::string data_batch(const std::string& value, Offset at = 0, Epoch epoch = -1, int records = 1) {
  protocol::RecordBatchBuilder builder;
  builder.base_offset(at).partition_leader_epoch(epoch);
  std::vector<std::string> values;
  for (int i = 0; i < records; ++i) values.push_back(i == 0 ? value : value + std::to_string(i));
  for (const std::string& v : values) {
    protocol::RecordInput record;
    record.value = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v.data()), v.size());
    record.timestamp = kBatchTime;
    builder.add(record);
  }
  std::vector<uint8_t> bytes = builder.build();
  return std::string(bytes.begin(), bytes.end());
}

// The leader-change entry's batch as stored at `at` in epoch.
inline std::string empty_batch(Offset at = 0, Epoch epoch = -1) {
  std::vector<uint8_t> bytes = protocol::build_empty_batch(kBatchTime);
  protocol::set_base_offset(bytes, at);
  protocol::set_partition_leader_epoch(bytes, epoch);
  return std::string(bytes.begin(), bytes.end());
}

class BatchLogFixture {
 public:
  explicit BatchLogFixture(storage::LogConfig config = raft_log_config()) : config_(config) {
    flusher_.start();
    open();
  }
  ~BatchLogFixture() {
    log_.reset();
    if (partition_) (void)partition_->close();
  }
  std::string directory() const { return dir_.file("partition-0"); }
  RaftLog& log() { return *log_; }
  BatchLog& batch_log() { return *log_; }
  storage::PartitionLog& partition() { return *partition_; }

  // (Re)opens the partition and the BatchLog over it.
  void open() { ASSERT_TRUE(try_open().ok()); }
  Status try_open() {
    log_.reset();
    if (partition_) (void)partition_->close();
    partition_.reset();
    Status s = storage::PartitionLog::open(directory(), config_, &flusher_, &partition_);
    if (!s.ok()) return s;
    return BatchLog::open(partition_.get(), BatchLogOptions{.clock = [] { return kBatchTime; }}, &log_);
  }
  // Drops both without closing them, as a crash would (the page cache
  // keeps what was written).
  void crash() {
    log_.reset();
    partition_.reset();
  }
  // Waits until everything appended is durable (flush() only asks).
  void wait_durable() { ASSERT_TRUE(partition_->wait_durable(partition_->log_end_offset(), 10000)); }

 private:
  storage::LogConfig config_;
  eddy::testing::TempDir dir_;
  storage::Flusher flusher_;
  std::unique_ptr<storage::PartitionLog> partition_;
  std::unique_ptr<BatchLog> log_;
};

}  // namespace eddy::raft::testing
