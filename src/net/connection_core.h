// Internal to src/net/: the part of a connection that ResponseSlot talks
// to, independent of the byte stream (and of Asio).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <system_error>

#include "net/frame_handler.h"
#include "protocol/output_buffer.h"

namespace eddy::net {

enum class Completion { kWaiting, kRespond, kNothing, kClose };

struct ConnectionLimits {
  int32_t max_frame_bytes = 104857600;
  size_t max_in_flight_requests = 100;
  size_t max_queued_response_bytes = 1 << 20;
  int64_t idle_timeout_ms = 600000;  // <= 0: never
  // A frame begun must be whole this long after the previous one ended,
  // counting only time spent reading (eddy.request.read.timeout.ms). <= 0:
  // never.
  int64_t request_read_timeout_ms = 30000;
  size_t read_buffer_bytes = 16384;
};

// Told when a connection closes (the Server removes it).
class ConnectionOwner {
 public:
  virtual void connection_closed(uint64_t id) = 0;

 protected:
  ~ConnectionOwner() = default;
};

// Logs a failed TLS handshake: one line, at most one a second (with how many
// were not logged), so that a scanner or a plaintext client hammering the
// SSL port cannot flood the log. Reactor thread only.
void note_handshake_failure(const ConnectionContext& connection, const std::error_code& ec);

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
  // The request with the given sequence number no longer holds its frame
  // (its handler freed it before answering): what the frame took of the
  // request memory (queued.max.request.bytes) is given back now, not at
  // the answer. Ignored when closed or already completed. Reactor thread.
  virtual void release_frame_memory(uint64_t sequence) = 0;

  // What the Server does with a connection, whatever its stream (see
  // connection.h). Reactor thread.
  virtual void start() = 0;
  virtual void begin_drain() = 0;
  virtual void detach_owner() = 0;
  virtual void close() = 0;
  virtual bool read_paused() const = 0;
  virtual size_t queued_response_bytes() const = 0;

 protected:
  ResponseSlot make_slot(uint64_t sequence) { return ResponseSlot(shared_from_this(), sequence); }
  void mark_closed() { context_.closed_ = true; }

 private:
  ConnectionContext context_;
};

}  // namespace eddy::net
