#include "app/command_config.h"

#include <algorithm>
#include <cctype>

#include "app/broker_config.h"
#include "app/client_security.h"
#include "app/properties.h"
#include "client/tls_transport.h"
#include "client/transport.h"

namespace eddy::app {
namespace {

constexpr char kLinkPrefix[] = "eddy.forward.<link>.";

// The link's security keys without their prefix: one definition of each
// key (type, default, allowed values) for links and tools alike.
const ConfigSchema& command_config_schema() {
  static const ConfigSchema schema = [] {
    std::vector<ConfigKey> keys;
    for (const std::string& suffix : client_security_keys()) {
      const ConfigKey* link_key = broker_schema().find(kLinkPrefix + suffix);
      ConfigKey key = *link_key;  // every suffix is a link key (app_test checks it)
      key.name = suffix;
      keys.push_back(std::move(key));
    }
    return ConfigSchema(std::move(keys));
  }();
  return schema;
}

bool is_pem(std::string value) {
  std::transform(value.begin(), value.end(), value.begin(), [](unsigned char c) { return std::toupper(c); });
  return value == "PEM";
}

}  // namespace

Status apply_command_config(const std::string& path, client::ClientOptions* out, std::vector<std::string>* warnings) {
  std::vector<Property> properties;
  if (Status s = read_properties_file(path, &properties); !s.ok()) {
    return Status::invalid_argument("--command-config: " + s.message());
  }
  std::vector<Property> used;
  for (Property& p : properties) {
    if (p.key == "ssl.truststore.type" || p.key == "ssl.keystore.type") {
      if (!is_pem(p.value)) {
        return Status::invalid_argument(describe_property_error(p, "only PEM files are read (not '" + p.value + "')"));
      }
    } else if (command_config_schema().find(p.key) != nullptr) {
      used.push_back(std::move(p));
    } else {
      warnings->push_back(describe_property_error(p, "not a setting Eddy's tools use; ignored"));
    }
  }
  Config config(&command_config_schema());
  if (Status s = config.apply(used, warnings); !s.ok()) return s;
  ClientSecurity security;
  if (Status s = client_security(config, "", "--command-config " + path, &security); !s.ok()) return s;
  out->connection.sasl = security.sasl;
  if (security.tls) {
    out->transport_factory = [tls = security.tls]() {
      return client::make_tls_transport(tls, client::make_tcp_transport());
    };
  }
  return Status();
}

}  // namespace eddy::app
