// Results of storage operations. Expected failures are values, never
// exceptions. Each code names the Kafka error the broker should answer with.
#pragma once

#include <cstdint>
#include <system_error>

namespace eddy::storage {

enum class Status : uint8_t {
  kOk = 0,
  // The batch's CRC-32C does not match.             Kafka: CORRUPT_MESSAGE (2)
  kCorruptBatch,
  // Malformed batch (length, counts, offsets).     Kafka: CORRUPT_MESSAGE (2)
  kInvalidBatch,
  // Magic 0/1 message set. Kafka: INVALID_RECORD (87) for Produce v3+,
  // UNSUPPORTED_FOR_MESSAGE_FORMAT (43) before.
  kUnsupportedMagic,
  // The batch is larger than a whole segment.       Kafka: MESSAGE_TOO_LARGE (10)
  kBatchTooLarge,
  // Offset below the log start or above the log end. Kafka: OFFSET_OUT_OF_RANGE (1)
  kOffsetOutOfRange,
  // The partition's budget is full, the oldest segment holds pinned
  // (not yet forwarded) data and eddy.full.policy=reject. Retriable: the
  // broker answers KAFKA_STORAGE_ERROR (56), which Java, librdkafka and
  // kafka-python producers retry until delivery.timeout.ms.
  kLogFull,
  // The filesystem has no room for a new segment (ENOSPC while
  // preallocating). Nothing was written.          Kafka: KAFKA_STORAGE_ERROR (56)
  kNoSpace,
  // A read, write or sync failed. After a failed write or sync the
  // partition refuses further appends (its page-cache state is unknown).
  //                                                Kafka: KAFKA_STORAGE_ERROR (56)
  kIoError,
  // The data directory is locked by another process.
  kLocked,
  // A configuration value or name outside what is allowed.
  kInvalidArgument,
};

const char* status_name(Status status);
// kNoSpace for ENOSPC, kIoError for any other error, kOk for none.
Status status_from_error(const std::error_code& ec);

}  // namespace eddy::storage
