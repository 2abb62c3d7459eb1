// What a cluster node's broker asks of the controller quorum (the app's
// ControllerQuorum implements it). Without one (a single node) the broker
// changes its metadata itself, as it always has.
//
// Changes to what every node must agree on (topics, their partitions and
// configs) go through the controller log: the leader's broker validates a
// request and proposes records; a follower's broker forwards the whole
// request to the leader inside an Envelope, as Kafka's brokers forward to
// the active controller. Every node applies committed records to its own
// eddy.db and logs (Broker::apply_controller_record).
//
// Threading: every call and every callback on the reactor thread.
#pragma once

#include <cstdint>
#include <functional>

#include "broker/controller_records.h"
#include "port/status.h"
#include "protocol/generated/write_txn_markers.h"
#include "protocol/output_buffer.h"

namespace eddy::broker {

struct Request;

class ControllerClient {
 public:
  virtual ~ControllerClient() = default;

  // The current leader of the controller quorum, -1 when none is known.
  virtual int32_t leader_id() const = 0;
  // Whether this node is that leader (and may propose).
  virtual bool is_leader() const = 0;

  // Leader: appends record to the controller log. done: ok once the record
  // is committed and applied on this node; NOT_LEADER_OR_FOLLOWER (a Kafka
  // code in the Status) when leadership moved first; a timeout when its
  // outcome is unknown.
  virtual void propose(const ControllerRecord& record, std::function<void(const Status&)> done) = 0;

  // Follower: carries request (its frame: header and body) to the leader
  // in an Envelope. done: the leader's answer as a whole framed response
  // (size prefix included, with request's correlation id), or why not.
  using Forwarded = std::function<void(const Status&, protocol::OutputBuffer response)>;
  virtual void forward(const Request& request, Forwarded done) = 0;

  // A producer id no node of the cluster handed out before, from the
  // blocks the controller log gave this node; false when none is left now
  // (the next block is on its way: InitProducerId answers
  // COORDINATOR_LOAD_IN_PROGRESS, as Kafka's brokers do meanwhile).
  virtual bool next_producer_id(int64_t* id) = 0;

  // The controller quorum's epoch as this node knows it (-1 when none):
  // the transaction coordinator's epoch in the markers it has written.
  virtual int32_t epoch() const = 0;

  // Sends request (WriteTxnMarkers) to node_id's controller listener, the
  // way the transaction coordinator reaches the leaders of its partitions
  // on other nodes. done: node_id's answer, or why none came (a failed
  // connection, a timeout, a node that is not a voter).
  using MarkersAnswer = std::function<void(const Status& status, protocol::WriteTxnMarkersResponse response)>;
  virtual void send_txn_markers(int32_t node_id, protocol::WriteTxnMarkersRequest request, MarkersAnswer done) = 0;
};

}  // namespace eddy::broker
