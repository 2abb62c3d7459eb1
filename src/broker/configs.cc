// DescribeConfigs and IncrementalAlterConfigs for topics (their overrides
// live in the meta store) and the broker (its static configuration).
#include "broker/broker.h"
#include "protocol/errors.h"

namespace eddy::broker {

using protocol::ErrorCode;

namespace {

constexpr int8_t kTopicResource = 2;
constexpr int8_t kBrokerResource = 4;
// DescribeConfigs config_source values.
constexpr int8_t kStaticBrokerConfig = 4;
constexpr int8_t kDefaultConfig = 5;

bool wanted(const std::optional<std::vector<std::string>>& keys, const std::string& name) {
  if (!keys.has_value() || keys->empty()) return true;
  for (const auto& k : *keys) {
    if (k == name) return true;
  }
  return false;
}

}  // namespace

void Broker::handle_describe_configs(RequestPtr request) {
  protocol::DescribeConfigsRequest body;
  if (!decode(*request, &body)) return;
  const int16_t version = request->version();
  protocol::DescribeConfigsResponse response;
  for (const auto& resource : body.resources) {
    protocol::DescribeConfigsResponse::DescribeConfigsResult result;
    result.resource_type = resource.resource_type;
    result.resource_name = resource.resource_name;
    result.error_message.reset();
    auto add = [&](const std::string& name, const std::string& value, bool is_default, bool read_only,
                   int8_t source) {
      if (!wanted(resource.configuration_keys, name)) return;
      protocol::DescribeConfigsResponse::DescribeConfigsResourceResult c;
      c.name = name;
      c.value = value;
      c.read_only = read_only;
      c.is_default = is_default;
      c.config_source = source;
      c.documentation.reset();
      if (version >= 1 && body.include_synonyms) {
        protocol::DescribeConfigsResponse::DescribeConfigsSynonym s;
        s.name = name;
        s.value = value;
        s.source = source;
        c.synonyms.push_back(std::move(s));
      }
      result.configs.push_back(std::move(c));
    };
    if (resource.resource_type == kTopicResource) {
      Topic* topic = topics_.find(resource.resource_name);
      if (topic == nullptr) {
        result.error_code = protocol::to_int(ErrorCode::kUnknownTopicOrPartition);
        result.error_message = "Topic " + resource.resource_name + " does not exist";
      } else {
        for (const auto& c : describe_topic_configs(options_, topic->overrides)) {
          add(c.name, c.value, c.is_default, false, c.source);
        }
      }
    } else if (resource.resource_type == kBrokerResource) {
      if (!resource.resource_name.empty() && resource.resource_name != std::to_string(options_.node_id)) {
        result.error_code = protocol::to_int(ErrorCode::kInvalidRequest);
        result.error_message = "Unknown broker " + resource.resource_name;
      } else {
        for (const auto& c : options_.static_configs) {
          add(c.name, c.value, c.is_default, c.read_only, c.is_default ? kDefaultConfig : kStaticBrokerConfig);
        }
      }
    } else {
      result.error_code = protocol::to_int(ErrorCode::kInvalidRequest);
      result.error_message = "Resource type " + std::to_string(resource.resource_type) + " is not supported";
    }
    response.results.push_back(std::move(result));
  }
  respond(*request, response);
}

void Broker::handle_incremental_alter_configs(RequestPtr request) {
  protocol::IncrementalAlterConfigsRequest body;
  if (!decode(*request, &body)) return;
  protocol::IncrementalAlterConfigsResponse response;
  for (const auto& resource : body.resources) {
    protocol::IncrementalAlterConfigsResponse::AlterConfigsResourceResponse out;
    out.resource_type = resource.resource_type;
    out.resource_name = resource.resource_name;
    out.error_message.reset();
    TopicResult r;
    if (resource.resource_type == kTopicResource) {
      std::vector<meta::ConfigChange> changes;
      for (const auto& c : resource.configs) {
        if (c.config_operation == 0) {  // SET
          if (!c.value.has_value()) {
            r = {ErrorCode::kInvalidConfig, "Null value not supported for " + c.name};
            break;
          }
          changes.push_back(meta::ConfigChange::set(c.name, *c.value));
        } else if (c.config_operation == 1) {  // DELETE
          changes.push_back(meta::ConfigChange::remove(c.name));
        } else if (c.config_operation == 2 || c.config_operation == 3) {  // APPEND, SUBTRACT
          r = {ErrorCode::kInvalidConfig, "Config value append/subtract is not allowed for config " + c.name +
                                              ": Eddy has no list-valued topic configs"};
          break;
        } else {
          r = {ErrorCode::kInvalidRequest, "Unknown config operation " + std::to_string(c.config_operation)};
          break;
        }
      }
      if (r.ok()) r = topics_.alter_configs(resource.resource_name, changes, body.validate_only);
    } else if (resource.resource_type == kBrokerResource) {
      r = {ErrorCode::kInvalidConfig,
           "Eddy's broker configuration is static: change the properties file (or --override) and restart"};
    } else {
      r = {ErrorCode::kInvalidRequest, "Resource type " + std::to_string(resource.resource_type) + " is not supported"};
    }
    out.error_code = protocol::to_int(r.code);
    if (!r.ok()) out.error_message = r.message;
    response.responses.push_back(std::move(out));
  }
  respond(*request, response);
}

}  // namespace eddy::broker
