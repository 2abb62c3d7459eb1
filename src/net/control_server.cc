#include "net/control_server.h"

#include <asio/steady_timer.hpp>
#include <asio/write.hpp>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <unordered_map>

#include "net/local_socket.h"
#include "net/reactor.h"
#include "port/log.h"

namespace eddy::net {

namespace {

// Delay before accepting again after a failed accept (e.g. out of file
// descriptors), so the loop does not spin.
constexpr int64_t kAcceptRetryMs = 100;
// How long start() waits for an existing socket to accept a probe.
constexpr int64_t kProbeTimeoutMs = 1000;

// Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, at most U+10FFFF.
bool valid_utf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t extra;
    uint32_t code;
    if (c >= 0xC2 && c <= 0xDF) {
      extra = 1;
      code = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      extra = 2;
      code = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      extra = 3;
      code = c & 0x07;
    } else {
      return false;
    }
    if (text.size() - i <= extra) return false;
    for (size_t k = 1; k <= extra; ++k) {
      unsigned char d = static_cast<unsigned char>(text[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      code = (code << 6) | (d & 0x3F);
    }
    if ((extra == 2 && code < 0x800) || (extra == 3 && code < 0x10000) || code > 0x10FFFF ||
        (code >= 0xD800 && code <= 0xDFFF)) {
      return false;
    }
    i += extra + 1;
  }
  return true;
}

// Makes room for a new socket at path: nothing there, or a socket file that
// nobody accepts on (removed). False with *error otherwise.
bool clear_stale_socket(const std::string& path, const LocalProtocol::endpoint& endpoint, std::string* error) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::file_status status = fs::symlink_status(path, ec);
  if (status.type() == fs::file_type::not_found) return true;
  if (ec) {
    *error = "control socket " + path + ": " + ec.message();
    return false;
  }
  if (status.type() != fs::file_type::socket) {
    *error = "control socket " + path + ": the path exists and is not a socket; not replacing it";
    return false;
  }
  asio::io_context io(1);
  LocalProtocol::socket probe(io);
  std::error_code connect_ec = connect_local(io, &probe, endpoint, kProbeTimeoutMs);
  if (!connect_ec) {
    std::error_code ignored;
    probe.close(ignored);
    *error = "control socket " + path +
             ": another process is listening on it (is another eddy running with this data directory?)";
    return false;
  }
  if (!error_is(connect_ec, std::errc::connection_refused)) {
    *error = "control socket " + path + " exists and cannot be probed: " + connect_ec.message();
    return false;
  }
  if (!fs::remove(path, ec) && ec) {
    *error = "control socket " + path + ": cannot remove the stale socket: " + ec.message();
    return false;
  }
  EDDY_LOG_INFO("control socket {}: removed a stale socket file (nobody listening)", path);
  return true;
}

}  // namespace

std::string control_reply_ok(std::string_view body) {
  std::string out = "ok\n";
  out.append(body);
  return out;
}

std::string control_reply_error(std::string_view why) {
  std::string out = "error: ";
  out.append(why);
  out += '\n';
  return out;
}

struct ControlServer::Impl : std::enable_shared_from_this<ControlServer::Impl> {
  // One client connection. Invariant: while open, it is in Impl::sessions
  // and has exactly one read or write (and its timer) pending.
  struct Session {
    Session(asio::io_context& io, LocalProtocol::socket s, uint64_t session_id)
        : socket(std::move(s)), timer(io), id(session_id), line(kMaxControlCommandBytes + 1, '\0') {}
    LocalProtocol::socket socket;
    asio::steady_timer timer;
    uint64_t id;
    std::string line;  // bytes read so far: the first `used` bytes
    size_t used = 0;
    std::string reply;
    // Incremented on every arm_timer(); a wait completing for an older
    // generation was superseded (it may have expired just before re-arming).
    uint64_t timer_generation = 0;
    bool closed = false;
  };

  Impl(Reactor& reactor, Handler h, const ControlServerOptions& o)
      : io(reactor.io_context()), handler(std::move(h)), options(o), acceptor(io), retry_timer(io) {}

  ~Impl() { close_all(); }

  // ---- listening ------------------------------------------------------------

  bool listen(const std::string& socket_path, std::string* error) {
    LocalProtocol::endpoint endpoint;
    std::string why;
    if (!local_endpoint_for(socket_path, &endpoint, &why)) {
      *error = "control socket: " + why;
      return false;
    }
    if (!clear_stale_socket(socket_path, endpoint, error)) return false;
    std::error_code ec;
    acceptor.open(LocalProtocol(), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (ec) {
      std::error_code ignored;
      acceptor.close(ignored);
      *error = "control socket " + socket_path + ": cannot bind: " + ec.message();
      return false;
    }
    // The file exists from bind(); nobody can connect before listen(), so
    // restricting it first leaves no window with a wider mode.
    namespace fs = std::filesystem;
    fs::permissions(socket_path, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      std::error_code ignored;
      acceptor.close(ignored);
      fs::remove(socket_path, ignored);
      *error = "control socket " + socket_path + ": " + ec.message();
      return false;
    }
    path = socket_path;
    return true;
  }

  void accept_next() {
    std::weak_ptr<Impl> weak = weak_from_this();
    acceptor.async_accept([weak](const std::error_code& ec, LocalProtocol::socket socket) {
      if (auto self = weak.lock()) self->on_accept(ec, std::move(socket));
    });
  }

  void on_accept(const std::error_code& ec, LocalProtocol::socket socket) {
    if (stopped || !acceptor.is_open()) return;
    if (ec) {
      EDDY_LOG_WARN("control socket {}: accept failed: {}; retrying in {} ms", path, ec.message(),
                    kAcceptRetryMs);
      std::weak_ptr<Impl> weak = weak_from_this();
      retry_timer.expires_after(std::chrono::milliseconds(kAcceptRetryMs));
      retry_timer.async_wait([weak](const std::error_code& timer_ec) {
        auto self = weak.lock();
        if (!timer_ec && self && !self->stopped) self->accept_next();
      });
      return;
    }
    auto session = std::make_shared<Session>(io, std::move(socket), next_session_id++);
    sessions.emplace(session->id, session);
    accept_next();
    arm_timer(session, "no complete command line");
    read_more(session);
  }

  // ---- sessions -------------------------------------------------------------

  void arm_timer(const std::shared_ptr<Session>& session, const char* what) {
    std::weak_ptr<Impl> weak = weak_from_this();
    uint64_t generation = ++session->timer_generation;
    session->timer.expires_after(std::chrono::milliseconds(std::max<int64_t>(options.timeout_ms, 0)));
    session->timer.async_wait([weak, session, what, generation](const std::error_code& ec) {
      auto self = weak.lock();
      if (ec || !self || session->closed || generation != session->timer_generation) return;
      EDDY_LOG_WARN("control connection {}: {} within {} ms; closing", session->id,
                    what, self->options.timeout_ms);
      self->close_session(session);
    });
  }

  void read_more(const std::shared_ptr<Session>& session) {
    std::weak_ptr<Impl> weak = weak_from_this();
    auto buffer = asio::buffer(session->line.data() + session->used, session->line.size() - session->used);
    session->socket.async_read_some(buffer, [weak, session](const std::error_code& ec, size_t n) {
      auto self = weak.lock();
      if (!self || session->closed) return;
      self->on_read(session, ec, n);
    });
  }

  void on_read(const std::shared_ptr<Session>& session, const std::error_code& ec, size_t n) {
    const unsigned long long id = session->id;
    if (ec) {
      if (session->used == 0 && ec == asio::error::eof) {
        EDDY_LOG_DEBUG("control connection {}: closed by the client without a command", id);
      } else {
        EDDY_LOG_WARN("control connection {}: closed before a complete command line: {}", id,
                      ec == asio::error::eof ? "end of stream" : ec.message().c_str());
      }
      close_session(session);
      return;
    }
    size_t scanned = session->used;
    session->used += n;
    size_t newline = std::string_view(session->line).substr(0, session->used).find('\n', scanned);
    if (newline == std::string_view::npos) {
      if (session->used == session->line.size()) {
        EDDY_LOG_WARN("control connection {}: command line longer than {} bytes; closing", id,
                      kMaxControlCommandBytes);
        close_session(session);
        return;
      }
      read_more(session);
      return;
    }
    std::string command = session->line.substr(0, newline);
    session->line = std::string();
    if (valid_utf8(command)) {
      session->reply = handler(command);
    } else {
      EDDY_LOG_WARN("control connection {}: the command is not valid UTF-8", id);
      session->reply = control_reply_error("the command is not valid UTF-8");
    }
    if (session->closed) return;  // stop() from inside the handler
    arm_timer(session, "reply not taken");
    std::weak_ptr<Impl> weak = weak_from_this();
    asio::async_write(session->socket, asio::buffer(session->reply),
                      [weak, session](const std::error_code& write_ec, size_t) {
                        auto self = weak.lock();
                        if (!self || session->closed) return;
                        if (write_ec) {
                          EDDY_LOG_WARN("control connection {}: writing the reply failed: {}",
                                        session->id, write_ec.message());
                        }
                        self->close_session(session);
                      });
  }

  void close_session(const std::shared_ptr<Session>& session) {
    if (session->closed) return;
    session->closed = true;
    std::error_code ignored;
    session->timer.cancel();
    session->socket.shutdown(LocalProtocol::socket::shutdown_both, ignored);
    session->socket.close(ignored);
    sessions.erase(session->id);
  }

  // ---- stop -----------------------------------------------------------------

  void close_all() {
    std::error_code ignored;
    acceptor.close(ignored);
    retry_timer.cancel();
    std::vector<std::shared_ptr<Session>> open;
    open.reserve(sessions.size());
    for (const auto& entry : sessions) open.push_back(entry.second);
    for (const auto& session : open) close_session(session);
  }

  void stop() {
    if (stopped) return;
    stopped = true;
    close_all();
    if (path.empty()) return;
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::file_status status = fs::symlink_status(path, ec);
    if (!ec && status.type() == fs::file_type::socket) fs::remove(path, ec);
    if (ec) EDDY_LOG_WARN("control socket {}: cannot remove: {}", path, ec.message());
  }

  asio::io_context& io;
  Handler handler;
  ControlServerOptions options;
  LocalProtocol::acceptor acceptor;
  asio::steady_timer retry_timer;
  std::unordered_map<uint64_t, std::shared_ptr<Session>> sessions;
  uint64_t next_session_id = 1;
  std::string path;  // set by a successful start()
  bool started = false;
  bool stopped = false;
};

ControlServer::ControlServer(Reactor& reactor, Handler handler, ControlServerOptions options)
    : impl_(std::make_shared<Impl>(reactor, std::move(handler), options)) {}

ControlServer::~ControlServer() {
  if (impl_->started) impl_->stop();
}

Status ControlServer::start(const std::string& path) {
  if (impl_->started) return Status::invalid_argument("control socket already started");
  impl_->started = true;
  std::string error;
  if (!impl_->listen(path, &error)) {
    impl_->stopped = true;
    return Status::network(std::move(error));
  }
  EDDY_LOG_INFO("control socket listening on {}", path);
  impl_->accept_next();
  return Status();
}

void ControlServer::stop() { impl_->stop(); }

const std::string& ControlServer::path() const { return impl_->path; }

size_t ControlServer::open_connections() const { return impl_->sessions.size(); }

}  // namespace eddy::net
