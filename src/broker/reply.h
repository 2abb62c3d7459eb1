// How the broker answers a request without knowing the network layer: the
// app adapts net::ResponseSlot to this interface. Exactly one of send,
// send_nothing or close_connection is called, on the reactor thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "protocol/output_buffer.h"

namespace eddy::broker {

struct ClientInfo {
  uint64_t connection_id = 0;
  std::string peer;      // "127.0.0.1:50312"
  std::string listener;  // "PLAINTEXT"
  // Who the client is when the request arrived, in Kafka's form
  // ("User:ANONYMOUS" until it authenticates).
  std::string principal = "User:ANONYMOUS";
};

class Reply {
 public:
  virtual ~Reply() = default;
  // A whole framed response (size prefix included).
  virtual void send(protocol::OutputBuffer response) = 0;
  // No answer (Produce with acks=0).
  virtual void send_nothing() = 0;
  // Close the connection after the responses before this one.
  virtual void close_connection() = 0;
  // Send response as the connection's last, then close it (a failed SASL
  // authentication: the client reads why before the connection goes).
  virtual void send_and_close(protocol::OutputBuffer response) = 0;
  // The connection's client authenticated as principal ("User:alice").
  // Called before send; the connection's pre-authentication limits end.
  virtual void authenticated(const std::string& principal) = 0;
  // The client went away; a parked request may be dropped.
  virtual bool connection_closed() const = 0;
  // The request's frame was freed before the answer (Request::release_frame):
  // whatever the network layer counted for it is given back. Nothing to
  // give back by default (a forwarded request's envelope, a test's reply).
  virtual void frame_released() {}
};

}  // namespace eddy::broker
