#include "app/quorum_config.h"

#include <algorithm>

namespace eddy::app {
namespace {

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

bool is_controller_listener(const Config& config, const std::string& listener) {
  for (const std::string& name : config.get_list("controller.listener.names")) {
    if (upper(name) == listener) return true;
  }
  return false;
}

Status quorum_config_from(const Config& config, const std::vector<net::ListenerConfig>& listeners,
                          std::optional<QuorumConfig>* out) {
  out->reset();
  auto refused = [&config](const char* key, const std::string& why) {
    return Status::invalid_argument(config.origin(key) + ": " + key + ": " + why);
  };
  QuorumConfig q;
  if (Status s = raft::parse_quorum_voters(config.get_string("controller.quorum.voters"), &q.voters); !s.ok()) {
    return refused("controller.quorum.voters", s.message());
  }
  const std::vector<std::string> names = config.get_list("controller.listener.names");
  if (q.voters.empty()) {
    // A single node: a listener named as a controller listener would take
    // Raft traffic that never comes, and not clients.
    for (const net::ListenerConfig& l : listeners) {
      if (is_controller_listener(config, l.name)) {
        return refused("listeners", "listener " + l.name + " is a controller listener (controller.listener.names) "
                                    "but controller.quorum.voters is empty: rename it or configure the quorum");
      }
    }
    return Status();
  }
  q.node_id = config.get_int("node.id");
  auto self = std::find_if(q.voters.begin(), q.voters.end(), [&](const raft::QuorumVoter& v) { return v.id == q.node_id; });
  if (self == q.voters.end()) {
    return refused("controller.quorum.voters", "node.id " + std::to_string(q.node_id) + " is not one of the voters");
  }
  if (names.empty()) return refused("controller.listener.names", "a controller listener is needed with a quorum");
  q.listener = upper(names.front());
  auto listener = std::find_if(listeners.begin(), listeners.end(), [&](const net::ListenerConfig& l) { return l.name == q.listener; });
  if (listener == listeners.end()) {
    return refused("listeners", "the controller listener " + q.listener + " (controller.listener.names) is not "
                                "among the listeners: add e.g. " + q.listener + "://" + self->address.host + ":" +
                                std::to_string(self->address.port) + " and map it in listener.security.protocol.map");
  }
  if (listener->security_protocol != net::SecurityProtocol::kPlaintext) {
    return refused("listener.security.protocol.map", "the controller listener " + q.listener +
                                                         " must be PLAINTEXT (TLS and SASL between voters are not "
                                                         "implemented yet)");
  }
  if (listeners.size() < 2) return refused("listeners", "a listener for clients is needed besides " + q.listener);
  if (listener->port != 0 && listener->port != self->address.port) {
    return refused("controller.quorum.voters", "node " + std::to_string(q.node_id) + "'s address " +
                                                   self->address.to_string() + " does not name the port of its "
                                                   "controller listener (" + std::to_string(listener->port) + ")");
  }
  q.election_timeout_ms = config.get_int("controller.quorum.election.timeout.ms");
  q.fetch_timeout_ms = config.get_int("controller.quorum.fetch.timeout.ms");
  q.request_timeout_ms = config.get_int("controller.quorum.request.timeout.ms");
  q.bootstrap = config.get_bool("eddy.quorum.bootstrap");
  q.snapshot_bytes = config.get_long("metadata.log.max.record.bytes.between.snapshots");
  q.snapshot_interval_ms = config.get_long("metadata.log.max.snapshot.interval.ms");
  q.session_timeout_ms = config.get_int("broker.session.timeout.ms");
  *out = std::move(q);
  return Status();
}

}  // namespace eddy::app
