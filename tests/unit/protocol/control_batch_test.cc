#include "protocol/control_batch.h"

#include <gtest/gtest.h>

namespace eddy::protocol {
namespace {

TEST(ControlBatch, CommitMarkerHasKafkasLayout) {
  const std::vector<uint8_t> bytes = build_control_batch(ControlType::kCommit, 4711, 3, 9, 1700000000000);
  RecordBatchView batch;
  ASSERT_EQ(RecordBatchView::parse(bytes, &batch), BatchError::kOk);
  EXPECT_TRUE(batch.crc_matches());
  EXPECT_TRUE(batch.is_control());
  EXPECT_TRUE(batch.is_transactional());
  EXPECT_EQ(batch.producer_id(), 4711);
  EXPECT_EQ(batch.producer_epoch(), 3);
  EXPECT_EQ(batch.base_sequence(), -1);
  EXPECT_EQ(batch.record_count(), 1);
  EXPECT_EQ(batch.base_timestamp(), 1700000000000);
  RecordIterator records(batch);
  Record record;
  ASSERT_TRUE(records.next(&record));
  ASSERT_TRUE(record.key.has_value());
  ASSERT_TRUE(record.value.has_value());
  // key: version 0, type 1 (COMMIT); value: version 0, coordinator epoch 9.
  EXPECT_EQ(std::vector<uint8_t>(record.key->begin(), record.key->end()), (std::vector<uint8_t>{0, 0, 0, 1}));
  EXPECT_EQ(std::vector<uint8_t>(record.value->begin(), record.value->end()),
            (std::vector<uint8_t>{0, 0, 0, 0, 0, 9}));
  EXPECT_EQ(control_type(batch), ControlType::kCommit);
  EXPECT_EQ(marker_coordinator_epoch(batch), 9);
}

TEST(ControlBatch, AbortMarkerIsRecognised) {
  const std::vector<uint8_t> bytes = build_control_batch(ControlType::kAbort, 1, 0, 0, 0);
  RecordBatchView batch;
  ASSERT_EQ(RecordBatchView::parse(bytes, &batch), BatchError::kOk);
  EXPECT_EQ(control_type(batch), ControlType::kAbort);
}

TEST(ControlBatch, DataBatchesAndUnknownMarkersAreNotMarkers) {
  RecordBatchBuilder data;
  data.producer(1, 0, 0).attributes(batch_attributes::kTransactional).add("k", "v", 0);
  const std::vector<uint8_t> data_bytes = data.build();
  RecordBatchView batch;
  ASSERT_EQ(RecordBatchView::parse(data_bytes, &batch), BatchError::kOk);
  EXPECT_EQ(control_type(batch), std::nullopt);

  // A control batch whose key names a marker version Eddy does not know.
  const uint8_t key[] = {0, 1, 0, 1};
  RecordInput record;
  record.key = std::span<const uint8_t>(key);
  RecordBatchBuilder unknown;
  unknown.producer(1, 0, -1)
      .attributes(batch_attributes::kTransactional | batch_attributes::kControl)
      .add(record);
  const std::vector<uint8_t> unknown_bytes = unknown.build();
  ASSERT_EQ(RecordBatchView::parse(unknown_bytes, &batch), BatchError::kOk);
  EXPECT_EQ(control_type(batch), std::nullopt);
  EXPECT_EQ(marker_coordinator_epoch(batch), std::nullopt);
}

TEST(ControlBatch, AMarkerValueTooShortHasNoCoordinatorEpoch) {
  const uint8_t key[] = {0, 0, 0, 0};    // version 0, ABORT
  const uint8_t value[] = {0, 0, 0, 7};  // version 0, then 2 bytes instead of 4
  RecordInput record;
  record.key = std::span<const uint8_t>(key);
  record.value = std::span<const uint8_t>(value);
  RecordBatchBuilder builder;
  builder.producer(1, 0, -1)
      .attributes(batch_attributes::kTransactional | batch_attributes::kControl)
      .add(record);
  const std::vector<uint8_t> bytes = builder.build();
  RecordBatchView batch;
  ASSERT_EQ(RecordBatchView::parse(bytes, &batch), BatchError::kOk);
  EXPECT_EQ(control_type(batch), ControlType::kAbort);
  EXPECT_EQ(marker_coordinator_epoch(batch), std::nullopt);
}

}  // namespace
}  // namespace eddy::protocol
