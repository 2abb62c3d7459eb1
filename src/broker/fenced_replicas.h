// broker/fenced_replicas.h — what Metadata says of the nodes the controller
// leader fenced (NodeFencingRecord: no fetch of the controller log from them
// for broker.session.timeout.ms), as Kafka's KRaftMetadataCache says of
// fenced brokers: their replicas are offline, the ISR does not name them, a
// partition whose leader is one has no leader, and the brokers list leaves
// them out. A pure function, tested on its own
// (tests/unit/broker/fenced_replicas_test.cc); metadata.cc applies it to
// every partition of a cluster node's answer, never on a single node.
#pragma once

#include <cstdint>
#include <set>

#include "protocol/generated/messages.h"

namespace eddy::broker {

// Applies fenced (never this node) to a partition's entry whose leader,
// replicas and ISR are filled: offline_replicas are the replicas on fenced
// nodes, in replica order, and the ISR loses them. A fenced leader stands
// when leader_seen_here (this node's own group names it: it may lead its
// group while the controller leader does not hear it, and clients sent to
// it reach it or ask again); one that stands is neither offline nor out of
// the ISR. Otherwise (the leader was published through the controller log,
// or guessed) a fenced leader is none: leader -1 with LEADER_NOT_AVAILABLE,
// the epoch kept, as Kafka answers a partition whose leader went away.
void describe_fenced_replicas(const std::set<int32_t>& fenced, bool leader_seen_here,
                              protocol::MetadataResponse::MetadataResponsePartition* out);

}  // namespace eddy::broker
