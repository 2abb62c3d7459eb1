// The links' door to the local broker. Link threads never touch broker
// state: each call here runs a closure on the reactor thread (the owner of
// the topic table and the logs) and waits for it, or posts one.
//
// The reactor side also keeps every link's cursor per partition (loaded from
// forward.db at start, updated after each save) and pins each forwarded
// partition's log at the smallest cursor of the links forwarding it, so that
// retention never silently drops what a link has not delivered (what happens
// when the budget is full is the topic's eddy.full.policy).
//
// Threading: methods marked (reactor) run on the reactor thread; the others
// are for link threads and return false once stop() was called (a closure
// still queued then runs harmlessly later or never).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "broker/topic_table.h"
#include "meta/cluster_store.h"
#include "meta/forward_progress.h"
#include "port/executor.h"
#include "port/status.h"
#include "protocol/wire.h"
#include "storage/partition_log.h"

namespace eddy::forward {

class TopicMapping;

using TopicPartitionKey = std::pair<std::string, int32_t>;

struct LocalPartition {
  std::string topic;
  protocol::Uuid topic_id;  // tells a re-created topic from the old one
  int32_t partition = 0;
  int64_t log_start_offset = 0;
  // What may be forwarded: below the last stable offset (durable data in
  // disk mode, and no transaction still open).
  int64_t high_watermark = 0;
  int64_t log_end_offset = 0;
  // Bytes of batches from the link's cursor to the log end; only measured
  // when list() is asked to (it walks the segment index).
  uint64_t backlog_bytes = 0;
  uint64_t rejected_appends = 0;
  // In a cluster, a replicated partition is forwarded by its group's leader
  // only (README.md, "In a cluster"): false on the other nodes, which list
  // it so that the link lets go of it without forgetting its cursor.
  bool forwarded_here = true;
  // The replica group's leader epoch this node forwards it in (-1: a
  // partition of one replica). A new epoch means another node may have
  // forwarded it meanwhile: the link takes the partition up again from the
  // cursor below.
  int32_t leader_epoch = -1;
  // The link's cursor as the reactor knows it: the saved one, or where the
  // link starts on a partition it never forwarded (the log start when the
  // partition was first seen).
  meta::ForwardCursor cursor;
};

struct LocalRead {
  bool exists = true;  // false: the topic or partition is gone
  Status status;
  std::vector<uint8_t> bytes;  // whole batches, below the last stable offset
  int64_t next_offset = 0;
  // The aborted transactions overlapping [offset read, next_offset): their
  // batches are not forwarded. Empty (no allocation) in a partition that
  // never held one.
  std::vector<storage::AbortedTransaction> aborted;
  int64_t log_start_offset = 0;
};

// How the store sees a cluster (none on a single node). Both run on the
// reactor.
struct ClusterForwarding {
  struct Role {
    bool here = true;         // this node forwards the partition now
    int32_t leader_epoch = -1;
  };
  // A partition of several replicas, whose log this is, as its replica
  // group stands here (not here while the group is not running yet).
  std::function<Role(const storage::PartitionLog*)> role;
  // Cursors a link saved, to be carried to every node (ForwardCursorsRecord).
  std::function<void(std::vector<meta::ClusterForwardCursor>)> share;
};

class LocalStore {
 public:
  // REQUIRES: executor, topics and progress outlive the store.
  LocalStore(port::Executor& executor, broker::TopicTable& topics, meta::ForwardProgress* progress);

  // (reactor) Loads the saved cursors and producers of these links; fails
  // when forward.db does. Call before the broker opens its topics.
  Status load(const std::vector<std::pair<std::string, const TopicMapping*>>& links);
  // (reactor) A partition was opened: pins it for the links forwarding it.
  // after_start: a new topic or partition (a fresh log) rather than one
  // loaded at start.
  void on_partition_opened(const std::string& topic, int32_t partition, storage::PartitionLog* log, bool after_start);

  // (reactor) A cluster node: which partitions this node forwards, and where
  // saved cursors go. REQUIRES: before the links start.
  void set_cluster(ClusterForwarding cluster) { cluster_ = std::move(cluster); }
  // (reactor) A cursor the controller log carries (another node's, or this
  // one's own): taken as the link's cursor here when it is further than the
  // one held, so that this node, once it leads the partition, continues from
  // it (and its pin follows the cluster's progress meanwhile).
  void apply_shared_cursor(const meta::ClusterForwardCursor& cursor);

  // Link threads.
  // The partitions link forwards, sorted; with measure_bytes, their backlog
  // in bytes from acked (the link's acknowledged offsets; missing ones: the
  // cursor here).
  bool list(const std::string& link, const std::map<TopicPartitionKey, int64_t>& acked, bool measure_bytes,
            std::vector<LocalPartition>* out);
  bool read(const std::string& topic, int32_t partition, int64_t offset, size_t max_bytes, LocalRead* out);
  // The link saved these cursors (in forward.db): moves the pins. Does not
  // wait. forget: the partitions are gone; their cursors are dropped.
  void cursors_saved(const std::string& link, const std::vector<meta::ForwardCursor>& cursors);
  void cursors_forgotten(const std::string& link, const std::vector<TopicPartitionKey>& partitions);

  // Any thread: makes pending and later link calls return false.
  void stop() { stopping_.store(true); }
  bool stopping() const { return stopping_.load(); }

 private:
  struct LinkEntry {
    std::string name;
    const TopicMapping* mapping;
    meta::ForwardProducer producer;
    std::map<TopicPartitionKey, meta::ForwardCursor> cursors;
    // The producer state (id, epoch, next sequence) of cursors whose local
    // topic was deleted: the central partition still knows that sequence,
    // so a topic created again under the same name continues it (restarting
    // at 0 under the same producer would be taken for duplicates and lost).
    std::map<TopicPartitionKey, meta::ForwardCursor> retired;
  };

  // Runs fn(result) on the reactor and waits; false when stopping.
  template <typename R, typename Fn>
  bool on_reactor(Fn fn, R* out);

  void repin(const std::string& topic, int32_t partition);
  // A cluster's partition of more than one replica (forwarded where its
  // group is led; its cursors shared).
  bool replicated(const broker::Topic& topic, int32_t partition) const;
  LinkEntry* find_link(const std::string& name);

  port::Executor& executor_;
  broker::TopicTable& topics_;
  meta::ForwardProgress* progress_;
  std::vector<LinkEntry> links_;  // reactor
  ClusterForwarding cluster_;     // reactor
  std::atomic<bool> stopping_{false};
};

}  // namespace eddy::forward
