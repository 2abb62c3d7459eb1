// A cluster node's broker joined to its controller quorum: the broker's
// ControllerClient (proposals, forwarding to the leader), the committed
// records applied to this node's broker and eddy.db in log order, this
// node's registration (its client endpoints) and the cluster id, proposed
// until the controller log carries them, the blocks of producer ids the
// log gives each node (cluster_producer_ids.cc), and, on the leader, the
// nodes fenced for not fetching from it (cluster_node_fencing.cc).
//
// Threading: reactor thread only (callbacks from the quorum and the
// forwarder are posted there). REQUIRES: quorum, broker and meta outlive it;
// constructed before broker->start().
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "app/controller_quorum.h"
#include "app/partition_groups.h"
#include "app/producer_id_blocks.h"
#include "broker/broker.h"
#include "broker/controller_client.h"
#include "meta/cluster_store.h"
#include "meta/meta_store.h"
#include "port/executor.h"

namespace eddy::app {

class ClusterController final : public broker::ControllerClient {
 public:
  // endpoints: this node's client listeners as clients reach them.
  ClusterController(ControllerQuorum* quorum, broker::Broker* broker, meta::MetaStore* meta, port::Executor* reactor,
                    std::vector<meta::BrokerEndpoint> endpoints);

  // Starts registering this node (and, on the leader, the cluster id),
  // retried every second until the log carries them. After broker->start().
  void start();

  int32_t leader_id() const override;
  bool is_leader() const override;
  void propose(const broker::ControllerRecord& record, std::function<void(const Status&)> done) override;
  void forward(const broker::Request& request, Forwarded done) override;
  bool next_producer_id(int64_t* id) override;
  int32_t epoch() const override;
  void send_txn_markers(int32_t node_id, protocol::WriteTxnMarkersRequest request, MarkersAnswer done) override;

  // ---- Store-and-forward in a cluster (cluster_forward_cursors.cc) ----
  // Cursors the forwarder saved for partitions this node forwards: kept
  // (the latest per link and partition) and proposed every
  // kShareForwardCursorsMs as ForwardCursorsRecords, carried to the leader
  // when this node does not lead the controller quorum.
  void share_forward_cursors(std::vector<meta::ClusterForwardCursor> cursors);
  // Each cursor the log made the furthest known (and, at start and after a
  // snapshot, every one held) goes to observer (reactor).
  using ForwardCursorObserver = std::function<void(const meta::ClusterForwardCursor&)>;
  void set_forward_cursor_observer(ForwardCursorObserver observer);

  // ---- Replicated partitions' leaders (cluster_partition_leaders.cc) ----
  // The partition groups whose leaders this node publishes (every
  // kPublishLeadersMs, those whose leader epoch or ISR differs from what the
  // controller log carries). REQUIRES: before start().
  void set_partition_groups(PartitionGroups* groups) { groups_ = groups; }

  // Leader: gives node_id the next block of producer ids through the
  // controller log; done (on the reactor) gets the block once its record is
  // applied here, or the code of why not.
  void give_producer_ids(int32_t node_id, ControllerQuorum::ProducerIdsGiven done);

 private:
  // A committed entry of the controller log (reactor thread, in order).
  void apply(raft::Offset offset, const raft::Entry& entry);
  // A snapshot loaded in place of the applied state (reactor thread, in
  // order with the entries).
  void load_snapshot(raft::SnapshotId id, const std::string& bytes);
  // Snapshots the applied state when enough was applied since the last
  // one (bytes after an entry, time on the tick).
  void maybe_snapshot(raft::Offset offset, const raft::Entry& entry);
  void snapshot_now();
  // Stops applying for good, loudly (see apply()).
  void stop_applying(const std::string& what, const Status& why);
  // registered_ and cluster_id_known_ from the applied state.
  void refresh_flags();
  void tick();
  void register_this_node();
  meta::ClusterBroker this_node() const;
  // cluster_producer_ids.cc. Asks the leader (or, on the leader, the log)
  // for this node's next block when producer_ids_ wants one.
  void ask_for_producer_ids();
  // The committed ProducerIdsRecord at offset: the next block starts past
  // the block it gives, if it gives one (its outcome is kept for this
  // node's own proposal at that offset).
  Status apply_producer_ids(raft::Offset offset, const protocol::ProducerIdsRecord& record);
  // cluster_forward_cursors.cc.
  Status apply_forward_cursors(const protocol::ForwardCursorsRecord& record);
  // The cursors held, as records for a snapshot (one per link).
  Status forward_cursor_records(std::vector<broker::ControllerRecord>* out);
  // A snapshot's cursors in place of those held.
  Status load_forward_cursors(const std::vector<protocol::ForwardCursorsRecord>& records);
  void send_forward_cursors();
  // Proposes record here (the leader) or carries it to the leader in an
  // Envelope (ControllerQuorum::kNodeRecordsMagic); done on the reactor.
  void propose_from_this_node(const broker::ControllerRecord& record, std::function<void(protocol::ErrorCode)> done);
  void publish_partition_leaders();
  // cluster_node_fencing.cc, from start() on: while this node leads, it
  // fences through the controller log the nodes that stopped fetching from
  // it for broker.session.timeout.ms, and unfences them once they fetch
  // again (a look every kWatchSessionsMs).
  void watch_sessions();
  // Leader: another node's record (ControllerQuorum::set_node_record_handler).
  void propose_node_record(std::string payload, ControllerQuorum::NodeRecordDone done);

  ControllerQuorum* quorum_;
  broker::Broker* broker_;
  meta::MetaStore* meta_;
  port::Executor* reactor_;
  std::vector<meta::BrokerEndpoint> endpoints_;
  bool registered_ = false;      // the applied state holds this node as it is now
  bool registering_ = false;     // a registration is on its way
  bool cluster_id_known_ = false;
  bool proposing_cluster_id_ = false;
  bool failed_ = false;          // applying failed: this node applies nothing more
  int64_t applied_since_snapshot_ = 0;  // payload bytes applied since the last snapshot (or this start)
  raft::Offset applied_end_ = 0;         // the next offset to apply: the state held is the log's below it
  // Applied records may be missing from the latest snapshot (true at a
  // start with anything applied: what an earlier run applied may be).
  bool unsnapshotted_ = false;
  int64_t last_snapshot_ms_ = 0;         // monotonic: the last snapshot, or this start
  ProducerIdBlocks producer_ids_;         // this node's, given in this process only
  bool asking_for_producer_ids_ = false;  // a block is on its way
  // Leader: the end of the blocks this process proposed (the next one
  // starts at this or the applied end, whichever is higher), how many of
  // its proposals wait for their outcome, and, while any waits, what the
  // records applied meanwhile gave, by offset (len 0: nothing).
  struct AppliedBlock {
    int64_t start;
    int32_t len;
  };
  int64_t proposed_producer_ids_end_ = 0;
  int giving_producer_ids_ = 0;
  std::map<raft::Offset, AppliedBlock> applied_producer_ids_;
  // Forward cursors waiting to be shared, by (link, topic id, partition);
  // whether a send is scheduled or on its way.
  std::map<std::tuple<std::string, meta::Uuid, int32_t>, meta::ClusterForwardCursor> unshared_cursors_;
  bool sharing_cursors_ = false;
  ForwardCursorObserver forward_cursor_observer_;
  PartitionGroups* groups_ = nullptr;
  bool publishing_leaders_ = false;  // a PartitionLeadersRecord is on its way
  // The controller epoch this node's sessions with the nodes belong to
  // (-1: not leading) and when (monotonic) it first saw itself lead it.
  int32_t sessions_epoch_ = -1;
  int64_t sessions_started_ms_ = 0;
  bool fencing_ = false;  // a NodeFencingRecord is on its way
};

}  // namespace eddy::app
