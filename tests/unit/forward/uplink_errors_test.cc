#include "forward/uplink_errors.h"

#include <gtest/gtest.h>

namespace eddy::forward {
namespace {

using protocol::ErrorCode;

TEST(UplinkErrors, WhatEachCentralErrorMeansForTheLink) {
  EXPECT_EQ(classify_uplink_error(ErrorCode::kNotLeaderOrFollower), UplinkErrorKind::kRetriable);
  EXPECT_EQ(classify_uplink_error(ErrorCode::kRequestTimedOut), UplinkErrorKind::kRetriable);
  EXPECT_EQ(classify_uplink_error(ErrorCode::kNotEnoughReplicas), UplinkErrorKind::kRetriable);
  EXPECT_EQ(classify_uplink_error(ErrorCode::kUnknownTopicOrPartition), UplinkErrorKind::kPausesPartition);
  EXPECT_EQ(classify_uplink_error(ErrorCode::kTopicAuthorizationFailed), UplinkErrorKind::kPausesPartition);
  EXPECT_EQ(classify_uplink_error(ErrorCode::kMessageTooLarge), UplinkErrorKind::kPausesPartition);
  EXPECT_EQ(classify_uplink_error(ErrorCode::kUnknownProducerId), UplinkErrorKind::kProducerLost);
  EXPECT_EQ(classify_uplink_error(ErrorCode::kOutOfOrderSequenceNumber), UplinkErrorKind::kProducerLost);
  EXPECT_EQ(classify_uplink_error(ErrorCode::kInvalidProducerEpoch), UplinkErrorKind::kProducerFenced);
  EXPECT_EQ(classify_uplink_error(ErrorCode::kProducerFenced), UplinkErrorKind::kProducerFenced);
}

}  // namespace
}  // namespace eddy::forward
