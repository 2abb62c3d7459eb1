#include "storage/status.h"

namespace eddy::storage {

const char* status_name(Status status) {
  switch (status) {
    case Status::kOk: return "ok";
    case Status::kCorruptBatch: return "corrupt batch";
    case Status::kInvalidBatch: return "invalid batch";
    case Status::kUnsupportedMagic: return "unsupported magic";
    case Status::kBatchTooLarge: return "batch too large";
    case Status::kOffsetOutOfRange: return "offset out of range";
    case Status::kLogFull: return "log full";
    case Status::kNoSpace: return "no space";
    case Status::kIoError: return "I/O error";
    case Status::kLocked: return "locked";
    case Status::kInvalidArgument: return "invalid argument";
  }
  return "unknown";
}

Status status_from_error(const std::error_code& ec) {
  if (!ec) return Status::kOk;
  if (ec == std::errc::no_space_on_device) return Status::kNoSpace;
  return Status::kIoError;
}

}  // namespace eddy::storage
