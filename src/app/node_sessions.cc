#include "app/node_sessions.h"

#include <algorithm>

namespace eddy::app {

std::vector<protocol::NodeFencingRecord::Node> fencing_changes(const raft::QuorumView& view,
                                                              const std::set<int32_t>& fenced,
                                                              const SessionRules& rules) {
  std::vector<protocol::NodeFencingRecord::Node> out;
  const auto& progress = view.voter_progress;
  auto entry = [&](int32_t id) {
    return std::find_if(progress.begin(), progress.end(), [&](const raft::QuorumView::Voter& v) { return v.id == id; });
  };
  const auto self = entry(rules.self);
  if (self == progress.end() || self->last_fetch_wall_ms < 0) return out;
  const int64_t now = self->last_fetch_wall_ms;
  for (int32_t voter : view.voters) {
    bool alive = voter == rules.self;
    if (const auto v = entry(voter); !alive && v != progress.end() && v->last_fetch_wall_ms >= 0) {
      alive = now - v->last_fetch_wall_ms < rules.session_timeout_ms;
    }
    const bool is_fenced = fenced.count(voter) > 0;
    bool ought_fenced = true;
    if (alive) {
      ought_fenced = false;
    } else if (rules.sessions_new) {
      ought_fenced = is_fenced;  // no fetch of this epoch yet: left as it is
    }
    if (ought_fenced != is_fenced) out.push_back({voter, ought_fenced, {}});
  }
  return out;
}

}  // namespace eddy::app
