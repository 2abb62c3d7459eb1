// security/x509_principal.h — a certificate subject as Kafka names it.
//
// Kafka's DefaultKafkaPrincipalBuilder, with ssl.principal.mapping.rules at
// its default ("DEFAULT"), makes "User:" + X500Principal.getName(): the
// distinguished name in RFC 2253 form. That is the reverse of the order in
// the certificate (most specific RDN first), ',' between RDNs without
// spaces, '+' inside a multi-valued RDN, the keywords CN, C, L, ST, STREET,
// O, OU, DC and UID, other attributes as their dotted OID with '#' and the
// hex of the DER value, and , + " \ < > ; escaped with a backslash (as are
// a leading '#' or space and a trailing space).
#pragma once

#include <string>

struct mbedtls_asn1_named_data;  // mbedtls_x509_name

namespace eddy::security {

// "CN=client,O=Example,C=DE" for the name list of a parsed certificate's
// subject (mbedtls_x509_crt::subject).
std::string rfc2253_name(const mbedtls_asn1_named_data* subject);

}  // namespace eddy::security
