// The states of a consumer group (Kafka's GroupMetadata states, the
// "classic" protocol):
//
//   Empty -> PreparingRebalance -> CompletingRebalance -> Stable
//
// and back to PreparingRebalance when a member joins, leaves, changes its
// protocols or misses its session timeout. Dead is a group being deleted
// (and what a group that does not exist is described as).
#pragma once

namespace eddy::group {

enum class GroupState { kEmpty, kPreparingRebalance, kCompletingRebalance, kStable, kDead };

// Kafka's name of the state (ListGroups, DescribeGroups).
const char* group_state_name(GroupState s);

}  // namespace eddy::group
