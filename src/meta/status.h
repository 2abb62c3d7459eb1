// Status: the result of every fallible operation of the meta room. Either ok,
// or a code with a message meant for humans (it names the database file and
// carries SQLite's own message when SQLite failed). Nothing in this room
// throws; callers check the Status.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

namespace eddy::meta {

class [[nodiscard]] Status {
 public:
  enum class Code : uint8_t {
    kOk = 0,
    kNotFound,         // the row asked for does not exist
    kAlreadyExists,    // a create found the key taken
    kInvalidArgument,  // the request breaks a rule (message is user-facing, Kafka's wording)
    kCorruption,       // the database file is damaged or is not an Eddy database
    kNotSupported,     // the database was written by a newer Eddy (schema too new)
    kIOError,          // SQLite or the OS failed (open, read, write, sync, disk full)
  };

  Status() = default;  // ok
  static Status ok_status() { return Status(); }
  static Status not_found(std::string message) { return Status(Code::kNotFound, std::move(message)); }
  static Status already_exists(std::string message) { return Status(Code::kAlreadyExists, std::move(message)); }
  static Status invalid_argument(std::string message) { return Status(Code::kInvalidArgument, std::move(message)); }
  static Status corruption(std::string message) { return Status(Code::kCorruption, std::move(message)); }
  static Status not_supported(std::string message) { return Status(Code::kNotSupported, std::move(message)); }
  static Status io_error(std::string message) { return Status(Code::kIOError, std::move(message)); }

  bool ok() const { return code_ == Code::kOk; }
  bool is_not_found() const { return code_ == Code::kNotFound; }
  bool is_already_exists() const { return code_ == Code::kAlreadyExists; }
  bool is_invalid_argument() const { return code_ == Code::kInvalidArgument; }
  bool is_corruption() const { return code_ == Code::kCorruption; }
  bool is_not_supported() const { return code_ == Code::kNotSupported; }
  bool is_io_error() const { return code_ == Code::kIOError; }

  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // The same code with another message (to add context). REQUIRES: !ok().
  Status with_message(std::string message) const { return Status(code_, std::move(message)); }
  // "OK" or "<code name>: <message>", for logs.
  std::string to_string() const;

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  Code code_ = Code::kOk;
  std::string message_;
};

const char* status_code_name(Status::Code code);

}  // namespace eddy::meta
