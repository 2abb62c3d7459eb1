// CreateTopics, DeleteTopics, CreatePartitions and DescribeCluster: the
// administrative APIs kafka-topics.sh, AdminClient and kcat use. With an
// authorizer: CREATE on the cluster or the topic, DELETE and ALTER on the
// topic (TOPIC_AUTHORIZATION_FAILED per topic, checked first).
#include "broker/broker.h"
#include "protocol/errors.h"

namespace eddy::broker {

using protocol::ErrorCode;

namespace {

// A manual replica assignment is acceptable only when it names this node
// alone for every partition.
bool single_node_assignment(const std::vector<int32_t>& brokers, int32_t node_id) {
  return brokers.size() == 1 && brokers[0] == node_id;
}

}  // namespace

void Broker::handle_create_topics(RequestPtr request) {
  protocol::CreateTopicsRequest body;
  if (!decode(*request, &body)) return;
  protocol::CreateTopicsResponse response;
  for (const auto& t : body.topics) {
    protocol::CreateTopicsResponse::CreatableTopicResult out;
    out.name = t.name;
    out.error_message.reset();
    out.configs.reset();
    int32_t partitions = t.num_partitions;
    int16_t replication = t.replication_factor;
    TopicResult r;
    if (!t.assignments.empty()) {
      if (partitions != -1 || replication != -1) {
        r = {ErrorCode::kInvalidRequest,
             "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the "
             "same time."};
      } else {
        partitions = static_cast<int32_t>(t.assignments.size());
        replication = 1;
        for (const auto& a : t.assignments) {
          if (!single_node_assignment(a.broker_ids, options_.node_id)) {
            r = {ErrorCode::kInvalidReplicaAssignment,
                 "Replicas must be exactly this broker (node " + std::to_string(options_.node_id) + ")"};
          }
        }
      }
    }
    ConfigMap configs;
    for (const auto& c : t.configs) {
      if (!c.value.has_value()) {
        r = {ErrorCode::kInvalidConfig, "Null value not supported for topic config " + c.name};
      } else {
        configs[c.name] = *c.value;
      }
    }
    // The right comes first (as Kafka: a refused client learns nothing else).
    if (!authorized_on_cluster(*request, security::AclOperation::kCreate, true) &&
        !authorized(*request, security::AclOperation::kCreate, security::ResourceType::kTopic, t.name)) {
      r = {ErrorCode::kTopicAuthorizationFailed, "Authorization failed."};
    }
    Topic* topic = nullptr;
    if (r.ok()) r = topics_.create(t.name, partitions, replication, configs, body.validate_only, &topic);
    out.error_code = protocol::to_int(r.code);
    if (!r.ok()) {
      out.error_message = r.message;
    } else {
      out.num_partitions = partitions == -1 ? options_.num_partitions : partitions;
      out.replication_factor = 1;
      const ConfigMap& overrides = topic != nullptr ? topic->overrides : configs;
      std::vector<protocol::CreateTopicsResponse::CreatableTopicConfigs> described;
      for (const auto& c : describe_topic_configs(options_, overrides)) {
        protocol::CreateTopicsResponse::CreatableTopicConfigs d;
        d.name = c.name;
        d.value = c.value;
        d.config_source = c.source;
        described.push_back(std::move(d));
      }
      out.configs = std::move(described);
      if (topic != nullptr) out.topic_id = topic->id;
    }
    response.topics.push_back(std::move(out));
  }
  respond(*request, response);
}

void Broker::handle_delete_topics(RequestPtr request) {
  protocol::DeleteTopicsRequest body;
  if (!decode(*request, &body)) return;
  protocol::DeleteTopicsResponse response;
  std::vector<protocol::DeleteTopicsRequest::DeleteTopicState> wanted = body.topics;
  for (const auto& name : body.topic_names) {
    protocol::DeleteTopicsRequest::DeleteTopicState s;
    s.name = name;
    wanted.push_back(std::move(s));
  }
  for (const auto& w : wanted) {
    protocol::DeleteTopicsResponse::DeletableTopicResult out;
    out.name = w.name;
    out.topic_id = w.topic_id;
    Topic* topic = w.name.has_value() ? topics_.find(*w.name) : topics_.find(w.topic_id);
    const std::string* name_to_check = w.name.has_value() ? &*w.name : topic != nullptr ? &topic->name : nullptr;
    if (name_to_check != nullptr &&
        !authorized(*request, security::AclOperation::kDelete, security::ResourceType::kTopic, *name_to_check)) {
      out.error_code = protocol::to_int(ErrorCode::kTopicAuthorizationFailed);
      out.error_message = "Authorization failed.";
    } else if (topic == nullptr) {
      out.error_code = protocol::to_int(w.name.has_value() ? ErrorCode::kUnknownTopicOrPartition
                                                           : ErrorCode::kUnknownTopicId);
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
    response.responses.push_back(std::move(out));
  }
  respond(*request, response);
}

void Broker::handle_create_partitions(RequestPtr request) {
  protocol::CreatePartitionsRequest body;
  if (!decode(*request, &body)) return;
  protocol::CreatePartitionsResponse response;
  for (const auto& t : body.topics) {
    protocol::CreatePartitionsResponse::CreatePartitionsTopicResult out;
    out.name = t.name;
    TopicResult r;
    if (t.assignments.has_value()) {
      for (const auto& a : *t.assignments) {
        if (!single_node_assignment(a.broker_ids, options_.node_id)) {
          r = {ErrorCode::kInvalidReplicaAssignment,
               "Replicas must be exactly this broker (node " + std::to_string(options_.node_id) + ")"};
        }
      }
    }
    if (!authorized(*request, security::AclOperation::kAlter, security::ResourceType::kTopic, t.name)) {
      r = {ErrorCode::kTopicAuthorizationFailed, "Authorization failed."};
    }
    if (r.ok()) r = topics_.add_partitions(t.name, t.count, body.validate_only);
    out.error_code = protocol::to_int(r.code);
    if (!r.ok()) out.error_message = r.message;
    response.results.push_back(std::move(out));
  }
  respond(*request, response);
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
