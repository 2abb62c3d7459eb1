// A cluster node's controller state as a snapshot's records, and a snapshot
// loaded in place of it (see Broker::controller_state and
// load_controller_state). The state is what the controller log's records
// build: the cluster id, the registered nodes and the fenced ones, the
// topics with their replicas and configs, the groups' committed offsets and
// static members, the replicated partitions' leaders, the transactional ids
// and the offsets their transactions staged.
//
// Registrations are never removed (the voters are fixed: there are no
// membership changes), so loading registers the snapshot's nodes and keeps
// none it lacks only because none can be lacking.
#include <map>
#include <string>

#include "broker/broker.h"
#include "broker/controller_txn_state_store.h"
#include "broker/static_member_records.h"

namespace eddy::broker {
namespace {

std::string id_key(const protocol::Uuid& id) { return std::string(reinterpret_cast<const char*>(id.bytes.data()), 16); }

protocol::TopicRecord topic_state(const Topic& topic) {
  protocol::TopicRecord r;
  r.name = topic.name;
  r.topic_id = topic.id;
  for (const std::vector<int32_t>& replicas : topic.replicas) r.partitions.push_back({replicas, {}});
  for (const auto& [name, value] : topic.overrides) r.configs.push_back({name, value, {}});
  return r;
}

}  // namespace

Status Broker::controller_state(std::vector<ControllerRecord>* out) {
  out->clear();
  std::string cluster_id;
  if (Status s = meta_->cluster().log_cluster_id(&cluster_id); !s.ok()) return s;
  if (!cluster_id.empty()) out->push_back(protocol::ClusterIdRecord{cluster_id, {}});
  std::vector<meta::ClusterBroker> brokers;
  if (Status s = meta_->cluster().brokers(&brokers); !s.ok()) return s;
  for (const meta::ClusterBroker& b : brokers) {
    protocol::RegisterBrokerRecord r;
    r.node_id = b.node_id;
    r.rack = b.rack;
    for (const auto& e : b.endpoints) r.endpoints.push_back({e.listener, e.host, e.port, e.security_protocol, {}});
    out->push_back(std::move(r));
  }
  if (!fenced_nodes_.empty()) {
    protocol::NodeFencingRecord fencing;
    for (int32_t node : fenced_nodes_) fencing.nodes.push_back({node, true, {}});
    out->push_back(std::move(fencing));
  }
  for (const Topic* topic : topics_.all()) out->push_back(topic_state(*topic));
  std::vector<std::string> groups;
  if (Status s = meta_->offsets().list_groups(&groups); !s.ok()) return s;
  for (const std::string& group : groups) {
    std::vector<meta::CommittedOffset> offsets;
    if (Status s = meta_->offsets().fetch_all(group, &offsets); !s.ok()) return s;
    if (offsets.empty()) continue;
    protocol::GroupOffsetsRecord r;
    r.group_id = group;
    for (const meta::CommittedOffset& o : offsets) {
      r.offsets.push_back({o.topic, o.partition, o.offset, o.leader_epoch, o.metadata, o.commit_timestamp_ms, {}});
    }
    out->push_back(std::move(r));
  }
  std::vector<meta::StaticMember> members;
  if (Status s = meta_->static_members().load_all(&members); !s.ok()) return s;
  for (const meta::StaticMember& m : members) out->push_back(to_static_member_record(m));
  if (!partition_leaders_.empty()) {
    protocol::PartitionLeadersRecord leaders;
    for (const auto& [key, l] : partition_leaders_) {
      protocol::PartitionLeadersRecord::PartitionLeader p;
      p.topic_id.bytes = l.topic_id.bytes;
      p.partition = l.partition;
      p.leader = l.leader;
      p.leader_epoch = l.leader_epoch;
      p.isr = l.isr;
      leaders.partitions.push_back(std::move(p));
    }
    out->push_back(std::move(leaders));
  }
  std::vector<txn::TransactionMetadata> transactions;
  if (Status s = txn::MetaStateStore(meta_).load_all(&transactions); !s.ok()) return s;
  for (const txn::TransactionMetadata& m : transactions) out->push_back(to_transaction_state_record(m, {}));
  std::vector<std::pair<std::string, int64_t>> stagers;
  if (Status s = meta_->pending_offsets().stagers(&stagers); !s.ok()) return s;
  for (const auto& [group, producer_id] : stagers) {
    std::vector<meta::CommittedOffset> staged;
    if (Status s = meta_->pending_offsets().staged(group, producer_id, &staged); !s.ok()) return s;
    protocol::TxnOffsetsStagedRecord r;
    r.group_id = group;
    r.producer_id = producer_id;
    for (const meta::CommittedOffset& o : staged) {
      r.offsets.push_back({o.topic, o.partition, o.offset, o.leader_epoch, o.metadata, o.commit_timestamp_ms, {}});
    }
    out->push_back(std::move(r));
  }
  return Status();
}

Status Broker::load_controller_state(const std::vector<ControllerRecord>& records) {
  std::map<std::string, const protocol::TopicRecord*> topics;  // by id
  for (const ControllerRecord& record : records) {
    if (const auto* t = std::get_if<protocol::TopicRecord>(&record)) topics[id_key(t->topic_id)] = t;
  }
  // Topics the snapshot lacks were removed since: first, so that a name
  // taken again by another topic is free.
  std::vector<protocol::Uuid> gone;
  for (const Topic* topic : topics_.all()) {
    if (topics.count(id_key(topic->id)) == 0) gone.push_back(topic->id);
  }
  for (const protocol::Uuid& id : gone) {
    if (Status s = apply_controller_record(protocol::RemoveTopicRecord{id, {}}); !s.ok()) return s;
  }
  // Offsets: the snapshot's replace every group's.
  std::vector<std::string> groups;
  if (Status s = meta_->offsets().list_groups(&groups); !s.ok()) return s;
  for (const std::string& group : groups) {
    if (Status s = meta_->offsets().remove_group(group); !s.ok()) return s;
  }
  logged_offsets_.last.clear();
  // Static members, partition leaders and fenced nodes: the snapshot's
  // replace all.
  if (Status s = meta_->static_members().remove_all(); !s.ok()) return s;
  if (Status s = meta_->cluster().remove_all_partition_leaders(); !s.ok()) return s;
  partition_leaders_.clear();
  if (Status s = meta_->cluster().unfence_all(); !s.ok()) return s;
  fenced_nodes_.clear();
  // Transactional ids and staged offsets: the snapshot's replace all.
  if (Status s = meta_->transactions().remove_all(); !s.ok()) return s;
  if (Status s = meta_->pending_offsets().remove_all(); !s.ok()) return s;
  for (const ControllerRecord& record : records) {
    const auto* t = std::get_if<protocol::TopicRecord>(&record);
    const Topic* here = t != nullptr ? topics_.find(t->topic_id) : nullptr;
    if (here == nullptr) {
      if (Status s = apply_controller_record(record); !s.ok()) return s;
      continue;
    }
    // A topic held already: the partitions added and the configs set since.
    const size_t held = here->replicas.size();
    if (t->partitions.size() > held) {
      protocol::PartitionsAddedRecord added;
      added.topic_id = t->topic_id;
      added.first_partition = static_cast<int32_t>(held);  // a partition count, <= INT32_MAX
      for (size_t p = held; p < t->partitions.size(); ++p) added.partitions.push_back({t->partitions[p].replicas, {}});
      if (Status s = apply_controller_record(added); !s.ok()) return s;
    }
    protocol::TopicConfigsRecord configs;
    configs.topic_id = t->topic_id;
    for (const auto& c : t->configs) configs.configs.push_back({c.name, c.value, {}});
    if (Status s = apply_controller_record(configs); !s.ok()) return s;
  }
  return Status();
}

}  // namespace eddy::broker
