// Metadata: the brokers (this single node, or a cluster's registered nodes)
// and every topic asked for with its partitions: on a single node all led by
// it; on a cluster node a partition of one replica by that replica, a
// replicated partition held here as its Raft group says
// (replicated_partition.h: leader, epoch, replicas; the ISR from the leader,
// or on a follower as the leader published it), and one not held here as
// its leader published it through the controller log. Nodes the
// controller leader fenced (fenced_replicas.h) are named offline, left out
// of the ISR and the brokers, and not named as the leader of a partition
// not held here; a single node has none. Unknown
// topics are created when auto.create.topics.enable and the request allow
// it, as Kafka does. With an authorizer: DESCRIBE on a topic to see it,
// CREATE on the cluster or the topic to auto-create it
// (TOPIC_AUTHORIZATION_FAILED otherwise).
#include "broker/broker.h"
#include "broker/fenced_replicas.h"
#include "broker/replicated_partition.h"
#include "meta/topic_name.h"
#include "protocol/errors.h"

namespace eddy::broker {

using protocol::ErrorCode;
using protocol::MetadataRequest;
using protocol::MetadataResponse;

MetadataResponse::MetadataResponseTopic Broker::metadata_of(const Topic& topic) const {
  MetadataResponse::MetadataResponseTopic out;
  out.name = topic.name;
  out.topic_id = topic.id;
  const std::set<int32_t> fenced = fenced_peers();
  for (size_t p = 0; p < topic.partitions.size(); ++p) {
    MetadataResponse::MetadataResponsePartition partition;
    partition.partition_index = static_cast<int32_t>(p);
    ReplicaStatus status = replica_status(topic, static_cast<int32_t>(p), topic.partitions[p]);
    const meta::PartitionLeader* published =
        topic.replicas[p].size() > 1 ? published_leader(topic.id, static_cast<int32_t>(p)) : nullptr;
    if (status.replicated) {
      // A follower does not measure the ISR: the leader of its epoch
      // published it.
      if (!status.leader && status.isr.empty() && published != nullptr &&
          published->leader_epoch == status.leader_epoch && published->leader == status.leader_id) {
        status.isr = published->isr;
      }
      describe_replicated_partition(status, &partition);
      describe_fenced_replicas(fenced, /*leader_seen_here=*/true, &partition);
      out.partitions.push_back(std::move(partition));
      continue;
    }
    const bool held = topic.partitions[p] != nullptr;
    if (published != nullptr && !held) {
      // A replicated partition this node holds no replica of: as its leader
      // published it last. A leader that died is named until the next one
      // publishes itself or the controller leader fences it (then none is).
      partition.leader_id = published->leader;
      partition.leader_epoch = published->leader_epoch;
      partition.replica_nodes = topic.replicas[p];
      partition.isr_nodes = published->isr;
    } else {
      // Held here without a group (a single node's, a cluster's partition
      // of one replica), or not held here and never published: led by its
      // first replica, epoch 0.
      partition.leader_id = topic.replicas[p].front();
      partition.leader_epoch = 0;
      partition.replica_nodes = topic.replicas[p];
      partition.isr_nodes = topic.replicas[p];
    }
    describe_fenced_replicas(fenced, /*leader_seen_here=*/held, &partition);
    out.partitions.push_back(std::move(partition));
  }
  return out;
}

void Broker::handle_metadata(RequestPtr request) {
  MetadataRequest body;
  if (!decode(*request, &body)) return;
  const int16_t version = request->version();
  MetadataResponse response;
  response.cluster_id = meta_->cluster_id();
  response.controller_id = controller_ != nullptr ? controller_->leader_id() : options_.node_id;

  // Version 0 asks for every topic with an empty list; later versions with null.
  bool all = !body.topics.has_value() || (version == 0 && body.topics->empty());
  if (all) {
    // Only the topics the client may DESCRIBE (the others are not named).
    for (Topic* topic : topics_.all()) {
      if (!authorized(*request, security::AclOperation::kDescribe, security::ResourceType::kTopic, topic->name,
                      true)) {
        continue;
      }
      response.topics.push_back(metadata_of(*topic));
    }
  } else {
    bool may_create = options_.auto_create_topics && (version < 4 || body.allow_auto_topic_creation);
    for (const auto& wanted : *body.topics) response.topics.push_back(metadata_topic(*request, wanted, may_create));
  }
  // The brokers last: a fenced node the answer names as a leader or as the
  // controller is listed all the same, so that clients reach it.
  std::set<int32_t> named = {response.controller_id};
  for (const auto& topic : response.topics) {
    for (const auto& partition : topic.partitions) named.insert(partition.leader_id);
  }
  add_brokers(request->client.listener, named, &response.brokers);
  add_authorized_operations(*request, body, &response);
  respond(*request, response);
}

// Kafka (v8+): the cluster's operations (v8-10) and each topic's when asked
// for; a topic refused DESCRIBE keeps the schema's default.
void Broker::add_authorized_operations(const Request& request, const MetadataRequest& body,
                                       MetadataResponse* response) {
  if (request.version() < 8) return;
  if (request.version() <= 10 && body.include_cluster_authorized_operations) {
    response->cluster_authorized_operations = cluster_authorized_operations(request);
  }
  if (!body.include_topic_authorized_operations) return;
  for (auto& topic : response->topics) {
    if (!topic.name.has_value() || topic.error_code == protocol::to_int(ErrorCode::kTopicAuthorizationFailed)) continue;
    topic.topic_authorized_operations =
        authorized_operations(request, security::ResourceType::kTopic, *topic.name);
  }
}

MetadataResponse::MetadataResponseTopic Broker::metadata_topic(const Request& request,
                                                               const MetadataRequest::MetadataRequestTopic& wanted,
                                                               bool may_create) {
  using security::AclOperation;
  using security::ResourceType;
  // A topic id, when given, wins over the name (the Java client sends an
  // empty name with it), as in Kafka.
  const bool by_id = !wanted.topic_id.is_zero();
  Topic* topic = nullptr;
  if (by_id) {
    topic = topics_.find(wanted.topic_id);
  } else if (wanted.name.has_value()) {
    topic = topics_.find(*wanted.name);
  }
  MetadataResponse::MetadataResponseTopic missing;
  missing.name = by_id ? std::nullopt : wanted.name;
  missing.topic_id = wanted.topic_id;
  // DESCRIBE on the topic is checked before its existence (as Kafka: a
  // refused client cannot tell whether the topic exists).
  const bool named = by_id ? topic != nullptr : wanted.name.has_value();
  if (named && !authorized(request, AclOperation::kDescribe, ResourceType::kTopic, by_id ? topic->name : *wanted.name)) {
    missing.error_code = protocol::to_int(ErrorCode::kTopicAuthorizationFailed);
    return missing;
  }
  if (topic != nullptr) return metadata_of(*topic);
  if (by_id || !wanted.name.has_value()) {
    missing.error_code = protocol::to_int(ErrorCode::kUnknownTopicId);
  } else if (!meta::is_valid_topic_name(*wanted.name)) {
    missing.error_code = protocol::to_int(ErrorCode::kInvalidTopicException);
  } else if (may_create && !authorized_on_cluster(request, AclOperation::kCreate, true) &&
             !authorized(request, AclOperation::kCreate, ResourceType::kTopic, *wanted.name)) {
    missing.error_code = protocol::to_int(ErrorCode::kTopicAuthorizationFailed);
  } else if (may_create && controller_ != nullptr) {
    // Kafka's brokers ask the controller and answer LEADER_NOT_AVAILABLE
    // meanwhile; the client asks again.
    auto_create_in_cluster(request, *wanted.name);
    missing.error_code = protocol::to_int(ErrorCode::kLeaderNotAvailable);
  } else if (may_create) {
    TopicResult r = topics_.create(*wanted.name, -1, -1, {}, false, &topic);
    if (r.ok()) return metadata_of(*topic);
    missing.error_code = protocol::to_int(r.code == ErrorCode::kTopicAlreadyExists ? ErrorCode::kLeaderNotAvailable
                                                                                    : r.code);
  } else {
    missing.error_code = protocol::to_int(ErrorCode::kUnknownTopicOrPartition);
  }
  return missing;
}

void Broker::add_brokers(const std::string& listener, const std::set<int32_t>& named,
                         std::vector<MetadataResponse::MetadataResponseBroker>* out) const {
  if (controller_ != nullptr && !cluster_brokers_.empty()) {
    // Every registered node with an endpoint of the listener the client
    // came in on (Kafka leaves out nodes without one) that is not fenced
    // or is named.
    const std::set<int32_t> fenced = fenced_peers();
    for (const meta::ClusterBroker& b : cluster_brokers_) {
      if (fenced.count(b.node_id) > 0 && named.count(b.node_id) == 0) continue;
      for (const meta::BrokerEndpoint& e : b.endpoints) {
        if (e.listener != listener) continue;
        MetadataResponse::MetadataResponseBroker broker;
        broker.node_id = b.node_id;
        broker.host = e.host;
        broker.port = e.port;
        broker.rack = b.rack;
        out->push_back(std::move(broker));
      }
    }
    return;
  }
  if (const AdvertisedListener* endpoint = endpoint_for(listener)) {
    MetadataResponse::MetadataResponseBroker broker;
    broker.node_id = options_.node_id;
    broker.host = endpoint->host;
    broker.port = endpoint->port;
    out->push_back(std::move(broker));
  }
}

}  // namespace eddy::broker
