// The broker's topics: what the meta store says exists, with each partition's
// open log. Creating, deleting, growing and reconfiguring a topic goes
// through here so that the meta store and the logs agree.
//
// Invariant: a Topic in the table has a row in the meta store and an open
// PartitionLog for each of its partitions that this node holds (every one
// on a single node; on a cluster node those whose replicas name it).
// Threading: reactor thread only.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "broker/broker_options.h"
#include "broker/topic_configs.h"
#include "meta/config_change.h"
#include "meta/meta_store.h"
#include "protocol/errors.h"
#include "protocol/wire.h"
#include "storage/log_manager.h"

namespace eddy::broker {

// What clients moved through a topic since it was opened (this process, or
// created since). Reactor thread only; plain counters, bumped by the
// Produce and Fetch handlers.
struct TopicTraffic {
  uint64_t bytes_in = 0;       // record batch bytes appended by Produce
  uint64_t messages_in = 0;    // records appended by Produce
  uint64_t bytes_out = 0;      // record batch bytes returned by Fetch
  uint64_t messages_out = 0;   // offsets Fetch advanced consumers by (next offset - fetch offset)
};

struct Topic {
  std::string name;
  protocol::Uuid id;
  int16_t replication_factor = 1;
  ConfigMap overrides;  // topic-level configs set on this topic
  EffectiveTopicConfig config;
  // One per partition: its log when this node holds a replica of it,
  // nullptr when the partition lives on other nodes of the cluster only.
  std::vector<storage::PartitionLog*> partitions;
  // Parallel to partitions: the nodes holding each one, the leader first
  // (a single node: itself).
  std::vector<std::vector<int32_t>> replicas;
  TopicTraffic traffic;

  // Partition p's log here, nullptr when p is out of range or not held here.
  storage::PartitionLog* local(int32_t p) const {
    return p >= 0 && static_cast<size_t>(p) < partitions.size() ? partitions[static_cast<size_t>(p)] : nullptr;
  }
  bool has_partition(int32_t p) const { return p >= 0 && static_cast<size_t>(p) < partitions.size(); }
};

struct TopicResult {
  protocol::ErrorCode code = protocol::ErrorCode::kNone;
  std::string message;
  bool ok() const { return code == protocol::ErrorCode::kNone; }
};

class TopicTable {
 public:
  // Called after a partition's log is opened (at load, create, add).
  using PartitionOpened = std::function<void(const Topic&, int32_t partition, storage::PartitionLog*)>;

  TopicTable(const BrokerOptions& options, meta::MetaStore* meta, storage::LogManager* logs,
             PartitionOpened on_opened);

  // Called before a partition's log is closed and removed with its topic
  // (remove, apply_removed), once the meta store no longer has the topic.
  using PartitionClosing = std::function<void(const Topic&, int32_t partition, storage::PartitionLog*)>;
  void set_partition_closing(PartitionClosing on_closing) { on_closing_ = std::move(on_closing); }
  // A node of a cluster (the broker says so before load): create() accepts
  // replication factors above 1 (the broker placed them on registered
  // nodes), and topic configs are validated for a cluster
  // (TopicConfigScope::kCluster: min.insync.replicas above 1). A single
  // node refuses both, as it always did.
  void set_cluster_node(bool cluster_node) { cluster_node_ = cluster_node; }
  bool cluster_node() const { return cluster_node_; }

  // Opens every topic of the meta store with its partitions; partition
  // directories of topics the meta store does not know are reported and left
  // alone. Fails when the meta store cannot be read or a log cannot be opened.
  Status load();

  Topic* find(const std::string& name);
  Topic* find(const protocol::Uuid& id);
  std::vector<Topic*> all();  // sorted by name

  // partitions / replication_factor of -1 mean the broker default. A single
  // node creates replication factor 1 only; a cluster node only validates
  // here (validate_only: the controller log's record creates the topic, see
  // apply_created) and takes any factor >= 1.
  TopicResult create(const std::string& name, int32_t partitions, int16_t replication_factor,
                     const ConfigMap& configs, bool validate_only, Topic** out);
  // REQUIRES: name is not the Topic's own name member (the Topic goes).
  TopicResult remove(const std::string& name);
  TopicResult add_partitions(const std::string& name, int32_t new_count, bool validate_only);
  TopicResult alter_configs(const std::string& name, const std::vector<meta::ConfigChange>& changes,
                            bool validate_only);

  // A cluster node applying the controller log's records (controller_apply.cc).
  // Each is idempotent: applied again (a crash before the applied offset
  // advanced) it leaves the same state and succeeds.
  TopicResult apply_created(const std::string& name, const protocol::Uuid& id,
                            const std::vector<std::vector<int32_t>>& replicas, const ConfigMap& configs);
  TopicResult apply_removed(const protocol::Uuid& id);
  TopicResult apply_partitions_added(const protocol::Uuid& id, int32_t first,
                                     const std::vector<std::vector<int32_t>>& replicas);
  TopicResult apply_configs(const protocol::Uuid& id, const ConfigMap& overrides);

 private:
  // Opens partitions [from, to) that this node holds (replicas set first).
  TopicResult open_partitions(Topic* topic, int32_t from, int32_t to);
  Topic* insert(const meta::TopicRecord& record);
  // Replicas of partitions [from, to) as the meta store has them ({node_id}
  // for partitions without a row: a single node's).
  Status load_replicas(Topic* topic, int32_t from, int32_t to);

  TopicConfigScope config_scope() const {
    return cluster_node_ ? TopicConfigScope::kCluster : TopicConfigScope::kSingleNode;
  }

  const BrokerOptions& options_;
  meta::MetaStore* meta_;
  storage::LogManager* logs_;
  PartitionOpened on_opened_;
  PartitionClosing on_closing_;
  bool cluster_node_ = false;
  std::map<std::string, std::unique_ptr<Topic>> topics_;
};

}  // namespace eddy::broker
