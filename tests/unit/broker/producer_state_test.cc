#include "broker/producer_state.h"

#include <gtest/gtest.h>

#include <limits>

namespace eddy::broker {
namespace {

using protocol::ErrorCode;
using Action = SequenceCheck::Action;

constexpr int64_t kPid = 7;

// Appends batches of `count` records the way Produce does: check, then record
// at the next offset. Returns the base offset.
class Partition {
 public:
  int64_t append(int64_t pid, int16_t epoch, int32_t seq, int32_t count, int64_t now_ms = 1000) {
    SequenceCheck c = state.check(pid, epoch, seq, count);
    EXPECT_EQ(c.action, Action::kAppend) << c.message;
    int64_t base = next_offset;
    state.record(pid, epoch, seq, count, base, base + count - 1, now_ms);
    next_offset += count;
    return base;
  }
  PartitionProducers state;
  int64_t next_offset = 0;
};

TEST(ProducerState, NewProducerStartsAtZeroAndContinuesInSequence) {
  Partition p;
  EXPECT_EQ(p.append(kPid, 0, 0, 3), 0);
  EXPECT_EQ(p.append(kPid, 0, 3, 2), 3);
  EXPECT_EQ(p.state.check(kPid, 0, 5, 1).action, Action::kAppend);
}

TEST(ProducerState, MarkerWithABumpedEpochFencesTheOldOneAndRestartsSequences) {
  Partition p;
  p.append(kPid, 0, 0, 3);
  // The transaction coordinator's ABORT with the fenced epoch 1.
  ASSERT_EQ(p.state.check_marker(kPid, 1, 0), ErrorCode::kNone);
  p.state.record_marker(kPid, 1, 0, p.next_offset++, 2000);
  EXPECT_EQ(p.state.find(kPid)->epoch, 1);
  EXPECT_EQ(p.state.check(kPid, 0, 3, 1).error, ErrorCode::kInvalidProducerEpoch) << "the zombie is fenced";
  EXPECT_EQ(p.state.check(kPid, 1, 3, 1).error, ErrorCode::kOutOfOrderSequenceNumber);
  EXPECT_EQ(p.append(kPid, 1, 0, 2), 4) << "the new epoch starts at sequence 0";
  // A marker of the same epoch keeps the sequences (the next transaction
  // goes on from them), an older epoch's marker is not allowed.
  p.state.record_marker(kPid, 1, 0, p.next_offset++, 3000);
  EXPECT_EQ(p.state.check(kPid, 1, 2, 1).action, Action::kAppend);
  EXPECT_EQ(p.state.check_marker(kPid, 0, 0), ErrorCode::kInvalidProducerEpoch);
  EXPECT_EQ(p.state.check_marker(kPid + 1, 0, 0), ErrorCode::kNone) << "a producer the partition does not know";
}

TEST(ProducerState, AMarkerOfAnOlderCoordinatorEpochIsFenced) {
  Partition p;
  p.append(kPid, 0, 0, 1);
  EXPECT_EQ(p.state.find(kPid)->coordinator_epoch, -1) << "no marker yet";
  p.state.record_marker(kPid, 0, 7, p.next_offset++, 2000);
  EXPECT_EQ(p.state.find(kPid)->coordinator_epoch, 7);
  // Kafka's appendEndTxnMarker: the producer epoch first, then the
  // coordinator's.
  EXPECT_EQ(p.state.check_marker(kPid, 0, 6), ErrorCode::kTransactionCoordinatorFenced);
  EXPECT_EQ(p.state.check_marker(kPid, 0, 7), ErrorCode::kNone);
  EXPECT_EQ(p.state.check_marker(kPid, 1, 8), ErrorCode::kNone);
  p.state.record_marker(kPid, 1, 8, p.next_offset++, 3000);
  EXPECT_EQ(p.state.check_marker(kPid, 0, 9), ErrorCode::kInvalidProducerEpoch);
}

TEST(ProducerState, DuplicateOfEachOfTheLastFiveBatchesReturnsItsOffset) {
  Partition p;
  int64_t bases[7];
  for (int i = 0; i < 7; ++i) bases[i] = p.append(kPid, 0, i * 10, 10);
  for (int i = 2; i < 7; ++i) {
    SequenceCheck c = p.state.check(kPid, 0, i * 10, 10);
    EXPECT_EQ(c.action, Action::kDuplicate) << i;
    EXPECT_EQ(c.error, ErrorCode::kNone) << i;
    EXPECT_EQ(c.duplicate_base_offset, bases[i]) << i;
    EXPECT_EQ(c.duplicate_last_offset, bases[i] + 9) << i;
  }
  // Older than the cache: known to be written, offset unknown.
  for (int i = 0; i < 2; ++i) {
    SequenceCheck c = p.state.check(kPid, 0, i * 10, 10);
    EXPECT_EQ(c.action, Action::kDuplicate) << i;
    EXPECT_EQ(c.error, ErrorCode::kDuplicateSequenceNumber) << i;
  }
}

TEST(ProducerState, GapIsOutOfOrder) {
  Partition p;
  p.append(kPid, 0, 0, 5);
  SequenceCheck c = p.state.check(kPid, 0, 6, 1);
  EXPECT_EQ(c.action, Action::kReject);
  EXPECT_EQ(c.error, ErrorCode::kOutOfOrderSequenceNumber);
  EXPECT_FALSE(c.message.empty());
  // A range overlapping the last batch but not equal to it is no duplicate.
  EXPECT_EQ(p.state.check(kPid, 0, 3, 5).error, ErrorCode::kOutOfOrderSequenceNumber);
  // Nor is one inside the cached window that matches no cached batch.
  p.append(kPid, 0, 5, 5);
  EXPECT_EQ(p.state.check(kPid, 0, 3, 4).error, ErrorCode::kOutOfOrderSequenceNumber);
  EXPECT_EQ(p.state.check(kPid, 0, 0, 5).action, Action::kDuplicate);
  EXPECT_EQ(p.state.check(kPid, 0, -1, 1).error, ErrorCode::kOutOfOrderSequenceNumber);
}

TEST(ProducerState, OlderEpochIsInvalidProducerEpoch) {
  Partition p;
  p.append(kPid, 3, 0, 1);
  SequenceCheck c = p.state.check(kPid, 2, 1, 1);
  EXPECT_EQ(c.action, Action::kReject);
  EXPECT_EQ(c.error, ErrorCode::kInvalidProducerEpoch);
}

TEST(ProducerState, NewEpochMustStartAtZeroAndForgetsOldBatches) {
  Partition p;
  p.append(kPid, 0, 0, 4);
  EXPECT_EQ(p.state.check(kPid, 1, 4, 1).error, ErrorCode::kOutOfOrderSequenceNumber);
  int64_t base = p.append(kPid, 1, 0, 2);
  // Sequence 0-1 of epoch 1 is a duplicate; epoch 0 is now fenced.
  SequenceCheck dup = p.state.check(kPid, 1, 0, 2);
  EXPECT_EQ(dup.action, Action::kDuplicate);
  EXPECT_EQ(dup.duplicate_base_offset, base);
  EXPECT_EQ(p.state.check(kPid, 0, 4, 1).error, ErrorCode::kInvalidProducerEpoch);
}

TEST(ProducerState, UnknownProducerNeedsSequenceZero) {
  Partition p;
  p.append(kPid, 0, 0, 1);
  SequenceCheck c = p.state.check(kPid + 1, 0, 42, 1);
  EXPECT_EQ(c.action, Action::kReject);
  EXPECT_EQ(c.error, ErrorCode::kUnknownProducerId);
  EXPECT_EQ(p.state.check(kPid + 1, 0, 0, 1).action, Action::kAppend);
}

TEST(ProducerState, SequencesWrapAtInt32Max) {
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(batch_last_sequence(kMax - 1, 2), kMax);
  EXPECT_EQ(batch_last_sequence(kMax, 3), 1);
  PartitionProducers state;
  state.load_snapshot({{"t", 0, kPid, 0, kMax - 2, 99, 1000}});
  EXPECT_EQ(state.check(kPid, 0, kMax - 1, 4).action, Action::kAppend);
  state.record(kPid, 0, kMax - 1, 4, 100, 103, 1000);
  // kMax-1, kMax, 0, 1.
  EXPECT_EQ(state.find(kPid)->last_sequence, 1);
  EXPECT_EQ(state.check(kPid, 0, 2, 1).action, Action::kAppend);
  SequenceCheck dup = state.check(kPid, 0, kMax - 1, 4);
  EXPECT_EQ(dup.action, Action::kDuplicate);
  EXPECT_EQ(dup.duplicate_base_offset, 100);
}

TEST(ProducerState, ExpiryForgetsIdleProducers) {
  Partition p;
  p.append(kPid, 0, 0, 1, /*now_ms=*/1000);
  p.append(kPid + 1, 0, 0, 1, /*now_ms=*/5000);
  EXPECT_EQ(p.state.expire(2000), 1u);
  EXPECT_EQ(p.state.find(kPid), nullptr);
  EXPECT_NE(p.state.find(kPid + 1), nullptr);
  // Expired: a continuing sequence is now an unknown producer.
  EXPECT_EQ(p.state.check(kPid, 0, 1, 1).error, ErrorCode::kUnknownProducerId);
}

TEST(ProducerState, ExpiryKeepsWhatTheCallerKeeps) {
  // The broker keeps producers with a transaction open in the partition,
  // as Kafka does: the abort tool finds them by DescribeProducers.
  Partition p;
  p.append(kPid, 0, 0, 1, /*now_ms=*/1000);
  p.append(kPid + 1, 0, 0, 1, /*now_ms=*/1000);
  EXPECT_EQ(p.state.expire(2000, [](int64_t id) { return id == kPid; }), 1u);
  EXPECT_NE(p.state.find(kPid), nullptr);
  EXPECT_EQ(p.state.find(kPid + 1), nullptr);
}

TEST(ProducerState, SnapshotKeepsTheLastBatchBelowThePoint) {
  Partition p;
  p.append(kPid, 2, 0, 10);   // offsets 0-9
  p.append(kPid, 2, 10, 10);  // 10-19
  p.append(kPid, 2, 20, 10);  // 20-29
  auto rows = p.state.to_snapshot("t", 3, /*upto_offset=*/20, {});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].topic, "t");
  EXPECT_EQ(rows[0].partition, 3);
  EXPECT_EQ(rows[0].producer_id, kPid);
  EXPECT_EQ(rows[0].producer_epoch, 2);
  EXPECT_EQ(rows[0].last_sequence, 19);
  EXPECT_EQ(rows[0].last_offset, 19);

  PartitionProducers restored;
  restored.load_snapshot(rows);
  // The snapshotted batch and older ones: written, offsets unknown.
  EXPECT_EQ(restored.check(kPid, 2, 10, 10).error, ErrorCode::kDuplicateSequenceNumber);
  EXPECT_EQ(restored.check(kPid, 2, 0, 10).error, ErrorCode::kDuplicateSequenceNumber);
  EXPECT_EQ(restored.check(kPid, 2, 20, 10).action, Action::kAppend);
  EXPECT_EQ(restored.check(kPid, 1, 20, 10).error, ErrorCode::kInvalidProducerEpoch);
}

TEST(ProducerState, SnapshotFallsBackToThePreviousRowWhenAllCachedBatchesAreAbove) {
  meta::ProducerSnapshot previous{"t", 0, kPid, 0, 49, 90, 1000};
  Partition p;
  p.state.load_snapshot({previous});
  p.next_offset = 100;
  for (int i = 0; i < 5; ++i) p.append(kPid, 0, 50 + i, 1);  // offsets 100-104
  auto rows = p.state.to_snapshot("t", 0, /*upto_offset=*/95, {previous});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0], previous);
  // Without a previous row the producer is left out (its batches lie above
  // the point and will be replayed).
  EXPECT_TRUE(p.state.to_snapshot("t", 0, 95, {}).empty());
}

}  // namespace
}  // namespace eddy::broker
