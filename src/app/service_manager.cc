#include "app/service_manager.h"

#include <string>

#include "net/listener_config.h"
#include "port/log.h"
#include "port/port.h"

namespace eddy::app {
namespace {

// A failure to notify is never fatal: the broker serves either way. Under
// systemd the unit then times out in "activating" (TimeoutStartSec), and
// this line in the journal says why.
void send(const std::string& state) {
  if (std::error_code ec = port::notify_service_manager(state)) {
    EDDY_LOG_WARN("cannot notify the service manager (NOTIFY_SOCKET) of {}: {}",
                  state.substr(0, state.find('\n')), port::error_message(ec));
  }
}

}  // namespace

void notify_ready(const std::vector<net::BoundListener>& listeners) {
  std::string status = "STATUS=serving on";
  for (const net::BoundListener& l : listeners) status += " " + net::format_listener(l.name, l.host, l.port);
  send("READY=1\n" + status);
}

void notify_stopping() { send("STOPPING=1\nSTATUS=shutting down"); }

}  // namespace eddy::app
