#include "security/x509_principal.h"

#include <cstring>
#include <vector>

#include <mbedtls/oid.h>
#include <mbedtls/version.h>
#include <mbedtls/x509.h>

namespace eddy::security {
namespace {

#if MBEDTLS_VERSION_NUMBER >= 0x03000000
#define EDDY_X509_MERGED(name) ((name)->MBEDTLS_PRIVATE(next_merged))
#else
#define EDDY_X509_MERGED(name) ((name)->next_merged)
#endif

// RFC 2253's keywords (what X500Principal.getName() prints by name).
const char* keyword_for(const mbedtls_asn1_buf& oid) {
  struct Known {
    const char* oid;
    size_t size;
    const char* keyword;
  };
  static const Known kKnown[] = {
      {MBEDTLS_OID_AT_CN, sizeof(MBEDTLS_OID_AT_CN) - 1, "CN"},
      {MBEDTLS_OID_AT_COUNTRY, sizeof(MBEDTLS_OID_AT_COUNTRY) - 1, "C"},
      {MBEDTLS_OID_AT_LOCALITY, sizeof(MBEDTLS_OID_AT_LOCALITY) - 1, "L"},
      {MBEDTLS_OID_AT_STATE, sizeof(MBEDTLS_OID_AT_STATE) - 1, "ST"},
      {MBEDTLS_OID_AT_ORGANIZATION, sizeof(MBEDTLS_OID_AT_ORGANIZATION) - 1, "O"},
      {MBEDTLS_OID_AT_ORG_UNIT, sizeof(MBEDTLS_OID_AT_ORG_UNIT) - 1, "OU"},
      {MBEDTLS_OID_DOMAIN_COMPONENT, sizeof(MBEDTLS_OID_DOMAIN_COMPONENT) - 1, "DC"},
      {"\x55\x04\x09", 3, "STREET"},
      {"\x09\x92\x26\x89\x93\xF2\x2C\x64\x01\x01", 10, "UID"},
  };
  for (const Known& k : kKnown) {
    if (oid.len == k.size && std::memcmp(oid.p, k.oid, k.size) == 0) return k.keyword;
  }
  return nullptr;
}

void append_hex(std::string* out, unsigned char byte) {
  static const char kHex[] = "0123456789abcdef";
  out->push_back(kHex[byte >> 4]);
  out->push_back(kHex[byte & 15]);
}

// An unknown attribute: "1.2.840.113549.1.9.1=#160d..." (the DER encoding
// of the value: tag, length, bytes).
void append_oid_attribute(std::string* out, const mbedtls_asn1_named_data* a) {
  char dotted[128];
  int n = mbedtls_oid_get_numeric_string(dotted, sizeof(dotted), &a->oid);
  out->append(n > 0 ? dotted : "?");
  out->append("=#");
  append_hex(out, static_cast<unsigned char>(a->val.tag));
  const size_t len = a->val.len;
  if (len < 0x80) {
    append_hex(out, static_cast<unsigned char>(len));
  } else {
    std::vector<unsigned char> bytes;
    for (size_t v = len; v > 0; v >>= 8) bytes.insert(bytes.begin(), static_cast<unsigned char>(v & 0xff));
    append_hex(out, static_cast<unsigned char>(0x80 | bytes.size()));
    for (unsigned char b : bytes) append_hex(out, b);
  }
  for (size_t i = 0; i < len; ++i) append_hex(out, a->val.p[i]);
}

void append_escaped_value(std::string* out, const mbedtls_asn1_buf& value) {
  for (size_t i = 0; i < value.len; ++i) {
    const char c = static_cast<char>(value.p[i]);
    const bool special = std::strchr(",+\"\\<>;", c) != nullptr && c != '\0';
    const bool edge = (i == 0 && (c == '#' || c == ' ')) || (i + 1 == value.len && c == ' ');
    if (special || edge) out->push_back('\\');
    out->push_back(c);
  }
}

}  // namespace

std::string rfc2253_name(const mbedtls_asn1_named_data* subject) {
  // Group the attributes into RDNs (next_merged joins an attribute to the
  // one after it), then print the RDNs last first.
  std::vector<std::vector<const mbedtls_asn1_named_data*>> rdns;
  bool merge = false;
  for (const mbedtls_asn1_named_data* a = subject; a != nullptr; a = a->next) {
    if (a->oid.p == nullptr) continue;
    if (!merge || rdns.empty()) rdns.emplace_back();
    rdns.back().push_back(a);
    merge = EDDY_X509_MERGED(a) != 0;
  }
  std::string out;
  for (auto rdn = rdns.rbegin(); rdn != rdns.rend(); ++rdn) {
    if (!out.empty()) out.push_back(',');
    for (size_t i = 0; i < rdn->size(); ++i) {
      const mbedtls_asn1_named_data* a = (*rdn)[i];
      if (i > 0) out.push_back('+');
      if (const char* keyword = keyword_for(a->oid)) {
        out.append(keyword).push_back('=');
        append_escaped_value(&out, a->val);
      } else {
        append_oid_attribute(&out, a);
      }
    }
  }
  return out;
}

}  // namespace eddy::security
