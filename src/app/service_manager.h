// What `eddy serve` tells a service manager (systemd's Type=notify, see
// scripts/deb/eddy.service) about its life: READY=1 once it serves, and
// STOPPING=1 when a shutdown begins. Without NOTIFY_SOCKET (not started by a
// service manager) both do nothing.
#pragma once

#include <vector>

#include "net/server.h"

namespace eddy::app {

// Sends READY=1 with a STATUS= naming the listeners.
// REQUIRES: called on the reactor thread while the reactor runs, after the
// listeners are bound and the broker has loaded its topics: then a client
// that connects as soon as the service manager reports the unit started is
// accepted and answered.
void notify_ready(const std::vector<net::BoundListener>& listeners);

// Sends STOPPING=1: the service manager shows the unit as deactivating
// while in-flight requests finish and the logs close.
void notify_stopping();

}  // namespace eddy::app
