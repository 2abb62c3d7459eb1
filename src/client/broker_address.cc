#include "client/broker_address.h"

namespace eddy::client {

std::string BrokerAddress::to_string() const {
  bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Status parse_broker_address(std::string_view text, BrokerAddress* out) {
  std::string_view host;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return Status::invalid_argument("'" + std::string(text) + "': expected [address]:port");
    }
    host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || text.find(':') != colon) {
      return Status::invalid_argument("'" + std::string(text) + "': expected host:port");
    }
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  if (host.empty()) {
    return Status::invalid_argument("'" + std::string(text) + "': empty host");
  }
  uint32_t port = 0;
  if (port_text.empty() || port_text.size() > 5) port = 0;
  for (char c : port_text) {
    if (c < '0' || c > '9') {
      port = 0;
      break;
    }
    port = port * 10 + static_cast<uint32_t>(c - '0');
  }
  if (port == 0 || port > 65535) {
    return Status::invalid_argument("'" + std::string(text) + "': port must be a number from 1 to 65535");
  }
  out->host = std::string(host);
  out->port = static_cast<uint16_t>(port);
  return Status();
}

Status parse_broker_list(std::string_view text, std::vector<BrokerAddress>* out) {
  out->clear();
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view entry = text.substr(start, comma - start);
    while (!entry.empty() && (entry.front() == ' ' || entry.front() == '\t')) entry.remove_prefix(1);
    while (!entry.empty() && (entry.back() == ' ' || entry.back() == '\t')) entry.remove_suffix(1);
    if (!entry.empty()) {
      BrokerAddress address;
      Status s = parse_broker_address(entry, &address);
      if (!s.ok()) return s;
      out->push_back(std::move(address));
    }
    start = comma + 1;
  }
  if (out->empty()) {
    return Status::invalid_argument("no broker address given");
  }
  return Status();
}

}  // namespace eddy::client
