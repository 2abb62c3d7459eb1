#include "client/status.h"

namespace eddy::client {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kNetwork: return "network error";
    case StatusCode::kTimeout: return "timeout";
    case StatusCode::kProtocol: return "protocol error";
    case StatusCode::kUnsupportedVersion: return "unsupported version";
    case StatusCode::kBrokerError: return "broker error";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kCodec: return "codec error";
  }
  return "unknown";
}

Status Status::broker_error(int16_t error_code, const std::string& context,
                            const std::optional<std::string>& broker_message) {
  std::string message = context.empty() ? "" : context + ": ";
  message += protocol::error_name(error_code);
  if (broker_message && !broker_message->empty()) message += ": " + *broker_message;
  StatusCode code = error_code == protocol::to_int(protocol::ErrorCode::kUnknownTopicOrPartition)
                        ? StatusCode::kNotFound
                        : StatusCode::kBrokerError;
  Status s(code, std::move(message));
  s.kafka_error_ = static_cast<protocol::ErrorCode>(error_code);
  return s;
}

bool Status::retriable() const {
  switch (code_) {
    case StatusCode::kNetwork:
    case StatusCode::kTimeout:
      return true;
    case StatusCode::kBrokerError:
    case StatusCode::kNotFound:
      return protocol::is_retriable(kafka_error_);
    default:
      return false;
  }
}

Status Status::with_context(const std::string& context) const {
  if (ok()) return *this;
  Status s = *this;
  s.message_ = context + ": " + message_;
  return s;
}

}  // namespace eddy::client
