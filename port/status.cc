#include "port/status.h"

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
  switch (code) {
    case Status::Code::kOk: return "OK";
    case Status::Code::kInvalidArgument: return "invalid argument";
    case Status::Code::kNotFound: return "not found";
    case Status::Code::kAlreadyExists: return "already exists";
    case Status::Code::kNotSupported: return "not supported";
    case Status::Code::kCorruption: return "corruption";
    case Status::Code::kIOError: return "I/O error";
    case Status::Code::kNoSpace: return "no space";
    case Status::Code::kLogFull: return "log full";
    case Status::Code::kTooLarge: return "too large";
    case Status::Code::kOutOfRange: return "out of range";
    case Status::Code::kLocked: return "locked";
    case Status::Code::kNetwork: return "network error";
    case Status::Code::kTimeout: return "timeout";
    case Status::Code::kProtocol: return "protocol error";
    case Status::Code::kUnsupportedVersion: return "unsupported version";
    case Status::Code::kBrokerError: return "broker error";
    case Status::Code::kCodec: return "codec error";
  }
  return "unknown";
}

}  // namespace eddy
