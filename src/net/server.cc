#include "net/server.h"

#include <asio/ip/tcp.hpp>
#include <asio/ip/v6_only.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <algorithm>
#include <chrono>
#include <unordered_map>

#include "net/connection.h"
#include "net/plain_stream.h"
#include "net/reactor.h"
#include "net/tls_stream.h"
#include "port/log.h"

namespace eddy::net {

namespace {

using asio::ip::tcp;

// Delay before accepting again after a failed accept (e.g. out of file
// descriptors), so the loop does not spin.
constexpr int64_t kAcceptRetryMs = 100;

std::string format_endpoint(const tcp::endpoint& endpoint) {
  asio::ip::address address = endpoint.address();
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    address = asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
  }
  std::string text = address.to_string();
  if (address.is_v6()) text = "[" + text + "]";
  return text + ":" + std::to_string(endpoint.port());
}

}  // namespace

struct Server::Impl final : ConnectionOwner, std::enable_shared_from_this<Server::Impl> {
  using Conn = Connection<PlainStream>;
  using TlsConn = Connection<TlsStream>;

  struct Listener {
    Listener(asio::io_context& io, std::string listener_name)
        : name(std::move(listener_name)), acceptor(io), retry_timer(io) {}
    std::string name;
    std::shared_ptr<const security::TlsContext> tls;  // null: PLAINTEXT
    tcp::acceptor acceptor;
    asio::steady_timer retry_timer;
  };

  Impl(Reactor& reactor, FrameHandler& h, const ServerOptions& o)
      : io(reactor.io_context()), handler(h), options(o), stop_timer(io), request_memory(o.queued_max_request_bytes) {
    limits.max_frame_bytes = o.max_request_bytes;
    limits.max_in_flight_requests = std::max<size_t>(o.max_in_flight_requests, 1);
    limits.max_queued_response_bytes = o.max_queued_response_bytes;
    limits.idle_timeout_ms = o.connections_max_idle_ms;
    limits.request_read_timeout_ms = o.request_read_timeout_ms;
    limits.read_buffer_bytes = o.read_buffer_bytes;
    request_memory.set_deferral([&io = io](std::function<void()> fn) { asio::post(io, std::move(fn)); });
  }

  ~Impl() {
    close_listeners();
    stop_timer.cancel();
    for (const auto& connection : snapshot_connections()) {
      connection->detach_owner();
      connection->close();
    }
    connections.clear();
  }

  // ---- listeners ------------------------------------------------------------

  Status open_listener(const ListenerConfig& config) {
    std::string where = format_listener(config.name, config.host, config.port);
    // SASL is the broker's business (the bytes are the same over either
    // stream); TLS is this layer's.
    if (uses_tls(config.security_protocol) && config.tls == nullptr) {
      return Status::invalid_argument("listener " + where + ": " + security_protocol_name(config.security_protocol) +
                                      " needs its TLS configuration (the ssl.* keys)");
    }
    auto listener = std::make_shared<Listener>(io, config.name);
    if (uses_tls(config.security_protocol)) listener->tls = config.tls;
    std::error_code ec;
    tcp::endpoint endpoint;
    bool dual_stack = false;  // acceptor already opened as IPv6 any
    if (config.host.empty()) {
      // All interfaces: IPv6 and IPv4 on one socket where the system has
      // IPv6, IPv4 only otherwise.
      listener->acceptor.open(tcp::v6(), ec);
      if (!ec) {
        listener->acceptor.set_option(asio::ip::v6_only(false), ec);
        if (ec) listener->acceptor.close();
      }
      if (!ec) {
        endpoint = tcp::endpoint(tcp::v6(), config.port);
        dual_stack = true;
      } else {
        endpoint = tcp::endpoint(tcp::v4(), config.port);
        ec.clear();
      }
    } else {
      asio::ip::address address = asio::ip::make_address(config.host, ec);
      if (ec) {
        tcp::resolver resolver(io);
        auto results = resolver.resolve(config.host, std::to_string(config.port), ec);
        if (ec || results.empty()) {
          return Status::network("listener " + where + ": cannot resolve host " + config.host + ": " +
                                 (ec ? ec.message() : std::string("no address")));
        }
        address = results.begin()->endpoint().address();
      }
      endpoint = tcp::endpoint(address, config.port);
    }
    if (!dual_stack) listener->acceptor.open(endpoint.protocol(), ec);
    if (!ec) listener->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec && options.socket_send_buffer_bytes > 0) {
      listener->acceptor.set_option(asio::socket_base::send_buffer_size(options.socket_send_buffer_bytes), ec);
    }
    if (!ec && options.socket_receive_buffer_bytes > 0) {
      listener->acceptor.set_option(
          asio::socket_base::receive_buffer_size(options.socket_receive_buffer_bytes), ec);
    }
    if (!ec) listener->acceptor.bind(endpoint, ec);
    if (!ec) listener->acceptor.listen(asio::socket_base::max_listen_connections, ec);
    tcp::endpoint local;
    if (!ec) local = listener->acceptor.local_endpoint(ec);
    if (ec) {
      return Status::network("listener " + where + ": cannot listen on " + format_endpoint(endpoint) + ": " +
                             ec.message());
    }
    BoundListener bound;
    bound.name = config.name;
    bound.host = config.host.empty() ? std::string() : local.address().to_string();
    bound.port = local.port();
    bound_listeners.push_back(std::move(bound));
    listeners.push_back(std::move(listener));
    return Status();
  }

  void accept_next(const std::shared_ptr<Listener>& listener) {
    std::weak_ptr<Impl> weak = weak_from_this();
    listener->acceptor.async_accept([weak, listener](const std::error_code& ec, tcp::socket socket) {
      if (auto self = weak.lock()) self->on_accept(listener, ec, std::move(socket));
    });
  }

  void on_accept(const std::shared_ptr<Listener>& listener, const std::error_code& ec, tcp::socket socket) {
    if (stopping || !listener->acceptor.is_open()) return;
    if (ec) {
      EDDY_LOG_WARN("listener {}: accept failed: {}; retrying in {} ms", listener->name,
                    ec.message(), kAcceptRetryMs);
      std::weak_ptr<Impl> weak = weak_from_this();
      listener->retry_timer.expires_after(std::chrono::milliseconds(kAcceptRetryMs));
      listener->retry_timer.async_wait([weak, listener](const std::error_code& timer_ec) {
        auto self = weak.lock();
        if (!timer_ec && self && !self->stopping) self->accept_next(listener);
      });
      return;
    }
    std::error_code option_ec;
    socket.set_option(tcp::no_delay(true), option_ec);
    std::error_code peer_ec;
    tcp::endpoint remote = socket.remote_endpoint(peer_ec);
    std::string peer = peer_ec ? std::string("unknown") : format_endpoint(remote);
    std::string address = peer_ec ? peer : remote.address().to_string();
    size_t& from_address = connections_per_address[address];
    if (from_address >= options.max_connections_per_ip) {
      ++refused_per_ip;
      const int64_t now = port::monotonic_millis();
      if (refused_logged_ms < 0 || now - refused_logged_ms >= 1000) {
        EDDY_LOG_WARN("listener {}: refused a connection from {}: it already has {} connections "
                      "(max.connections.per.ip={}; {} refused so far)",
                      listener->name, address, from_address, options.max_connections_per_ip,
                      refused_per_ip);
        refused_logged_ms = now;
      }
      std::error_code close_ec;
      socket.close(close_ec);
      accept_next(listener);
      return;
    }
    ++from_address;
    uint64_t id = next_connection_id++;
    ++accepted_total;
    std::shared_ptr<ConnectionCore> connection;
    if (listener->tls != nullptr) {
      // The handshake must finish as soon as a request frame must.
      const int64_t handshake_ms = limits.request_read_timeout_ms > 0 ? limits.request_read_timeout_ms
                                                                      : limits.idle_timeout_ms;
      connection =
          std::make_shared<TlsConn>(TlsStream(std::move(socket), listener->tls, handshake_ms), id, std::move(peer),
                                    listener->name, limits, &handler, this, &request_memory);
    } else {
      connection = std::make_shared<Conn>(PlainStream(std::move(socket)), id, std::move(peer), listener->name, limits,
                                          &handler, this, &request_memory);
    }
    connections.emplace(id, Open{connection, address});
    EDDY_LOG_DEBUG("connection {} from {} on listener {}", id, connection->context().peer(), listener->name);
    if (connections.size() >= options.max_connections) {
      // At the limit: this listener stops accepting (clients wait in the
      // kernel's backlog) until a connection closes.
      if (paused_listeners.empty()) {
        EDDY_LOG_WARN("max.connections={} reached: not accepting new connections until one closes",
                      options.max_connections);
      }
      paused_listeners.push_back(listener);
    } else {
      accept_next(listener);
    }
    connection->start();
  }

  void close_listeners() {
    for (const auto& listener : listeners) {
      std::error_code ec;
      listener->acceptor.close(ec);
      listener->retry_timer.cancel();
    }
  }

  // ---- connections ----------------------------------------------------------

  std::vector<std::shared_ptr<ConnectionCore>> snapshot_connections() const {
    std::vector<std::shared_ptr<ConnectionCore>> out;
    out.reserve(connections.size());
    for (const auto& entry : connections) out.push_back(entry.second.connection);
    return out;
  }

  void connection_closed(uint64_t id) override {
    auto it = connections.find(id);
    if (it == connections.end()) return;
    auto count = connections_per_address.find(it->second.address);
    if (count != connections_per_address.end() && --count->second == 0) connections_per_address.erase(count);
    connections.erase(it);
    if (stopping && connections.empty()) finish_stop();
    if (!stopping && !paused_listeners.empty() && connections.size() < options.max_connections) {
      EDDY_LOG_INFO("accepting connections again ({} open, max.connections={})", connections.size(),
                    options.max_connections);
      std::vector<std::shared_ptr<Listener>> resume;
      resume.swap(paused_listeners);
      for (const auto& listener : resume) accept_next(listener);
    }
  }

  // ---- stop -----------------------------------------------------------------

  void stop(int64_t deadline_ms, std::function<void()> callback) {
    if (stopping) return;
    stopping = true;
    on_stopped = std::move(callback);
    close_listeners();
    EDDY_LOG_INFO("network: stopped accepting; waiting up to {} ms for {} connection(s) to finish",
                  deadline_ms, connections.size());
    if (!connections.empty()) {
      std::weak_ptr<Impl> weak = weak_from_this();
      stop_timer.expires_after(std::chrono::milliseconds(std::max<int64_t>(deadline_ms, 0)));
      stop_timer.async_wait([weak](const std::error_code& ec) {
        auto self = weak.lock();
        if (!ec && self) self->on_stop_deadline();
      });
    }
    for (const auto& connection : snapshot_connections()) connection->begin_drain();
    if (connections.empty()) finish_stop();
  }

  void on_stop_deadline() {
    if (stopped) return;
    EDDY_LOG_WARN("network: closing {} connection(s) with requests still in flight after the stop deadline",
                  connections.size());
    for (const auto& connection : snapshot_connections()) connection->close();
  }

  void finish_stop() {
    if (stopped) return;
    stopped = true;
    stop_timer.cancel();
    EDDY_LOG_INFO("network: all connections closed");
    if (on_stopped) asio::post(io, std::move(on_stopped));
    on_stopped = nullptr;
  }

  asio::io_context& io;
  FrameHandler& handler;
  ServerOptions options;
  ConnectionLimits limits;
  std::vector<std::shared_ptr<Listener>> listeners;
  std::vector<BoundListener> bound_listeners;
  struct Open {
    std::shared_ptr<ConnectionCore> connection;
    std::string address;  // the peer's IP address, for max.connections.per.ip
  };
  std::unordered_map<uint64_t, Open> connections;
  std::unordered_map<std::string, size_t> connections_per_address;
  // Listeners that stopped accepting at max.connections.
  std::vector<std::shared_ptr<Listener>> paused_listeners;
  uint64_t refused_per_ip = 0;
  int64_t refused_logged_ms = -1;
  uint64_t next_connection_id = 1;
  uint64_t accepted_total = 0;
  bool started = false;
  bool stopping = false;
  bool stopped = false;
  std::function<void()> on_stopped;
  asio::steady_timer stop_timer;
  RequestMemory request_memory;
};

Server::Server(Reactor& reactor, FrameHandler& handler, ServerOptions options)
    : impl_(std::make_shared<Impl>(reactor, handler, options)) {}

Server::~Server() = default;

Status Server::start(const std::vector<ListenerConfig>& listeners) {
  if (impl_->started) return Status::invalid_argument("network server already started");
  impl_->started = true;
  for (const ListenerConfig& config : listeners) {
    if (Status s = impl_->open_listener(config); !s.ok()) {
      impl_->close_listeners();
      impl_->listeners.clear();
      impl_->bound_listeners.clear();
      return s;
    }
  }
  for (size_t i = 0; i < impl_->listeners.size(); ++i) {
    const BoundListener& bound = impl_->bound_listeners[i];
    EDDY_LOG_INFO("listening on {}", format_listener(bound.name, bound.host, bound.port));
    impl_->accept_next(impl_->listeners[i]);
  }
  return Status();
}

const std::vector<BoundListener>& Server::bound_listeners() const { return impl_->bound_listeners; }

void Server::stop(int64_t deadline_ms, std::function<void()> on_stopped) {
  impl_->stop(deadline_ms, std::move(on_stopped));
}

ServerStats Server::stats() const {
  ServerStats stats;
  stats.connections = impl_->connections.size();
  stats.accepted_total = impl_->accepted_total;
  stats.request_memory_bytes = impl_->request_memory.held();
  for (const auto& entry : impl_->connections) {
    if (entry.second.connection->read_paused()) ++stats.read_paused_connections;
    stats.queued_response_bytes += entry.second.connection->queued_response_bytes();
  }
  return stats;
}

}  // namespace eddy::net
