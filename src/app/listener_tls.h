// The TLS side of the listeners: for every listener whose security protocol
// runs over TLS (SSL; SASL_SSL once SASL is there), its security::TlsContext
// from Kafka's ssl.* keys, with Kafka's prefix rule: a key written
// listener.name.<listener>.ssl.<...> (the listener's name in lower case)
// overrides ssl.<...> for that listener only.
#pragma once

#include <string>
#include <vector>

#include "app/config.h"
#include "net/listener_config.h"

namespace eddy::app {

// Loads the certificates and keys of every TLS listener into
// ListenerConfig::tls. False with *error ("file:line: listener SSL:
// ssl.keystore.location /etc/eddy/x.pem: cannot open: No such file or
// directory") when something is missing or bad, or when a listener.name.*
// key names no listener; `eddy serve` then exits 2.
Status tls_for_listeners(const Config& config, std::vector<net::ListenerConfig>* listeners);

}  // namespace eddy::app
