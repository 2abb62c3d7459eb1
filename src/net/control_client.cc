#include "net/control_client.h"

#include <asio/steady_timer.hpp>
#include <asio/write.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <functional>
#include <string_view>

#include "net/control_server.h"
#include "net/local_socket.h"

namespace eddy::net {

namespace {

// Sends the request line and reads until end of stream, within deadline.
// *why is set when the result is kFailed.
ControlStatus exchange(asio::io_context& io, LocalProtocol::socket* socket, const std::string& line,
                       std::chrono::steady_clock::time_point deadline, std::string* reply, std::string* why) {
  bool done = false;  // the exchange ended (the timer may still fire late)
  bool timed_out = false;
  std::error_code failure;
  bool too_long = false;
  std::array<char, 65536> chunk;

  asio::steady_timer timer(io);
  timer.expires_at(deadline);
  timer.async_wait([&](const std::error_code& ec) {
    if (ec || done) return;
    timed_out = true;
    std::error_code ignored;
    socket->close(ignored);
  });

  std::function<void()> read_next;
  read_next = [&] {
    socket->async_read_some(asio::buffer(chunk), [&](const std::error_code& ec, size_t n) {
      if (timed_out) return;
      if (ec) {
        if (ec != asio::error::eof) failure = ec;
        done = true;
        timer.cancel();
        return;
      }
      if (reply->size() + n > kMaxControlReplyBytes) {
        too_long = true;
        done = true;
        timer.cancel();
        return;
      }
      reply->append(chunk.data(), n);
      read_next();
    });
  };
  asio::async_write(*socket, asio::buffer(line), [&](const std::error_code& ec, size_t) {
    if (timed_out) return;
    if (ec) {
      failure = ec;
      done = true;
      timer.cancel();
      return;
    }
    read_next();
  });
  io.restart();
  io.run();

  if (timed_out) return ControlStatus::kTimeout;
  if (too_long) {
    *why = "the reply is longer than " + std::to_string(kMaxControlReplyBytes) + " bytes";
    return ControlStatus::kFailed;
  }
  if (failure) {
    *why = failure.message();
    return ControlStatus::kFailed;
  }
  return ControlStatus::kOk;
}

}  // namespace

ControlStatus control_request(const std::string& socket_path, const std::string& command, int64_t timeout_ms,
                              std::string* reply, std::string* error) {
  reply->clear();
  if (command.find('\n') != std::string::npos) {
    *error = "a control command must be one line";
    return ControlStatus::kFailed;
  }
  if (command.size() > kMaxControlCommandBytes) {
    *error = "a control command may have at most " + std::to_string(kMaxControlCommandBytes) + " bytes";
    return ControlStatus::kFailed;
  }
  LocalProtocol::endpoint endpoint;
  std::string why;
  if (!local_endpoint_for(socket_path, &endpoint, &why)) {
    *error = "control socket: " + why;
    return ControlStatus::kFailed;
  }
  timeout_ms = std::max<int64_t>(timeout_ms, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);

  asio::io_context io(1);
  LocalProtocol::socket socket(io);
  std::error_code ec = connect_local(io, &socket, endpoint, timeout_ms);
  if (error_is(ec, std::errc::no_such_file_or_directory) || error_is(ec, std::errc::not_a_directory)) {
    *error = "no control socket at " + socket_path;
    return ControlStatus::kNoSocket;
  }
  if (error_is(ec, std::errc::connection_refused)) {
    *error = "stale control socket at " + socket_path + " (connection refused: nobody is listening)";
    return ControlStatus::kRefused;
  }
  if (error_is(ec, std::errc::timed_out)) {
    *error = "timed out after " + std::to_string(timeout_ms) + " ms connecting to the control socket " + socket_path;
    return ControlStatus::kTimeout;
  }
  if (ec) {
    *error = "cannot connect to the control socket " + socket_path + ": " + ec.message();
    return ControlStatus::kFailed;
  }
  ControlStatus status = exchange(io, &socket, command + "\n", deadline, reply, &why);
  std::error_code ignored;
  socket.close(ignored);
  if (status == ControlStatus::kTimeout) {
    *error = "timed out after " + std::to_string(timeout_ms) + " ms waiting for the reply on the control socket " +
             socket_path;
  } else if (status != ControlStatus::kOk) {
    *error = "control socket " + socket_path + ": " + why;
  }
  if (status != ControlStatus::kOk) reply->clear();
  return status;
}

Status parse_control_reply(const std::string& reply, std::string* body) {
  static constexpr std::string_view kOk = "ok\n";
  static constexpr std::string_view kError = "error: ";
  std::string_view text(reply);
  if (text.substr(0, kOk.size()) == kOk) {
    body->assign(text.substr(kOk.size()));
    return Status();
  }
  if (text.substr(0, kError.size()) == kError) {
    std::string_view why = text.substr(kError.size());
    if (!why.empty() && why.back() == '\n') why.remove_suffix(1);
    return Status::invalid_argument(why.empty() ? std::string("(no reason given)") : std::string(why));
  }
  if (text.empty()) return Status::protocol_error("the server closed the connection without a reply");
  std::string_view start = text.substr(0, std::min<size_t>(text.size(), 60));
  return Status::protocol_error("unexpected reply '" + std::string(start) + (text.size() > start.size() ? "...'" : "'"));
}

}  // namespace eddy::net
