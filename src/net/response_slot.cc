#include "net/connection_core.h"
#include "port/log.h"

namespace eddy::net {

ResponseSlot& ResponseSlot::operator=(ResponseSlot&& other) noexcept {
  if (this != &other) {
    abandon();
    core_ = std::move(other.core_);
    sequence_ = other.sequence_;
  }
  return *this;
}

ResponseSlot::~ResponseSlot() { abandon(); }

void ResponseSlot::abandon() {
  if (core_ == nullptr) return;
  std::shared_ptr<ConnectionCore> core = std::move(core_);
  if (core->context().closed()) return;
  EDDY_LOG_ERROR("request {} from {} was dropped without an answer; closing the connection",
                 sequence_, core->context().peer());
  core->complete(sequence_, Completion::kClose, protocol::OutputBuffer());
}

void ResponseSlot::respond(protocol::OutputBuffer response) {
  if (core_ == nullptr) return;
  std::shared_ptr<ConnectionCore> core = std::move(core_);
  core->complete(sequence_, Completion::kRespond, std::move(response));
}

void ResponseSlot::respond_nothing() {
  if (core_ == nullptr) return;
  std::shared_ptr<ConnectionCore> core = std::move(core_);
  core->complete(sequence_, Completion::kNothing, protocol::OutputBuffer());
}

void ResponseSlot::close_connection() {
  if (core_ == nullptr) return;
  std::shared_ptr<ConnectionCore> core = std::move(core_);
  core->complete(sequence_, Completion::kClose, protocol::OutputBuffer());
}

void ResponseSlot::respond_and_close(protocol::OutputBuffer response) {
  if (core_ == nullptr) return;
  std::shared_ptr<ConnectionCore> core = std::move(core_);
  core->complete(sequence_, Completion::kClose, std::move(response));
}

void ResponseSlot::authenticated(std::string principal) {
  ConnectionContext& context = core_->context();
  context.set_principal(std::move(principal));
  context.set_max_frame_bytes(0);
}

void ResponseSlot::frame_released() { core_->release_frame_memory(sequence_); }

const ConnectionContext& ResponseSlot::connection() const { return core_->context(); }

}  // namespace eddy::net
