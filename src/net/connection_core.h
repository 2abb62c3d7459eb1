// Internal to src/net/: the part of a connection that ResponseSlot talks
// to, independent of the byte stream (and of Asio).
#pragma once

#include <cstdint>
#include <memory>

#include "net/frame_handler.h"
#include "protocol/output_buffer.h"

namespace eddy::net {

enum class Completion { kWaiting, kRespond, kNothing, kClose };

class ConnectionCore : public std::enable_shared_from_this<ConnectionCore> {
 public:
  ConnectionCore(uint64_t id, std::string peer, std::string listener)
      : context_(id, std::move(peer), std::move(listener)) {}
  virtual ~ConnectionCore() = default;

  ConnectionContext& context() { return context_; }
  const ConnectionContext& context() const { return context_; }

  // Completes the request with the given sequence number. Ignored when the
  // connection is closed. kClose with a non-empty response writes it before
  // closing. REQUIRES: kind != kWaiting; reactor thread.
  virtual void complete(uint64_t sequence, Completion kind, protocol::OutputBuffer response) = 0;

 protected:
  ResponseSlot make_slot(uint64_t sequence) { return ResponseSlot(shared_from_this(), sequence); }
  void mark_closed() { context_.closed_ = true; }

 private:
  ConnectionContext context_;
};

}  // namespace eddy::net
