// client/tls_transport.h — TLS over another Transport (normally TCP): the
// client end of security.protocol=SSL / SASL_SSL for the forwarder's uplink.
//
// connect() connects the inner transport, then runs the handshake within
// the same deadline, sending the host as SNI and, when the context verifies
// hostnames, checking that the server certificate names it. A handshake
// that fails (untrusted chain, name mismatch, no common suite, the server
// refusing our certificate) is kNetwork with a message that starts "TLS
// handshake with HOST:PORT failed: " and gives mbedTLS's reason and the
// failed certificate checks ("The certificate is not correctly signed by
// the trusted CA", "... Common Name (CN) does not match ..."); the inner transport is closed then.
//
// Invariant: mbedTLS asks the BIO for exactly the bytes of the record it is
// reading (header, then body), so a blocking inner read_exact never waits
// for bytes the server has not sent.
#pragma once

#include <memory>

#include "client/transport.h"

namespace eddy::security {
class TlsContext;
}

namespace eddy::client {

// REQUIRES: context built by TlsContext::create_client; inner not null.
std::unique_ptr<Transport> make_tls_transport(std::shared_ptr<const security::TlsContext> context,
                                              std::unique_ptr<Transport> inner);

}  // namespace eddy::client
