// Internal to src/net/ (includes Asio): Unix domain stream socket helpers
// shared by the control server and its client.
#pragma once

#include <asio/io_context.hpp>
#include <asio/local/stream_protocol.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <system_error>

namespace eddy::net {

using LocalProtocol = asio::local::stream_protocol;

// The longest socket path this system's Unix socket address can hold
// (sun_path less its terminating NUL): 107 bytes on Linux.
constexpr size_t kMaxLocalSocketPathBytes = sizeof(asio::detail::sockaddr_un_type{}.sun_path) - 1;

// The endpoint for a filesystem socket path. False with *error naming the
// path when it is empty, holds a NUL byte, or is longer than
// kMaxLocalSocketPathBytes.
bool local_endpoint_for(const std::string& path, LocalProtocol::endpoint* out, std::string* error);

// True when ec is the error e, in the generic category or as the errno
// value in Asio's system category (which does not map to std::errc).
bool error_is(const std::error_code& ec, std::errc e);

// Connects *socket (closed, created on io) to endpoint, giving up after
// timeout_ms (the result is then std::errc::timed_out and *socket is closed).
// REQUIRES: io is a private context that no other thread runs; it is run
// (and restarted) here.
std::error_code connect_local(asio::io_context& io, LocalProtocol::socket* socket,
                              const LocalProtocol::endpoint& endpoint, int64_t timeout_ms);

}  // namespace eddy::net
