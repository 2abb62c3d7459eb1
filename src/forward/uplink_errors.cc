#include "forward/uplink_errors.h"

namespace eddy::forward {

using protocol::ErrorCode;

UplinkErrorKind classify_uplink_error(ErrorCode code) {
  switch (code) {
    case ErrorCode::kUnknownTopicOrPartition:
    case ErrorCode::kTopicAuthorizationFailed:
    case ErrorCode::kClusterAuthorizationFailed:
    case ErrorCode::kMessageTooLarge:
    case ErrorCode::kRecordListTooLarge:
    case ErrorCode::kInvalidRecord:
    case ErrorCode::kCorruptMessage:
    case ErrorCode::kInvalidTopicException:
    case ErrorCode::kPolicyViolation:
    case ErrorCode::kUnsupportedForMessageFormat:
    case ErrorCode::kUnsupportedCompressionType:
    case ErrorCode::kInvalidRequiredAcks:
    case ErrorCode::kInvalidTimestamp:
      return UplinkErrorKind::kPausesPartition;
    case ErrorCode::kUnknownProducerId:
    case ErrorCode::kOutOfOrderSequenceNumber:
      return UplinkErrorKind::kProducerLost;
    case ErrorCode::kInvalidProducerEpoch:
    case ErrorCode::kProducerFenced:
      return UplinkErrorKind::kProducerFenced;
    default:
      return UplinkErrorKind::kRetriable;
  }
}

}  // namespace eddy::forward
