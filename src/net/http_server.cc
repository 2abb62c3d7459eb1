#include "net/http_server.h"

#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <asio/write.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <string_view>
#include <unordered_map>

#include "net/http_request_head.h"
#include "net/reactor.h"
#include "port/log.h"
#include "port/port.h"

namespace eddy::net {

namespace {

using asio::ip::tcp;

constexpr int64_t kAcceptRetryMs = 100;
// Warnings about refused connections or bad requests: at most one a second.
constexpr int64_t kWarnIntervalMs = 1000;

std::string status_line_and_headers(int status, std::string_view content_type, size_t length) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + http_reason(status) + "\r\n";
  out += "Content-Type: ";
  out.append(content_type);
  out += "\r\nContent-Length: " + std::to_string(length) + "\r\n";
  if (status == 405) out += "Allow: GET, HEAD\r\n";
  out += "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n";
  return out;
}

HttpResponse error_response(int status) {
  HttpResponse r;
  r.status = status;
  r.body = std::to_string(status) + " " + http_reason(status) + "\n";
  return r;
}

}  // namespace

const char* http_reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
  }
  return "Unknown";
}

struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
  // One connection. Invariant: while open it is in sessions, with exactly
  // one read or write pending, and its timer armed.
  struct Session {
    Session(asio::io_context& io, tcp::socket s, uint64_t session_id, size_t buffer_bytes)
        : socket(std::move(s)), timer(io), id(session_id), head(buffer_bytes, '\0') {}
    tcp::socket socket;
    asio::steady_timer timer;
    uint64_t id;
    std::string head;  // the first `used` bytes were read
    size_t used = 0;
    std::string header;  // the response: status line and headers...
    std::string body;    // ...and body (empty for HEAD)
    bool closed = false;
  };

  Impl(Reactor& reactor, Handler h, const HttpServerOptions& o)
      : io(reactor.io_context()), handler(std::move(h)), options(o), acceptor(io), retry_timer(io) {}
  ~Impl() { close_all(); }

  bool listen(const std::string& host, uint16_t port, std::string* error) {
    const std::string where = "metrics listener http://" + (host.empty() ? std::string("0.0.0.0") : host) + ":" +
                              std::to_string(port);
    std::error_code ec;
    asio::ip::address address;
    if (host.empty()) {
      address = asio::ip::address_v4::any();
    } else {
      address = asio::ip::make_address(host, ec);
      if (ec) {
        tcp::resolver resolver(io);
        auto results = resolver.resolve(host, std::to_string(port), ec);
        if (ec || results.empty()) {
          *error = where + ": cannot resolve host " + host + ": " + (ec ? ec.message() : "no address");
          return false;
        }
        address = results.begin()->endpoint().address();
      }
    }
    const tcp::endpoint endpoint(address, port);
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (!ec) port_bound = acceptor.local_endpoint(ec).port();
    if (ec) {
      std::error_code ignored;
      acceptor.close(ignored);
      *error = where + ": " + ec.message();
      return false;
    }
    return true;
  }

  void accept_next() {
    std::weak_ptr<Impl> weak = weak_from_this();
    acceptor.async_accept([weak](const std::error_code& ec, tcp::socket socket) {
      if (auto self = weak.lock()) self->on_accept(ec, std::move(socket));
    });
  }

  void on_accept(const std::error_code& ec, tcp::socket socket) {
    if (stopped || !acceptor.is_open()) return;
    if (ec) {
      std::weak_ptr<Impl> weak = weak_from_this();
      retry_timer.expires_after(std::chrono::milliseconds(kAcceptRetryMs));
      retry_timer.async_wait([weak](const std::error_code& timer_ec) {
        auto self = weak.lock();
        if (!timer_ec && self && !self->stopped) self->accept_next();
      });
      return;
    }
    if (sessions.size() >= options.max_connections) {
      refuse(std::move(socket));
    } else {
      auto session = std::make_shared<Session>(io, std::move(socket), next_id++, options.max_header_bytes);
      sessions.emplace(session->id, session);
      arm_timer(session);
      read_more(session);
    }
    accept_next();
  }

  // Over the connection limit: one non-blocking write of a 503 (it fits in
  // any socket buffer; whatever does not go out is dropped), then close.
  void refuse(tcp::socket socket) {
    ++refused_connections;
    warn_limited("metrics listener: {} HTTP connections open (the limit); refusing one", sessions.size());
    std::error_code ec;
    socket.non_blocking(true, ec);
    static const std::string kBusy = status_line_and_headers(503, "text/plain; charset=utf-8", 0);
    if (!ec) socket.write_some(asio::buffer(kBusy), ec);
    socket.shutdown(tcp::socket::shutdown_both, ec);
    socket.close(ec);
  }

  template <typename... Args>
  void warn_limited(fmt::format_string<Args...> format, Args&&... args) {
    const int64_t now = port::monotonic_millis();
    if (last_warn_ms >= 0 && now - last_warn_ms < kWarnIntervalMs) return;
    last_warn_ms = now;
    EDDY_LOG_WARN(format, std::forward<Args>(args)...);
  }

  void arm_timer(const std::shared_ptr<Session>& session) {
    std::weak_ptr<Impl> weak = weak_from_this();
    session->timer.expires_after(std::chrono::milliseconds(std::max<int64_t>(options.timeout_ms, 0)));
    session->timer.async_wait([weak, session](const std::error_code& ec) {
      auto self = weak.lock();
      if (ec || !self || session->closed) return;
      if (session->header.empty()) {
        ++self->bad_requests;
        self->warn_limited("metrics listener: HTTP connection {} sent no complete request head within {} ms; "
                           "closing",
                           session->id, self->options.timeout_ms);
      }
      self->close_session(session);
    });
  }

  void read_more(const std::shared_ptr<Session>& session) {
    std::weak_ptr<Impl> weak = weak_from_this();
    auto buffer = asio::buffer(session->head.data() + session->used, session->head.size() - session->used);
    session->socket.async_read_some(buffer, [weak, session](const std::error_code& ec, size_t n) {
      auto self = weak.lock();
      if (!self || session->closed) return;
      self->on_read(session, ec, n);
    });
  }

  void on_read(const std::shared_ptr<Session>& session, const std::error_code& ec, size_t n) {
    if (ec) {
      if (session->used > 0) ++bad_requests;
      close_session(session);
      return;
    }
    session->used += n;
    const std::string_view bytes(session->head.data(), session->used);
    const size_t end = find_request_head_end(bytes);
    if (end == 0) {
      if (session->used == session->head.size()) {
        answer(session, false, error_response(431));
        return;
      }
      read_more(session);
      return;
    }
    HttpRequest request;
    const int status = parse_request_head(bytes.substr(0, end), &request);
    session->head = std::string();  // the head buffer is not needed any more
    if (status != 0) {
      answer(session, false, error_response(status));
      return;
    }
    ++requests;
    HttpResponse response = handler(request);
    if (session->closed) return;  // stop() from inside the handler
    answer(session, request.method == "HEAD", std::move(response));
  }

  void answer(const std::shared_ptr<Session>& session, bool head_only, HttpResponse response) {
    if (response.status >= 400 && response.status != 404) ++bad_requests;
    session->header = status_line_and_headers(response.status, response.content_type, response.body.size());
    if (!head_only) session->body = std::move(response.body);
    session->head = std::string();
    arm_timer(session);
    std::weak_ptr<Impl> weak = weak_from_this();
    std::array<asio::const_buffer, 2> buffers = {asio::buffer(session->header), asio::buffer(session->body)};
    asio::async_write(session->socket, buffers, [weak, session](const std::error_code&, size_t) {
      auto self = weak.lock();
      if (!self || session->closed) return;
      // Half-close, so that the client reads everything before the close.
      std::error_code ignored;
      session->socket.shutdown(tcp::socket::shutdown_send, ignored);
      self->close_session(session);
    });
  }

  void close_session(const std::shared_ptr<Session>& session) {
    if (session->closed) return;
    session->closed = true;
    std::error_code ignored;
    session->timer.cancel();
    session->socket.close(ignored);
    sessions.erase(session->id);
  }

  void close_all() {
    std::error_code ignored;
    acceptor.close(ignored);
    retry_timer.cancel();
    std::vector<std::shared_ptr<Session>> open;
    open.reserve(sessions.size());
    for (const auto& entry : sessions) open.push_back(entry.second);
    for (const auto& session : open) close_session(session);
  }

  asio::io_context& io;
  Handler handler;
  HttpServerOptions options;
  tcp::acceptor acceptor;
  asio::steady_timer retry_timer;
  std::unordered_map<uint64_t, std::shared_ptr<Session>> sessions;
  uint64_t next_id = 1;
  uint16_t port_bound = 0;
  uint64_t requests = 0;
  uint64_t bad_requests = 0;
  uint64_t refused_connections = 0;
  int64_t last_warn_ms = -1;
  bool started = false;
  bool stopped = false;
};

HttpServer::HttpServer(Reactor& reactor, Handler handler, HttpServerOptions options)
    : impl_(std::make_shared<Impl>(reactor, std::move(handler), options)) {}

HttpServer::~HttpServer() { stop(); }

Status HttpServer::start(const std::string& host, uint16_t port) {
  if (impl_->started) return Status::invalid_argument("metrics listener already started");
  impl_->started = true;
  std::string error;
  if (!impl_->listen(host, port, &error)) {
    impl_->stopped = true;
    return Status::network(std::move(error));
  }
  impl_->accept_next();
  return Status();
}

uint16_t HttpServer::bound_port() const { return impl_->port_bound; }

void HttpServer::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->close_all();
}

HttpServerStats HttpServer::stats() const {
  HttpServerStats s;
  s.open_connections = impl_->sessions.size();
  s.requests = impl_->requests;
  s.bad_requests = impl_->bad_requests;
  s.refused_connections = impl_->refused_connections;
  return s;
}

}  // namespace eddy::net
