#include "net/local_socket.h"

#include <asio/steady_timer.hpp>
#include <algorithm>
#include <chrono>

namespace eddy::net {

bool local_endpoint_for(const std::string& path, LocalProtocol::endpoint* out, std::string* error) {
  if (path.empty()) {
    *error = "empty Unix socket path";
    return false;
  }
  if (path.find('\0') != std::string::npos) {
    *error = "Unix socket path '" + path + "' contains a NUL byte";
    return false;
  }
  if (path.size() > kMaxLocalSocketPathBytes) {
    *error = "Unix socket path '" + path + "' is " + std::to_string(path.size()) +
             " bytes long; this system allows at most " + std::to_string(kMaxLocalSocketPathBytes) +
             " (use a shorter directory)";
    return false;
  }
  *out = LocalProtocol::endpoint(path);
  return true;
}

bool error_is(const std::error_code& ec, std::errc e) {
  if (ec == e) return true;
  return ec.category() == asio::error::get_system_category() && ec.value() == static_cast<int>(e);
}

std::error_code connect_local(asio::io_context& io, LocalProtocol::socket* socket,
                              const LocalProtocol::endpoint& endpoint, int64_t timeout_ms) {
  std::error_code result = std::make_error_code(std::errc::timed_out);
  bool done = false;
  asio::steady_timer timer(io);
  timer.expires_after(std::chrono::milliseconds(std::max<int64_t>(timeout_ms, 0)));
  timer.async_wait([&](const std::error_code& ec) {
    if (ec || done) return;
    std::error_code ignored;
    socket->close(ignored);  // the connect completes with operation_aborted
  });
  socket->async_connect(endpoint, [&](const std::error_code& ec) {
    done = true;
    timer.cancel();
    if (ec != asio::error::operation_aborted) result = ec;
  });
  io.restart();
  io.run();
  if (result) {
    std::error_code ignored;
    socket->close(ignored);
  }
  return result;
}

}  // namespace eddy::net
