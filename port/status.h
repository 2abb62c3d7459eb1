// Status: the result of every fallible operation in Eddy, in every room
// (as LevelDB's one Status for the whole library). Either ok, or a code that
// tells the caller what to do about the failure plus a message for humans.
// Expected failures are values; nothing in Eddy throws them.
//
// An ok Status is a null pointer: creating, returning, moving and testing one
// never allocates (storage returns Status on the append path). Only a failure
// allocates its message.
//
// The code is for programs (the broker maps some codes to Kafka error codes,
// the forwarder retries on some); the message is for people and may change
// wording at any time: never branch on it.
//
// port/ sits below protocol/, so a Kafka error code carried by a Status is a
// plain int16_t here; protocol/errors.h builds such a Status from a broker's
// answer (protocol::broker_error) and reads the code back as a
// protocol::ErrorCode (protocol::kafka_error).
//
// Thread safety: a Status is a value; distinct objects may be used from
// distinct threads, one object needs external synchronisation.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>

namespace eddy {

class [[nodiscard]] Status {
 public:
  enum class Code : uint8_t {
    kOk = 0,
    // The caller asked for something impossible or a value breaks a rule: a
    // configuration value, a name, a flag, a client call's argument. meta's
    // messages for this code are user-facing (Kafka's wording).
    kInvalidArgument,
    // The thing asked for does not exist: a meta row, a topic or partition
    // (client: also UNKNOWN_TOPIC_OR_PARTITION answered by a broker, with that
    // Kafka code carried).
    kNotFound,
    // A create found the key taken (meta).
    kAlreadyExists,
    // Understood but not handled by this build: a database written by a newer
    // Eddy (meta); a magic 0/1 message set (storage append; the broker answers
    // INVALID_RECORD (87) for Produce v3+, UNSUPPORTED_FOR_MESSAGE_FORMAT (43)
    // before).
    kNotSupported,
    // Data is damaged or malformed: a meta database that is not Eddy's; a
    // record batch whose CRC-32C does not match or whose framing, counts or
    // offsets are wrong (storage append; the broker answers CORRUPT_MESSAGE (2);
    // the message says which).
    kCorruption,
    // A read, write, sync or other OS/SQLite call failed (storage: after a
    // failed write or sync the partition refuses further appends). The
    // broker answers KAFKA_STORAGE_ERROR (56).
    kIOError,
    // The filesystem has no room (ENOSPC); nothing was written. The broker
    // answers KAFKA_STORAGE_ERROR (56).
    kNoSpace,
    // The partition's disk budget is full, the oldest segment holds data not
    // yet forwarded and eddy.full.policy=reject. The broker answers
    // KAFKA_STORAGE_ERROR (56), which Java, librdkafka and kafka-python
    // producers retry until delivery.timeout.ms.
    kLogFull,
    // A record batch is larger than a whole segment. The broker answers
    // MESSAGE_TOO_LARGE (10).
    kTooLarge,
    // An offset below the log start or above the log end. The broker answers
    // OFFSET_OUT_OF_RANGE (1).
    kOutOfRange,
    // The data directory is locked by another process (a startup error).
    kLocked,
    // Resolve, connect, read or write failed, or the peer closed (client).
    // Retriable after reconnecting.
    kNetwork,
    // A deadline passed before the answer arrived (client). Retriable.
    kTimeout,
    // Bytes that do not decode as the protocol says, or a message that
    // cannot be encoded (protocol decode/encode; a peer's malformed answer).
    kProtocol,
    // The broker and this client share no version of an API (client).
    kUnsupportedVersion,
    // A broker answered with a Kafka error code, which the Status carries
    // (kafka_error_code()); retriable() when Kafka's clients retry it.
    kBrokerError,
    // A compression codec failed or is not built in.
    kCodec,
  };

  // ok.
  Status() noexcept = default;
  ~Status() = default;
  Status(const Status& other) : rep_(other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) rep_ = other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr;
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status ok_status() { return Status(); }
  // A failure with a code chosen at run time. REQUIRES: code != kOk.
  static Status error(Code code, std::string message) { return Status(code, std::move(message)); }
  static Status invalid_argument(std::string message) { return Status(Code::kInvalidArgument, std::move(message)); }
  static Status not_found(std::string message) { return Status(Code::kNotFound, std::move(message)); }
  static Status already_exists(std::string message) { return Status(Code::kAlreadyExists, std::move(message)); }
  static Status not_supported(std::string message) { return Status(Code::kNotSupported, std::move(message)); }
  static Status corruption(std::string message) { return Status(Code::kCorruption, std::move(message)); }
  static Status io_error(std::string message) { return Status(Code::kIOError, std::move(message)); }
  static Status no_space(std::string message) { return Status(Code::kNoSpace, std::move(message)); }
  static Status log_full(std::string message) { return Status(Code::kLogFull, std::move(message)); }
  static Status too_large(std::string message) { return Status(Code::kTooLarge, std::move(message)); }
  static Status out_of_range(std::string message) { return Status(Code::kOutOfRange, std::move(message)); }
  static Status locked(std::string message) { return Status(Code::kLocked, std::move(message)); }
  static Status network(std::string message) { return Status(Code::kNetwork, std::move(message)); }
  static Status timeout(std::string message) { return Status(Code::kTimeout, std::move(message)); }
  static Status protocol_error(std::string message) { return Status(Code::kProtocol, std::move(message)); }
  static Status unsupported_version(std::string message) {
    return Status(Code::kUnsupportedVersion, std::move(message));
  }
  static Status codec(std::string message) { return Status(Code::kCodec, std::move(message)); }
  // A Kafka error code answered by a broker. code is kBrokerError or
  // kNotFound; kafka_retriable says whether Kafka's clients retry the error.
  // (protocol::broker_error builds one from the code and the broker's answer.)
  // REQUIRES: kafka_code != 0.
  static Status kafka(Code code, int16_t kafka_code, bool kafka_retriable, std::string message);
  // ok for no error, kNoSpace for ENOSPC, kIOError for any other error; the
  // message is "<context>: <the error's message>" (or the latter alone).
  static Status from_error_code(const std::error_code& ec, std::string_view context = {});

  bool ok() const { return rep_ == nullptr; }
  Code code() const { return rep_ ? rep_->code : Code::kOk; }
  bool is_invalid_argument() const { return code() == Code::kInvalidArgument; }
  bool is_not_found() const { return code() == Code::kNotFound; }
  bool is_already_exists() const { return code() == Code::kAlreadyExists; }
  bool is_not_supported() const { return code() == Code::kNotSupported; }
  bool is_corruption() const { return code() == Code::kCorruption; }
  bool is_io_error() const { return code() == Code::kIOError; }

  // Empty when ok.
  const std::string& message() const;
  // The Kafka error code a broker answered with; 0 (NONE) unless the Status
  // was made by kafka() (protocol::broker_error).
  int16_t kafka_error_code() const { return rep_ ? rep_->kafka_code : 0; }

  // True when trying again may succeed: kNetwork and kTimeout (after
  // reconnecting) and Kafka errors that Kafka's clients treat as retriable
  // (after refreshing metadata). False for everything else.
  bool retriable() const;

  // The same failure with "<context>: " before the message. ok stays ok.
  Status with_context(std::string_view context) const;
  // The same code (and Kafka code) with another message. ok stays ok.
  Status with_message(std::string message) const;

  // "OK" or "<code name>: <message>", for logs.
  std::string to_string() const;

 private:
  struct Rep {
    Code code;
    bool kafka_retriable;
    int16_t kafka_code;
    std::string message;
  };

  Status(Code code, std::string message);

  std::unique_ptr<Rep> rep_;  // null when ok
};

// "OK", "invalid argument", "I/O error", ...
const char* status_code_name(Status::Code code);

}  // namespace eddy
