// The result of a client operation: ok, or what failed and why.
//
// A Status carries a category (StatusCode) that tells the caller what to do
// about the failure — retry after reconnecting, refresh metadata, give up —
// and, when the broker answered with a Kafka error, that error code. The
// message is for people: it names the broker, the API and, where the broker
// sent one, the broker's own error message.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "protocol/errors.h"

namespace eddy::client {

enum class StatusCode : uint8_t {
  kOk = 0,
  kInvalidArgument,     // the caller asked for something impossible
  kNetwork,             // resolve/connect/read/write failed or the peer closed
  kTimeout,             // a deadline passed before the answer arrived
  kProtocol,            // the peer sent bytes that do not decode as expected
  kUnsupportedVersion,  // the broker and this client share no version of an API
  kBrokerError,         // the broker answered with a Kafka error code
  kNotFound,            // an unknown topic or partition (from metadata)
  kCodec,               // a compression codec failed or is not built in
};

const char* status_code_name(StatusCode code);

class Status {
 public:
  Status() = default;
  static Status error(StatusCode code, std::string message) { return Status(code, std::move(message)); }
  // A Kafka error code answered by the broker. The message reads
  // "<context>: <ERROR_NAME>[: <broker message>]".
  static Status broker_error(int16_t error_code, const std::string& context,
                             const std::optional<std::string>& broker_message = std::nullopt);

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  // kNone unless code() == kBrokerError or kNotFound from a broker answer.
  protocol::ErrorCode kafka_error() const { return kafka_error_; }
  const std::string& message() const { return message_; }

  // True when trying again may succeed: network failures and timeouts (after
  // reconnecting) and Kafka errors that Kafka's clients treat as retriable
  // (after refreshing metadata).
  bool retriable() const;

  // Prefixes the message with context ("produce to t-0: " + message).
  Status with_context(const std::string& context) const;

 private:
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  StatusCode code_ = StatusCode::kOk;
  protocol::ErrorCode kafka_error_ = protocol::ErrorCode::kNone;
  std::string message_;
};

}  // namespace eddy::client
