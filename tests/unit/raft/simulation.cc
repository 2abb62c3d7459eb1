#include "simulation.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace eddy::raft::sim {
namespace {

// A snapshot's bytes: per entry its epoch, kind, offsets, payload size,
// payload. entries has the entry covering each offset (an entry of n
// offsets n times in a row); decode_entries gives that back.
std::string encode_entries(const std::vector<Entry>& entries) {
  std::string out;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (i > 0 && e == entries[i - 1]) continue;  // the same entry's next offset
    const uint32_t head[4] = {static_cast<uint32_t>(e.epoch), static_cast<uint32_t>(e.kind),
                              static_cast<uint32_t>(e.offsets), static_cast<uint32_t>(e.payload.size())};
    out.append(reinterpret_cast<const char*>(head), sizeof head);
    out += e.payload;
  }
  return out;
}

bool decode_entries(const std::string& bytes, std::vector<Entry>* out) {
  out->clear();
  size_t at = 0;
  while (at < bytes.size()) {
    uint32_t head[4];
    if (bytes.size() - at < sizeof head) return false;
    std::memcpy(head, bytes.data() + at, sizeof head);
    at += sizeof head;
    if (bytes.size() - at < head[3]) return false;
    const Entry e{static_cast<Epoch>(head[0]), static_cast<EntryKind>(head[1]), bytes.substr(at, head[3]),
                  static_cast<int32_t>(head[2])};
    if (e.offsets < 1 || e.offsets > 64) return false;
    out->insert(out->end(), static_cast<size_t>(e.offsets), e);
    at += head[3];
  }
  return true;
}

}  // namespace

Cluster::Cluster(int nodes, uint64_t seed) : rng_(seed), async_flush_(seed % 2 == 1) {
  for (int i = 1; i <= nodes; ++i) voters_.push_back(i);
  for (NodeId id : voters_) {
    auto node = std::make_unique<Node>();
    node->id = id;
    node->log.set_async_flush(async_flush_);
    nodes_.push_back(std::move(node));
  }
  for (auto& node : nodes_) restart(*node, false);
}

ReplicaOptions Cluster::options_for(NodeId id, bool bootstrap) const {
  ReplicaOptions o;
  o.id = id;
  o.voters = voters_;
  o.election_timeout_ms = 150;
  o.fetch_timeout_ms = 300;
  o.fetch_retry_ms = 30;
  o.max_fetch_entries = 16;
  o.max_snapshot_chunk_bytes = 97;  // snapshots travel in several chunks
  o.bootstrap = bootstrap;
  return o;
}

void Cluster::fail(std::string what) {
  if (failure_.empty()) failure_ = "t=" + std::to_string(now_) + "ms: " + std::move(what);
}

void Cluster::trace(const std::string& what) const {
  if (trace_) std::fprintf(stderr, "t=%lld %s | %s\n", static_cast<long long>(now_), what.c_str(), describe().c_str());
}

void Cluster::crash(Node& node) {
  trace("crash " + std::to_string(node.id));
  node.replica.reset();
  node.paused = false;
  node.log.crash();  // a power cut: the unflushed suffix is gone
  ++node.incarnation;
}

void Cluster::restart(Node& node, bool wipe) {
  if (node.replica) crash(node);
  trace(std::string(wipe ? "wipe and restart " : "restart ") + std::to_string(node.id));
  if (wipe) {
    node.log = MemoryLog();
    node.log.set_async_flush(async_flush_);
    node.snapshots = MemorySnapshotStore();
    seen_snapshot_.erase(node.id);
    node.store.wipe();
    node.wiped = true;
  }
  // bootstrap only at the group's first start; any later start that finds
  // no quorum state is a wiped disk.
  Status s = Replica::open(options_for(node.id, now_ == 0), &node.log, &node.snapshots, &node.store,
                           [this](uint64_t bound) { return rng_() % bound; }, now_, &node.replica);
  if (!s.ok()) fail("open " + std::to_string(node.id) + ": " + s.to_string());
  node.last_high_watermark = 0;
}

bool Cluster::link_up(NodeId a, NodeId b) const {
  auto ga = partition_.find(a);
  auto gb = partition_.find(b);
  int x = ga == partition_.end() ? 0 : ga->second;
  int y = gb == partition_.end() ? 0 : gb->second;
  return x == y;
}

Node* Cluster::leader_node() {
  Node* best = nullptr;
  for (auto& n : nodes_) {
    if (n->replica && !n->paused && n->replica->role() == Role::kLeader &&
        (best == nullptr || n->replica->epoch() > best->replica->epoch())) {
      best = n.get();
    }
  }
  return best;
}

void Cluster::deliver_due() {
  std::vector<InFlight> due;
  std::vector<InFlight> later;
  for (InFlight& m : network_) {
    Node& to = *nodes_[m.message.to - 1];
    if (m.deliver_at <= now_ && !to.paused) {
      due.push_back(std::move(m));
    } else {
      later.push_back(std::move(m));
    }
  }
  network_ = std::move(later);
  std::sort(due.begin(), due.end(),
            [](const InFlight& a, const InFlight& b) { return std::tie(a.deliver_at, a.seq) < std::tie(b.deliver_at, b.seq); });
  for (InFlight& m : due) {
    Node& from = *nodes_[m.message.from - 1];
    Node& to = *nodes_[m.message.to - 1];
    // A restarted sender's old connections are gone, and so is a down node.
    if (from.incarnation != m.from_incarnation || !to.replica || !link_up(from.id, to.id)) continue;
    Status s = to.replica->handle(m.message, now_);
    if (!s.ok()) fail("node " + std::to_string(to.id) + " handling a message: " + s.to_string());
  }
}

void Cluster::poll_all() {
  for (auto& n : nodes_) {
    if (!n->replica || n->paused) continue;
    Status s = n->replica->poll(now_);
    if (!s.ok()) fail("node " + std::to_string(n->id) + " poll: " + s.to_string());
    if (n->wiped && !n->replica->recovering()) n->wiped = false;
    maybe_snapshot(*n);
    for (Message& m : n->replica->take_outbox()) {
      if (!link_up(m.from, m.to) || std::uniform_real_distribution<>(0, 1)(rng_) < faults_.drop) continue;
      int copies = std::uniform_real_distribution<>(0, 1)(rng_) < faults_.duplicate ? 2 : 1;
      for (int c = 0; c < copies; ++c) {
        int64_t delay = 1 + static_cast<int64_t>(rng_() % static_cast<uint64_t>(faults_.max_delay_ms));
        network_.push_back(InFlight{now_ + delay, seq_++, n->incarnation, m});
      }
    }
  }
}

void Cluster::client_appends() {
  if (!clients_on_ || rng_() % 10 >= 3) return;
  Node* leader = leader_node();
  if (leader == nullptr) return;
  Append a{leader->id, leader->replica->epoch(), 0, "v" + std::to_string(next_payload_++)};
  // Entries of 1 to 3 offsets, as record batches of a partition group's log.
  const auto offsets = static_cast<int32_t>(1 + rng_() % 3);
  Status s = leader->replica->append(a.payload, &a.offset, offsets);
  if (!s.ok()) {
    fail("append on leader " + std::to_string(leader->id) + ": " + s.to_string());
    return;
  }
  pending_.push_back(a);
}

void Cluster::collect_acks() {
  std::vector<Append> still;
  for (Append& a : pending_) {
    Node& n = *nodes_[a.leader - 1];
    if (!n.replica || n.replica->epoch() != a.epoch || n.replica->role() != Role::kLeader) continue;  // unknown
    if (n.replica->high_watermark() > a.offset) {
      if (n.log.end_offset() <= a.offset || entry_at(n, a.offset).payload != a.payload) {
        fail("leader " + std::to_string(a.leader) + " acked offset " + std::to_string(a.offset) + " with another entry");
      }
      acked_.push_back(a);
    } else {
      still.push_back(a);
    }
  }
  pending_ = std::move(still);
}

void Cluster::random_fault() {
  if (rng_() % 30 != 0) return;  // a fault every 150 ms on average
  Node& victim = *nodes_[rng_() % nodes_.size()];
  bool someone_wiped = std::any_of(nodes_.begin(), nodes_.end(), [](const auto& n) { return n->wiped; });
  switch (rng_() % 8) {
    case 0: if (victim.replica) crash(victim); break;
    case 1:
    case 2:
      for (auto& n : nodes_) {
        if (!n->replica) { restart(*n, false); break; }
      }
      break;
    case 3:
      // At most one disk lost at a time: two would lose committed data in
      // any majority system.
      if (!someone_wiped) restart(victim, true);
      break;
    case 4:
      partition_.clear();
      for (NodeId id : voters_) partition_[id] = static_cast<int>(rng_() % 2);
      trace("partition");
      break;
    case 5:
      if (Node* leader = leader_node()) {
        partition_.clear();
        partition_[leader->id] = 1;
        trace("isolate leader " + std::to_string(leader->id));
      }
      break;
    case 6: partition_.clear(); trace("heal network"); break;
    case 7:
      if (victim.replica) {
        victim.paused = !victim.paused;
        trace((victim.paused ? "pause " : "resume ") + std::to_string(victim.id));
      }
      break;
  }
}

std::string Cluster::check() {
  for (auto& n : nodes_) {
    if (!n->replica) continue;
    Replica& r = *n->replica;
    if (r.role() == Role::kLeader) {
      auto [it, fresh] = leaders_.emplace(r.epoch(), n->id);
      if (!fresh && it->second != n->id) {
        fail("two leaders in epoch " + std::to_string(r.epoch()) + ": " + std::to_string(it->second) + " and " +
             std::to_string(n->id));
      }
    }
    Offset hw = r.high_watermark();
    if (hw < n->last_high_watermark) fail("node " + std::to_string(n->id) + "'s high watermark went backwards");
    n->last_high_watermark = hw;
    if (hw > n->log.end_offset()) fail("node " + std::to_string(n->id) + "'s high watermark is past its log end");
    if (hw < n->log.start().end_offset) fail("node " + std::to_string(n->id) + "'s log starts past its high watermark");
    // Entries below a node's HW must be the committed ones (its snapshot's
    // too); the first node to reach an offset defines the committed entry
    // there.
    const Offset start = n->log.start().end_offset;
    Offset from = start;
    std::vector<Entry> snapshot;
    auto seen = seen_snapshot_.find(n->id);
    if (!n->snapshots.latest().empty() && (seen == seen_snapshot_.end() || seen->second != n->snapshots.latest())) {
      // A new snapshot: its entries are checked once.
      if (n->snapshots.latest() != own_snapshot_[n->id]) ++snapshots_installed_;
      snapshot = snapshot_entries(*n);
      from = 0;
    }
    seen_snapshot_[n->id] = n->snapshots.latest();
    for (Offset i = from; i < std::min(hw, n->log.end_offset()); ++i) {
      const Entry e = i < start ? snapshot.at(static_cast<size_t>(i)) : n->log.entry_at(i);
      if (i < static_cast<Offset>(committed_.size())) {
        if (!(committed_[static_cast<size_t>(i)] == e)) {
          fail("node " + std::to_string(n->id) + " has another entry than the committed one at offset " +
               std::to_string(i));
        }
        continue;
      }
      // An entry covers several offsets: its payload counts once, at its first.
      const bool first_offset = committed_.empty() || !(committed_.back() == e);
      if (first_offset && e.kind == EntryKind::kData && !committed_payloads_.insert(e.payload).second) {
        fail("entry " + e.payload + " committed twice");
      }
      committed_.push_back(e);
    }
  }
  // Durability: a majority still holds every committed entry (a wiped node
  // that has not caught up yet counts as holding it).
  std::vector<Offset> held;
  for (auto& n : nodes_) {
    if (n->wiped) {
      held.push_back(INT64_MAX);
      continue;
    }
    // The snapshot holds what is below the log start (checked above).
    Offset p = std::min<Offset>(n->log.start().end_offset, static_cast<Offset>(committed_.size()));
    Offset limit = std::min<Offset>(n->log.durable_offset(), static_cast<Offset>(committed_.size()));
    while (p < limit && entry_at(*n, p) == committed_[static_cast<size_t>(p)]) ++p;
    held.push_back(p);
  }
  std::sort(held.rbegin(), held.rend());
  if (held[majority() - 1] < static_cast<Offset>(committed_.size())) {
    fail("committed offset " + std::to_string(held[majority() - 1]) + " is no longer held by a majority: " + describe());
  }
  return failure_;
}

void Cluster::complete_flushes() {
  if (!async_flush_) return;
  for (auto& n : nodes_) {
    if (n->replica && !n->paused && rng_() % 2 == 0) n->log.complete_flush();
  }
}

std::string Cluster::step() {
  now_ += step_ms_;
  complete_flushes();
  deliver_due();
  poll_all();
  client_appends();
  collect_acks();
  return check();
}

void Cluster::run_chaos(int64_t duration_ms) {
  int64_t end = now_ + duration_ms;
  while (now_ < end && failure_.empty()) {
    random_fault();
    step();
  }
}

std::string Cluster::heal_and_settle(int64_t limit_ms) {
  partition_.clear();
  faults_ = Faults{0.01, 0.01, 20};
  for (auto& n : nodes_) {
    n->paused = false;
    if (!n->replica) restart(*n, false);
  }
  clients_on_ = false;
  int64_t healed_at = now_;
  while (failure_.empty()) {
    if (now_ - healed_at > limit_ms) {
      fail("no settled leader " + std::to_string(limit_ms) + " ms after healing: " + describe());
      break;
    }
    step();
    Node* leader = leader_node();
    if (leader == nullptr || !pending_.empty()) continue;
    Offset end = leader->log.end_offset();
    bool settled = leader->replica->high_watermark() == end;
    for (auto& n : nodes_) {
      settled = settled && n->log.end_offset() == end && n->replica->high_watermark() == end && !n->wiped;
    }
    if (settled) break;
  }
  if (!failure_.empty()) return failure_;
  for (const Append& a : acked_) {
    if (a.offset >= static_cast<Offset>(committed_.size()) ||
        committed_[static_cast<size_t>(a.offset)].payload != a.payload) {
      fail("acked " + a.payload + " at offset " + std::to_string(a.offset) + " is not committed there");
    }
  }
  return failure_;
}

std::vector<Entry> Cluster::snapshot_entries(const Node& node) const {
  std::vector<Entry> entries;
  if (!decode_entries(node.snapshots.bytes(), &entries) ||
      static_cast<Offset>(entries.size()) != node.snapshots.latest().end_offset) {
    const_cast<Cluster*>(this)->fail("node " + std::to_string(node.id) + "'s snapshot does not decode");
    entries.clear();
  }
  return entries;
}

Entry Cluster::entry_at(const Node& node, Offset offset) const {
  const Offset start = node.log.start().end_offset;
  if (offset >= start) return node.log.entry_at(offset);
  std::vector<Entry> entries = snapshot_entries(node);
  return offset < static_cast<Offset>(entries.size()) ? entries[static_cast<size_t>(offset)] : Entry{};
}

void Cluster::maybe_snapshot(Node& node) {
  // On average every 400 ms per node, once 5 entries are committed past the start.
  if (rng_() % 80 != 0) return;
  const Offset hw = node.replica->high_watermark();
  const SnapshotId start = node.log.start();
  if (hw < start.end_offset + 5 || hw > node.log.end_offset()) return;
  std::vector<Entry> entries = start.empty() ? std::vector<Entry>() : snapshot_entries(node);
  for (Offset i = start.end_offset; i < hw; ++i) entries.push_back(entry_at(node, i));
  const SnapshotId id{hw, node.log.epoch_at(hw - 1)};
  Status s = node.replica->store_snapshot(id, encode_entries(entries));
  if (!s.ok()) fail("node " + std::to_string(node.id) + " snapshot at " + std::to_string(hw) + ": " + s.to_string());
  ++snapshots_taken_;
  own_snapshot_[node.id] = id;
  trace("snapshot " + std::to_string(node.id) + " at " + std::to_string(hw));
}

std::string Cluster::describe() const {
  std::string out;
  for (const auto& n : nodes_) {
    out += "[node " + std::to_string(n->id);
    if (!n->replica) {
      out += " down";
    } else {
      out += std::string(" ") + role_name(n->replica->role()) + " epoch " + std::to_string(n->replica->epoch()) +
             " hw " + std::to_string(n->replica->high_watermark());
      if (n->replica->recovering()) out += " recovering";
    }
    out += " end " + std::to_string(n->log.end_offset()) + " durable " + std::to_string(n->log.durable_offset()) + "] ";
  }
  return out;
}

}  // namespace eddy::raft::sim
