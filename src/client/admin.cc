#include "client/admin.h"

#include "protocol/generated/create_partitions.h"
#include "protocol/generated/create_topics.h"
#include "protocol/generated/delete_topics.h"
#include "protocol/generated/describe_configs.h"
#include "protocol/generated/describe_log_dirs.h"
#include "protocol/generated/incremental_alter_configs.h"

namespace eddy::client {

namespace {
constexpr int8_t kTopicResource = 2;  // Kafka's ConfigResource.Type.TOPIC
}  // namespace

int32_t Admin::controller() const {
  int32_t id = client_->metadata().controller_id();
  return client_->metadata().broker(id) != nullptr ? id : -1;
}

Status Admin::create_topic(const NewTopic& topic) {
  protocol::CreateTopicsResponse response;
  const int32_t timeout_ms = static_cast<int32_t>(client_->options().request_timeout_ms);
  Status s = client_->call<protocol::CreateTopicsRequest>(
      controller(),
      [&](protocol::CreateTopicsRequest& request, int16_t version) {
        protocol::CreateTopicsRequest::CreatableTopic t;
        t.name = topic.name;
        // Versions before 4 cannot leave these to the broker.
        t.num_partitions = version >= 4 || topic.partitions > 0 ? topic.partitions : 1;
        t.replication_factor = version >= 4 || topic.replication_factor > 0 ? topic.replication_factor : 1;
        for (const auto& [key, value] : topic.configs) {
          protocol::CreateTopicsRequest::CreatableTopicConfig c;
          c.name = key;
          c.value = value;
          t.configs.push_back(std::move(c));
        }
        request.topics.push_back(std::move(t));
        request.timeout_ms = timeout_ms;
      },
      &response);
  if (!s.ok()) return s;
  for (const auto& r : response.topics) {
    if (r.name != topic.name) continue;
    if (r.error_code != 0) return protocol::broker_error(r.error_code, "create topic '" + topic.name + "'", r.error_message);
    return Status();
  }
  return Status::error(Status::Code::kProtocol, "the CreateTopics response does not mention '" + topic.name + "'");
}

Status Admin::delete_topic(const std::string& name) {
  protocol::DeleteTopicsResponse response;
  const int32_t timeout_ms = static_cast<int32_t>(client_->options().request_timeout_ms);
  Status s = client_->call<protocol::DeleteTopicsRequest>(
      controller(),
      [&](protocol::DeleteTopicsRequest& request, int16_t version) {
        if (version >= 6) {
          protocol::DeleteTopicsRequest::DeleteTopicState t;
          t.name = name;
          request.topics.push_back(std::move(t));
        } else {
          request.topic_names.push_back(name);
        }
        request.timeout_ms = timeout_ms;
      },
      &response);
  if (!s.ok()) return s;
  for (const auto& r : response.responses) {
    if (r.name != name) continue;
    if (r.error_code != 0) return protocol::broker_error(r.error_code, "delete topic '" + name + "'", r.error_message);
    return Status();
  }
  return Status::error(Status::Code::kProtocol, "the DeleteTopics response does not mention '" + name + "'");
}

Status Admin::create_partitions(const std::string& topic, int32_t total_count) {
  protocol::CreatePartitionsResponse response;
  const int32_t timeout_ms = static_cast<int32_t>(client_->options().request_timeout_ms);
  Status s = client_->call<protocol::CreatePartitionsRequest>(
      controller(),
      [&](protocol::CreatePartitionsRequest& request, int16_t) {
        protocol::CreatePartitionsRequest::CreatePartitionsTopic t;
        t.name = topic;
        t.count = total_count;
        t.assignments.reset();  // the broker places the new partitions
        request.topics.push_back(std::move(t));
        request.timeout_ms = timeout_ms;
      },
      &response);
  if (!s.ok()) return s;
  for (const auto& r : response.results) {
    if (r.name != topic) continue;
    if (r.error_code != 0) {
      return protocol::broker_error(r.error_code, "add partitions to '" + topic + "'", r.error_message);
    }
    return Status();
  }
  return Status::error(Status::Code::kProtocol, "the CreatePartitions response does not mention '" + topic + "'");
}

Status Admin::describe_topic_configs(const std::string& topic, std::vector<ConfigEntry>* out) {
  out->clear();
  protocol::DescribeConfigsResponse response;
  Status s = client_->call<protocol::DescribeConfigsRequest>(
      -1,
      [&](protocol::DescribeConfigsRequest& request, int16_t) {
        protocol::DescribeConfigsRequest::DescribeConfigsResource r;
        r.resource_type = kTopicResource;
        r.resource_name = topic;
        r.configuration_keys.reset();  // all
        request.resources.push_back(std::move(r));
      },
      &response);
  if (!s.ok()) return s;
  for (const auto& r : response.results) {
    if (r.resource_name != topic) continue;
    if (r.error_code != 0) return protocol::broker_error(r.error_code, "describe configs of '" + topic + "'", r.error_message);
    for (const auto& c : r.configs) {
      ConfigEntry e;
      e.name = c.name;
      e.value = c.value;
      e.source = static_cast<ConfigSource>(c.config_source);
      e.read_only = c.read_only;
      e.is_sensitive = c.is_sensitive;
      out->push_back(std::move(e));
    }
    return Status();
  }
  return Status::error(Status::Code::kProtocol, "the DescribeConfigs response does not mention '" + topic + "'");
}

Status Admin::alter_topic_configs(const std::string& topic, const std::vector<ConfigChange>& changes) {
  protocol::IncrementalAlterConfigsResponse response;
  Status s = client_->call<protocol::IncrementalAlterConfigsRequest>(
      controller(),
      [&](protocol::IncrementalAlterConfigsRequest& request, int16_t) {
        protocol::IncrementalAlterConfigsRequest::AlterConfigsResource r;
        r.resource_type = kTopicResource;
        r.resource_name = topic;
        for (const auto& change : changes) {
          protocol::IncrementalAlterConfigsRequest::AlterableConfig c;
          c.name = change.name;
          c.config_operation = static_cast<int8_t>(change.operation);
          c.value = change.value;
          r.configs.push_back(std::move(c));
        }
        request.resources.push_back(std::move(r));
      },
      &response);
  if (!s.ok()) return s;
  for (const auto& r : response.responses) {
    if (r.resource_name != topic) continue;
    if (r.error_code != 0) return protocol::broker_error(r.error_code, "alter configs of '" + topic + "'", r.error_message);
    return Status();
  }
  return Status::error(Status::Code::kProtocol,
                       "the IncrementalAlterConfigs response does not mention '" + topic + "'");
}

Status Admin::describe_log_dirs(std::vector<LogDirInfo>* out) {
  out->clear();
  protocol::DescribeLogDirsResponse response;
  Status s = client_->call<protocol::DescribeLogDirsRequest>(
      controller(), [&](protocol::DescribeLogDirsRequest& request, int16_t) { request.topics.reset(); }, &response);
  if (!s.ok()) return s;
  if (response.error_code != 0) return protocol::broker_error(response.error_code, "describe log dirs", std::nullopt);
  for (const auto& r : response.results) {
    if (r.error_code != 0) return protocol::broker_error(r.error_code, "describe log dir " + r.log_dir, std::nullopt);
    LogDirInfo dir;
    dir.path = r.log_dir;
    dir.total_bytes = r.total_bytes;
    dir.usable_bytes = r.usable_bytes;
    for (const auto& t : r.topics) {
      for (const auto& p : t.partitions) dir.partition_sizes.push_back({{t.name, p.partition_index}, p.partition_size});
    }
    out->push_back(std::move(dir));
  }
  return Status();
}

}  // namespace eddy::client
