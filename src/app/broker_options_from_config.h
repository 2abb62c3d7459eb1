// Turns the validated broker configuration into the options of the rooms
// (storage defaults, broker, network server).
#pragma once

#include <string>
#include <vector>

#include "app/config.h"
#include "broker/broker_options.h"
#include "net/listener_config.h"
#include "net/server.h"
#include "storage/log_config.h"

namespace eddy::app {

storage::LogConfig log_defaults_from(const Config& config);
broker::BrokerOptions broker_options_from(const Config& config);
net::ServerOptions server_options_from(const Config& config);

// Parses `listeners` and `advertised.listeners` with
// listener.security.protocol.map, and checks the SASL mechanisms of every
// SASL listener (implemented, not empty); kInvalidArgument naming where
// the bad value came from.
Status listeners_from(const Config& config, std::vector<net::ListenerConfig>* listeners,
                      std::vector<net::ListenerConfig>* advertised);

// The listeners that need SASL and their mechanisms (sasl.enabled.mechanisms
// or listener.name.<name>.sasl.enabled.mechanisms). REQUIRES: listeners
// passed listeners_from.
std::vector<broker::SaslListener> sasl_listeners_from(const Config& config,
                                                      const std::vector<net::ListenerConfig>& listeners);

// What clients are told to connect to: advertised.listeners when set, else
// the bound listeners (an all-interfaces bind is advertised as "localhost",
// with a warning, as there is no better guess).
std::vector<broker::AdvertisedListener> advertise(const std::vector<net::ListenerConfig>& advertised,
                                                  const std::vector<net::BoundListener>& bound);

}  // namespace eddy::app
