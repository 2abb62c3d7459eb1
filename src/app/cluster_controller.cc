#include "app/cluster_controller.h"

#include <algorithm>
#include <arpa/inet.h>

#include "port/log.h"
#include "port/port.h"
#include "protocol/errors.h"
#include "protocol/generated/broker_registration.h"
#include "protocol/generated/envelope.h"

namespace eddy::app {
namespace {

constexpr int64_t kTickMs = 1000;
constexpr int64_t kUnsettledTickMs = 100;

// The address bytes of "host:port" (IPv4 or IPv6), as Envelope carries them.
std::vector<uint8_t> address_bytes(const std::string& peer) {
  std::string host = peer.substr(0, peer.rfind(':'));
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  uint8_t bytes[16];
  if (inet_pton(AF_INET, host.c_str(), bytes) == 1) return {bytes, bytes + 4};
  if (inet_pton(AF_INET6, host.c_str(), bytes) == 1) return {bytes, bytes + 16};
  return {};
}

protocol::ErrorCode proposal_code(const Status& s) {
  if (s.ok()) return protocol::ErrorCode::kNone;
  if (s.code() == Status::Code::kTimeout) return protocol::ErrorCode::kRequestTimedOut;
  return protocol::ErrorCode::kNotController;
}

Status leader_refused(int16_t code, const char* what) {
  return Status::kafka(Status::Code::kBrokerError, code, true,
                       std::string(what) + ": " + protocol::error_name(static_cast<protocol::ErrorCode>(code)));
}

}  // namespace

ClusterController::ClusterController(ControllerQuorum* quorum, broker::Broker* broker, meta::MetaStore* meta,
                                     port::Executor* reactor, std::vector<meta::BrokerEndpoint> endpoints)
    : quorum_(quorum), broker_(broker), meta_(meta), reactor_(reactor), endpoints_(std::move(endpoints)) {
  std::sort(endpoints_.begin(), endpoints_.end(),
            [](const meta::BrokerEndpoint& a, const meta::BrokerEndpoint& b) { return a.listener < b.listener; });
  broker_->set_controller(this);
  quorum_->set_committed_handler([this](raft::Offset offset, const raft::Entry& entry) { apply(offset, entry); });
  quorum_->set_snapshot_handler(
      [this](raft::SnapshotId id, const std::string& bytes) { load_snapshot(id, bytes); });
  quorum_->set_producer_ids_handler(
      [this](int32_t node_id, ControllerQuorum::ProducerIdsGiven given) { give_producer_ids(node_id, std::move(given)); });
  quorum_->set_node_record_handler([this](std::string payload, ControllerQuorum::NodeRecordDone done) {
    propose_node_record(std::move(payload), std::move(done));
  });
  quorum_->set_envelope_handler(
      [this](const broker::ClientInfo& client, protocol::FrameBytes frame, std::unique_ptr<broker::Reply> reply) {
        broker_->handle(client, std::move(frame), std::move(reply));
      });
  quorum_->set_markers_handler([this](protocol::WriteTxnMarkersRequest request, ControllerQuorum::MarkersDone done) {
    broker_->write_txn_markers(request, std::move(done));
  });
}

void ClusterController::start() {
  last_snapshot_ms_ = port::monotonic_millis();
  if (meta_->cluster().applied_offset(&applied_end_).ok()) unsnapshotted_ = applied_end_ > 0;
  std::vector<meta::ClusterBroker> brokers;
  if (meta_->cluster().brokers(&brokers).ok()) {
    registered_ = std::find(brokers.begin(), brokers.end(), this_node()) != brokers.end();
  }
  cluster_id_known_ = broker_->has_log_cluster_id();
  if (cluster_id_known_) quorum_->set_cluster_id(meta_->cluster_id());
  tick();
  publish_partition_leaders();
  watch_sessions();
}

int32_t ClusterController::leader_id() const { return quorum_->leadership().leader_id; }

bool ClusterController::is_leader() const { return quorum_->leadership().is_leader; }

void ClusterController::propose(const broker::ControllerRecord& record, std::function<void(const Status&)> done) {
  quorum_->propose(broker::encode_controller_record(record),
                   [done = std::move(done)](const Status& s, raft::Offset) { done(s); });
}

void ClusterController::forward(const broker::Request& request, Forwarded done) {
  protocol::EnvelopeRequest envelope;
  envelope.request_data.assign(request.frame.begin(), request.frame.end());
  envelope.request_principal.emplace(request.client.principal.begin(), request.client.principal.end());
  envelope.client_host_address = address_bytes(request.client.peer);
  ControllerQuorum* quorum = quorum_;
  auto call = [quorum, envelope, done](client::BrokerConnection& leader, client::Deadline deadline) {
    protocol::EnvelopeResponse answer;
    Status s = leader.call(envelope, 0, &answer, deadline);
    if (!s.ok()) return s;
    if (answer.error_code != 0 || !answer.response_data.has_value()) {
      const int16_t code =
          answer.error_code != 0 ? answer.error_code : protocol::to_int(protocol::ErrorCode::kUnknownServerError);
      return leader_refused(code, "the controller leader refused the forwarded request");
    }
    quorum->post([done, data = std::move(*answer.response_data)] {
      protocol::OutputBuffer framed;
      const uint32_t size = htonl(static_cast<uint32_t>(data.size()));
      framed.append(&size, 4);
      framed.append(data.data(), data.size());
      done(Status(), std::move(framed));
    });
    return Status();
  };
  auto failed = [quorum, done](const Status& why) { quorum->post([done, why] { done(why, {}); }); };
  quorum_->forward_to_leader(leader_id(), std::move(call), std::move(failed));
}

void ClusterController::apply(raft::Offset offset, const raft::Entry& entry) {
  if (failed_) return;
  if (entry.kind == raft::EntryKind::kLeaderChange) {
    // The first entry of this node's own term: everything committed before
    // it is applied here now, so the groups' offsets and static members are
    // all held, and this node may coordinate them.
    if (is_leader() && entry.epoch == quorum_->view().epoch) broker_->take_over_groups();
    return;
  }
  broker::ControllerRecord record;
  Status s = broker::decode_controller_record(entry.payload, &record);
  if (s.ok()) {
    if (const auto* ids = std::get_if<protocol::ProducerIdsRecord>(&record)) {
      s = apply_producer_ids(offset, *ids);
    } else if (const auto* cursors = std::get_if<protocol::ForwardCursorsRecord>(&record)) {
      s = apply_forward_cursors(*cursors);
    } else {
      s = broker_->apply_controller_record(record);
    }
  }
  if (s.ok()) s = meta_->cluster().set_applied_offset(offset + 1);
  if (!s.ok()) {
    stop_applying("entry " + std::to_string(offset), s);
    return;
  }
  if (std::holds_alternative<protocol::ClusterIdRecord>(record)) {
    cluster_id_known_ = true;
    quorum_->set_cluster_id(meta_->cluster_id());
  } else if (const auto* r = std::get_if<protocol::RegisterBrokerRecord>(&record)) {
    if (r->node_id == quorum_->config().node_id) refresh_flags();
  }
  maybe_snapshot(offset, entry);
}

void ClusterController::stop_applying(const std::string& what, const Status& why) {
  // Skipping it would leave this node's state apart from the others' for
  // good: stop applying, loudly.
  failed_ = true;
  EDDY_LOG_ERROR("controller log: {} cannot be applied on this node: {}; this node applies no more changes of the "
                 "cluster's metadata (restart it once the cause is fixed)",
                 what, why.to_string());
}

void ClusterController::refresh_flags() {
  std::vector<meta::ClusterBroker> brokers;
  registered_ = meta_->cluster().brokers(&brokers).ok() &&
                std::find(brokers.begin(), brokers.end(), this_node()) != brokers.end();
  cluster_id_known_ = broker_->has_log_cluster_id();
  if (cluster_id_known_) quorum_->set_cluster_id(meta_->cluster_id());
}

void ClusterController::maybe_snapshot(raft::Offset offset, const raft::Entry& entry) {
  applied_since_snapshot_ += static_cast<int64_t>(entry.payload.size());
  applied_end_ = offset + 1;
  unsnapshotted_ = true;
  if (applied_since_snapshot_ >= quorum_->config().snapshot_bytes) snapshot_now();
}

void ClusterController::snapshot_now() {
  // On the reactor: its cost is logged (the state is read from eddy.db).
  const int64_t began = port::monotonic_nanos();
  std::vector<broker::ControllerRecord> records;
  int64_t producer_ids_end = 0;
  Status s = broker_->controller_state(&records);
  if (s.ok()) s = meta_->cluster().producer_ids_end(&producer_ids_end);
  if (s.ok()) s = forward_cursor_records(&records);
  if (!s.ok()) {
    EDDY_LOG_WARN("controller log: no snapshot at offset {}: {}", applied_end_, s.to_string());
    return;
  }
  records.push_back(protocol::ProducerIdsRecord{-1, producer_ids_end, 0, {}});
  applied_since_snapshot_ = 0;
  unsnapshotted_ = false;
  last_snapshot_ms_ = port::monotonic_millis();
  std::string bytes = broker::encode_controller_snapshot(records);
  EDDY_LOG_INFO("controller log: snapshot at offset {} ({} records, {} bytes) built in {:.1f} ms", applied_end_,
                records.size(), bytes.size(), static_cast<double>(port::monotonic_nanos() - began) / 1e6);
  quorum_->take_snapshot(applied_end_, std::move(bytes));
}

void ClusterController::load_snapshot(raft::SnapshotId id, const std::string& bytes) {
  if (failed_) return;
  const int64_t began = port::monotonic_nanos();
  std::vector<broker::ControllerRecord> records;
  Status s = broker::decode_controller_snapshot(bytes, &records);
  // The producer ids' end and the forward cursors are this class's; the
  // broker loads the rest.
  int64_t producer_ids_end = 0;
  std::vector<protocol::ForwardCursorsRecord> cursors;
  std::erase_if(records, [&](broker::ControllerRecord& r) {
    if (auto* c = std::get_if<protocol::ForwardCursorsRecord>(&r)) {
      cursors.push_back(std::move(*c));
      return true;
    }
    const auto* ids = std::get_if<protocol::ProducerIdsRecord>(&r);
    if (ids != nullptr) producer_ids_end = std::max(producer_ids_end, ids->producer_id_start + ids->producer_id_len);
    return ids != nullptr;
  });
  int64_t held_end = 0;
  if (s.ok()) s = meta_->cluster().producer_ids_end(&held_end);
  // Never lower: the snapshot's state is past what this node applied.
  if (s.ok() && producer_ids_end > held_end) s = meta_->cluster().set_producer_ids_end(producer_ids_end);
  if (s.ok()) s = broker_->load_controller_state(records);
  if (s.ok()) s = load_forward_cursors(cursors);
  if (s.ok()) s = meta_->cluster().set_applied_offset(id.end_offset);
  if (!s.ok()) {
    stop_applying("the snapshot at offset " + std::to_string(id.end_offset), s);
    return;
  }
  EDDY_LOG_INFO("controller log: loaded the snapshot at offset {} ({} records, {} bytes) in {:.1f} ms", id.end_offset,
                records.size(), bytes.size(), static_cast<double>(port::monotonic_nanos() - began) / 1e6);
  applied_since_snapshot_ = 0;
  applied_end_ = id.end_offset;
  unsnapshotted_ = false;
  last_snapshot_ms_ = port::monotonic_millis();
  refresh_flags();
}

meta::ClusterBroker ClusterController::this_node() const {
  meta::ClusterBroker b;
  b.node_id = quorum_->config().node_id;
  b.rack.reset();
  b.endpoints = endpoints_;
  return b;
}

void ClusterController::tick() {
  if (failed_) return;
  if (broker_->coordinating_groups() && !is_leader()) broker_->step_down_groups();
  const int64_t interval = quorum_->config().snapshot_interval_ms;
  if (interval > 0 && unsnapshotted_ && applied_end_ > 0 && port::monotonic_millis() - last_snapshot_ms_ >= interval) {
    snapshot_now();
  }
  if (is_leader() && !cluster_id_known_ && !proposing_cluster_id_) {
    // The first leader of a cluster gives it its own eddy.db's id.
    proposing_cluster_id_ = true;
    propose(protocol::ClusterIdRecord{meta_->cluster_id(), {}}, [this](const Status&) { proposing_cluster_id_ = false; });
  }
  if (!registered_ && !registering_ && leader_id() >= 0) register_this_node();
  // Before the first InitProducerId, and again after a refused ask.
  if (registered_) ask_for_producer_ids();
  // Soon again while this node is not registered: a topic created meanwhile
  // would be placed on the registered nodes only.
  const bool settled = registered_ && (cluster_id_known_ || !is_leader());
  reactor_->schedule_after(settled ? kTickMs : kUnsettledTickMs, [this] { tick(); });
}

void ClusterController::register_this_node() {
  registering_ = true;
  const meta::ClusterBroker node = this_node();
  if (is_leader()) {
    protocol::RegisterBrokerRecord record;
    record.node_id = node.node_id;
    record.rack.reset();
    for (const auto& e : node.endpoints) record.endpoints.push_back({e.listener, e.host, e.port, e.security_protocol, {}});
    propose(record, [this](const Status&) { registering_ = false; });
    return;
  }
  protocol::BrokerRegistrationRequest request;
  request.broker_id = node.node_id;
  request.cluster_id = meta_->cluster_id();
  request.rack.reset();
  for (const auto& e : node.endpoints) {
    request.listeners.push_back({e.listener, e.host, static_cast<uint16_t>(e.port), e.security_protocol, {}});
  }
  ControllerQuorum* quorum = quorum_;
  auto call = [this, quorum, request](client::BrokerConnection& leader, client::Deadline deadline) {
    protocol::BrokerRegistrationResponse answer;
    Status s = leader.call(request, 0, &answer, deadline);
    if (!s.ok()) return s;
    if (answer.error_code != 0) return leader_refused(answer.error_code, "registration refused by the leader");
    quorum->post([this] { registering_ = false; });
    return Status();
  };
  auto failed = [this, quorum](const Status& why) {
    EDDY_LOG_DEBUG("registering with the controller leader: {}", why.to_string());
    quorum->post([this] { registering_ = false; });
  };
  quorum_->forward_to_leader(leader_id(), std::move(call), std::move(failed));
}

void ClusterController::propose_from_this_node(const broker::ControllerRecord& record,
                                               std::function<void(protocol::ErrorCode)> done) {
  const std::string payload = broker::encode_controller_record(record);
  if (is_leader()) {
    quorum_->propose(payload, [done](const Status& s, raft::Offset) { done(proposal_code(s)); });
    return;
  }
  protocol::EnvelopeRequest envelope;
  envelope.request_data.reserve(ControllerQuorum::kNodeRecordsMagic.size() + payload.size());
  envelope.request_data.insert(envelope.request_data.end(), ControllerQuorum::kNodeRecordsMagic.begin(),
                               ControllerQuorum::kNodeRecordsMagic.end());
  envelope.request_data.insert(envelope.request_data.end(), payload.begin(), payload.end());
  envelope.request_principal.reset();
  ControllerQuorum* quorum = quorum_;
  auto call = [quorum, envelope, done](client::BrokerConnection& leader, client::Deadline deadline) {
    protocol::EnvelopeResponse answer;
    Status s = leader.call(envelope, 0, &answer, deadline);
    if (!s.ok()) return s;
    quorum->post([done, code = static_cast<protocol::ErrorCode>(answer.error_code)] { done(code); });
    return Status();
  };
  auto failed = [quorum, done](const Status&) { quorum->post([done] { done(protocol::ErrorCode::kNotController); }); };
  quorum_->forward_to_leader(leader_id(), std::move(call), std::move(failed));
}

void ClusterController::propose_node_record(std::string payload, ControllerQuorum::NodeRecordDone done) {
  broker::ControllerRecord record;
  Status s = broker::decode_controller_record(payload, &record);
  if (!s.ok() || !(std::holds_alternative<protocol::ForwardCursorsRecord>(record) ||
                   std::holds_alternative<protocol::PartitionLeadersRecord>(record))) {
    // Only the records nodes share of their own accord come this way.
    EDDY_LOG_WARN("controller listener: a node proposed {}; refused",
                  s.ok() ? std::string(broker::controller_record_name(record)) : s.message());
    done(protocol::ErrorCode::kInvalidRequest);
    return;
  }
  if (failed_ || !is_leader()) {
    done(protocol::ErrorCode::kNotController);
    return;
  }
  quorum_->propose(std::move(payload), [done](const Status& st, raft::Offset) { done(proposal_code(st)); });
}

}  // namespace eddy::app
