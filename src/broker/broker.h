// The broker: decodes each request frame, answers it from the topic table,
// the logs and the meta store, and encodes the response. One handler per API
// family lives in its own file (produce.cc, fetch.cc, metadata.cc, ...); this
// class holds the state they share.
//
// Threading: every member runs on the reactor thread. The only other thread
// is the storage flusher, whose durability reports are posted here through
// the Executor.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "broker/broker_options.h"
#include "broker/controller_client.h"
#include "broker/partition_replication.h"
#include "broker/producer_state_table.h"
#include "broker/reply.h"
#include "broker/request_metrics.h"
#include "broker/topic_table.h"
#include "group/coordinator.h"
#include "meta/meta_store.h"
#include "port/executor.h"
#include "protocol/codec.h"
#include "protocol/frame_bytes.h"
#include "protocol/generated/messages.h"
#include "protocol/headers.h"
#include "protocol/record_batch.h"
#include "security/acl_authorizer.h"
#include "security/sasl_server.h"
#include "storage/log_manager.h"
#include "txn/coordinator.h"
#include "txn/state_store.h"

namespace eddy::broker {

// One request in the broker's hands: the frame it came in (which decoded
// records fields view), its header and the way to answer it.
struct Request {
  ClientInfo client;
  protocol::ParsedRequestHeader parsed;
  protocol::FrameBytes frame;
  std::unique_ptr<Reply> reply;

  int16_t api_key() const { return parsed.header.request_api_key; }
  int16_t version() const { return parsed.header.request_api_version; }
  int32_t correlation_id() const { return parsed.header.correlation_id; }
  std::string client_id() const { return parsed.header.client_id.value_or(""); }

  // Frees the frame before the answer, once nothing still views it (the
  // decoded body's records spans are into it; the header fields above are
  // copies): a request that waits (a produce for its sync) then holds its
  // answer, not its records, and no longer counts against
  // queued.max.request.bytes.
  void release_frame() {
    protocol::FrameBytes().swap(frame);
    if (reply != nullptr) reply->frame_released();
  }
};
using RequestPtr = std::unique_ptr<Request>;

class Broker;

// The SASL state of a connection of a SASL listener, from its first request
// until it closes (sasl.cc). Until it is authenticated only ApiVersions,
// SaslHandshake and SaslAuthenticate pass; anything else closes the
// connection (as in Kafka).
struct SaslSession {
  enum class State {
    kStart,          // ApiVersions or SaslHandshake next
    kAuthenticate,   // SaslHandshake v1 done: SaslAuthenticate next
    kRawTokens,      // SaslHandshake v0 done: bare SASL tokens next (no request header)
    kAuthenticated,  // anything
  };
  State state = State::kStart;
  std::unique_ptr<security::SaslServer> server;  // between handshake and the end of the exchange
  // Re-authentication (KIP-368). Once authenticated: the principal and
  // mechanism of the login, and when its session ends (monotonic ms; -1:
  // never). A client that authenticated with SaslAuthenticate v1+ may send
  // SaslHandshake again: the session is then reauthenticating (state
  // kAuthenticate) until the exchange ends, which must name the same
  // principal with the same mechanism.
  std::string principal;
  std::string mechanism;
  int64_t expires_ms = -1;
  bool may_reauthenticate = false;
  bool reauthenticating = false;
};

// An API the broker answers: the versions it advertises and its handler
// (the table is in api_table.cc).
struct ApiSupport {
  protocol::ApiKey key;
  int16_t min_version;
  int16_t max_version;
  void (Broker::*handle)(RequestPtr request);
};

class Broker {
 public:
  // REQUIRES: executor, meta and logs outlive the Broker.
  Broker(port::Executor& executor, BrokerOptions options, meta::MetaStore* meta, storage::LogManager* logs);
  ~Broker();
  Broker(const Broker&) = delete;
  Broker& operator=(const Broker&) = delete;

  // Opens the topics the meta store knows. Fails when a log, the producer
  // state or the group coordinator cannot be opened.
  Status start();

  // A request frame (without its size prefix) from a client.
  void handle(const ClientInfo& client, protocol::FrameBytes frame, std::unique_ptr<Reply> reply);
  // Drops requests parked for this connection.
  void on_connection_closed(uint64_t connection_id);
  // Answers every parked request now (fetches with what they have, produces
  // and WriteTxnMarkers waiting for durability with what is durable,
  // REQUEST_TIMED_OUT for the rest) before shutdown, saves the
  // producer state, then, with a partition replication, tells it every log
  // is closing (PartitionReplication::closing: the logs are closed after
  // the reactor stopped).
  void drain();

  // What ApiVersions advertises and dispatch calls, in ApiVersions' order.
  static std::span<const ApiSupport> supported_apis();
  // Its row for api_key, nullptr when Eddy does not answer it.
  static const ApiSupport* find_api(int16_t api_key);

  TopicTable& topics() { return topics_; }
  const BrokerOptions& options() const { return options_; }
  // Requests that carried bytes after their last field (ignored, as Kafka
  // does; logged at debug level).
  uint64_t requests_with_trailing_bytes() const { return requests_with_trailing_bytes_; }
  // Produce batches refused by validation (precheck) since startup.
  uint64_t refused_batches() const { return refused_batches_; }
  // Per-API counters (the app's frame handler records requests and
  // latencies, the handlers record refusals and error codes).
  RequestMetrics& request_metrics() { return request_metrics_; }
  const RequestMetrics& request_metrics() const { return request_metrics_; }
  // Requests parked: Produce acks=all waiting for durability, Fetch waiting
  // for min_bytes.
  size_t parked_produces() const { return produce_waiters_.size(); }
  size_t parked_fetches() const { return fetch_waiters_.size(); }
  // WriteTxnMarkers waiting for their markers to be durable.
  size_t parked_txn_markers() const { return marker_waiters_.size(); }

  // ---- Transaction markers (write_txn_markers.cc) ----
  // WriteTxnMarkers without a client request (another node's transaction
  // coordinator, through the controller listener; no authorization here:
  // the caller decides who may). For each marker, each partition: the
  // marker written with the marker's producer id, epoch, result (COMMIT
  // when transaction_result) and coordinator epoch, as this node's
  // coordinator writes its own (write_txn_marker), or an error:
  // UNKNOWN_TOPIC_OR_PARTITION (no such partition), NOT_LEADER_OR_FOLLOWER
  // (not held here, or a replicated partition this node does not lead),
  // INVALID_PRODUCER_EPOCH / TRANSACTION_COORDINATOR_FENCED (stale marker),
  // KAFKA_STORAGE_ERROR. A written marker is answered NONE once durable
  // (a replicated partition: its high watermark passed the marker in the
  // epoch it was appended in, else NOT_LEADER_OR_FOLLOWER; otherwise the
  // partition's durable offset passed it), or REQUEST_TIMED_OUT after
  // options().txn_marker_timeout_ms (Kafka's request.timeout.ms) or when
  // the broker drains. A partition named twice in one marker is written
  // once, both answered alike.
  // The response has one result per marker, in the request's order
  // (Kafka's merges markers of the same producer id into one).
  // At most kMaxParkedTxnMarkers requests wait at a time: beyond that a
  // request is answered at once, REQUEST_TIMED_OUT for every partition
  // (retriable for Kafka's coordinator), nothing written.
  // done is called exactly once, on the reactor thread, maybe before this
  // returns (nothing to wait for).
  static constexpr size_t kMaxParkedTxnMarkers = 128;
  void write_txn_markers(const protocol::WriteTxnMarkersRequest& body,
                         std::function<void(protocol::WriteTxnMarkersResponse)> done);
  // The meta store (committed offsets for the metrics' consumer lag).
  meta::MetaStore* meta() const { return meta_; }
  // SASL authentications since startup that succeeded / failed (sasl.cc).
  uint64_t sasl_authentications_succeeded() const { return sasl_succeeded_; }
  uint64_t sasl_authentications_failed() const { return sasl_failed_; }
  // Operations the authorizer refused since startup (authorization.cc).
  uint64_t authorization_refusals() const { return authorization_refusals_; }
  // The SASL settings of listener, nullptr when it needs no SASL.
  const SaslListener* sasl_listener(const std::string& listener) const;

  // Called (reactor thread) after each partition's log is opened: while
  // start() loads the topics (after_start false), then for new topics and
  // partitions. The forwarder pins what it has not delivered from here.
  // REQUIRES: set before start().
  using PartitionObserver =
      std::function<void(const std::string& topic, int32_t partition, storage::PartitionLog* log, bool after_start)>;
  // Each observer added is called, in the order added.
  void add_partition_observer(PartitionObserver observer) { partition_observers_.push_back(std::move(observer)); }

  // A cluster node: changes of topics go through the controller quorum
  // (controller_client.h). REQUIRES: set before start(); outlives the broker's use.
  void set_controller(ControllerClient* controller) {
    controller_ = controller;
    topics_.set_cluster_node(controller != nullptr);
  }

  // ---- Replicated partitions (partition_replication.h, issue #16) ----
  // A cluster node's partition groups: every partition whose Topic record
  // names more than one replica is served as its group says (Produce only
  // on the leader, through replication->append; acks=all once the high
  // watermark passed the batch; consumers' Fetch, ListOffsets and
  // OffsetForLeaderEpoch only on the leader, with KIP-320's epoch checks;
  // Metadata from the group's status). nullptr (the default, and always on
  // a single node): none; every partition behaves as it always did.
  // A partition with several replicas for which the replication reports no
  // group (not created yet, or let go) is answered as a partition without a
  // leader here: NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE in Metadata,
  // never written or read around its group.
  // REQUIRES: set before start(), and outlives the broker's use of it
  // (set nullptr again only once the reactor stopped).
  void set_partition_replication(PartitionReplication* replication) { replication_ = replication; }
  // Hooks the replication calls (reactor thread), naming a partition by its
  // open log (logs the broker does not hold are ignored).
  // The group's state moved: its high watermark (set on the log already,
  // PartitionLog::set_replicated_high_watermark), or this node's leadership
  // or epoch. Completes the acks=all produces and WriteTxnMarkers waiting
  // on the partition (the batches and markers the high watermark passed;
  // NOT_LEADER_OR_FOLLOWER for those of an epoch this node no longer leads)
  // and wakes its long-polling fetches and the transaction markers waiting
  // to be committed.
  void on_replicated_high_watermark(storage::PartitionLog* log);
  // Replication changed a replica's log: it grew from offset from (a
  // follower appended its leader's batches; truncated false), or it was cut
  // (truncate_to or reset_to; truncated true, from unused). The partition's
  // idempotent-producer state follows (the batches' headers replayed, or
  // the state rebuilt from its snapshot rows and the log, as at open), so
  // that a leader elected here later knows the producers' sequences.
  void on_replica_log_changed(storage::PartitionLog* log, int64_t from, bool truncated);
  // Applies one committed record of the controller log to this node's meta
  // store and logs (controller_apply.cc). Records that cannot apply here (a
  // name taken by another topic) are logged and skipped; a non-ok Status
  // (the meta store or a log failed) means the node must stop applying.
  // REQUIRES: not a ProducerIdsRecord (the cluster controller's own).
  Status apply_controller_record(const ControllerRecord& record);
  // Whether the cluster id came from the controller log already.
  bool has_log_cluster_id();
  // A cluster node: this node coordinates the consumer groups from its
  // takeover (the controller leader, once it has applied its own term's
  // first entry, so it holds every committed offset and static member)
  // until its step-down (leadership lost); see Coordinator::take_over.
  void take_over_groups();
  void step_down_groups();
  bool coordinating_groups() const { return coordinating_groups_; }
  // The controller state held here as the records that rebuild it (a
  // snapshot's content; controller_snapshot.cc): the cluster id, the
  // registered nodes and the fenced ones, every topic with its replicas and
  // configs, every group's committed offsets and static members, the
  // published partition leaders (the producer ids' end and the forward
  // cursors are the cluster controller's to add).
  Status controller_state(std::vector<ControllerRecord>* out);
  // Replaces the controller state held here by records (a snapshot from
  // controller_state(), maybe another node's): topics absent from it are
  // removed, its topics created or brought to its partitions and configs,
  // every group's offsets, static members, partition leaders and fenced
  // nodes replaced by its. Applying it
  // twice leaves the same state. A non-ok Status (the meta store or a log
  // failed) means the node must stop applying.
  // REQUIRES: no ProducerIdsRecord among records.
  Status load_controller_state(const std::vector<ControllerRecord>& records);
  // A replicated partition's leader as the controller log last carried it
  // (nullptr: never published).
  const meta::PartitionLeader* published_leader(const protocol::Uuid& topic_id, int32_t partition) const;
  // The nodes the controller log says are fenced (NodeFencingRecord), this
  // one included if the log says so.
  const std::set<int32_t>& fenced_nodes() const { return fenced_nodes_; }

 private:
  // A Produce with acks=-1 waiting for its batches to become durable (or,
  // for a replicated partition, committed by its group).
  struct ProduceWaiter {
    struct Pending {
      size_t topic_index;      // into response.responses
      size_t partition_index;  // into its partition_responses
      std::string topic;
      int32_t partition;
      int64_t needed;  // durable offset (replicated: high watermark) that covers the batch
      // A replicated partition's batch, appended in leader_epoch: committed
      // once the high watermark reaches needed while this node still leads
      // that epoch.
      bool replicated = false;
      int32_t leader_epoch = -1;
    };
    RequestPtr request;
    protocol::ProduceResponse response;
    std::vector<Pending> pending;
    port::Executor::TimerId timer = 0;
  };
  // A Fetch waiting for min_bytes.
  struct FetchWaiter {
    RequestPtr request;
    protocol::FetchRequest body;
    // Parallel to body.topics: READ on the topic was refused (decided once,
    // when the fetch arrives); empty when no authorizer is configured.
    std::vector<bool> topic_refused;
    port::Executor::TimerId timer = 0;
  };

  // A WriteTxnMarkers whose markers were written, waiting until each is
  // durable (write_txn_markers.cc). Invariant: pending names exactly the
  // response's partitions whose answer is not decided yet.
  struct MarkerWaiter {
    struct Pending {
      size_t marker;     // into response.markers
      size_t topic;      // into its topics
      size_t partition;  // into its partitions
      // The log written to: compared with the partition's current one (a
      // topic deleted meanwhile, maybe re-created), never dereferenced.
      const storage::PartitionLog* log;
      int64_t offset;  // the marker's
      bool replicated;
      int32_t leader_epoch;  // replicated: the group's epoch it was appended in
    };
    protocol::WriteTxnMarkersResponse response;
    std::vector<Pending> pending;
    std::function<void(protocol::WriteTxnMarkersResponse)> done;
    port::Executor::TimerId timer = 0;
  };

  // Counts body's error codes (note_errors), encodes it and sends it.
  template <typename M>
  void respond(Request& request, const M& body);
  // Counts every non-zero error code of a response in request_metrics_, per
  // API: what respond does, and what a Produce with acks=0 does with the
  // response it does not send.
  template <typename M>
  void note_errors(const Request& request, const M& body);
  template <typename M>
  bool decode(Request& request, M* out);
  void close_bad_request(Request& request, const std::string& why);
  // The group of topic's partition p as this node serves it
  // (set_partition_replication): replicated false without a replication or
  // for a partition of one replica; a partition of several replicas the
  // replication reports no group for is replicated and led by nobody; a
  // group's leader whose log has no replicated high watermark yet is not
  // served as leader (NOT_LEADER_OR_FOLLOWER) until it has one.
  // REQUIRES: log == topic.local(p).
  ReplicaStatus replica_status(const Topic& topic, int32_t p, const storage::PartitionLog* log) const;
  // KIP-951's leader endpoints (Produce v10+, Fetch v16+ NodeEndpoints):
  // the nodes of leader_ids reachable on listener, as Metadata lists them.
  template <typename NodeEndpoint>
  void add_leader_endpoints(const std::string& listener, const std::set<int32_t>& leader_ids,
                            std::vector<NodeEndpoint>* out) const;
  void on_partition_closing(const Topic& topic, int32_t partition, storage::PartitionLog* log);
  // Why topic's partition p cannot be read or written here:
  // UNKNOWN_TOPIC_OR_PARTITION when it does not exist, NOT_LEADER_OR_FOLLOWER
  // when another node of the cluster holds it. REQUIRES topic->local(p) == nullptr.
  static protocol::ErrorCode partition_error(const Topic* topic, int32_t p) {
    return topic != nullptr && topic->has_partition(p) ? protocol::ErrorCode::kNotLeaderOrFollower
                                                       : protocol::ErrorCode::kUnknownTopicOrPartition;
  }
  void note_trailing_bytes(const Request& request, size_t count);
  // Counts a refused Produce batch and logs it naming the client, at most
  // one line a second (with the count left out since): a looping client
  // cannot flood the log.
  void note_refused_batch(const Request& request, const std::string& topic, int32_t partition,
                          protocol::ErrorCode code, const std::string& why);
  void note_encode_problem(const Request& request, const Status& status);

  // A cluster node's follower: carries request to the controller leader
  // (controller_forwarding.cc) and returns true; refuse(request, code) answers
  // it when that cannot be done. False (request untouched): handle it here.
  using Refusal = std::function<void(Broker& broker, Request& request, protocol::ErrorCode code)>;
  bool forward_to_controller(RequestPtr& request, Refusal refuse);
  // The registered nodes of the cluster (cached from the meta store).
  Status load_cluster_brokers();
  // partition_leaders_ from eddy.db (at start, after a snapshot).
  Status load_partition_leaders();
  // fenced_nodes_ from eddy.db (at start).
  Status load_fenced_nodes();
  // The fenced nodes Metadata treats as such (metadata.cc): fenced_nodes_
  // without this node, which answers and so is alive to its clients.
  std::set<int32_t> fenced_peers() const;
  // Replicas for count new partitions from first on: replication_factor
  // distinct registered nodes each, round robin from a start that depends on
  // the topic (replica_placement.h). REQUIRES: check_replication_factor
  // passed for cluster_node_ids().
  std::vector<std::vector<int32_t>> assign_replicas(const std::string& topic, int32_t first, int32_t count,
                                                    int32_t replication_factor) const;
  // The error of a proposal's outcome, for a response.
  static protocol::ErrorCode proposal_error(const Status& s);

  // Handlers (one file each, named after the API family).
  void handle_api_versions(RequestPtr request);
  void handle_metadata(RequestPtr request);
  // A topic's Metadata entry with every partition's leader and replicas.
  protocol::MetadataResponse::MetadataResponseTopic metadata_of(const Topic& topic) const;
  protocol::MetadataResponse::MetadataResponseTopic metadata_topic(
      const Request& request, const protocol::MetadataRequest::MetadataRequestTopic& wanted, bool may_create);
  void add_authorized_operations(const Request& request, const protocol::MetadataRequest& body,
                                 protocol::MetadataResponse* response);
  // The nodes a client of listener reaches: every registered node of a
  // cluster but the fenced ones (fenced_peers(); as Kafka's brokers list
  // only the live ones) unless named (the answer sends clients there), this
  // one alone on a single node.
  void add_brokers(const std::string& listener, const std::set<int32_t>& named,
                   std::vector<protocol::MetadataResponse::MetadataResponseBroker>* out) const;
  // Metadata's auto-creation on a cluster node: the leader proposes the
  // topic, a follower forwards a CreateTopics for it (at most one at a time
  // per name); the client is told LEADER_NOT_AVAILABLE meanwhile.
  void auto_create_in_cluster(const Request& request, const std::string& name);
  void handle_produce(RequestPtr request);
  void handle_fetch(RequestPtr request);
  void handle_list_offsets(RequestPtr request);
  void handle_offset_for_leader_epoch(RequestPtr request);
  void handle_create_topics(RequestPtr request);
  void handle_delete_topics(RequestPtr request);
  void handle_create_partitions(RequestPtr request);
  // The controller leader's part (admin_cluster.cc): the changes validated
  // here become controller records; answered once they are applied.
  void create_topics_in_cluster(RequestPtr request, protocol::CreateTopicsRequest body);
  // What CreateTopics asks for one topic, once checked (admin.cc).
  struct NewTopicPlan {
    int32_t partitions = -1;
    int16_t replication = -1;
    ConfigMap configs;
    std::vector<std::vector<int32_t>> replicas;  // a manual assignment; empty: none
    protocol::Uuid id;  // a cluster's leader: the id its record proposes
  };
  TopicResult check_new_topic(const Request& request, const protocol::CreateTopicsRequest::CreatableTopic& t,
                              NewTopicPlan* plan);
  // CreatePartitions on a cluster: the replicas of t's new partitions (its
  // assignments once checked, or a placement with the topic's replication
  // factor). REQUIRES: t.count above the topic's partition count.
  TopicResult place_new_partitions(const protocol::CreatePartitionsRequest::CreatePartitionsTopic& t,
                                   std::vector<std::vector<int32_t>>* replicas);
  void describe_created(const NewTopicPlan& plan, const Topic* topic,
                        protocol::CreateTopicsResponse::CreatableTopicResult* out) const;
  // A new topic's record (a fresh id; the plan's replicas or a placement).
  protocol::TopicRecord topic_record(const std::string& name, const NewTopicPlan& plan) const;
  // The registered nodes' ids on a cluster node (at least this one); empty on a single node.
  std::vector<int32_t> cluster_node_ids() const;
  // The controller records a handler proposes (the cluster's leader), each
  // for one entry of its response.
  struct Proposals {
    std::vector<ControllerRecord> records;
    std::vector<size_t> entries;  // the response entry of each record
  };
  // Proposes every record; on_outcome(entry, status) for each outcome, then
  // done() once all have one (at once when there are none).
  void propose_all(Proposals proposals, std::function<void(size_t entry, const Status&)> on_outcome,
                   std::function<void()> done);
  // Answers response once proposals have their outcomes, each failed one
  // setting its entry's error_code and error_message (responses with a
  // .responses list of such entries: the config APIs).
  template <typename Response>
  void respond_after(RequestPtr request, Response response, Proposals proposals) {
    auto state = std::make_shared<std::pair<RequestPtr, Response>>(std::move(request), std::move(response));
    propose_all(
        std::move(proposals),
        [state](size_t entry, const Status& s) {
          if (s.ok()) return;
          state->second.responses[entry].error_code = protocol::to_int(proposal_error(s));
          state->second.responses[entry].error_message = s.message();
        },
        [this, state] { respond(*state->first, state->second); });
  }
  // IncrementalAlterConfigs / AlterConfigs of a topic: here on a single
  // node; on a cluster's leader checked here and proposed (into proposals,
  // for response entry entry).
  TopicResult alter_topic_configs(const std::string& name, const std::vector<meta::ConfigChange>& changes,
                                  bool validate_only, Proposals* proposals, size_t entry);
  void handle_delete_records(RequestPtr request);
  void handle_describe_configs(RequestPtr request);
  void handle_incremental_alter_configs(RequestPtr request);
  void handle_alter_configs(RequestPtr request);
  protocol::ErrorCode config_refusal(const Request& request, security::AclOperation operation, int8_t resource_type,
                                     const std::string& name);
  void handle_describe_cluster(RequestPtr request);
  void handle_describe_log_dirs(RequestPtr request);
  // Consumer groups (group_handlers.cc).
  void handle_find_coordinator(RequestPtr request);
  void handle_join_group(RequestPtr request);
  void handle_sync_group(RequestPtr request);
  void handle_heartbeat(RequestPtr request);
  void handle_leave_group(RequestPtr request);
  void handle_offset_commit(RequestPtr request);
  // A cluster's coordinator: expired offsets removed on every node through
  // the controller log (OffsetsDeletedRecord).
  void replicate_expiry(std::vector<meta::GroupTopicPartition> expired);
  // A cluster's coordinator: a static member's state stored on every node
  // through the controller log (unless eddy.db holds it so), or its removal.
  void replicate_static_member(const meta::StaticMember& member);
  void replicate_static_member_removed(const std::string& group_id, const std::string& instance_id);
  // A cluster's coordinator (the controller leader): the commit replicated
  // through the controller log before response is sent.
  void replicate_commit(RequestPtr request, const std::string& group, protocol::OffsetCommitResponse response);
  // The last offset the applied controller log holds per (group, topic,
  // partition), as a digest of offset, leader epoch and metadata, and its
  // commit time: a commit equal to it is not logged again until its time is
  // refresh_ms past the logged one (a tenth of offsets.retention.minutes),
  // so every node's commit times lag the coordinator's by less than that and
  // a new coordinator never expires a group's offsets more than a tenth of
  // the retention early. Filled when GroupOffsets records are applied; empty
  // after a restart (the first commits are logged again).
  struct LoggedOffsets {
    static constexpr size_t kMaxEntries = 10000;
    struct Logged {
      uint64_t digest;
      int64_t commit_ms;
    };
    std::map<std::tuple<std::string, std::string, int32_t>, Logged> last;
    static uint64_t digest(const meta::CommittedOffset& o);
    bool same(const std::string& group, const meta::CommittedOffset& o, int64_t refresh_ms) const;
    void note(const std::string& group, const meta::CommittedOffset& o);
    // The group's offsets were deleted (all of them when topic is empty).
    void forget(const std::string& group, const std::string& topic = "", int32_t partition = -1);
  };
  void handle_offset_fetch(RequestPtr request);
  void handle_offset_delete(RequestPtr request);
  void handle_list_groups(RequestPtr request);
  void handle_describe_groups(RequestPtr request);
  void handle_delete_groups(RequestPtr request);
  Status start_groups();
  // Authorization of the group APIs (group_authorization.cc).
  bool may_use_group(const Request& request, security::AclOperation operation, const std::string& group_id);
  static protocol::OffsetCommitResponse refuse_commit(const protocol::OffsetCommitRequest& body, int16_t code);
  // Commits what the client may commit; the rest is refused per partition.
  protocol::OffsetCommitResponse commit_authorized(const Request& request, protocol::OffsetCommitRequest body);
  // DELETE on the group, then READ on each topic (TOPIC_AUTHORIZATION_FAILED
  // per partition of a refused topic, the others deleted), as Kafka.
  protocol::OffsetDeleteResponse delete_offsets_authorized(const Request& request, protocol::OffsetDeleteRequest body);
  void authorize_offset_fetch(const Request& request, const protocol::OffsetFetchRequest& body,
                              protocol::OffsetFetchResponse* response);
  // Refused groups become GROUP_AUTHORIZATION_FAILED entries; the others get
  // their authorized operations when the request asked for them.
  void authorize_described_groups(const Request& request, bool include_operations,
                                  protocol::DescribeGroupsResponse* response);
  // Removes from body the groups the client may not delete; their results.
  std::vector<protocol::DeleteGroupsResponse::DeletableGroupResult> take_undeletable_groups(
      const Request& request, protocol::DeleteGroupsRequest* body);
  void authorize_listed_groups(const Request& request, protocol::ListGroupsResponse* response);
  void drain_groups();
  // Transactions (txn_handlers.cc; the coordinator is txn/coordinator.h).
  void handle_add_partitions_to_txn(RequestPtr request);
  void handle_add_offsets_to_txn(RequestPtr request);
  void handle_end_txn(RequestPtr request);
  void handle_txn_offset_commit(RequestPtr request);
  void handle_describe_transactions(RequestPtr request);
  void handle_list_transactions(RequestPtr request);
  protocol::TxnOffsetCommitResponse txn_offset_commit(const Request& request, protocol::TxnOffsetCommitRequest body);
  // A cluster node: the offsets producer_id staged in group (as stored here)
  // through the controller log, then response (cluster_groups.cc).
  void replicate_txn_offsets(RequestPtr request, const std::string& group, int64_t producer_id,
                             protocol::TxnOffsetCommitResponse response);
  // Proposes record, then answers response (OffsetCommit's or
  // TxnOffsetCommit's), every partition it accepted NOT_COORDINATOR when
  // the record did not commit (cluster_groups.cc).
  template <typename Response>
  void respond_once_logged(const ControllerRecord& record, RequestPtr request, Response response);
  // The coordinator and where its markers go (txn_marker_routing.cc).
  Status start_transactions();
  // The node leading partition p of topic as this node knows it (-1: none
  // known).
  int32_t partition_leader(const Topic& topic, int32_t p) const;
  void route_txn_markers(const std::vector<meta::TopicPartition>& partitions, protocol::ControlType type,
                         int64_t producer_id, int16_t epoch, txn::MarkerSink::PartitionDone done);
  // How markers are written (txn_markers.cc).
  // One COMMIT / ABORT marker appended (or not) by write_txn_marker.
  struct TxnMarkerWrite {
    // NONE: written at offset. UNKNOWN_TOPIC_OR_PARTITION (no such
    // partition) or NOT_LEADER_OR_FOLLOWER (held by other nodes only;
    // held_here false either way); NOT_LEADER_OR_FOLLOWER (a replicated
    // partition this node does not lead); INVALID_PRODUCER_EPOCH /
    // TRANSACTION_COORDINATOR_FENCED (stale: the partition saw a newer
    // producer / coordinator epoch of the producer); the append's error
    // (KAFKA_STORAGE_ERROR when it carries no Kafka code).
    protocol::ErrorCode error = protocol::ErrorCode::kNone;
    bool held_here = true;
    int64_t offset = -1;
    // Appended through the partition's group while this node led leader_epoch.
    bool replicated = false;
    int32_t leader_epoch = -1;
    const storage::PartitionLog* log = nullptr;  // written to (error NONE)
    std::string why;  // error != NONE
  };
  // Appends a marker of type for producer_id / epoch with coordinator_epoch
  // to tp, as this node's coordinator and WriteTxnMarkers both do: checked
  // against the partition's producer state (Kafka's appendEndTxnMarker),
  // written through PartitionLog::append (the transaction index ends the
  // producer's open transaction there), recorded in the producer state.
  TxnMarkerWrite write_txn_marker(const meta::TopicPartition& tp, protocol::ControlType type, int64_t producer_id,
                                  int16_t epoch, int32_t coordinator_epoch);
  // WriteTxnMarkers (write_txn_markers.cc).
  void handle_write_txn_markers(RequestPtr request);
  // A written marker's answer: NONE once durable (replicated: committed in
  // the epoch it was appended in), an error once it cannot become so
  // (its partition gone, or no longer led here in that epoch), nullopt
  // while it may still.
  std::optional<protocol::ErrorCode> marker_outcome(const MarkerWaiter& waiter,
                                                    const MarkerWaiter::Pending& pending);
  // Answers the parked WriteTxnMarkers whose every marker has an outcome
  // (with timed_out, every parked one: REQUEST_TIMED_OUT for the markers
  // still waiting).
  void complete_marker_waiters(bool timed_out = false);
  // The timer of one parked WriteTxnMarkers: REQUEST_TIMED_OUT for what waits.
  void time_out_marker_waiter(std::list<MarkerWaiter>::iterator it);
  // DescribeProducers (describe_producers.cc).
  void handle_describe_producers(RequestPtr request);
  void handle_init_producer_id(RequestPtr request);
  // A transactional InitProducerId's checks before the coordinator: WRITE
  // on the transactional id, the producer id and epoch both given or neither.
  protocol::ErrorCode check_transactional_init(const Request& request, const protocol::InitProducerIdRequest& body);
  // An idempotent producer's InitProducerId (no transactional id).
  protocol::ErrorCode init_producer_id(const Request& request, const protocol::InitProducerIdRequest& body,
                                      protocol::InitProducerIdResponse* response);
  protocol::ErrorCode allocate_producer_id(const Request& request, int64_t now,
                                           protocol::InitProducerIdResponse* response);
  // A new producer id: the meta store's on a single node, the blocks the
  // controller log gives on a cluster node (a retriable Kafka code in the
  // Status while this node has none).
  Status next_producer_id(int64_t* id);

  // SASL (sasl.cc), per connection of a SASL listener: SaslSession.
  // Takes the frame when the connection's SASL state says what to do with
  // it (a raw token, or a request refused before authentication); false
  // when the request goes on to dispatch.
  bool sasl_gate(RequestPtr& request, bool header_parsed);
  void handle_sasl_handshake(RequestPtr request);
  void handle_sasl_authenticate(RequestPtr request);
  void handle_raw_sasl_token(RequestPtr request, SaslSession& session);
  // Runs one step of the exchange; counts and logs its end (on success the
  // connection's principal is set).
  security::SaslStep sasl_step(const Request& request, SaslSession& session, std::span<const uint8_t> token);
  // An authenticated connection whose session ended (connections.max.reauth.ms)
  // and which does not begin a re-authentication: closed, true.
  bool session_expired(RequestPtr& request, SaslSession& session);
  Status load_sasl_secret();
  void handle_describe_client_quotas(RequestPtr request);  // client_quotas.cc

  // Authorization (authorization.cc). With no authorizer configured every
  // check passes. A refusal is counted and logged (principal, operation,
  // resource; at most one line a second) unless quietly (Kafka's
  // logIfDenied=false: filtering what a listing shows).
  Status load_acls();
  bool authorized(const Request& request, security::AclOperation operation, security::ResourceType type,
                  std::string_view name, bool quietly = false);
  bool authorized_on_cluster(const Request& request, security::AclOperation operation, bool quietly = false) {
    return authorized(request, operation, security::ResourceType::kCluster, security::kClusterResourceName,
                      quietly);
  }
  // Kafka's authorizedOperations: the bitfield (1 << operation code) of the
  // operations the principal may perform on the resource, of those Kafka
  // supports for its type; every supported one without an authorizer.
  int32_t authorized_operations(const Request& request, security::ResourceType type, std::string_view name);
  // For include_cluster_authorized_operations: 0 without DESCRIBE on the
  // cluster (a refusal, logged), as Kafka answers.
  int32_t cluster_authorized_operations(const Request& request);
  // Kafka's authorizeByResourceType: some resource of the type allows it.
  bool authorized_on_any(const Request& request, security::AclOperation operation, security::ResourceType type);
  void note_authorization_refusal(const Request& request, security::AclOperation operation,
                                  security::ResourceType type, std::string_view name);
  // The ACL APIs (acl_handlers.cc): SECURITY_DISABLED without an
  // authorizer, CLUSTER_AUTHORIZATION_FAILED without the cluster operation.
  void handle_describe_acls(RequestPtr request);
  void handle_create_acls(RequestPtr request);
  void handle_delete_acls(RequestPtr request);
  protocol::ErrorCode acl_api_refusal(const Request& request, security::AclOperation needed, std::string* message);
  // Writes the change to the ACL store, then reloads the authorizer's copy.
  Status alter_acls(const std::vector<security::AclBinding>& deletions,
                    const std::vector<security::AclBinding>& additions);
  // Admin (scram_admin.cc).
  void handle_describe_user_scram_credentials(RequestPtr request);
  void handle_alter_user_scram_credentials(RequestPtr request);

  // One partition of a Produce (produce.cc): where its answer goes and
  // what it writes to (log is set once the partition is known to exist).
  struct ProduceSlot {
    size_t topic_index;      // into response.responses
    size_t partition_index;  // into its partition_responses
    const std::string& topic_name;
    int32_t partition;
    Topic* topic;  // nullptr: unknown topic
    storage::PartitionLog* log;
    bool may_write;  // WRITE on the topic (authorization.cc)
    // Set with log: its group's epoch when the partition is replicated (this
    // node leads it then).
    bool replicated = false;
    int32_t leader_epoch = -1;
  };
  protocol::ProduceResponse::PartitionProduceResponse produce_partition(
      const Request& request, int16_t acks, ProduceSlot& slot, protocol::ProduceRequest::PartitionProduceData& data,
      ProduceWaiter* waiter);
  // Validates, checks the producer's sequence and appends (or answers a
  // duplicate). REQUIRES: slot.log set.
  protocol::ErrorCode produce_batch(const Request& request, int16_t acks, const ProduceSlot& slot,
                                    std::span<const uint8_t> records,
                                    protocol::ProduceResponse::PartitionProduceResponse* out, ProduceWaiter* waiter,
                                    std::string* message);
  // The transaction checks of a produced batch: a transactional one is
  // verified against the coordinator; another from a producer with a
  // transaction open in the partition is INVALID_TXN_STATE.
  protocol::ErrorCode check_transaction_of(const ProduceSlot& slot, const protocol::RecordBatchView& batch,
                                           std::string* message);
  // Produce of a transactional batch: the coordinator's verdict.
  protocol::ErrorCode verify_transactional_batch(const ProduceSlot& slot, const protocol::RecordBatchView& batch,
                                                 std::string* message);
  protocol::ErrorCode answer_duplicate(const Request& request, int16_t acks, const ProduceSlot& slot,
                                       const protocol::RecordBatchView& batch, const SequenceCheck& sequence,
                                       protocol::ProduceResponse::PartitionProduceResponse* out,
                                       ProduceWaiter* waiter, std::string* message);
  // acks=-1 with eddy.acks.all.waits.for=disk: the answer waits until
  // last_offset is durable; on a replicated partition until the high
  // watermark passed it.
  void wait_for_durability(int16_t acks, const ProduceSlot& slot, int64_t last_offset, ProduceWaiter* waiter);
  // The replicated partition checks of a Produce before its batch is looked
  // at: leadership, then (acks=-1) min.insync.replicas. NONE: go on.
  protocol::ErrorCode check_replicated_produce(const Request& request, int16_t acks, ProduceSlot& slot,
                                               const ReplicaStatus& status,
                                               protocol::ProduceResponse::PartitionProduceResponse* out,
                                               std::string* message);
  // Produce acks=-1: parked until the batches are durable (replicated:
  // committed) or timeout_ms.
  void complete_produce_waiters(bool timed_out_only);
  // Whether a waiting batch is done; sets its answer's error when it failed.
  bool produce_pending_done(const ProduceWaiter::Pending& pending,
                            protocol::ProduceResponse::PartitionProduceResponse* out);
  void finish_produce_waiter(std::list<ProduceWaiter>::iterator it, bool timed_out);
  // Fetch long-poll: parked until min_bytes are readable or max_wait_ms.
  // Returns true when the fetch was answered.
  bool try_answer_fetch(FetchWaiter& waiter, bool force);
  // partition -1: any partition of the topic.
  void wake_fetch_waiters(const std::string& topic, int32_t partition);
  void on_partition_durable(const std::string& topic, int32_t partition, int64_t durable_offset);
  void on_partition_opened(const Topic& topic, int32_t partition, storage::PartitionLog* log);
  // Idempotent producers (produce.cc): expiry and periodic snapshots; with
  // sync (clean shutdown, from drain()) the logs are synced first.
  void snapshot_producer_state(bool sync);
  void schedule_producer_snapshots();

  // The advertised endpoint for a client of listener (falls back to the first).
  const AdvertisedListener* endpoint_for(const std::string& listener) const;

  port::Executor& executor_;
  BrokerOptions options_;
  meta::MetaStore* meta_;
  storage::LogManager* logs_;
  TopicTable topics_;
  ProducerStateTable producer_state_;
  // Set when a partition's producer state could not be rebuilt (start fails).
  Status producer_state_error_;
  std::list<ProduceWaiter> produce_waiters_;
  std::list<FetchWaiter> fetch_waiters_;
  std::list<MarkerWaiter> marker_waiters_;
  bool marker_waiters_full_logged_ = false;  // the refusal at the cap was logged since it was last below
  std::unique_ptr<group::Coordinator> coordinator_;  // created by start()
  std::unique_ptr<txn::StateStore> txn_store_;         // created by start()
  std::unique_ptr<txn::Coordinator> txn_;              // created by start()
  // Cleared when the broker is destroyed, so that durability reports posted
  // by the flusher after that are ignored.
  std::shared_ptr<bool> alive_;
  RequestMetrics request_metrics_;
  uint64_t requests_with_trailing_bytes_ = 0;
  uint64_t refused_batches_ = 0;
  uint64_t refused_batches_unlogged_ = 0;
  int64_t refused_batch_logged_ms_ = -1;
  std::vector<PartitionObserver> partition_observers_;
  ControllerClient* controller_ = nullptr;  // a cluster node's controller quorum
  PartitionReplication* replication_ = nullptr;  // a cluster node's partition groups
  // Every open log's topic and partition (the replication's hooks name logs).
  std::unordered_map<const storage::PartitionLog*, std::pair<std::string, int32_t>> partition_names_;
  std::vector<meta::ClusterBroker> cluster_brokers_;  // registered nodes, by node id
  // Replicated partitions' leaders, epochs and ISRs as their leaders
  // published them through the controller log (PartitionLeadersRecord), by
  // topic id and partition: what Metadata tells of a partition this node
  // holds no replica of, and of the ISR on a follower.
  std::map<std::pair<std::array<uint8_t, 16>, int32_t>, meta::PartitionLeader> partition_leaders_;
  // The nodes the controller leader fenced (NodeFencingRecord) as the
  // controller log carries them (eddy.db's cluster_fenced_nodes).
  std::set<int32_t> fenced_nodes_;
  std::set<std::string> auto_creating_;  // topics Metadata is having created
  LoggedOffsets logged_offsets_;
  bool coordinating_groups_ = false;  // a cluster node between take_over_groups and step_down_groups
  std::unique_ptr<security::AclAuthorizer> authorizer_;  // null: no authorizer configured
  uint64_t authorization_refusals_ = 0;
  uint64_t authorization_refusals_unlogged_ = 0;
  int64_t authorization_refusal_logged_ms_ = -1;
  std::unordered_map<uint64_t, SaslSession> sasl_sessions_;  // by connection id
  std::vector<uint8_t> sasl_secret_;  // derives unknown users' fake credentials
  uint64_t sasl_succeeded_ = 0;
  uint64_t sasl_failed_ = 0;
  bool started_ = false;
};

template <typename M>
void Broker::note_errors(const Request& request, const M& body) {
  if constexpr (requires { body.for_each_error_code([](int16_t) {}); }) {
    body.for_each_error_code([&](int16_t code) {
      if (code != 0) request_metrics_.note_error(request.api_key(), code);
    });
  }
}

template <typename M>
void Broker::respond(Request& request, const M& body) {
  note_errors(request, body);
  protocol::OutputBuffer out;
  Status s = protocol::encode_response_frame(body, request.version(), request.correlation_id(), &out);
  if (!s.ok()) note_encode_problem(request, s);
  request.reply->send(std::move(out));
}

template <typename NodeEndpoint>
void Broker::add_leader_endpoints(const std::string& listener, const std::set<int32_t>& leader_ids,
                                  std::vector<NodeEndpoint>* out) const {
  if (leader_ids.empty()) return;
  std::vector<protocol::MetadataResponse::MetadataResponseBroker> brokers;
  add_brokers(listener, leader_ids, &brokers);
  for (const auto& b : brokers) {
    if (leader_ids.count(b.node_id) == 0) continue;
    NodeEndpoint e;
    e.node_id = b.node_id;
    e.host = b.host;
    e.port = b.port;
    e.rack = b.rack;
    out->push_back(std::move(e));
  }
}

template <typename M>
bool Broker::decode(Request& request, M* out) {
  size_t trailing = 0;
  Status s = protocol::decode_request_body(request.frame, request.parsed, out, &trailing);
  if (!s.ok()) {
    close_bad_request(request, s.message());
    return false;
  }
  if (trailing != 0) note_trailing_bytes(request, trailing);
  return true;
}

}  // namespace eddy::broker
