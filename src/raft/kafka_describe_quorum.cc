#include "raft/kafka_describe_quorum.h"

#include <string>

namespace eddy::raft {

namespace {

using Response = protocol::DescribeQuorumResponse;

std::vector<Response::ReplicaState> replica_states(const std::vector<QuorumReplicaState>& replicas) {
  std::vector<Response::ReplicaState> out;
  for (const QuorumReplicaState& r : replicas) {
    Response::ReplicaState state;
    state.replica_id = r.id;
    state.log_end_offset = r.log_end_offset;
    state.last_fetch_timestamp = r.last_fetch_timestamp_ms;
    state.last_caught_up_timestamp = r.last_caught_up_timestamp_ms;
    out.push_back(std::move(state));
  }
  return out;
}

std::vector<Response::Node> nodes(const std::vector<QuorumNode>& quorum_nodes) {
  std::vector<Response::Node> out;
  for (const QuorumNode& n : quorum_nodes) {
    Response::Node node;
    node.node_id = n.id;
    for (const QuorumListener& l : n.listeners) node.listeners.push_back({l.name, l.host, l.port, {}});
    out.push_back(std::move(node));
  }
  return out;
}

}  // namespace

Status check_describe_quorum_request(const protocol::DescribeQuorumRequest& request, const GroupAddress& address) {
  const bool one_partition = request.topics.size() == 1 && request.topics[0].partitions.size() == 1;
  if (one_partition && request.topics[0].topic_name == address.topic_name &&
      request.topics[0].partitions[0].partition_index == address.partition) {
    return Status();
  }
  return protocol::broker_error(protocol::to_int(protocol::ErrorCode::kUnknownTopicOrPartition),
                                "raft: DescribeQuorumRequest does not name exactly " + address.topic_name + "-" +
                                    std::to_string(address.partition));
}

protocol::DescribeQuorumResponse describe_quorum_response(const QuorumDescription& quorum,
                                                          const GroupAddress& address, int16_t version) {
  Response response;
  response.error_message = std::nullopt;  // v2+, as Kafka: null when there is no error
  Response::PartitionData p;
  p.partition_index = address.partition;
  p.error_message = std::nullopt;
  p.leader_id = quorum.leader_id;
  p.leader_epoch = quorum.leader_epoch;
  p.high_watermark = quorum.high_watermark;
  p.current_voters = replica_states(quorum.voters);
  p.observers = replica_states(quorum.observers);
  response.topics.push_back({address.topic_name, {std::move(p)}, {}});
  // Nodes is not ignorable: a version without it must not carry any.
  if (version >= 2) response.nodes = nodes(quorum.nodes);
  return response;
}

protocol::DescribeQuorumResponse describe_quorum_error(const protocol::DescribeQuorumRequest& request,
                                                       protocol::ErrorCode error) {
  Response response;
  response.error_message = std::nullopt;
  for (const auto& topic : request.topics) {
    Response::TopicData t;
    t.topic_name = topic.topic_name;
    for (const auto& partition : topic.partitions) {
      Response::PartitionData p;
      p.partition_index = partition.partition_index;
      p.error_code = protocol::to_int(error);
      p.error_message = std::nullopt;
      p.leader_id = kNoNode;
      p.leader_epoch = -1;
      p.high_watermark = -1;
      t.partitions.push_back(std::move(p));
    }
    response.topics.push_back(std::move(t));
  }
  return response;
}

}  // namespace eddy::raft
