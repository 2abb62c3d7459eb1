// The controller quorum of a cluster node: the Raft group over all voters
// (controller.quorum.voters), its log and quorum state in
// <log.dirs>/controller, its peers reached over their controller listeners,
// and the requests that arrive on this node's controller listener.
//
// Requests on the controller listener (Kafka's controller APIs): ApiVersions,
// Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch and FetchSnapshot of
// __cluster_metadata-0, DescribeQuorum and DescribeCluster (KIP-919, so that
// `kafka-metadata-quorum --bootstrap-controller` finds the leader). Any other
// request closes the connection. DescribeQuorum on a client listener is
// answered too (`kafka-metadata-quorum --bootstrap-server`). The leader also
// answers what other nodes forward (controller_requests.cc): Envelope (a
// client's CreateTopics, DeleteTopics or CreatePartitions, handed to this
// node's broker as if it had arrived here) and BrokerRegistration (a node's
// client endpoints, as a controller record); a follower answers both with
// NOT_CONTROLLER, as Kafka's controllers do.
//
// Threads: on_frame() and describe_quorum() run on the reactor; answers are
// posted back to it. REQUIRES: stop() before the reactor and the frame
// handler are destroyed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "app/leader_forwarder.h"
#include "app/quorum_config.h"
#include "broker/reply.h"
#include "net/frame_handler.h"
#include "port/executor.h"
#include "port/status.h"
#include "protocol/errors.h"
#include "protocol/generated/describe_quorum.h"
#include "protocol/generated/write_txn_markers.h"
#include "protocol/headers.h"
#include "raft/kafka_wire.h"
#include "raft/quorum_runtime.h"
#include "raft/segment_log.h"
#include "storage/flusher.h"

namespace eddy::app {

class PartitionGroups;

class ControllerQuorum {
 public:
  // Opens the log (segment files in data_dir/controller/__cluster_metadata-0,
  // synced by flusher), its snapshots (data_dir/controller/snapshots) and
  // the quorum state (data_dir/controller). Threads
  // start in start(). REQUIRES: flusher outlives close().
  // committed_from: the first log offset not yet applied to this node's
  // eddy.db (committed entries from there on reach the committed handler).
  static Status open(const QuorumConfig& config, const std::string& data_dir, std::string cluster_id,
                     raft::Offset committed_from, port::Executor* reactor, storage::Flusher* flusher,
                     std::unique_ptr<ControllerQuorum>* out);
  ~ControllerQuorum();

  void start();
  // Stops the Raft threads; frames arriving afterwards are answered with
  // errors. Idempotent.
  void stop();
  // stop(), then the log's clean close. Call before the flusher stops.
  Status close();

  // A frame that arrived on the controller listener (reactor thread).
  void on_controller_frame(net::ConnectionContext& connection, protocol::FrameBytes frame, net::ResponseSlot slot);
  // A DescribeQuorum frame that arrived on a client listener (reactor
  // thread): answered here on the leader, forwarded to the leader on a
  // follower (Kafka's brokers forward it to the active controller).
  void on_describe_quorum(net::ConnectionContext& connection, protocol::FrameBytes frame, net::ResponseSlot slot) {
    describe_quorum_frame(connection, std::move(frame), std::move(slot), /*may_forward=*/true);
  }

  raft::QuorumView view() const { return runtime_->view(); }
  raft::Leadership leadership() const { return runtime_->leadership(); }
  const QuorumConfig& config() const { return config_; }

  // Committed entries of the log, in order, on the reactor thread.
  // REQUIRES: set before start().
  using CommittedHandler = std::function<void(raft::Offset offset, const raft::Entry& entry)>;
  void set_committed_handler(CommittedHandler handler) { committed_handler_ = std::move(handler); }
  // A snapshot to load in place of the applied state (QuorumRuntime's
  // on_snapshot), on the reactor thread, in order with the committed
  // entries. REQUIRES: set before start().
  using SnapshotHandler = std::function<void(raft::SnapshotId id, const std::string& bytes)>;
  void set_snapshot_handler(SnapshotHandler handler) { snapshot_handler_ = std::move(handler); }
  // Stores bytes as the snapshot of the state the entries below end_offset
  // built (QuorumRuntime::take_snapshot; any thread).
  void take_snapshot(raft::Offset end_offset, std::string bytes) {
    runtime_->take_snapshot(end_offset, std::move(bytes));
  }
  // A request another node forwarded in an Envelope: the inner frame (its
  // header and body) for this node's broker, answered through reply.
  using EnvelopeHandler = std::function<void(const broker::ClientInfo& client, protocol::FrameBytes frame,
                                             std::unique_ptr<broker::Reply> reply)>;
  void set_envelope_handler(EnvelopeHandler handler) { envelope_handler_ = std::move(handler); }
  // Another node's AllocateProducerIds on the leader: the handler gives
  // node_id a block and calls given (on the reactor) with it, or with the
  // code of why not.
  using ProducerIdsGiven = std::function<void(protocol::ErrorCode code, int64_t start, int32_t len)>;
  using ProducerIdsHandler = std::function<void(int32_t node_id, ProducerIdsGiven given)>;
  void set_producer_ids_handler(ProducerIdsHandler handler) { producer_ids_handler_ = std::move(handler); }
  // Controller records another node proposes (Eddy's own use of Envelope,
  // never a Kafka client's: request_data is kNodeRecordsMagic followed by
  // one controller record's payload; a Kafka request frame starts with an
  // API key, never with these bytes). The handler proposes it when it is of
  // a kind nodes may propose, and calls done (on the reactor) with the
  // outcome's code; the Envelope's error_code carries it back.
  static constexpr std::string_view kNodeRecordsMagic = "\xEDnode-records";
  using NodeRecordDone = std::function<void(protocol::ErrorCode code)>;
  using NodeRecordHandler = std::function<void(std::string payload, NodeRecordDone done)>;
  void set_node_record_handler(NodeRecordHandler handler) { node_record_handler_ = std::move(handler); }
  // The cluster id adopted from the log (DescribeCluster answers it).
  void set_cluster_id(std::string cluster_id) { cluster_id_ = std::move(cluster_id); }
  // Raft requests naming a partition group rather than __cluster_metadata
  // go to groups (reactor thread). REQUIRES: groups outlives stop().
  void set_partition_groups(PartitionGroups* groups) { partition_groups_ = groups; }

  // Appends payload when this node leads (QuorumRuntime::propose); done runs
  // on the reactor, after the entry reached the committed handler when ok.
  void propose(std::string payload, std::function<void(const Status&, raft::Offset)> done);
  // Carries a job to the current leader's controller listener (any thread;
  // call/failed run on the forwarder's thread).
  void forward_to_leader(raft::NodeId leader, LeaderForwarder::Call call, LeaderForwarder::Failed failed) {
    forwarder_->forward(leader, std::move(call), std::move(failed));
  }
  // Carries a job to node's controller listener on a connection and
  // worker of that node's own, made on first use (the transaction
  // coordinator's WriteTxnMarkers to the partitions' leaders, Kafka's
  // TransactionMarkerChannelManager). Reactor thread; call/failed run on
  // that worker's thread.
  void send_to_node(raft::NodeId node, LeaderForwarder::Call call, LeaderForwarder::Failed failed);
  // WriteTxnMarkers another node's transaction coordinator sent: the
  // handler writes them (Broker::write_txn_markers) and calls done with
  // the answer (reactor thread).
  using MarkersDone = std::function<void(protocol::WriteTxnMarkersResponse response)>;
  using MarkersHandler = std::function<void(protocol::WriteTxnMarkersRequest request, MarkersDone done)>;
  void set_markers_handler(MarkersHandler handler) { markers_handler_ = std::move(handler); }
  // Runs f on the reactor unless stop() ran first.
  void post(std::function<void()> f);

 private:
  ControllerQuorum(QuorumConfig config, std::string cluster_id, port::Executor* reactor);

  // controller_requests.cc: what the leader answers for other nodes.
  void handle_envelope(net::ConnectionContext& connection, const protocol::FrameBytes& frame,
                       const protocol::ParsedRequestHeader& h, net::ResponseSlot slot);
  void handle_broker_registration(net::ConnectionContext& connection, const protocol::FrameBytes& frame,
                                  const protocol::ParsedRequestHeader& h, net::ResponseSlot slot);
  void handle_allocate_producer_ids(net::ConnectionContext& connection, const protocol::FrameBytes& frame,
                                    const protocol::ParsedRequestHeader& h, net::ResponseSlot slot);
  // controller_txn_markers.cc.
  void handle_write_txn_markers(net::ConnectionContext& connection, const protocol::FrameBytes& frame,
                                const protocol::ParsedRequestHeader& h, net::ResponseSlot slot);

  // Every 15 s while there is no leader: a recovering node logs the likely
  // reason (a new cluster started without eddy.quorum.bootstrap).
  void schedule_leaderless_hint();
  // Parks slot until the group thread answers; returns its ticket.
  uint64_t park(net::ResponseSlot slot);
  // Completes the parked slot with response (posted to the reactor).
  void answer_later(uint64_t ticket, protocol::OutputBuffer response);
  void handle_raft_request(net::ConnectionContext& connection, const protocol::FrameBytes& frame,
                           const protocol::ParsedRequestHeader& h, net::ResponseSlot slot);
  // Decodes a Raft request into the core's message; false (logged) when
  // malformed. A request the group must refuse leaves its answer in
  // *refusal (non-empty) instead.
  bool decode_raft_request(net::ConnectionContext& connection, const protocol::FrameBytes& frame,
                           const protocol::ParsedRequestHeader& h, raft::Message* out, protocol::OutputBuffer* refusal);
  // The Kafka answer to request h from the core's answer (nullptr: none).
  protocol::OutputBuffer encode_raft_answer(const protocol::ParsedRequestHeader& h, const raft::Payload* answer) const;
  void answer_describe_cluster(net::ConnectionContext& connection, const protocol::FrameBytes& frame,
                               const protocol::ParsedRequestHeader& h, net::ResponseSlot slot);
  protocol::DescribeQuorumResponse describe_quorum(const protocol::DescribeQuorumRequest& req, int16_t version) const;
  // may_forward: false on the controller listener, where a follower answers
  // NOT_LEADER_OR_FOLLOWER as Kafka's controllers do (and two followers
  // with different ideas of the leader cannot pass a request back and forth).
  void describe_quorum_frame(net::ConnectionContext& connection, protocol::FrameBytes frame, net::ResponseSlot slot,
                             bool may_forward);

  QuorumConfig config_;
  std::string cluster_id_;
  port::Executor* reactor_;
  raft::SegmentLog* log_ = nullptr;               // owned by runtime_; closed after it stopped
  std::unique_ptr<raft::QuorumRuntime> runtime_;
  std::unique_ptr<LeaderForwarder> forwarder_;
  // send_to_node's deadline per job: above the time a partition leader may
  // take to answer WriteTxnMarkers (its markers' replication).
  static constexpr int64_t kNodeRequestTimeoutMs = 15000;
  std::map<raft::NodeId, std::unique_ptr<LeaderForwarder>> node_channels_;  // send_to_node's, reactor thread
  MarkersHandler markers_handler_;
  CommittedHandler committed_handler_;
  SnapshotHandler snapshot_handler_;
  EnvelopeHandler envelope_handler_;
  ProducerIdsHandler producer_ids_handler_;
  NodeRecordHandler node_record_handler_;
  PartitionGroups* partition_groups_ = nullptr;
  uint64_t next_envelope_connection_ = 1;  // ClientInfo::connection_id of forwarded requests
  // Reactor thread only: requests waiting for the group thread's answer.
  std::unordered_map<uint64_t, net::ResponseSlot> parked_;
  uint64_t next_ticket_ = 1;
  bool stopped_ = false;
  // Outlives posted answers: they check it before touching parked_.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace eddy::app
