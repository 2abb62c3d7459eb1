// PartitionGroups, the follower's side of fetching: the fetches of all the
// groups that follow one leader node travel in one Fetch at a time
// (PeerFetchers), which that leader may hold until it has something to
// answer (partition_group_fetches.cc).
//
// A group's fetch waits for the next such Fetch when its last answer said
// nothing new (it has nothing to report either); one that reports news
// (entries it just made durable, which the leader's high watermark waits
// for) while a Fetch is in flight goes at once on the PeerSenders
// connection, which the leader answers without holding.
#include "app/partition_groups.h"

namespace eddy::app {

void PartitionGroups::route_fetch(Group& g, raft::Message fetch) {
  const int32_t peer = fetch.to;
  const bool in_flight = fetching_[peer];
  const bool quiet = g.last_fetch_quiet && g.quiet_leader == peer;
  if (in_flight && !quiet) {
    senders_->send(g.address, std::move(fetch));
    return;
  }
  // One pending fetch per group: a newer one (a resend, another leader)
  // replaces the older.
  pending_fetches_[Key{g.topic, g.partition}] = raft::GroupFetch{g.address, std::move(fetch)};
  if (!in_flight) fetch_pending(peer);
}

void PartitionGroups::fetch_pending(int32_t peer) {
  if (fetching_[peer] || !started_ || stopped_) return;
  std::vector<raft::GroupFetch> fetches;
  for (auto it = pending_fetches_.begin(); it != pending_fetches_.end();) {
    if (it->second.request.to == peer) {
      fetches.push_back(std::move(it->second));
      it = pending_fetches_.erase(it);
    } else {
      ++it;
    }
  }
  if (fetches.empty()) return;
  // Not a peer: dropped, and the cores resend to whoever leads by then.
  if (fetchers_->fetch(peer, std::move(fetches), static_cast<int32_t>(fetch_max_wait_ms_))) fetching_[peer] = true;
}

void PartitionGroups::on_fetched(int32_t peer, std::vector<raft::GroupFetch> fetches,
                                 std::vector<std::optional<raft::Payload>> answers) {
  // Every answer first, so that the groups' next fetches (sent at once
  // after an answer) travel together in the next Fetch.
  for (size_t i = 0; i < fetches.size() && i < answers.size(); ++i) {
    if (answers[i] && !stopped_) on_answer(fetches[i].group, fetches[i].request, std::move(*answers[i]));
  }
  fetching_[peer] = false;
  fetch_pending(peer);
}

}  // namespace eddy::app
