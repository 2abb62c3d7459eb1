// What the consumer-group APIs check with an authorizer, as Kafka's
// KafkaApis: READ on the group to join, sync, heartbeat, leave and commit;
// DESCRIBE to find its coordinator, fetch its offsets and describe it;
// DELETE to delete it or its offsets (GROUP_AUTHORIZATION_FAILED). Committed
// offsets also need READ (commit) or DESCRIBE (fetch) on their topic
// (TOPIC_AUTHORIZATION_FAILED per partition; a fetch of all offsets leaves
// those topics out). ListGroups lists the groups the client may DESCRIBE,
// or all with DESCRIBE on the cluster. The handlers (group_handlers.cc)
// call these before or after the coordinator.
#include <algorithm>

#include "broker/broker.h"
#include "protocol/errors.h"

namespace eddy::broker {

using protocol::ErrorCode;
using security::AclOperation;
using security::ResourceType;

namespace {

constexpr int16_t kGroupRefused = static_cast<int16_t>(ErrorCode::kGroupAuthorizationFailed);
constexpr int16_t kTopicRefused = static_cast<int16_t>(ErrorCode::kTopicAuthorizationFailed);

// Fetched offsets of topics the client may not DESCRIBE: refused per
// partition when the request named the topics, left out when it asked for
// all of them. Works on both shapes of OffsetFetch (v0-7 and v8+).
template <typename Topics, typename MayDescribe>
void hide_offsets(bool named, Topics* topics, MayDescribe may_describe) {
  if (!named) {
    std::erase_if(*topics, [&](const auto& t) { return !may_describe(t.name); });
    return;
  }
  for (auto& t : *topics) {
    if (may_describe(t.name)) continue;
    for (auto& p : t.partitions) {
      p.committed_offset = -1;
      p.committed_leader_epoch = -1;
      p.metadata = "";
      p.error_code = kTopicRefused;
    }
  }
}

}  // namespace

bool Broker::may_use_group(const Request& request, AclOperation operation, const std::string& group_id) {
  return authorized(request, operation, ResourceType::kGroup, group_id);
}

protocol::OffsetCommitResponse Broker::refuse_commit(const protocol::OffsetCommitRequest& body, int16_t code) {
  protocol::OffsetCommitResponse response;
  for (const auto& t : body.topics) {
    auto& topic = response.topics.emplace_back();
    topic.name = t.name;
    for (const auto& p : t.partitions) topic.partitions.push_back({p.partition_index, code, {}});
  }
  return response;
}

protocol::OffsetCommitResponse Broker::commit_authorized(const Request& request, protocol::OffsetCommitRequest body) {
  if (!may_use_group(request, AclOperation::kRead, body.group_id)) return refuse_commit(body, kGroupRefused);
  protocol::OffsetCommitRequest unreadable;
  auto readable_end = std::stable_partition(body.topics.begin(), body.topics.end(), [&](const auto& t) {
    return authorized(request, AclOperation::kRead, ResourceType::kTopic, t.name);
  });
  std::move(readable_end, body.topics.end(), std::back_inserter(unreadable.topics));
  body.topics.erase(readable_end, body.topics.end());
  protocol::OffsetCommitResponse response = coordinator_->commit_offsets(body, request.version());
  for (auto& t : refuse_commit(unreadable, kTopicRefused).topics) response.topics.push_back(std::move(t));
  return response;
}

protocol::OffsetDeleteResponse Broker::delete_offsets_authorized(const Request& request,
                                                                 protocol::OffsetDeleteRequest body) {
  if (!may_use_group(request, AclOperation::kDelete, body.group_id)) {
    protocol::OffsetDeleteResponse refused;
    refused.error_code = kGroupRefused;
    return refused;
  }
  auto readable_end = std::stable_partition(body.topics.begin(), body.topics.end(), [&](const auto& t) {
    return authorized(request, AclOperation::kRead, ResourceType::kTopic, t.name);
  });
  std::vector<protocol::OffsetDeleteRequest::OffsetDeleteRequestTopic> unreadable(
      std::make_move_iterator(readable_end), std::make_move_iterator(body.topics.end()));
  body.topics.erase(readable_end, body.topics.end());
  protocol::OffsetDeleteResponse response = coordinator_->delete_offsets(body);
  for (const auto& t : unreadable) {
    auto& topic = response.topics.emplace_back();
    topic.name = t.name;
    for (const auto& p : t.partitions) topic.partitions.push_back({p.partition_index, kTopicRefused});
  }
  return response;
}

void Broker::authorize_offset_fetch(const Request& request, const protocol::OffsetFetchRequest& body,
                                    protocol::OffsetFetchResponse* response) {
  auto may_describe = [&](const std::string& topic) {
    return authorized(request, AclOperation::kDescribe, ResourceType::kTopic, topic);
  };
  if (request.version() >= 8) {
    for (auto& group : response->groups) {
      if (!may_use_group(request, AclOperation::kDescribe, group.group_id)) {
        group.topics.clear();
        group.error_code = kGroupRefused;
        continue;
      }
      auto asked = std::find_if(body.groups.begin(), body.groups.end(),
                                [&](const auto& g) { return g.group_id == group.group_id; });
      hide_offsets(asked == body.groups.end() || asked->topics.has_value(), &group.topics, may_describe);
    }
    return;
  }
  if (!may_use_group(request, AclOperation::kDescribe, body.group_id)) {
    if (request.version() >= 2) {
      response->topics.clear();
      response->error_code = kGroupRefused;
      return;
    }
    // v0-1 have no top-level error: every partition carries it.
    hide_offsets(true, &response->topics, [](const std::string&) { return false; });
    for (auto& t : response->topics) {
      for (auto& p : t.partitions) p.error_code = kGroupRefused;
    }
    return;
  }
  hide_offsets(body.topics.has_value(), &response->topics, may_describe);
}

void Broker::authorize_described_groups(const Request& request, bool include_operations,
                                        protocol::DescribeGroupsResponse* response) {
  for (auto& group : response->groups) {
    if (may_use_group(request, AclOperation::kDescribe, group.group_id)) {
      if (include_operations) {
        group.authorized_operations = authorized_operations(request, ResourceType::kGroup, group.group_id);
      }
      continue;
    }
    protocol::DescribeGroupsResponse::DescribedGroup refused;
    refused.group_id = group.group_id;
    refused.error_code = kGroupRefused;
    group = std::move(refused);
  }
}

std::vector<protocol::DeleteGroupsResponse::DeletableGroupResult> Broker::take_undeletable_groups(
    const Request& request, protocol::DeleteGroupsRequest* body) {
  std::vector<protocol::DeleteGroupsResponse::DeletableGroupResult> refused;
  std::erase_if(body->groups_names, [&](const std::string& name) {
    if (may_use_group(request, AclOperation::kDelete, name)) return false;
    refused.push_back({name, kGroupRefused, {}});
    return true;
  });
  return refused;
}

void Broker::authorize_listed_groups(const Request& request, protocol::ListGroupsResponse* response) {
  if (authorized_on_cluster(request, AclOperation::kDescribe, true)) return;
  std::erase_if(response->groups, [&](const auto& g) {
    return !authorized(request, AclOperation::kDescribe, ResourceType::kGroup, g.group_id, true);
  });
}

}  // namespace eddy::broker
