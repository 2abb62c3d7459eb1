// The client side of the control socket (net/control_server.h describes the
// protocol and the reply convention). Blocking; for the command-line tools.
// No Asio in this header.
//
//   std::string reply, error;
//   net::ControlStatus s = net::control_request(path, "forward status", 10000, &reply, &error);
//   if (s == net::ControlStatus::kNoSocket) { ... nothing running ... }
//   std::string body;
//   if (s == net::ControlStatus::kOk && net::parse_control_reply(reply, &body).ok()) print(body);
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "port/status.h"

namespace eddy::net {

// Replies longer than this are refused (kFailed).
constexpr size_t kMaxControlReplyBytes = size_t{16} << 20;

enum class ControlStatus {
  kOk,        // *reply holds everything the server sent before closing
  kNoSocket,  // nothing at the socket path (or a directory on it is missing)
  kRefused,   // a socket file nobody accepts on: a stale one from a dead process
  kTimeout,   // no complete reply within the timeout
  kFailed,    // anything else (bad path, permissions, reset, reply too long)
};

// Connects to the Unix socket at socket_path, sends command + '\n', and
// reads the reply until the server closes, all within timeout_ms. On any
// status but kOk, *error says what failed and names the path.
// REQUIRES: command holds no '\n' and at most kMaxControlCommandBytes bytes
// (checked: kFailed otherwise).
ControlStatus control_request(const std::string& socket_path, const std::string& command, int64_t timeout_ms,
                              std::string* reply, std::string* error);

// Reads a reply by the convention of net/control_server.h: ok with *body
// for "ok\n<body>"; kInvalidArgument for "error: <why>\n" (the server
// refused the command; the message is why, without the newline); kProtocol
// for a reply in neither form (the message describes it).
Status parse_control_reply(const std::string& reply, std::string* body);

}  // namespace eddy::net
