// The network server: listeners that accept Kafka clients and the
// connections they lead to. Frames go to a FrameHandler; responses come back
// through ResponseSlots (see frame_handler.h). No Asio in this header.
//
//   net::Reactor reactor;
//   net::Server server(reactor, handler, options);
//   if (Status s = server.start(listeners); !s.ok()) { ... report s, exit 1 ... }
//   // on SIGTERM (posted to the reactor):
//   server.stop(deadline_ms, [&] { ... flush logs ...; reactor.stop(); });
//   reactor.run();
//
// All members REQUIRE the reactor thread, or no thread inside reactor.run().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "net/frame_handler.h"
#include "net/listener_config.h"
#include "port/status.h"

namespace eddy::net {

class Reactor;

struct ServerOptions {
  // socket.request.max.bytes: larger (or negative) request sizes close the
  // connection.
  int32_t max_request_bytes = 104857600;
  // connections.max.idle.ms: a connection with no bytes read or written for
  // this long, and no request in the handler's hands, is closed. <= 0: never.
  int64_t connections_max_idle_ms = 600000;
  // eddy.request.read.timeout.ms: a frame begun and not whole this long
  // after the previous one ended (counting only time spent reading) closes
  // the connection. <= 0: never.
  int64_t request_read_timeout_ms = 30000;
  // A connection stops reading new frames while this many requests are
  // read and not yet fully answered...
  size_t max_in_flight_requests = 100;
  // ...or while its responses waiting to be written hold this many bytes of
  // memory (file regions cost no memory and do not count).
  size_t max_queued_response_bytes = 1 << 20;
  // socket.send.buffer.bytes / socket.receive.buffer.bytes (SO_SNDBUF /
  // SO_RCVBUF of accepted sockets, set on the listening socket so the
  // window scale is negotiated accordingly). <= 0: the OS default, which
  // Linux grows with the connection's traffic (a fixed size stops that).
  // The broker's defaults (app/broker_config.cc) are Kafka's fixed send
  // buffer (measured: the kernel's grown one doubled the broker's CPU per
  // fetched byte) and the kernel's receive buffer (measured: a fixed one
  // made large produce requests cost 1.5x the CPU).
  int32_t socket_send_buffer_bytes = 102400;
  int32_t socket_receive_buffer_bytes = -1;
  // Per-connection staging buffer for reads; frames larger than this are
  // read into a buffer of their own.
  size_t read_buffer_bytes = 16384;
  // max.connections: at this many open client connections the listeners
  // stop accepting (new clients wait in the kernel's backlog, as Kafka's
  // acceptor makes them wait) until one closes.
  size_t max_connections = 1000;
  // max.connections.per.ip: a connection from an address that already has
  // this many is closed at once (logged at most once a second).
  size_t max_connections_per_ip = SIZE_MAX;
  // queued.max.request.bytes: bytes of large request frames (larger than
  // the staging buffer) being read or waiting for their answer (unless
  // the handler freed the frame first: ResponseSlot::frame_released), all
  // connections together (net/request_memory.h). A connection that would
  // exceed it stops reading until memory is given back; a frame larger
  // than it closes its connection. 0: no bound.
  uint64_t queued_max_request_bytes = 64ull << 20;
};

struct BoundListener {
  std::string name;  // e.g. "PLAINTEXT"
  std::string host;  // the address bound, e.g. "127.0.0.1"; empty: all interfaces
  uint16_t port = 0;  // the actual port, also when 0 was configured
};

struct ServerStats {
  size_t connections = 0;
  uint64_t request_memory_bytes = 0;  // held by large frames (queued.max.request.bytes)
  size_t read_paused_connections = 0;  // backpressure in effect
  size_t queued_response_bytes = 0;    // memory waiting to be written, all connections
  uint64_t accepted_total = 0;
};

class Server {
 public:
  // REQUIRES: reactor and handler outlive the Server.
  Server(Reactor& reactor, FrameHandler& handler, ServerOptions options = ServerOptions());
  // Closes listeners and connections at once (handler->on_connection_closed
  // runs for each). Prefer stop() first.
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds every listener and starts accepting. PLAINTEXT and SSL listeners
  // are supported (an SSL one needs ListenerConfig::tls; its connections
  // make the TLS handshake first, within eddy.request.read.timeout.ms, and
  // take the client certificate's subject as their principal); SASL ones
  // are refused (kNotSupported). On failure nothing stays
  // bound and the Status says which listener failed and why (kNetwork: it
  // cannot resolve or bind).
  // REQUIRES: called once.
  Status start(const std::vector<ListenerConfig>& listeners);

  // The listeners as bound (ports resolved), in configuration order.
  const std::vector<BoundListener>& bound_listeners() const;

  // Graceful stop: stops accepting; connections read no new frames; each
  // closes once its in-flight requests are answered and the responses
  // written. Connections still open after deadline_ms are closed. Then
  // on_stopped runs (once, on the reactor thread, from a fresh handler).
  // Calling stop() again does nothing.
  void stop(int64_t deadline_ms, std::function<void()> on_stopped);

  ServerStats stats() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;  // Asio handlers hold weak references
};

}  // namespace eddy::net
