// Replicated partitions' leaders through the controller log, as Kafka's
// controller carries each partition's leader, epoch and ISR
// (PartitionChangeRecord): every kPublishLeadersMs this node looks at the
// groups it leads (PartitionGroups::led_here) and proposes, in one
// PartitionLeadersRecord, those whose epoch or in-sync replicas differ from
// what the log carries (Broker::published_leader). Every node applies it
// (controller_apply.cc), so that Metadata names the current leader and ISR
// of a partition it holds no replica of, and a follower names the leader's
// ISR rather than every replica.
//
// One record at a time; a failed one is simply proposed again at the next
// look, from the groups' state then.
#include "app/cluster_controller.h"
#include "port/log.h"

namespace eddy::app {
namespace {

// How soon after a failover (or an ISR change) the other nodes' Metadata
// names it, besides the time to commit.
constexpr int64_t kPublishLeadersMs = 250;

}  // namespace

void ClusterController::publish_partition_leaders() {
  if (failed_ || groups_ == nullptr) return;
  reactor_->schedule_after(kPublishLeadersMs, [this] { publish_partition_leaders(); });
  if (publishing_leaders_ || leader_id() < 0) return;
  std::vector<PartitionGroups::Led> led;
  groups_->led_here(&led);
  protocol::PartitionLeadersRecord record;
  const int32_t self = quorum_->config().node_id;
  for (PartitionGroups::Led& l : led) {
    const meta::PartitionLeader* published = broker_->published_leader(l.topic_id, l.partition);
    if (published != nullptr && published->leader == self && published->leader_epoch == l.leader_epoch &&
        published->isr == l.isr) {
      continue;
    }
    protocol::PartitionLeadersRecord::PartitionLeader p;
    p.topic_id = l.topic_id;
    p.partition = l.partition;
    p.leader = self;
    p.leader_epoch = l.leader_epoch;
    p.isr = std::move(l.isr);
    record.partitions.push_back(std::move(p));
  }
  if (record.partitions.empty()) return;
  publishing_leaders_ = true;
  const size_t count = record.partitions.size();
  propose_from_this_node(record, [this, count](protocol::ErrorCode code) {
    publishing_leaders_ = false;
    if (code != protocol::ErrorCode::kNone) {
      EDDY_LOG_DEBUG("partition leaders: {} not published through the controller log ({}); again in {} ms", count,
                     protocol::error_name(code), kPublishLeadersMs);
    }
  });
}

}  // namespace eddy::app
