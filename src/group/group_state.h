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

// Whether a group may go from `from` to `to`: Kafka's GroupMetadata
// validPreviousStates, which Redpanda's group keeps too.
//
//   PreparingRebalance  <- Empty, Stable, CompletingRebalance
//   CompletingRebalance <- PreparingRebalance
//   Stable              <- CompletingRebalance
//   Empty               <- PreparingRebalance
//   Dead                <- every state
//
// A group loaded from the meta store is created in its stored state; that
// is no transition.
bool transition_allowed(GroupState from, GroupState to);

// An illegal transition is a programming error. Checked builds (Debug,
// sanitizers, fuzzing: EDDY_CHECKED, port/check.h) abort on one; release
// builds log it as an error and make the transition anyway (the code that
// asked relies on the state it asked for).
#if EDDY_CHECKED
inline constexpr bool kAbortOnIllegalTransition = true;
#else
inline constexpr bool kAbortOnIllegalTransition = false;
#endif

}  // namespace eddy::group
