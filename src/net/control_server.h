// The control socket: a Unix domain socket on which local tools (eddy
// forward status, ...) ask the running broker for live state. No Asio in
// this header.
//
// Protocol, one exchange per connection:
//   client -> server  one command line: UTF-8 text ending in '\n', the
//                     command (without the '\n') at most
//                     kMaxControlCommandBytes bytes
//   server -> client  the handler's reply, then the server closes
// A connection that sends a longer line, or no complete line within the
// timeout, is closed (with a log line) without a reply; a command that is
// not valid UTF-8 gets an error reply. Neither reaches the handler, and
// other connections are not affected.
//
// Reply convention (control_reply_ok / control_reply_error build it,
// parse_control_reply in net/control_client.h reads it):
//   "ok\n" followed by the body          success; tools print the body
//   "error: <why>\n"                      failure; tools print <why>, exit 1
//
//   net::ControlServer control(reactor, [&](const std::string& command) {
//     if (command == "forward status") return net::control_reply_ok(table);
//     return net::control_reply_error("unknown command");
//   });
//   if (Status s = control.start(data_dir + "/eddy.sock"); !s.ok()) { ... }
//   ...
//   control.stop();   // on shutdown, on the reactor thread
//
// All members REQUIRE the reactor thread, or no thread inside reactor.run().
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "port/status.h"

namespace eddy::net {

class Reactor;

// The longest command accepted, in bytes, not counting its '\n'.
constexpr size_t kMaxControlCommandBytes = 1024;

std::string control_reply_ok(std::string_view body);   // "ok\n" + body
std::string control_reply_error(std::string_view why);  // "error: " + why + "\n"

struct ControlServerOptions {
  // A connection has this long to send its command line, and again this
  // long for its reply to be written, else it is closed.
  int64_t timeout_ms = 5000;
};

class ControlServer {
 public:
  // Called on the reactor thread with the command line (without its '\n');
  // returns the complete reply text.
  using Handler = std::function<std::string(const std::string& command)>;

  // REQUIRES: reactor outlives the ControlServer.
  ControlServer(Reactor& reactor, Handler handler, ControlServerOptions options = ControlServerOptions());
  // stop(), if started and not stopped.
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // Listens on a Unix socket at path, file mode 0600. A socket file left at
  // path by a process that died is replaced; when a process still accepts
  // on it, or path is another kind of file, or path is longer than a Unix
  // socket address holds, nothing changes and the Status (kNetwork) says
  // why. Blocks for at most ~1 s (probing an existing socket).
  // REQUIRES: called once.
  Status start(const std::string& path);

  // Closes the listening socket and every open connection (clients not yet
  // answered see the connection close without a reply) and removes the
  // socket file. Calling it again does nothing.
  void stop();

  // The socket path given to a successful start(); empty otherwise.
  const std::string& path() const;
  // Connections accepted and not yet closed.
  size_t open_connections() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;  // Asio handlers hold weak references
};

}  // namespace eddy::net
