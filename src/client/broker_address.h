// host:port addresses of brokers, as given to --bootstrap-server and as
// advertised in Metadata.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "port/status.h"

namespace eddy::client {

struct BrokerAddress {
  std::string host;  // a name, an IPv4 address, or an IPv6 address without brackets
  uint16_t port = 0;

  // "host:port", with brackets around an IPv6 address.
  std::string to_string() const;
  bool operator==(const BrokerAddress&) const = default;
};

// Parses "host:port" or "[v6addr]:port". The port must be 1-65535.
// kInvalidArgument, naming the text, otherwise.
Status parse_broker_address(std::string_view text, BrokerAddress* out);
// Parses a comma-separated list (Kafka's bootstrap.servers); at least one.
// Blanks around entries are ignored.
Status parse_broker_list(std::string_view text, std::vector<BrokerAddress>* out);

}  // namespace eddy::client
