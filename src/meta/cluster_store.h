// What a cluster node keeps of the controller log's state besides topics
// (topic_store.h): the nodes and their client endpoints, each partition's
// replicas, and how far the log has been applied. A single node (no
// controller quorum) writes none of it: its partitions' replica is itself.
//
// The controller state machine applies committed entries in log order and
// then advances the applied offset; applying an entry twice (a crash between
// the two) must leave the same state, which the callers' records ensure
// (a node's registration replaces the previous one; replicas are set, not
// appended).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "meta/sqlite_db.h"
#include "meta/uuid.h"
#include "port/status.h"

namespace eddy::meta {

struct BrokerEndpoint {
  std::string listener;
  std::string host;
  int32_t port = 0;
  int16_t security_protocol = 0;  // Kafka's id (0 PLAINTEXT ...)

  bool operator==(const BrokerEndpoint&) const = default;
};

struct ClusterBroker {
  int32_t node_id = -1;
  std::optional<std::string> rack;
  std::vector<BrokerEndpoint> endpoints;  // sorted by listener

  bool operator==(const ClusterBroker&) const = default;
};

class ClusterStore {
 public:
  explicit ClusterStore(Database* db) : db_(db) {}

  // Replaces node's registration (endpoints sorted by listener on return).
  Status register_broker(const ClusterBroker& broker);
  // Every registered node, by node id.
  Status brokers(std::vector<ClusterBroker>* out);

  // partition -> replicas of the topic (empty: none recorded). They are
  // written with the topic (TopicStore::create, set_partition_count).
  Status replicas(const Uuid& topic_id, std::map<int32_t, std::vector<int32_t>>* out);

  // The next controller log offset to apply (0 when nothing was applied).
  Status applied_offset(int64_t* next);
  Status set_applied_offset(int64_t next);
  // The cluster id the controller log gave (empty: none applied yet).
  Status log_cluster_id(std::string* out);
  Status set_log_cluster_id(const std::string& cluster_id);
  // The end of the producer id blocks the controller log gave out: the next
  // block starts there (0 when none). It is the cluster row's next producer
  // id, which a single node's own allocator advances instead.
  Status producer_ids_end(int64_t* end);
  Status set_producer_ids_end(int64_t end);

 private:
  Database* db_;
};

}  // namespace eddy::meta
