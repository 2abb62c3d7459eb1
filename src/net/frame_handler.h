// What a connection hands to the layer above (the broker's request
// dispatcher): complete request frames, and a slot per frame through which
// the answer goes back. Slots may be completed in any order and at any later
// time on the reactor thread; the connection writes responses strictly in
// request order (Kafka clients pipeline requests).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "protocol/frame_bytes.h"
#include "protocol/output_buffer.h"

namespace eddy::net {

class ConnectionCore;

// What the handler may know about a connection. Valid during on_frame and
// for as long as a ResponseSlot of that connection exists.
class ConnectionContext {
 public:
  ConnectionContext(uint64_t id, std::string peer, std::string listener)
      : id_(id), peer_(std::move(peer)), listener_(std::move(listener)) {}

  // Unique for the life of the Server; never reused.
  uint64_t id() const { return id_; }
  // Client address, "127.0.0.1:50312" or "[::1]:50312".
  const std::string& peer() const { return peer_; }
  // Name of the listener that accepted the connection, e.g. "PLAINTEXT".
  const std::string& listener() const { return listener_; }
  // True once the connection is closed: responses are then discarded, and a
  // parked request (fetch long-poll) may be dropped.
  bool closed() const { return closed_; }
  // Who the client is, in Kafka's form: "User:ANONYMOUS" until the
  // connection authenticates (a TLS client certificate's subject, a SASL
  // user name), then "User:<name>". Reactor thread only.
  const std::string& principal() const { return principal_; }
  void set_principal(std::string principal) { principal_ = std::move(principal); }
  // Largest request frame the connection accepts now: 0 means the server's
  // (socket.request.max.bytes); a positive value lower than that bounds a
  // client that has not authenticated yet (Kafka's
  // sasl.server.max.receive.size). Checked on each frame's size prefix,
  // before anything is read or allocated for it. Reactor thread only.
  int32_t max_frame_bytes() const { return max_frame_bytes_; }
  void set_max_frame_bytes(int32_t bytes) { max_frame_bytes_ = bytes; }

 private:
  friend class ConnectionCore;
  uint64_t id_;
  std::string peer_;
  std::string listener_;
  std::string principal_ = "User:ANONYMOUS";
  int32_t max_frame_bytes_ = 0;
  bool closed_ = false;
};

// The place of one request's answer in its connection's response order.
// Move-only; complete it exactly once with one of respond(),
// respond_nothing() or close_connection(). All members REQUIRE the reactor
// thread. Destroying a slot that was not completed closes the connection
// (the order would otherwise stall forever) with an error log line.
// REQUIRES: destroyed before the Reactor (a slot keeps its connection's
// socket object alive).
class ResponseSlot {
 public:
  ResponseSlot() = default;
  ResponseSlot(ResponseSlot&& other) noexcept = default;
  ResponseSlot& operator=(ResponseSlot&& other) noexcept;
  ResponseSlot(const ResponseSlot&) = delete;
  ResponseSlot& operator=(const ResponseSlot&) = delete;
  ~ResponseSlot();

  // REQUIRES: response is a whole framed response: a 4-byte big-endian size
  // followed by that many bytes (the protocol layer writes the prefix). File
  // regions must stay valid (keep_alive) until sent.
  void respond(protocol::OutputBuffer response);
  // No response is sent for this request (produce with acks=0).
  void respond_nothing();
  // Closes the connection once the responses before this one are written;
  // later requests of the connection are not answered (malformed request).
  void close_connection();
  // Both: response (as for respond()) is the connection's last; it is
  // written, then the connection closes (a failed SASL authentication).
  void respond_and_close(protocol::OutputBuffer response);

  // The client authenticated as principal ("User:alice"): the connection's
  // principal from now on, and the bound on its frames is lifted
  // (max_frame_bytes back to the server's). REQUIRES: pending().
  void authenticated(std::string principal);

  // The request's frame was freed before its answer (a produce waiting for
  // its sync): the request memory it counted is given back now.
  // REQUIRES: pending().
  void frame_released();

  // False after completion (or for a default-constructed slot).
  bool pending() const { return core_ != nullptr; }
  // REQUIRES: pending().
  const ConnectionContext& connection() const;

 private:
  friend class ConnectionCore;
  ResponseSlot(std::shared_ptr<ConnectionCore> core, uint64_t sequence)
      : core_(std::move(core)), sequence_(sequence) {}
  void abandon();

  std::shared_ptr<ConnectionCore> core_;
  uint64_t sequence_ = 0;
};

// Implemented by the broker. Called on the reactor thread.
class FrameHandler {
 public:
  virtual ~FrameHandler() = default;

  // A complete request frame (the body, without the size prefix). The
  // handler completes slot now or later.
  virtual void on_frame(ConnectionContext& connection, protocol::FrameBytes frame, ResponseSlot slot) = 0;

  // Bracket the life of a connection, e.g. to keep per-connection state or
  // drop parked requests. on_connection_closed runs once, after which no
  // on_frame comes for that connection.
  virtual void on_connection_opened(ConnectionContext& connection) {}
  virtual void on_connection_closed(ConnectionContext& connection) {}
};

}  // namespace eddy::net
