// What a cluster node keeps of the controller log's state besides topics
// (topic_store.h): the nodes and their client endpoints, which of them are
// fenced, each partition's replicas, and how far the log has been applied. A single node (no
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

// A store-and-forward link's cursor on one partition as the controller log
// carries it (ForwardCursorsRecord; fields as meta::ForwardCursor's).
struct ClusterForwardCursor {
  std::string link;
  Uuid topic_id;
  std::string topic;
  int32_t partition = 0;
  int64_t next_offset = 0;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t next_sequence = 0;
  int64_t remote_next_offset = -1;
  int64_t dropped_messages = 0;

  bool operator==(const ClusterForwardCursor&) const = default;
};

// A replicated partition's leader as the controller log carries it
// (PartitionLeadersRecord).
struct PartitionLeader {
  Uuid topic_id;
  int32_t partition = 0;
  int32_t leader = -1;
  int32_t leader_epoch = -1;
  std::vector<int32_t> isr;

  bool operator==(const PartitionLeader&) const = default;
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

  // Keeps cursor unless the one held for its (link, topic id, partition)
  // is further (a higher next_offset): the controller log's order decides
  // between equals, the same on every node. *kept: whether it was. A topic
  // id eddy.db does not hold (the topic was removed) keeps nothing.
  Status merge_forward_cursor(const ClusterForwardCursor& cursor, bool* kept);
  // Every cursor held, by link, topic id and partition.
  Status forward_cursors(std::vector<ClusterForwardCursor>* out);
  Status remove_all_forward_cursors();

  // Keeps leader unless the one held for its partition has a higher epoch
  // (the log's order decides between equals). *kept: whether it was. A
  // topic id eddy.db does not hold keeps nothing.
  Status merge_partition_leader(const PartitionLeader& leader, bool* kept);
  Status partition_leaders(std::vector<PartitionLeader>* out);
  Status remove_all_partition_leaders();

  // The nodes the controller leader fenced (NodeFencingRecord): fenced adds
  // node_id, !fenced removes it (either way, whatever was held).
  // kInvalidArgument for a negative node id.
  Status set_fenced(int32_t node_id, bool fenced);
  // Every fenced node, ascending.
  Status fenced_nodes(std::vector<int32_t>* out);
  Status unfence_all();

 private:
  Database* db_;
};

}  // namespace eddy::meta
