#include "net/listener_config.h"

#include <algorithm>

namespace eddy::net {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

// Kafka listener names: letters, digits, '_' and '-' (it rejects nothing
// else explicitly, but ':' and '/' would make the value ambiguous).
bool valid_listener_name(std::string_view name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

bool valid_host_char(char c, bool ipv6) {
  if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) return true;
  if (c == '-' || c == '.' || c == '_') return true;
  return ipv6 && (c == ':' || c == '%');
}

// Splits value at commas; entries are trimmed.
std::vector<std::string_view> split_csv(std::string_view value) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t comma = value.find(',', start);
    parts.push_back(trim(value.substr(start, comma == std::string_view::npos ? std::string_view::npos
                                                                             : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return parts;
}

bool parse_port(std::string_view text, uint16_t* port) {
  if (text.empty() || text.size() > 5) return false;
  uint32_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint32_t>(c - '0');
  }
  if (value > 65535) return false;
  *port = static_cast<uint16_t>(value);
  return true;
}

Status parse_one_listener(std::string_view entry, ListenerConfig* out) {
  size_t sep = entry.find("://");
  if (sep == std::string_view::npos) {
    return Status::invalid_argument("listener '" + std::string(entry) + "' is not of the form NAME://HOST:PORT");
  }
  std::string_view name = entry.substr(0, sep);
  std::string_view rest = entry.substr(sep + 3);
  if (!valid_listener_name(name)) {
    return Status::invalid_argument("listener '" + std::string(entry) + "' has an invalid name '" + std::string(name) +
             "' (letters, digits, '_' and '-' only)");
  }
  std::string_view host;
  std::string_view port_text;
  bool ipv6 = false;
  if (!rest.empty() && rest.front() == '[') {
    size_t close = rest.find(']');
    if (close == std::string_view::npos || close + 1 >= rest.size() || rest[close + 1] != ':') {
      return Status::invalid_argument("listener '" + std::string(entry) + "' has a malformed IPv6 host (expected [ADDRESS]:PORT)");
    }
    host = rest.substr(1, close - 1);
    port_text = rest.substr(close + 2);
    ipv6 = true;
    if (host.empty()) {
      return Status::invalid_argument("listener '" + std::string(entry) + "' has an empty IPv6 host");
    }
  } else {
    size_t colon = rest.rfind(':');
    if (colon == std::string_view::npos) {
      return Status::invalid_argument("listener '" + std::string(entry) + "' has no port (expected NAME://HOST:PORT)");
    }
    host = rest.substr(0, colon);
    port_text = rest.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      return Status::invalid_argument("listener '" + std::string(entry) + "': write IPv6 hosts in brackets, e.g. [::1]:9092");
    }
  }
  for (char c : host) {
    if (!valid_host_char(c, ipv6)) {
      return Status::invalid_argument("listener '" + std::string(entry) + "' has an invalid host '" + std::string(host) + "'");
    }
  }
  if (!parse_port(port_text, &out->port)) {
    return Status::invalid_argument("listener '" + std::string(entry) + "' has an invalid port '" + std::string(port_text) +
             "' (0-65535)");
  }
  out->name = upper(name);
  out->host = std::string(host);
  return Status();
}

}  // namespace

const char* security_protocol_name(SecurityProtocol protocol) {
  switch (protocol) {
    case SecurityProtocol::kPlaintext:
      return "PLAINTEXT";
    case SecurityProtocol::kSsl:
      return "SSL";
    case SecurityProtocol::kSaslPlaintext:
      return "SASL_PLAINTEXT";
    case SecurityProtocol::kSaslSsl:
      return "SASL_SSL";
  }
  return "UNKNOWN";
}

bool parse_security_protocol(std::string_view text, SecurityProtocol* out) {
  std::string name = upper(text);
  for (SecurityProtocol p : {SecurityProtocol::kPlaintext, SecurityProtocol::kSsl,
                             SecurityProtocol::kSaslPlaintext, SecurityProtocol::kSaslSsl}) {
    if (name == security_protocol_name(p)) {
      *out = p;
      return true;
    }
  }
  return false;
}

Status parse_security_protocol_map(std::string_view value, SecurityProtocolMap* out) {
  out->clear();
  if (trim(value).empty()) return Status();
  for (std::string_view entry : split_csv(value)) {
    size_t colon = entry.find(':');
    if (colon == std::string_view::npos) {
      return Status::invalid_argument("security protocol map entry '" + std::string(entry) + "' is not of the form NAME:PROTOCOL");
    }
    std::string_view name = trim(entry.substr(0, colon));
    std::string_view protocol_text = trim(entry.substr(colon + 1));
    if (!valid_listener_name(name)) {
      return Status::invalid_argument("security protocol map entry '" + std::string(entry) + "' has an invalid listener name");
    }
    SecurityProtocol protocol;
    if (!parse_security_protocol(protocol_text, &protocol)) {
      return Status::invalid_argument("security protocol map entry '" + std::string(entry) + "': unknown security protocol '" +
               std::string(protocol_text) + "' (PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL)");
    }
    std::string upper_name = upper(name);
    for (const auto& existing : *out) {
      if (existing.first == upper_name) {
        return Status::invalid_argument("security protocol map names listener " + upper_name + " twice");
      }
    }
    out->emplace_back(std::move(upper_name), protocol);
  }
  return Status();
}

Status parse_listeners(std::string_view value, const SecurityProtocolMap* protocol_map,
                       std::vector<ListenerConfig>* out) {
  out->clear();
  if (trim(value).empty()) return Status();
  for (std::string_view entry : split_csv(value)) {
    if (entry.empty()) {
      return Status::invalid_argument("empty listener entry in '" + std::string(value) + "'");
    }
    ListenerConfig listener;
    if (Status s = parse_one_listener(entry, &listener); !s.ok()) return s;
    bool known = false;
    if (protocol_map != nullptr) {
      for (const auto& [name, protocol] : *protocol_map) {
        if (name == listener.name) {
          listener.security_protocol = protocol;
          known = true;
          break;
        }
      }
    } else {
      known = parse_security_protocol(listener.name, &listener.security_protocol);
    }
    if (!known) {
      return Status::invalid_argument("listener " + listener.name +
               " has no security protocol: name it after one (PLAINTEXT, SSL, SASL_PLAINTEXT, "
               "SASL_SSL) or map it in listener.security.protocol.map");
    }
    for (const ListenerConfig& existing : *out) {
      if (existing.name == listener.name) {
        return Status::invalid_argument("listener name " + listener.name + " is used twice in '" + std::string(value) + "'");
      }
    }
    out->push_back(std::move(listener));
  }
  return Status();
}

std::string format_listener(std::string_view name, std::string_view host, uint16_t port) {
  std::string out(name);
  out += "://";
  if (host.find(':') != std::string_view::npos) {
    out += '[';
    out += host;
    out += ']';
  } else {
    out += host;
  }
  out += ':';
  out += std::to_string(port);
  return out;
}

}  // namespace eddy::net
