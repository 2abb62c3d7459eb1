// CreateTopics, DeleteTopics, CreatePartitions and DescribeCluster: the
// administrative APIs kafka-topics.sh, AdminClient and kcat use. With an
// authorizer: CREATE on the cluster or the topic, DELETE and ALTER on the
// topic (TOPIC_AUTHORIZATION_FAILED per topic, checked first).
#include <algorithm>

#include "broker/broker.h"
#include "broker/replica_placement.h"
#include "protocol/errors.h"

namespace eddy::broker {

using protocol::ErrorCode;

namespace {

// A single node's manual replica assignment is acceptable only when it
// names this node alone (a cluster's: check_replica_assignment).
bool acceptable_on_single_node(const std::vector<int32_t>& brokers, int32_t node_id) {
  return brokers.size() == 1 && brokers[0] == node_id;
}

std::string single_node_assignment_refusal(int32_t node_id) {
  return "Replicas must be exactly this broker (node " + std::to_string(node_id) + ")";
}

}  // namespace

std::vector<int32_t> Broker::cluster_node_ids() const {
  std::vector<int32_t> nodes;
  if (controller_ == nullptr) return nodes;
  for (const meta::ClusterBroker& b : cluster_brokers_) nodes.push_back(b.node_id);
  if (nodes.empty()) nodes.push_back(options_.node_id);
  return nodes;
}

TopicResult Broker::check_new_topic(const Request& request, const protocol::CreateTopicsRequest::CreatableTopic& t,
                                    NewTopicPlan* plan) {
  plan->partitions = t.num_partitions;
  plan->replication = t.replication_factor;
  TopicResult r;
  const bool cluster = controller_ != nullptr;
  const std::vector<int32_t> nodes = cluster_node_ids();
  if (!t.assignments.empty()) {
    if (plan->partitions != -1 || plan->replication != -1) {
      r = {ErrorCode::kInvalidRequest,
           "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the "
           "same time."};
    } else {
      plan->partitions = static_cast<int32_t>(t.assignments.size());
      plan->replication = 1;
      for (const auto& a : t.assignments) {
        if (!cluster && !acceptable_on_single_node(a.broker_ids, options_.node_id)) {
          r = {ErrorCode::kInvalidReplicaAssignment, single_node_assignment_refusal(options_.node_id)};
        }
        plan->replicas.push_back(a.broker_ids);
      }
      if (cluster) {
        // Registered nodes, each once per partition, the same count for
        // every partition: that count is the replication factor.
        r = check_replica_assignment(plan->replicas, nodes, -1);
        if (r.ok()) plan->replication = static_cast<int16_t>(plan->replicas.front().size());
      }
    }
  }
  for (const auto& c : t.configs) {
    if (!c.value.has_value()) {
      r = {ErrorCode::kInvalidConfig, "Null value not supported for topic config " + c.name};
    } else {
      plan->configs[c.name] = *c.value;
    }
  }
  if (cluster && r.ok() && plan->replicas.empty()) {
    // Placed later on this many distinct registered nodes (topic_record);
    // a single node leaves the factor to TopicTable::create (1 only).
    const int16_t rf = plan->replication == -1 ? options_.default_replication_factor : plan->replication;
    r = check_replication_factor(rf, nodes.size());
    plan->replication = rf;
  }
  // The right comes first (as Kafka: a refused client learns nothing else).
  if (!authorized_on_cluster(request, security::AclOperation::kCreate, true) &&
      !authorized(request, security::AclOperation::kCreate, security::ResourceType::kTopic, t.name)) {
    r = {ErrorCode::kTopicAuthorizationFailed, "Authorization failed."};
  }
  return r;
}

void Broker::describe_created(const NewTopicPlan& plan, const Topic* topic,
                              protocol::CreateTopicsResponse::CreatableTopicResult* out) const {
  out->num_partitions = plan.partitions == -1 ? options_.num_partitions : plan.partitions;
  // A single node's topics have factor 1 (TopicTable::create refuses others).
  out->replication_factor = plan.replication == -1 ? options_.default_replication_factor : plan.replication;
  const ConfigMap& overrides = topic != nullptr ? topic->overrides : plan.configs;
  std::vector<protocol::CreateTopicsResponse::CreatableTopicConfigs> described;
  for (const auto& c : describe_topic_configs(options_, overrides)) {
    protocol::CreateTopicsResponse::CreatableTopicConfigs d;
    d.name = c.name;
    d.value = c.value;
    d.config_source = c.source;
    described.push_back(std::move(d));
  }
  out->configs = std::move(described);
  if (topic != nullptr) out->topic_id = topic->id;
}

void Broker::handle_create_topics(RequestPtr request) {
  protocol::CreateTopicsRequest body;
  if (!decode(*request, &body)) return;
  std::vector<std::string> names;
  for (const auto& t : body.topics) names.push_back(t.name);
  auto refuse = [names](Broker& self, Request& r, ErrorCode code) {
    protocol::CreateTopicsResponse response;
    for (const std::string& name : names) {
      protocol::CreateTopicsResponse::CreatableTopicResult out;
      out.name = name;
      out.configs.reset();
      out.error_code = protocol::to_int(code);
      response.topics.push_back(std::move(out));
    }
    self.respond(r, response);
  };
  if (forward_to_controller(request, refuse)) return;
  if (controller_ != nullptr) {
    create_topics_in_cluster(std::move(request), std::move(body));
    return;
  }
  protocol::CreateTopicsResponse response;
  for (const auto& t : body.topics) {
    protocol::CreateTopicsResponse::CreatableTopicResult out;
    out.name = t.name;
    out.error_message.reset();
    out.configs.reset();
    NewTopicPlan plan;
    TopicResult r = check_new_topic(*request, t, &plan);
    Topic* topic = nullptr;
    if (r.ok()) r = topics_.create(t.name, plan.partitions, plan.replication, plan.configs, body.validate_only, &topic);
    out.error_code = protocol::to_int(r.code);
    if (!r.ok()) {
      out.error_message = r.message;
    } else {
      describe_created(plan, topic, &out);
    }
    response.topics.push_back(std::move(out));
  }
  respond(*request, response);
}

void Broker::handle_delete_topics(RequestPtr request) {
  protocol::DeleteTopicsRequest body;
  if (!decode(*request, &body)) return;
  std::vector<protocol::DeleteTopicsRequest::DeleteTopicState> wanted = body.topics;
  for (const auto& name : body.topic_names) {
    protocol::DeleteTopicsRequest::DeleteTopicState s;
    s.name = name;
    wanted.push_back(std::move(s));
  }
  auto refuse = [wanted](Broker& self, Request& r, ErrorCode code) {
    protocol::DeleteTopicsResponse response;
    for (const auto& w : wanted) {
      protocol::DeleteTopicsResponse::DeletableTopicResult out;
      out.name = w.name;
      out.topic_id = w.topic_id;
      out.error_code = protocol::to_int(code);
      response.responses.push_back(std::move(out));
    }
    self.respond(r, response);
  };
  if (forward_to_controller(request, refuse)) return;
  auto state = std::make_shared<std::pair<RequestPtr, protocol::DeleteTopicsResponse>>(std::move(request), protocol::DeleteTopicsResponse{});
  Request& req = *state->first;
  Proposals proposals;
  for (const auto& w : wanted) {
    protocol::DeleteTopicsResponse::DeletableTopicResult out;
    out.name = w.name;
    out.topic_id = w.topic_id;
    Topic* topic = w.name.has_value() ? topics_.find(*w.name) : topics_.find(w.topic_id);
    const std::string* name_to_check = w.name.has_value() ? &*w.name : topic != nullptr ? &topic->name : nullptr;
    if (name_to_check != nullptr &&
        !authorized(req, security::AclOperation::kDelete, security::ResourceType::kTopic, *name_to_check)) {
      out.error_code = protocol::to_int(ErrorCode::kTopicAuthorizationFailed);
      out.error_message = "Authorization failed.";
    } else if (topic == nullptr) {
      out.error_code = protocol::to_int(w.name.has_value() ? ErrorCode::kUnknownTopicOrPartition
                                                           : ErrorCode::kUnknownTopicId);
    } else if (controller_ != nullptr) {
      out.name = topic->name;
      out.topic_id = topic->id;
      proposals.records.push_back(protocol::RemoveTopicRecord{topic->id, {}});
      proposals.entries.push_back(state->second.responses.size());
    } else {
      std::string name = topic->name;
      out.name = name;
      out.topic_id = topic->id;
      TopicResult r = topics_.remove(name);
      out.error_code = protocol::to_int(r.code);
      if (!r.ok()) out.error_message = r.message;
      // Parked fetches of the topic answer now, with UNKNOWN_TOPIC_OR_PARTITION.
      if (r.ok()) wake_fetch_waiters(name, -1);
    }
    state->second.responses.push_back(std::move(out));
  }
  propose_all(
      std::move(proposals),
      [state](size_t entry, const Status& s) {
        state->second.responses[entry].error_code = protocol::to_int(proposal_error(s));
        if (!s.ok()) state->second.responses[entry].error_message = s.message();
      },
      [this, state] { respond(*state->first, state->second); });
}

void Broker::handle_create_partitions(RequestPtr request) {
  protocol::CreatePartitionsRequest body;
  if (!decode(*request, &body)) return;
  std::vector<std::string> names;
  for (const auto& t : body.topics) names.push_back(t.name);
  auto refuse = [names](Broker& self, Request& r, ErrorCode code) {
    protocol::CreatePartitionsResponse response;
    for (const std::string& name : names) {
      protocol::CreatePartitionsResponse::CreatePartitionsTopicResult out;
      out.name = name;
      out.error_code = protocol::to_int(code);
      response.results.push_back(std::move(out));
    }
    self.respond(r, response);
  };
  if (forward_to_controller(request, refuse)) return;
  auto state = std::make_shared<std::pair<RequestPtr, protocol::CreatePartitionsResponse>>(
      std::move(request), protocol::CreatePartitionsResponse{});
  Request& req = *state->first;
  Proposals proposals;
  for (const auto& t : body.topics) {
    protocol::CreatePartitionsResponse::CreatePartitionsTopicResult out;
    out.name = t.name;
    TopicResult r;
    const bool cluster = controller_ != nullptr;
    if (t.assignments.has_value() && !cluster) {
      for (const auto& a : *t.assignments) {
        if (!acceptable_on_single_node(a.broker_ids, options_.node_id)) {
          r = {ErrorCode::kInvalidReplicaAssignment, single_node_assignment_refusal(options_.node_id)};
        }
      }
    }
    if (!authorized(req, security::AclOperation::kAlter, security::ResourceType::kTopic, t.name)) {
      r = {ErrorCode::kTopicAuthorizationFailed, "Authorization failed."};
    }
    const bool propose = cluster && !body.validate_only;
    if (r.ok()) r = topics_.add_partitions(t.name, t.count, body.validate_only || propose);
    std::vector<std::vector<int32_t>> replicas;
    if (r.ok() && cluster) r = place_new_partitions(t, &replicas);
    if (r.ok() && propose) {
      const Topic* topic = topics_.find(t.name);
      protocol::PartitionsAddedRecord added;
      added.topic_id = topic->id;
      added.first_partition = static_cast<int32_t>(topic->partitions.size());
      for (auto& ids : replicas) added.partitions.push_back({std::move(ids), {}});
      proposals.records.push_back(std::move(added));
      proposals.entries.push_back(state->second.results.size());
    }
    out.error_code = protocol::to_int(r.code);
    if (!r.ok()) out.error_message = r.message;
    state->second.results.push_back(std::move(out));
  }
  propose_all(
      std::move(proposals),
      [state](size_t entry, const Status& s) {
        state->second.results[entry].error_code = protocol::to_int(proposal_error(s));
        if (!s.ok()) state->second.results[entry].error_message = s.message();
      },
      [this, state] { respond(*state->first, state->second); });
}

TopicResult Broker::place_new_partitions(const protocol::CreatePartitionsRequest::CreatePartitionsTopic& t,
                                         std::vector<std::vector<int32_t>>* replicas) {
  const Topic* topic = topics_.find(t.name);
  if (topic == nullptr) return {ErrorCode::kUnknownTopicOrPartition, "This server does not host this topic."};
  const auto first = static_cast<int32_t>(topic->partitions.size());
  // New partitions get the topic's current replication factor.
  const auto replication_factor =
      static_cast<int32_t>(topic->replicas.empty() ? topic->replication_factor : topic->replicas.front().size());
  const std::vector<int32_t> nodes = cluster_node_ids();
  if (t.assignments.has_value() && !t.assignments->empty()) {
    replicas->clear();
    for (const auto& a : *t.assignments) replicas->push_back(a.broker_ids);
    if (replicas->size() != static_cast<size_t>(t.count - first)) {
      return {ErrorCode::kInvalidReplicaAssignment, "Increasing the number of partitions by " +
                                                        std::to_string(t.count - first) + " but " +
                                                        std::to_string(replicas->size()) + " assignments provided."};
    }
    return check_replica_assignment(*replicas, nodes, replication_factor);
  }
  TopicResult r = check_replication_factor(replication_factor, nodes.size());
  if (r.ok()) *replicas = assign_replicas(t.name, first, t.count - first, replication_factor);
  return r;
}

void Broker::handle_describe_cluster(RequestPtr request) {
  protocol::DescribeClusterRequest body;
  if (!decode(*request, &body)) return;
  protocol::DescribeClusterResponse response;
  response.endpoint_type = body.endpoint_type;
  if (body.endpoint_type != 1) {
    // Only brokers are described (endpoint type 1); controllers are the
    // same node and have no separate endpoint.
    response.error_code = protocol::to_int(ErrorCode::kUnsupportedEndpointType);
    response.error_message = "Only the broker endpoint type (1) is supported";
    respond(*request, response);
    return;
  }
  response.cluster_id = meta_->cluster_id();
  response.controller_id = options_.node_id;
  if (body.include_cluster_authorized_operations) {
    response.cluster_authorized_operations = cluster_authorized_operations(*request);
  }
  if (const AdvertisedListener* endpoint = endpoint_for(request->client.listener)) {
    protocol::DescribeClusterResponse::DescribeClusterBroker b;
    b.broker_id = options_.node_id;
    b.host = endpoint->host;
    b.port = endpoint->port;
    response.brokers.push_back(std::move(b));
  }
  respond(*request, response);
}

}  // namespace eddy::broker
