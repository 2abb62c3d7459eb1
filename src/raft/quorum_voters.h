// raft/quorum_voters.h — Kafka's controller.quorum.voters: the Raft address
// of every voter, "1@host:port,2@host:port,3@host:port".
#pragma once

#include <string_view>
#include <vector>

#include "client/broker_address.h"
#include "port/status.h"
#include "raft/types.h"

namespace eddy::raft {

struct QuorumVoter {
  NodeId id = kNoNode;
  client::BrokerAddress address;
};

// Parses the list: ids are distinct non-negative int32s, each address a
// host:port (IPv6 in brackets), blanks around entries ignored, at least one
// voter. kInvalidArgument naming the entry otherwise. An empty text is an
// empty list (a single node).
Status parse_quorum_voters(std::string_view text, std::vector<QuorumVoter>* out);

}  // namespace eddy::raft
