// The controller leader's sessions with the nodes (node_sessions.h): who is
// to be fenced or unfenced, from the quorum's view and the fenced nodes.
#include "app/node_sessions.h"

#include <gtest/gtest.h>

namespace eddy::app {
namespace {

using Node = protocol::NodeFencingRecord::Node;

constexpr int64_t kNow = 1'700'000'000'000;

// Node 1 leads nodes 1, 2 and 3; last_fetch: each follower's last fetch
// (ms before now; -1: none this epoch).
raft::QuorumView leader_view(int64_t ago2, int64_t ago3) {
  raft::QuorumView v;
  v.id = 1;
  v.role = raft::Role::kLeader;
  v.voters = {1, 2, 3};
  auto at = [](int64_t ago) { return ago < 0 ? int64_t{-1} : kNow - ago; };
  v.voter_progress = {{1, 10, kNow, kNow}, {2, 10, at(ago2), at(ago2)}, {3, 10, at(ago3), at(ago3)}};
  return v;
}

SessionRules rules(bool sessions_new = false) {
  SessionRules r;
  r.self = 1;
  r.session_timeout_ms = 3000;
  r.sessions_new = sessions_new;
  return r;
}

TEST(NodeSessions, ANodeSilentForTheTimeoutIsFencedAndUnfencedWhenItFetches) {
  EXPECT_TRUE(fencing_changes(leader_view(100, 2999), {}, rules()).empty());
  EXPECT_EQ(fencing_changes(leader_view(100, 3000), {}, rules()), (std::vector<Node>{{3, true, {}}}));
  EXPECT_TRUE(fencing_changes(leader_view(100, 3000), {3}, rules()).empty()) << "fenced already";
  EXPECT_EQ(fencing_changes(leader_view(100, 50), {3}, rules()), (std::vector<Node>{{3, false, {}}}));
  EXPECT_EQ(fencing_changes(leader_view(-1, 9000), {}, rules()), (std::vector<Node>{{2, true, {}}, {3, true, {}}}));
}

TEST(NodeSessions, ANewLeaderFencesNobodyButUnfencesWhoFetches) {
  // No fetch of this epoch yet: left as the log says, fenced or not.
  EXPECT_TRUE(fencing_changes(leader_view(-1, -1), {3}, rules(/*sessions_new=*/true)).empty());
  EXPECT_EQ(fencing_changes(leader_view(20, -1), {2, 3}, rules(true)), (std::vector<Node>{{2, false, {}}}));
  EXPECT_EQ(fencing_changes(leader_view(-1, -1), {3}, rules(false)), (std::vector<Node>{{2, true, {}}}));
}

TEST(NodeSessions, TheLeaderNeverFencesItselfAndUnfencesItself) {
  EXPECT_EQ(fencing_changes(leader_view(10, 10), {1}, rules()), (std::vector<Node>{{1, false, {}}}));
  raft::QuorumView follower = leader_view(10, 10);
  follower.role = raft::Role::kFollower;
  follower.voter_progress.clear();  // only a leader has it
  EXPECT_TRUE(fencing_changes(follower, {1, 2}, rules()).empty());
}

TEST(NodeSessions, AgesAreMeasuredAgainstTheLeadersOwnEntry) {
  raft::QuorumView v = leader_view(100, 100);
  for (auto& voter : v.voter_progress) voter.last_fetch_wall_ms -= 3'600'000;  // the view's clock, an hour back
  EXPECT_TRUE(fencing_changes(v, {}, rules()).empty());
}

}  // namespace
}  // namespace eddy::app
