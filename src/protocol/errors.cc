#include "protocol/errors.h"

namespace eddy::protocol {

namespace {

constexpr ErrorInfo kErrors[] = {
#define EDDY_KAFKA_ERROR_INFO(enumerator, code, name, retriable) {ErrorCode::enumerator, name, retriable},
    EDDY_KAFKA_ERRORS(EDDY_KAFKA_ERROR_INFO)
#undef EDDY_KAFKA_ERROR_INFO
};

// Codes are contiguous from -1: kErrors[code + 1] describes code.
constexpr bool codes_are_contiguous() {
  int16_t expected = -1;
  for (const ErrorInfo& e : kErrors) {
    if (static_cast<int16_t>(e.code) != expected++) return false;
  }
  return true;
}
static_assert(codes_are_contiguous(), "error table must list codes -1, 0, 1, ... in order");

constexpr int16_t kLastCode = static_cast<int16_t>(sizeof(kErrors) / sizeof(kErrors[0])) - 2;

}  // namespace

std::span<const ErrorInfo> all_errors() { return kErrors; }

const ErrorInfo* find_error(int16_t code) {
  if (code < -1 || code > kLastCode) return nullptr;
  return &kErrors[code + 1];
}

const char* error_name(int16_t code) {
  const ErrorInfo* e = find_error(code);
  return e ? e->name : "UNKNOWN_ERROR_CODE";
}

const char* error_name(ErrorCode code) { return error_name(static_cast<int16_t>(code)); }

bool is_retriable(ErrorCode code) {
  const ErrorInfo* e = find_error(static_cast<int16_t>(code));
  return e != nullptr && e->retriable;
}

Status broker_error(int16_t error_code, const std::string& context,
                    const std::optional<std::string>& broker_message) {
  std::string message = context.empty() ? "" : context + ": ";
  message += error_name(error_code);
  if (broker_message && !broker_message->empty()) message += ": " + *broker_message;
  const Status::Code code = error_code == to_int(ErrorCode::kUnknownTopicOrPartition) ? Status::Code::kNotFound
                                                                                        : Status::Code::kBrokerError;
  return Status::kafka(code, error_code, is_retriable(static_cast<ErrorCode>(error_code)), std::move(message));
}

}  // namespace eddy::protocol
