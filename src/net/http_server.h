// A small HTTP/1.1 server for the metrics listener (eddy.metrics.listener):
// GET and HEAD only, one request per connection (every response carries
// "Connection: close"), answered by a handler on the reactor thread. No
// Asio in this header.
//
// What a client can make it hold: at most max_connections connections,
// each with one request-head buffer of max_header_bytes (allocated at
// accept) and its response. A request head must arrive complete within
// timeout_ms, and the response be taken within timeout_ms again, else the
// connection is closed (a slowloris client costs one slot for that long).
// Answers, then close:
//   400  malformed request line, or a request target that is not a path
//   405  a method other than GET or HEAD (with "Allow: GET, HEAD")
//   431  no end of the request head within max_header_bytes
//   503  a connection over max_connections (best effort, then closed)
//   505  an HTTP version other than 1.x
// A request body is never read. Other connections, and the Kafka listeners
// on the same reactor, are not affected by any of this.
//
//   net::HttpServer http(reactor, [&](const net::HttpRequest& r) { ... });
//   if (Status s = http.start("127.0.0.1", 9644); !s.ok()) { ... }
//   uint16_t port = http.bound_port();
//   ...
//   http.stop();   // on shutdown, on the reactor thread
//
// All members REQUIRE the reactor thread, or no thread inside reactor.run().
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "port/status.h"

namespace eddy::net {

class Reactor;

struct HttpRequest {
  std::string method;  // "GET" or "HEAD" (others never reach the handler)
  std::string path;    // the request target without its query, e.g. "/metrics"
  std::string query;   // after '?', without it; empty when none
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// The reason phrase of the statuses this server sends ("Not Found", ...).
const char* http_reason(int status);

struct HttpServerOptions {
  size_t max_header_bytes = 8192;
  size_t max_connections = 16;
  int64_t timeout_ms = 5000;
};

struct HttpServerStats {
  size_t open_connections = 0;
  uint64_t requests = 0;          // handed to the handler
  uint64_t bad_requests = 0;      // answered 400/405/431/505 or closed without a complete head
  uint64_t refused_connections = 0;  // over max_connections
};

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest& request)>;

  // REQUIRES: reactor outlives the HttpServer.
  HttpServer(Reactor& reactor, Handler handler, HttpServerOptions options = HttpServerOptions());
  ~HttpServer();  // stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Listens on host:port (empty host or "0.0.0.0": every IPv4 interface;
  // "::": every interface; port 0: an ephemeral port). On failure the
  // Status (kNetwork) names the address and why. REQUIRES: called once.
  Status start(const std::string& host, uint16_t port);
  // The port bound by a successful start().
  uint16_t bound_port() const;

  // Closes the listener and every connection. Calling it again does nothing.
  void stop();

  HttpServerStats stats() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;  // Asio handlers hold weak references
};

}  // namespace eddy::net
