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

}  // namespace eddy::group
