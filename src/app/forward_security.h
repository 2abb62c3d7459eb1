// A link's security keys (eddy.forward.<link>.security.protocol with the
// sasl.* and ssl.* keys of Kafka's clients under the link's prefix),
// resolved at startup into what its connections use: a client TLS context
// (certificates loaded and checked now) and SASL credentials.
#pragma once

#include <string>

#include "app/config.h"
#include "forward/link_options.h"

namespace eddy::app {

// Fills o->tls (SSL, SASL_SSL) and o->sasl (SASL_PLAINTEXT, SASL_SSL) from
// the keys under prefix k ("eddy.forward.<link>."). kInvalidArgument naming
// the origin, the key and, for files, the file and why (missing, unreadable,
// not PEM, key not matching the certificate); `eddy serve` exits 2. A
// sasl.* key on a link without SASL or an ssl.* key on one without TLS is
// an error too (it would silently do nothing). Messages never hold a
// password.
Status link_security(const Config& config, const std::string& k, forward::LinkOptions* o);

}  // namespace eddy::app
