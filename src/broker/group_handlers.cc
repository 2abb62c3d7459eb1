// Consumer group APIs: FindCoordinator, JoinGroup, SyncGroup, Heartbeat,
// LeaveGroup, OffsetCommit, OffsetFetch, OffsetDelete, ListGroups,
// DescribeGroups, DeleteGroups. The work is group::Coordinator's; this file
// decodes, checks the client's rights (group_authorization.cc), delegates
// and answers (JoinGroup/SyncGroup possibly later).
#include <algorithm>
#include <memory>

#include "broker/broker.h"
#include "group/group.h"
#include "port/log.h"
#include "protocol/errors.h"

namespace eddy::broker {

using protocol::ErrorCode;

namespace {

// The client's host without the port ("127.0.0.1:50312" -> "/127.0.0.1",
// shown as Kafka shows it).
std::string client_host(const ClientInfo& client) {
  std::string host = client.peer;
  auto colon = host.rfind(':');
  if (colon != std::string::npos) host.resize(colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return "/" + host;
}

group::ClientContext context_of(const Request& request) {
  group::ClientContext c;
  c.version = request.version();
  c.client_id = request.client_id();
  c.client_host = client_host(request.client);
  return c;
}

}  // namespace

Status Broker::start_groups() {
  group::CoordinatorOptions o;
  o.min_session_timeout_ms = options_.group_min_session_timeout_ms;
  o.max_session_timeout_ms = options_.group_max_session_timeout_ms;
  o.initial_rebalance_delay_ms = options_.group_initial_rebalance_delay_ms;
  o.offsets_retention_ms = options_.offsets_retention_ms;
  o.offsets_retention_check_interval_ms = options_.offsets_retention_check_interval_ms;
  coordinator_ = std::make_unique<group::Coordinator>(
      executor_, meta_,
      [this](const std::string& topic, int32_t partition) {
        Topic* t = topics_.find(topic);
        return t != nullptr && partition >= 0 && static_cast<size_t>(partition) < t->partitions.size();
      },
      o);
  // A cluster's groups are coordinated by the controller quorum's leader
  // (FindCoordinator points there); the other nodes answer NOT_COORDINATOR.
  if (controller_ != nullptr) {
    coordinator_->set_serving([this] { return coordinating_groups_ && controller_->is_leader(); });
    coordinator_->set_expired_offsets_sink(
        [this](std::vector<meta::GroupTopicPartition> expired) { replicate_expiry(std::move(expired)); });
    coordinator_->set_static_members_sink(
        {[this](const meta::StaticMember& m) { replicate_static_member(m); },
         [this](const std::string& group, const std::string& instance) {
           replicate_static_member_removed(group, instance);
         }});
  }
  return coordinator_->start().with_context("group coordinator");
}

void Broker::drain_groups() {
  if (coordinator_) coordinator_->drain();
  // Transactions being completed stay Prepare on disk; the next start ends them.
  if (txn_) txn_->stop();
}

void Broker::handle_find_coordinator(RequestPtr request) {
  protocol::FindCoordinatorRequest body;
  if (!decode(*request, &body)) return;
  const int16_t version = request->version();
  const AdvertisedListener* endpoint = endpoint_for(request->client.listener);
  // A cluster node: the coordinator is the controller quorum's leader, at
  // its endpoint for this listener.
  AdvertisedListener leader_endpoint;
  int32_t coordinator_node = options_.node_id;
  if (controller_ != nullptr) {
    coordinator_node = controller_->leader_id();
    endpoint = nullptr;
    for (const meta::ClusterBroker& b : cluster_brokers_) {
      if (b.node_id != coordinator_node) continue;
      for (const meta::BrokerEndpoint& e : b.endpoints) {
        if (e.listener == request->client.listener) leader_endpoint = {e.listener, e.host, e.port};
      }
      if (!leader_endpoint.name.empty()) endpoint = &leader_endpoint;
    }
  }
  auto answer = [&](const std::string& key, int16_t* error, std::optional<std::string>* message, int32_t* node,
                    std::string* host, int32_t* port) {
    // Key type 0 GROUP, 1 TRANSACTION: this broker coordinates both.
    if (body.key_type != 0 && body.key_type != 1) {
      *error = protocol::to_int(ErrorCode::kInvalidRequest);
      *message = "unknown coordinator key type " + std::to_string(body.key_type);
      *node = -1;
      *port = -1;
    } else if (body.key_type == 0 && !may_use_group(*request, security::AclOperation::kDescribe, key)) {
      *error = protocol::to_int(ErrorCode::kGroupAuthorizationFailed);
      *message = std::nullopt;
      *node = -1;
      *port = -1;
    } else if (body.key_type == 1 &&
               !authorized(*request, security::AclOperation::kDescribe, security::ResourceType::kTransactionalId, key)) {
      *error = protocol::to_int(ErrorCode::kTransactionalIdAuthorizationFailed);
      *message = std::nullopt;
      *node = -1;
      *port = -1;
    } else if (endpoint == nullptr) {
      *error = protocol::to_int(ErrorCode::kCoordinatorNotAvailable);
      *message = controller_ != nullptr ? "no controller leader (or its endpoint is not known yet)"
                                        : "no advertised listener";
      *node = -1;
      *port = -1;
    } else {
      *error = 0;
      *message = std::nullopt;
      *node = coordinator_node;
      *host = endpoint->host;
      *port = endpoint->port;
    }
  };
  protocol::FindCoordinatorResponse response;
  if (version >= 4) {
    for (const auto& key : body.coordinator_keys) {
      protocol::FindCoordinatorResponse::Coordinator c;
      c.key = key;
      answer(key, &c.error_code, &c.error_message, &c.node_id, &c.host, &c.port);
      response.coordinators.push_back(std::move(c));
    }
  } else {
    answer(body.key, &response.error_code, &response.error_message, &response.node_id, &response.host,
           &response.port);
  }
  respond(*request, response);
}

void Broker::handle_join_group(RequestPtr request) {
  protocol::JoinGroupRequest body;
  if (!decode(*request, &body)) return;
  if (!may_use_group(*request, security::AclOperation::kRead, body.group_id)) {
    respond(*request, group::join_error(ErrorCode::kGroupAuthorizationFailed, ""));
    return;
  }
  group::ClientContext ctx = context_of(*request);
  std::shared_ptr<Request> parked(std::move(request));
  coordinator_->join(body, ctx, [this, parked](const protocol::JoinGroupResponse& response) {
    if (parked->reply->connection_closed()) {
      parked->reply->send_nothing();
      return;
    }
    respond(*parked, response);
  });
}

void Broker::handle_sync_group(RequestPtr request) {
  protocol::SyncGroupRequest body;
  if (!decode(*request, &body)) return;
  if (!may_use_group(*request, security::AclOperation::kRead, body.group_id)) {
    respond(*request, group::sync_error(ErrorCode::kGroupAuthorizationFailed));
    return;
  }
  group::ClientContext ctx = context_of(*request);
  std::shared_ptr<Request> parked(std::move(request));
  coordinator_->sync(body, ctx, [this, parked](const protocol::SyncGroupResponse& response) {
    if (parked->reply->connection_closed()) {
      parked->reply->send_nothing();
      return;
    }
    respond(*parked, response);
  });
}

void Broker::handle_heartbeat(RequestPtr request) {
  protocol::HeartbeatRequest body;
  if (!decode(*request, &body)) return;
  if (!may_use_group(*request, security::AclOperation::kRead, body.group_id)) {
    protocol::HeartbeatResponse refused;
    refused.error_code = protocol::to_int(ErrorCode::kGroupAuthorizationFailed);
    respond(*request, refused);
    return;
  }
  respond(*request, coordinator_->heartbeat(body));
}

void Broker::handle_leave_group(RequestPtr request) {
  protocol::LeaveGroupRequest body;
  if (!decode(*request, &body)) return;
  if (!may_use_group(*request, security::AclOperation::kRead, body.group_id)) {
    protocol::LeaveGroupResponse refused;
    refused.error_code = protocol::to_int(ErrorCode::kGroupAuthorizationFailed);
    respond(*request, refused);
    return;
  }
  respond(*request, coordinator_->leave(body, request->version()));
}

void Broker::handle_offset_commit(RequestPtr request) {
  protocol::OffsetCommitRequest body;
  if (!decode(*request, &body)) return;
  const std::string group = body.group_id;
  protocol::OffsetCommitResponse response = commit_authorized(*request, std::move(body));
  if (controller_ == nullptr) {
    respond(*request, response);
    return;
  }
  replicate_commit(std::move(request), group, std::move(response));
}

void Broker::handle_offset_fetch(RequestPtr request) {
  protocol::OffsetFetchRequest body;
  if (!decode(*request, &body)) return;
  protocol::OffsetFetchResponse response = coordinator_->fetch_offsets(body, request->version());
  authorize_offset_fetch(*request, body, &response);
  respond(*request, response);
}

void Broker::handle_offset_delete(RequestPtr request) {
  protocol::OffsetDeleteRequest body;
  if (!decode(*request, &body)) return;
  const std::string group = body.group_id;
  protocol::OffsetDeleteResponse response = delete_offsets_authorized(*request, std::move(body));
  // A cluster's coordinator: the deletions go to every node.
  Proposals proposals;
  if (controller_ != nullptr && response.error_code == 0) {
    protocol::OffsetsDeletedRecord record;
    record.group_id = group;
    for (const auto& t : response.topics) {
      for (const auto& p : t.partitions) {
        if (p.error_code == 0) record.partitions.push_back({t.name, p.partition_index, {}});
      }
    }
    if (!record.partitions.empty()) {
      proposals.records.push_back(std::move(record));
      proposals.entries.push_back(0);
    }
  }
  auto state = std::make_shared<std::pair<RequestPtr, protocol::OffsetDeleteResponse>>(std::move(request),
                                                                                      std::move(response));
  propose_all(
      std::move(proposals),
      [state](size_t, const Status& s) {
        if (!s.ok()) state->second.error_code = protocol::to_int(ErrorCode::kNotCoordinator);
      },
      [this, state] { respond(*state->first, state->second); });
}

void Broker::handle_list_groups(RequestPtr request) {
  protocol::ListGroupsRequest body;
  if (!decode(*request, &body)) return;
  protocol::ListGroupsResponse response = coordinator_->list_groups(body);
  authorize_listed_groups(*request, &response);
  respond(*request, response);
}

void Broker::handle_describe_groups(RequestPtr request) {
  protocol::DescribeGroupsRequest body;
  if (!decode(*request, &body)) return;
  protocol::DescribeGroupsResponse response = coordinator_->describe_groups(body);
  authorize_described_groups(*request, body.include_authorized_operations, &response);
  respond(*request, response);
}

void Broker::handle_delete_groups(RequestPtr request) {
  protocol::DeleteGroupsRequest body;
  if (!decode(*request, &body)) return;
  auto refused = take_undeletable_groups(*request, &body);
  protocol::DeleteGroupsResponse response = coordinator_->delete_groups(body);
  for (auto& r : refused) response.results.push_back(std::move(r));
  // A cluster's coordinator: the deletions go to every node.
  Proposals proposals;
  for (size_t i = 0; controller_ != nullptr && i < response.results.size(); ++i) {
    if (response.results[i].error_code != 0) continue;
    proposals.records.push_back(protocol::GroupDeletedRecord{response.results[i].group_id, {}});
    proposals.entries.push_back(i);
  }
  auto state = std::make_shared<std::pair<RequestPtr, protocol::DeleteGroupsResponse>>(std::move(request),
                                                                                      std::move(response));
  propose_all(
      std::move(proposals),
      [state](size_t entry, const Status& s) {
        if (!s.ok()) state->second.results[entry].error_code = protocol::to_int(ErrorCode::kNotCoordinator);
      },
      [this, state] { respond(*state->first, state->second); });
}

}  // namespace eddy::broker
