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

bool parse_one_listener(std::string_view entry, ListenerConfig* out, std::string* error) {
  size_t sep = entry.find("://");
  if (sep == std::string_view::npos) {
    *error = "listener '" + std::string(entry) + "' is not of the form NAME://HOST:PORT";
    return false;
  }
  std::string_view name = entry.substr(0, sep);
  std::string_view rest = entry.substr(sep + 3);
  if (!valid_listener_name(name)) {
    *error = "listener '" + std::string(entry) + "' has an invalid name '" + std::string(name) +
             "' (letters, digits, '_' and '-' only)";
    return false;
  }
  std::string_view host;
  std::string_view port_text;
  bool ipv6 = false;
  if (!rest.empty() && rest.front() == '[') {
    size_t close = rest.find(']');
    if (close == std::string_view::npos || close + 1 >= rest.size() || rest[close + 1] != ':') {
      *error = "listener '" + std::string(entry) + "' has a malformed IPv6 host (expected [ADDRESS]:PORT)";
      return false;
    }
    host = rest.substr(1, close - 1);
    port_text = rest.substr(close + 2);
    ipv6 = true;
    if (host.empty()) {
      *error = "listener '" + std::string(entry) + "' has an empty IPv6 host";
      return false;
    }
  } else {
    size_t colon = rest.rfind(':');
    if (colon == std::string_view::npos) {
      *error = "listener '" + std::string(entry) + "' has no port (expected NAME://HOST:PORT)";
      return false;
    }
    host = rest.substr(0, colon);
    port_text = rest.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      *error = "listener '" + std::string(entry) + "': write IPv6 hosts in brackets, e.g. [::1]:9092";
      return false;
    }
  }
  for (char c : host) {
    if (!valid_host_char(c, ipv6)) {
      *error = "listener '" + std::string(entry) + "' has an invalid host '" + std::string(host) + "'";
      return false;
    }
  }
  if (!parse_port(port_text, &out->port)) {
    *error = "listener '" + std::string(entry) + "' has an invalid port '" + std::string(port_text) +
             "' (0-65535)";
    return false;
  }
  out->name = upper(name);
  out->host = std::string(host);
  return true;
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

bool parse_security_protocol_map(std::string_view value, SecurityProtocolMap* out, std::string* error) {
  out->clear();
  if (trim(value).empty()) return true;
  for (std::string_view entry : split_csv(value)) {
    size_t colon = entry.find(':');
    if (colon == std::string_view::npos) {
      *error = "security protocol map entry '" + std::string(entry) + "' is not of the form NAME:PROTOCOL";
      return false;
    }
    std::string_view name = trim(entry.substr(0, colon));
    std::string_view protocol_text = trim(entry.substr(colon + 1));
    if (!valid_listener_name(name)) {
      *error = "security protocol map entry '" + std::string(entry) + "' has an invalid listener name";
      return false;
    }
    SecurityProtocol protocol;
    if (!parse_security_protocol(protocol_text, &protocol)) {
      *error = "security protocol map entry '" + std::string(entry) + "': unknown security protocol '" +
               std::string(protocol_text) + "' (PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL)";
      return false;
    }
    std::string upper_name = upper(name);
    for (const auto& existing : *out) {
      if (existing.first == upper_name) {
        *error = "security protocol map names listener " + upper_name + " twice";
        return false;
      }
    }
    out->emplace_back(std::move(upper_name), protocol);
  }
  return true;
}

bool parse_listeners(std::string_view value, const SecurityProtocolMap* protocol_map,
                     std::vector<ListenerConfig>* out, std::string* error) {
  out->clear();
  if (trim(value).empty()) return true;
  for (std::string_view entry : split_csv(value)) {
    if (entry.empty()) {
      *error = "empty listener entry in '" + std::string(value) + "'";
      return false;
    }
    ListenerConfig listener;
    if (!parse_one_listener(entry, &listener, error)) return false;
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
      *error = "listener " + listener.name +
               " has no security protocol: name it after one (PLAINTEXT, SSL, SASL_PLAINTEXT, "
               "SASL_SSL) or map it in listener.security.protocol.map";
      return false;
    }
    for (const ListenerConfig& existing : *out) {
      if (existing.name == listener.name) {
        *error = "listener name " + listener.name + " is used twice in '" + std::string(value) + "'";
        return false;
      }
    }
    out->push_back(std::move(listener));
  }
  return true;
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
