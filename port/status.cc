#include "port/status.h"

#include <cstddef>
#include <cstdlib>

namespace eddy {

Status::Status(Code code, std::string message)
    : rep_(std::make_unique<Rep>(Rep{code, false, 0, std::move(message)})) {
  // An ok Status is a null rep_; a failure "with code kOk" would not be ok().
  if (code == Code::kOk) std::abort();
}

Status Status::kafka(Code code, int16_t kafka_code, bool kafka_retriable, std::string message) {
  Status s(code, std::move(message));
  s.rep_->kafka_code = kafka_code;
  s.rep_->kafka_retriable = kafka_retriable;
  return s;
}

Status Status::from_error_code(const std::error_code& ec, std::string_view context) {
  if (!ec) return Status();
  std::string message = context.empty() ? ec.message() : std::string(context) + ": " + ec.message();
  if (ec == std::errc::no_space_on_device) return no_space(std::move(message));
  return io_error(std::move(message));
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return rep_ ? rep_->message : kEmpty;
}

bool Status::retriable() const {
  switch (code()) {
    case Code::kNetwork:
    case Code::kTimeout:
      return true;
    case Code::kBrokerError:
    case Code::kNotFound:
      return rep_->kafka_retriable;
    default:
      return false;
  }
}

Status Status::with_context(std::string_view context) const {
  if (ok()) return Status();
  Status s = *this;
  s.rep_->message = std::string(context) + ": " + s.rep_->message;
  return s;
}

Status Status::with_message(std::string message) const {
  if (ok()) return Status();
  Status s = *this;
  s.rep_->message = std::move(message);
  return s;
}

std::string Status::to_string() const {
  if (ok()) return "OK";
  std::string out = status_code_name(rep_->code);
  if (!rep_->message.empty()) out += ": " + rep_->message;
  return out;
}

const char* status_code_name(Status::Code code) {
  // In the order of Status::Code.
  static constexpr const char* kNames[] = {
      "OK",
      "invalid argument",
      "not found",
      "already exists",
      "not supported",
      "corruption",
      "I/O error",
      "no space",
      "log full",
      "too large",
      "out of range",
      "locked",
      "network error",
      "timeout",
      "protocol error",
      "unsupported version",
      "broker error",
      "codec error",
  };
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == static_cast<size_t>(Status::Code::kCodec) + 1,
                "one name per code");
  const auto i = static_cast<size_t>(code);
  return i < sizeof(kNames) / sizeof(kNames[0]) ? kNames[i] : "unknown";
}

}  // namespace eddy
