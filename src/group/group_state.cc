#include "group/group_state.h"

namespace eddy::group {

const char* group_state_name(GroupState s) {
  switch (s) {
    case GroupState::kEmpty: return "Empty";
    case GroupState::kPreparingRebalance: return "PreparingRebalance";
    case GroupState::kCompletingRebalance: return "CompletingRebalance";
    case GroupState::kStable: return "Stable";
    case GroupState::kDead: return "Dead";
  }
  return "Dead";
}

bool transition_allowed(GroupState from, GroupState to) {
  switch (to) {
    case GroupState::kPreparingRebalance:
      return from == GroupState::kEmpty || from == GroupState::kStable || from == GroupState::kCompletingRebalance;
    case GroupState::kCompletingRebalance: return from == GroupState::kPreparingRebalance;
    case GroupState::kStable: return from == GroupState::kCompletingRebalance;
    case GroupState::kEmpty: return from == GroupState::kPreparingRebalance;
    case GroupState::kDead: return true;
  }
  return false;
}

}  // namespace eddy::group
