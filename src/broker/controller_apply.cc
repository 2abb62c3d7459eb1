// A cluster node applying the controller log's committed records: topics
// and their partitions' replicas, topic configs, the registered nodes and
// which of them are fenced, the cluster id, the consumer groups' committed
// offsets and static members, the replicated partitions' leaders, the
// transaction coordinator's state and the offsets transactions staged (see
// controller_client.h).
#include <map>
#include <set>

#include "broker/broker.h"
#include "broker/controller_txn_state_store.h"
#include "broker/static_member_records.h"
#include "port/log.h"

namespace eddy::broker {
namespace {

ConfigMap to_config_map(const auto& configs) {
  ConfigMap out;
  for (const auto& c : configs) out[c.name] = c.value;
  return out;
}

std::vector<std::vector<int32_t>> to_replicas(const auto& partitions) {
  std::vector<std::vector<int32_t>> out;
  out.reserve(partitions.size());
  for (const auto& p : partitions) out.push_back(p.replicas);
  return out;
}

// A refusal from the topic table: a storage failure stops the node's
// applying; anything else is this node's disagreement, logged and skipped.
Status outcome(const char* what, const TopicResult& r) {
  if (r.ok()) return Status();
  if (r.code == protocol::ErrorCode::kKafkaStorageError) return Status::io_error(std::string(what) + ": " + r.message);
  EDDY_LOG_ERROR("controller log: {} skipped on this node: {}", what, r.message);
  return Status();
}

}  // namespace

Status Broker::load_cluster_brokers() { return meta_->cluster().brokers(&cluster_brokers_); }

Status Broker::load_partition_leaders() {
  std::vector<meta::PartitionLeader> held;
  if (Status s = meta_->cluster().partition_leaders(&held); !s.ok()) return s;
  partition_leaders_.clear();
  for (meta::PartitionLeader& l : held) partition_leaders_[{l.topic_id.bytes, l.partition}] = std::move(l);
  return Status();
}

Status Broker::load_fenced_nodes() {
  std::vector<int32_t> held;
  if (Status s = meta_->cluster().fenced_nodes(&held); !s.ok()) return s;
  fenced_nodes_ = std::set<int32_t>(held.begin(), held.end());
  return Status();
}

std::set<int32_t> Broker::fenced_peers() const {
  std::set<int32_t> out = fenced_nodes_;
  out.erase(options_.node_id);
  return out;
}

const meta::PartitionLeader* Broker::published_leader(const protocol::Uuid& topic_id, int32_t partition) const {
  auto it = partition_leaders_.find({topic_id.bytes, partition});
  return it == partition_leaders_.end() ? nullptr : &it->second;
}

bool Broker::has_log_cluster_id() {
  std::string id;
  return meta_->cluster().log_cluster_id(&id).ok() && !id.empty();
}

Status Broker::apply_controller_record(const ControllerRecord& record) {
  if (const auto* r = std::get_if<protocol::ClusterIdRecord>(&record)) {
    if (has_log_cluster_id()) return Status();  // the first one committed wins
    Status s = meta_->adopt_cluster_id(r->cluster_id);
    if (s.ok()) s = meta_->cluster().set_log_cluster_id(r->cluster_id);
    if (s.ok()) EDDY_LOG_INFO("cluster id {}", r->cluster_id);
    return s;
  }
  if (const auto* r = std::get_if<protocol::RegisterBrokerRecord>(&record)) {
    meta::ClusterBroker b;
    b.node_id = r->node_id;
    b.rack = r->rack;
    for (const auto& e : r->endpoints) b.endpoints.push_back({e.listener, e.host, e.port, e.security_protocol});
    Status s = meta_->cluster().register_broker(b);
    return s.ok() ? load_cluster_brokers() : s;
  }
  if (const auto* r = std::get_if<protocol::TopicRecord>(&record)) {
    return outcome("TopicRecord", topics_.apply_created(r->name, r->topic_id, to_replicas(r->partitions),
                                                        to_config_map(r->configs)));
  }
  if (const auto* r = std::get_if<protocol::RemoveTopicRecord>(&record)) {
    Topic* topic = topics_.find(r->topic_id);
    const std::string name = topic != nullptr ? topic->name : "";
    Status s = outcome("RemoveTopicRecord", topics_.apply_removed(r->topic_id));
    std::erase_if(partition_leaders_, [&](const auto& e) { return e.first.first == r->topic_id.bytes; });
    logged_offsets_.last.clear();  // the topic's offsets went with it
    // Parked fetches of the topic answer now, with UNKNOWN_TOPIC_OR_PARTITION.
    if (s.ok() && !name.empty()) wake_fetch_waiters(name, -1);
    return s;
  }
  if (const auto* r = std::get_if<protocol::PartitionsAddedRecord>(&record)) {
    return outcome("PartitionsAddedRecord",
                   topics_.apply_partitions_added(r->topic_id, r->first_partition, to_replicas(r->partitions)));
  }
  if (const auto* r = std::get_if<protocol::GroupOffsetsRecord>(&record)) {
    std::vector<meta::CommittedOffset> offsets;
    offsets.reserve(r->offsets.size());
    for (const auto& o : r->offsets) {
      offsets.push_back({o.topic, o.partition, o.offset, o.leader_epoch, o.metadata, o.commit_timestamp_ms});
    }
    Status s = meta_->offsets().commit(r->group_id, offsets);
    if (s.ok()) {
      for (const meta::CommittedOffset& o : offsets) logged_offsets_.note(r->group_id, o);
    }
    return s;
  }
  if (const auto* r = std::get_if<protocol::GroupDeletedRecord>(&record)) {
    logged_offsets_.forget(r->group_id);
    Status s = meta_->offsets().remove_group(r->group_id);
    if (s.ok()) s = meta_->pending_offsets().remove_group(r->group_id);
    if (s.ok()) s = meta_->static_members().remove_group(r->group_id);
    return s;
  }
  if (const auto* r = std::get_if<protocol::OffsetsDeletedRecord>(&record)) {
    std::vector<meta::TopicPartition> partitions;
    for (const auto& p : r->partitions) {
      partitions.push_back({p.topic, p.partition});
      logged_offsets_.forget(r->group_id, p.topic, p.partition);
    }
    return meta_->offsets().remove(r->group_id, partitions);
  }
  if (const auto* r = std::get_if<protocol::StaticMemberRecord>(&record)) {
    return meta_->static_members().save(to_static_member(*r));
  }
  if (const auto* r = std::get_if<protocol::StaticMemberRemovedRecord>(&record)) {
    return meta_->static_members().remove(r->group_id, r->group_instance_id);
  }
  if (const auto* r = std::get_if<protocol::PartitionLeadersRecord>(&record)) {
    for (const auto& p : r->partitions) {
      meta::PartitionLeader l;
      l.topic_id.bytes = p.topic_id.bytes;
      l.partition = p.partition;
      l.leader = p.leader;
      l.leader_epoch = p.leader_epoch;
      l.isr = p.isr;
      bool kept = false;
      Status s = meta_->cluster().merge_partition_leader(l, &kept);
      if (s.code() == Status::Code::kInvalidArgument) {
        EDDY_LOG_ERROR("controller log: {}; skipped", s.message());  // the same on every node
        continue;
      }
      if (!s.ok()) return s;
      if (kept) partition_leaders_[{l.topic_id.bytes, l.partition}] = std::move(l);
    }
    return Status();
  }
  if (const auto* r = std::get_if<protocol::NodeFencingRecord>(&record)) {
    for (const auto& n : r->nodes) {
      Status s = meta_->cluster().set_fenced(n.node_id, n.fenced);
      if (s.code() == Status::Code::kInvalidArgument) {
        EDDY_LOG_ERROR("controller log: {}; skipped", s.message());  // the same on every node
        continue;
      }
      if (!s.ok()) return s;
      const bool changed = n.fenced ? fenced_nodes_.insert(n.node_id).second : fenced_nodes_.erase(n.node_id) > 0;
      if (changed) {
        EDDY_LOG_INFO("node {} {} by the controller leader", n.node_id,
                      n.fenced ? "fenced (it stopped fetching the controller log; its replicas are offline)"
                               : "unfenced (it fetches the controller log again)");
      }
    }
    return Status();
  }
  if (const auto* r = std::get_if<protocol::TransactionStateRecord>(&record)) {
    if (r->removed) return meta_->transactions().remove(r->transactional_id);
    if (!txn::state_from_id(r->state).has_value() || r->transactional_id.empty() || r->timeout_ms <= 0) {
      // The same on every node: the coordinator never writes such a row.
      EDDY_LOG_ERROR("controller log: TransactionStateRecord of '{}' with state {} and timeout {}; skipped",
                     r->transactional_id, r->state, r->timeout_ms);
      return Status();
    }
    const std::set<std::string> completed(r->completed_groups.begin(), r->completed_groups.end());
    // The groups' offsets change with a completion: a later commit of a
    // value logged before must be logged again.
    for (const std::string& group : completed) logged_offsets_.forget(group);
    return txn::MetaStateStore::store(meta_, to_transaction_row(*r), completed);
  }
  if (const auto* r = std::get_if<protocol::TxnOffsetsStagedRecord>(&record)) {
    std::vector<meta::CommittedOffset> offsets;
    offsets.reserve(r->offsets.size());
    for (const auto& o : r->offsets) {
      if (o.partition < 0) {
        EDDY_LOG_ERROR("controller log: TxnOffsetsStagedRecord of group '{}' names partition {}; skipped",
                       r->group_id, o.partition);
        return Status();
      }
      offsets.push_back({o.topic, o.partition, o.offset, o.leader_epoch, o.metadata, o.commit_timestamp_ms});
    }
    return meta_->pending_offsets().stage(r->group_id, r->producer_id, offsets);
  }
  if (std::holds_alternative<protocol::ProducerIdsRecord>(record) ||
      std::holds_alternative<protocol::ForwardCursorsRecord>(record)) {
    // Producer id blocks and forward cursors are the cluster controller's
    // (app/cluster_producer_ids.cc, app/cluster_forward_cursors.cc).
    return Status::invalid_argument(std::string("controller log: ") + controller_record_name(record) +
                                    " is not the broker's to apply");
  }
  const auto& r = std::get<protocol::TopicConfigsRecord>(record);
  return outcome("TopicConfigsRecord", topics_.apply_configs(r.topic_id, to_config_map(r.configs)));
}

}  // namespace eddy::broker
