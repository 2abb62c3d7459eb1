// Nodes fenced through the controller log, as Kafka's controller fences a
// broker whose heartbeats stopped for broker.session.timeout.ms: every
// kWatchSessionsMs the controller leader compares its nodes' sessions
// (node_sessions.h: when each last fetched the controller log from it) with
// the fenced nodes the log carries, and proposes the differences in one
// NodeFencingRecord. Every node applies it (controller_apply.cc), and its
// Metadata then treats the fenced nodes as Kafka's brokers treat fenced
// brokers (broker/fenced_replicas.h).
//
// The sessions start when this node takes the lead (Kafka's new active
// controller starts every broker's session afresh too): a leader fences
// nobody during its first broker.session.timeout.ms. One record at a time;
// a failed one is proposed again at the next look, from the view then.
#include "app/cluster_controller.h"
#include "app/node_sessions.h"
#include "port/log.h"
#include "port/port.h"

namespace eddy::app {
namespace {

// How soon after a session timed out (or a fenced node fetched again) the
// leader proposes the change, besides the time to commit.
constexpr int64_t kWatchSessionsMs = 250;

}  // namespace

void ClusterController::watch_sessions() {
  if (failed_) return;
  reactor_->schedule_after(kWatchSessionsMs, [this] { watch_sessions(); });
  const raft::QuorumView view = quorum_->view();
  if (view.role != raft::Role::kLeader || view.failed) {
    sessions_epoch_ = -1;
    return;
  }
  const int64_t now = port::monotonic_millis();
  const int32_t timeout_ms = quorum_->config().session_timeout_ms;
  if (view.epoch != sessions_epoch_) {
    sessions_epoch_ = view.epoch;
    sessions_started_ms_ = now;
  }
  if (fencing_) return;
  SessionRules rules;
  rules.self = quorum_->config().node_id;
  rules.session_timeout_ms = timeout_ms;
  rules.sessions_new = now - sessions_started_ms_ < timeout_ms;
  protocol::NodeFencingRecord record;
  record.nodes = fencing_changes(view, broker_->fenced_nodes(), rules);
  if (record.nodes.empty()) return;
  for (const auto& n : record.nodes) {
    EDDY_LOG_INFO("controller: {} node {} ({})", n.fenced ? "fencing" : "unfencing", n.node_id,
                  n.fenced ? "no fetch of the controller log for " + std::to_string(timeout_ms) + " ms"
                           : "it fetches the controller log");
  }
  fencing_ = true;
  propose(record, [this](const Status& s) {
    fencing_ = false;
    if (!s.ok()) {
      EDDY_LOG_DEBUG("controller: node fencing not committed ({}); again in {} ms", s.to_string(), kWatchSessionsMs);
    }
  });
}

}  // namespace eddy::app
