#include "meta/status.h"

namespace eddy::meta {

const char* status_code_name(Status::Code code) {
  switch (code) {
    case Status::Code::kOk: return "OK";
    case Status::Code::kNotFound: return "not found";
    case Status::Code::kAlreadyExists: return "already exists";
    case Status::Code::kInvalidArgument: return "invalid argument";
    case Status::Code::kCorruption: return "corruption";
    case Status::Code::kNotSupported: return "not supported";
    case Status::Code::kIOError: return "I/O error";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (ok()) return "OK";
  return std::string(status_code_name(code_)) + ": " + message_;
}

}  // namespace eddy::meta
