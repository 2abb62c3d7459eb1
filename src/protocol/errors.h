// Kafka's error codes (Apache Kafka 3.9, org.apache.kafka.common.protocol.Errors):
// code, name, and whether Kafka's clients treat the error as retriable (its
// exception derives from RetriableException).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "port/status.h"

namespace eddy::protocol {

// X(enumerator, code, name, retriable)
#define EDDY_KAFKA_ERRORS(X) \
  X(kUnknownServerError, -1, "UNKNOWN_SERVER_ERROR", false) \
  X(kNone, 0, "NONE", false) \
  X(kOffsetOutOfRange, 1, "OFFSET_OUT_OF_RANGE", false) \
  X(kCorruptMessage, 2, "CORRUPT_MESSAGE", true) \
  X(kUnknownTopicOrPartition, 3, "UNKNOWN_TOPIC_OR_PARTITION", true) \
  X(kInvalidFetchSize, 4, "INVALID_FETCH_SIZE", false) \
  X(kLeaderNotAvailable, 5, "LEADER_NOT_AVAILABLE", true) \
  X(kNotLeaderOrFollower, 6, "NOT_LEADER_OR_FOLLOWER", true) \
  X(kRequestTimedOut, 7, "REQUEST_TIMED_OUT", true) \
  X(kBrokerNotAvailable, 8, "BROKER_NOT_AVAILABLE", false) \
  X(kReplicaNotAvailable, 9, "REPLICA_NOT_AVAILABLE", true) \
  X(kMessageTooLarge, 10, "MESSAGE_TOO_LARGE", false) \
  X(kStaleControllerEpoch, 11, "STALE_CONTROLLER_EPOCH", false) \
  X(kOffsetMetadataTooLarge, 12, "OFFSET_METADATA_TOO_LARGE", false) \
  X(kNetworkException, 13, "NETWORK_EXCEPTION", true) \
  X(kCoordinatorLoadInProgress, 14, "COORDINATOR_LOAD_IN_PROGRESS", true) \
  X(kCoordinatorNotAvailable, 15, "COORDINATOR_NOT_AVAILABLE", true) \
  X(kNotCoordinator, 16, "NOT_COORDINATOR", true) \
  X(kInvalidTopicException, 17, "INVALID_TOPIC_EXCEPTION", false) \
  X(kRecordListTooLarge, 18, "RECORD_LIST_TOO_LARGE", false) \
  X(kNotEnoughReplicas, 19, "NOT_ENOUGH_REPLICAS", true) \
  X(kNotEnoughReplicasAfterAppend, 20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", true) \
  X(kInvalidRequiredAcks, 21, "INVALID_REQUIRED_ACKS", false) \
  X(kIllegalGeneration, 22, "ILLEGAL_GENERATION", false) \
  X(kInconsistentGroupProtocol, 23, "INCONSISTENT_GROUP_PROTOCOL", false) \
  X(kInvalidGroupId, 24, "INVALID_GROUP_ID", false) \
  X(kUnknownMemberId, 25, "UNKNOWN_MEMBER_ID", false) \
  X(kInvalidSessionTimeout, 26, "INVALID_SESSION_TIMEOUT", false) \
  X(kRebalanceInProgress, 27, "REBALANCE_IN_PROGRESS", false) \
  X(kInvalidCommitOffsetSize, 28, "INVALID_COMMIT_OFFSET_SIZE", false) \
  X(kTopicAuthorizationFailed, 29, "TOPIC_AUTHORIZATION_FAILED", false) \
  X(kGroupAuthorizationFailed, 30, "GROUP_AUTHORIZATION_FAILED", false) \
  X(kClusterAuthorizationFailed, 31, "CLUSTER_AUTHORIZATION_FAILED", false) \
  X(kInvalidTimestamp, 32, "INVALID_TIMESTAMP", false) \
  X(kUnsupportedSaslMechanism, 33, "UNSUPPORTED_SASL_MECHANISM", false) \
  X(kIllegalSaslState, 34, "ILLEGAL_SASL_STATE", false) \
  X(kUnsupportedVersion, 35, "UNSUPPORTED_VERSION", false) \
  X(kTopicAlreadyExists, 36, "TOPIC_ALREADY_EXISTS", false) \
  X(kInvalidPartitions, 37, "INVALID_PARTITIONS", false) \
  X(kInvalidReplicationFactor, 38, "INVALID_REPLICATION_FACTOR", false) \
  X(kInvalidReplicaAssignment, 39, "INVALID_REPLICA_ASSIGNMENT", false) \
  X(kInvalidConfig, 40, "INVALID_CONFIG", false) \
  X(kNotController, 41, "NOT_CONTROLLER", true) \
  X(kInvalidRequest, 42, "INVALID_REQUEST", false) \
  X(kUnsupportedForMessageFormat, 43, "UNSUPPORTED_FOR_MESSAGE_FORMAT", false) \
  X(kPolicyViolation, 44, "POLICY_VIOLATION", false) \
  X(kOutOfOrderSequenceNumber, 45, "OUT_OF_ORDER_SEQUENCE_NUMBER", false) \
  X(kDuplicateSequenceNumber, 46, "DUPLICATE_SEQUENCE_NUMBER", false) \
  X(kInvalidProducerEpoch, 47, "INVALID_PRODUCER_EPOCH", false) \
  X(kInvalidTxnState, 48, "INVALID_TXN_STATE", false) \
  X(kInvalidProducerIdMapping, 49, "INVALID_PRODUCER_ID_MAPPING", false) \
  X(kInvalidTransactionTimeout, 50, "INVALID_TRANSACTION_TIMEOUT", false) \
  X(kConcurrentTransactions, 51, "CONCURRENT_TRANSACTIONS", true) \
  X(kTransactionCoordinatorFenced, 52, "TRANSACTION_COORDINATOR_FENCED", false) \
  X(kTransactionalIdAuthorizationFailed, 53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", false) \
  X(kSecurityDisabled, 54, "SECURITY_DISABLED", false) \
  X(kOperationNotAttempted, 55, "OPERATION_NOT_ATTEMPTED", false) \
  X(kKafkaStorageError, 56, "KAFKA_STORAGE_ERROR", true) \
  X(kLogDirNotFound, 57, "LOG_DIR_NOT_FOUND", false) \
  X(kSaslAuthenticationFailed, 58, "SASL_AUTHENTICATION_FAILED", false) \
  X(kUnknownProducerId, 59, "UNKNOWN_PRODUCER_ID", false) \
  X(kReassignmentInProgress, 60, "REASSIGNMENT_IN_PROGRESS", false) \
  X(kDelegationTokenAuthDisabled, 61, "DELEGATION_TOKEN_AUTH_DISABLED", false) \
  X(kDelegationTokenNotFound, 62, "DELEGATION_TOKEN_NOT_FOUND", false) \
  X(kDelegationTokenOwnerMismatch, 63, "DELEGATION_TOKEN_OWNER_MISMATCH", false) \
  X(kDelegationTokenRequestNotAllowed, 64, "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", false) \
  X(kDelegationTokenAuthorizationFailed, 65, "DELEGATION_TOKEN_AUTHORIZATION_FAILED", false) \
  X(kDelegationTokenExpired, 66, "DELEGATION_TOKEN_EXPIRED", false) \
  X(kInvalidPrincipalType, 67, "INVALID_PRINCIPAL_TYPE", false) \
  X(kNonEmptyGroup, 68, "NON_EMPTY_GROUP", false) \
  X(kGroupIdNotFound, 69, "GROUP_ID_NOT_FOUND", false) \
  X(kFetchSessionIdNotFound, 70, "FETCH_SESSION_ID_NOT_FOUND", true) \
  X(kInvalidFetchSessionEpoch, 71, "INVALID_FETCH_SESSION_EPOCH", true) \
  X(kListenerNotFound, 72, "LISTENER_NOT_FOUND", true) \
  X(kTopicDeletionDisabled, 73, "TOPIC_DELETION_DISABLED", false) \
  X(kFencedLeaderEpoch, 74, "FENCED_LEADER_EPOCH", true) \
  X(kUnknownLeaderEpoch, 75, "UNKNOWN_LEADER_EPOCH", true) \
  X(kUnsupportedCompressionType, 76, "UNSUPPORTED_COMPRESSION_TYPE", false) \
  X(kStaleBrokerEpoch, 77, "STALE_BROKER_EPOCH", false) \
  X(kOffsetNotAvailable, 78, "OFFSET_NOT_AVAILABLE", true) \
  X(kMemberIdRequired, 79, "MEMBER_ID_REQUIRED", false) \
  X(kPreferredLeaderNotAvailable, 80, "PREFERRED_LEADER_NOT_AVAILABLE", true) \
  X(kGroupMaxSizeReached, 81, "GROUP_MAX_SIZE_REACHED", false) \
  X(kFencedInstanceId, 82, "FENCED_INSTANCE_ID", false) \
  X(kEligibleLeadersNotAvailable, 83, "ELIGIBLE_LEADERS_NOT_AVAILABLE", true) \
  X(kElectionNotNeeded, 84, "ELECTION_NOT_NEEDED", true) \
  X(kNoReassignmentInProgress, 85, "NO_REASSIGNMENT_IN_PROGRESS", false) \
  X(kGroupSubscribedToTopic, 86, "GROUP_SUBSCRIBED_TO_TOPIC", false) \
  X(kInvalidRecord, 87, "INVALID_RECORD", false) \
  X(kUnstableOffsetCommit, 88, "UNSTABLE_OFFSET_COMMIT", true) \
  X(kThrottlingQuotaExceeded, 89, "THROTTLING_QUOTA_EXCEEDED", true) \
  X(kProducerFenced, 90, "PRODUCER_FENCED", false) \
  X(kResourceNotFound, 91, "RESOURCE_NOT_FOUND", false) \
  X(kDuplicateResource, 92, "DUPLICATE_RESOURCE", false) \
  X(kUnacceptableCredential, 93, "UNACCEPTABLE_CREDENTIAL", false) \
  X(kInconsistentVoterSet, 94, "INCONSISTENT_VOTER_SET", false) \
  X(kInvalidUpdateVersion, 95, "INVALID_UPDATE_VERSION", false) \
  X(kFeatureUpdateFailed, 96, "FEATURE_UPDATE_FAILED", false) \
  X(kPrincipalDeserializationFailure, 97, "PRINCIPAL_DESERIALIZATION_FAILURE", false) \
  X(kSnapshotNotFound, 98, "SNAPSHOT_NOT_FOUND", false) \
  X(kPositionOutOfRange, 99, "POSITION_OUT_OF_RANGE", false) \
  X(kUnknownTopicId, 100, "UNKNOWN_TOPIC_ID", true) \
  X(kDuplicateBrokerRegistration, 101, "DUPLICATE_BROKER_REGISTRATION", false) \
  X(kBrokerIdNotRegistered, 102, "BROKER_ID_NOT_REGISTERED", false) \
  X(kInconsistentTopicId, 103, "INCONSISTENT_TOPIC_ID", true) \
  X(kInconsistentClusterId, 104, "INCONSISTENT_CLUSTER_ID", false) \
  X(kTransactionalIdNotFound, 105, "TRANSACTIONAL_ID_NOT_FOUND", false) \
  X(kFetchSessionTopicIdError, 106, "FETCH_SESSION_TOPIC_ID_ERROR", true) \
  X(kIneligibleReplica, 107, "INELIGIBLE_REPLICA", false) \
  X(kNewLeaderElected, 108, "NEW_LEADER_ELECTED", false) \
  X(kOffsetMovedToTieredStorage, 109, "OFFSET_MOVED_TO_TIERED_STORAGE", false) \
  X(kFencedMemberEpoch, 110, "FENCED_MEMBER_EPOCH", false) \
  X(kUnreleasedInstanceId, 111, "UNRELEASED_INSTANCE_ID", false) \
  X(kUnsupportedAssignor, 112, "UNSUPPORTED_ASSIGNOR", false) \
  X(kStaleMemberEpoch, 113, "STALE_MEMBER_EPOCH", false) \
  X(kMismatchedEndpointType, 114, "MISMATCHED_ENDPOINT_TYPE", false) \
  X(kUnsupportedEndpointType, 115, "UNSUPPORTED_ENDPOINT_TYPE", false) \
  X(kUnknownControllerId, 116, "UNKNOWN_CONTROLLER_ID", false) \
  X(kUnknownSubscriptionId, 117, "UNKNOWN_SUBSCRIPTION_ID", false) \
  X(kTelemetryTooLarge, 118, "TELEMETRY_TOO_LARGE", false) \
  X(kInvalidRegistration, 119, "INVALID_REGISTRATION", false) \
  X(kTransactionAbortable, 120, "TRANSACTION_ABORTABLE", false) \
  X(kInvalidRecordState, 121, "INVALID_RECORD_STATE", false) \
  X(kShareSessionNotFound, 122, "SHARE_SESSION_NOT_FOUND", true) \
  X(kInvalidShareSessionEpoch, 123, "INVALID_SHARE_SESSION_EPOCH", true) \
  X(kFencedStateEpoch, 124, "FENCED_STATE_EPOCH", false) \
  X(kInvalidVoterKey, 125, "INVALID_VOTER_KEY", false) \
  X(kDuplicateVoter, 126, "DUPLICATE_VOTER", false) \
  X(kVoterNotFound, 127, "VOTER_NOT_FOUND", false)

enum class ErrorCode : int16_t {
#define EDDY_KAFKA_ERROR_ENUM(enumerator, code, name, retriable) enumerator = code,
  EDDY_KAFKA_ERRORS(EDDY_KAFKA_ERROR_ENUM)
#undef EDDY_KAFKA_ERROR_ENUM
};

struct ErrorInfo {
  ErrorCode code;
  const char* name;  // Kafka's name, e.g. "UNKNOWN_TOPIC_OR_PARTITION"
  bool retriable;
};

// Every known error code, in ascending code order.
std::span<const ErrorInfo> all_errors();
// nullptr for a code Kafka 3.9 does not define.
const ErrorInfo* find_error(int16_t code);
// Kafka's name; "UNKNOWN_ERROR_CODE" for an undefined code.
const char* error_name(ErrorCode code);
const char* error_name(int16_t code);
// False for NONE and for undefined codes.
bool is_retriable(ErrorCode code);

inline int16_t to_int(ErrorCode code) { return static_cast<int16_t>(code); }

// A Kafka error code answered by a broker, as a Status that carries it: code
// kNotFound for UNKNOWN_TOPIC_OR_PARTITION, kBrokerError for any other;
// retriable() as is_retriable(). The message reads
// "<context>: <ERROR_NAME>[: <broker message>]".
Status broker_error(int16_t error_code, const std::string& context,
                    const std::optional<std::string>& broker_message = std::nullopt);
// The Kafka error code a Status carries; kNone unless it came from
// broker_error.
inline ErrorCode kafka_error(const Status& s) { return static_cast<ErrorCode>(s.kafka_error_code()); }

}  // namespace eddy::protocol
