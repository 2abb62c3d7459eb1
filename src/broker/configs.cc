// DescribeConfigs, IncrementalAlterConfigs and AlterConfigs for topics (their overrides
// live in the meta store) and the broker (its static configuration). With an
// authorizer: DESCRIBE_CONFIGS / ALTER_CONFIGS on the topic
// (TOPIC_AUTHORIZATION_FAILED) or the cluster (CLUSTER_AUTHORIZATION_FAILED).
#include <set>

#include "broker/broker.h"
#include "protocol/errors.h"

namespace eddy::broker {

using protocol::ErrorCode;

namespace {

constexpr int8_t kTopicResource = 2;
constexpr int8_t kBrokerResource = 4;

// Kafka refuses a resource that names a config twice (INVALID_REQUEST).
template <typename Configs>
bool has_duplicate_names(const Configs& configs) {
  std::set<std::string> seen;
  for (const auto& c : configs) {
    if (!seen.insert(c.name).second) return true;
  }
  return false;
}

// The answer of both alter APIs: one result per resource; topics are
// changed by alter_topic(resource, its entry in the response), the broker's
// configuration is static.
template <typename Response, typename Request, typename AlterTopic, typename Refusal>
Response alter_each(const Request& body, AlterTopic alter_topic, Refusal refusal) {
  Response response;
  for (const auto& resource : body.resources) {
    typename decltype(response.responses)::value_type out;
    out.resource_type = resource.resource_type;
    out.resource_name = resource.resource_name;
    out.error_message.reset();
    TopicResult r;
    if (ErrorCode refused = refusal(resource.resource_type, resource.resource_name); refused != ErrorCode::kNone) {
      r = {refused, "Authorization failed."};
    } else if (has_duplicate_names(resource.configs)) {
      r = {ErrorCode::kInvalidRequest, "Error due to duplicate config keys"};
    } else if (resource.resource_type == kTopicResource) {
      r = alter_topic(resource, response.responses.size());
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
  return response;
}

// Every resource answered with code (the request could not reach the
// cluster's controller leader).
template <typename Response, typename Request>
Response refuse_each(const Request& body, ErrorCode code) {
  Response response;
  for (const auto& resource : body.resources) {
    typename decltype(response.responses)::value_type out;
    out.resource_type = resource.resource_type;
    out.resource_name = resource.resource_name;
    out.error_code = protocol::to_int(code);
    response.responses.push_back(std::move(out));
  }
  return response;
}

bool wanted(const std::optional<std::vector<std::string>>& keys, const std::string& name) {
  if (!keys.has_value() || keys->empty()) return true;
  for (const auto& k : *keys) {
    if (k == name) return true;
  }
  return false;
}

}  // namespace

ErrorCode Broker::config_refusal(const Request& request, security::AclOperation operation, int8_t resource_type,
                                 const std::string& name) {
  if (resource_type == kTopicResource) {
    return authorized(request, operation, security::ResourceType::kTopic, name) ? ErrorCode::kNone
                                                                                : ErrorCode::kTopicAuthorizationFailed;
  }
  if (resource_type == kBrokerResource) {
    return authorized_on_cluster(request, operation) ? ErrorCode::kNone : ErrorCode::kClusterAuthorizationFailed;
  }
  return ErrorCode::kNone;
}

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
    auto add = [&](const DescribedConfig& d, bool read_only) {
      if (!wanted(resource.configuration_keys, d.name)) return;
      protocol::DescribeConfigsResponse::DescribeConfigsResourceResult c;
      c.name = d.name;
      c.value = d.value;
      c.read_only = read_only;
      c.is_default = d.is_default;
      c.config_source = d.source;
      c.config_type = d.config_type;
      if (body.include_documentation && !d.documentation.empty()) {
        c.documentation = d.documentation;
      } else {
        c.documentation.reset();
      }
      if (version >= 1 && body.include_synonyms) {
        for (const auto& syn : d.synonyms) {
          protocol::DescribeConfigsResponse::DescribeConfigsSynonym s;
          s.name = syn.name;
          s.value = syn.value;
          s.source = syn.source;
          c.synonyms.push_back(std::move(s));
        }
      }
      result.configs.push_back(std::move(c));
    };
    const ErrorCode refused =
        config_refusal(*request, security::AclOperation::kDescribeConfigs, resource.resource_type,
                       resource.resource_name);
    if (refused != ErrorCode::kNone) {
      result.error_code = protocol::to_int(refused);
      result.error_message = "Authorization failed.";
    } else if (resource.resource_type == kTopicResource) {
      Topic* topic = topics_.find(resource.resource_name);
      if (topic == nullptr) {
        result.error_code = protocol::to_int(ErrorCode::kUnknownTopicOrPartition);
        result.error_message = "Topic " + resource.resource_name + " does not exist";
      } else {
        for (const auto& c : describe_topic_configs(options_, topic->overrides)) add(c, false);
      }
    } else if (resource.resource_type == kBrokerResource) {
      if (!resource.resource_name.empty() && resource.resource_name != std::to_string(options_.node_id)) {
        result.error_code = protocol::to_int(ErrorCode::kInvalidRequest);
        result.error_message = "Unknown broker " + resource.resource_name;
      } else {
        for (const auto& c : options_.static_configs) {
          DescribedConfig d;
          d.name = c.name;
          d.value = c.value;
          d.is_default = c.is_default;
          d.source = c.is_default ? kDefaultConfig : kStaticBrokerConfig;
          d.synonyms.push_back({c.name, c.value, d.source});
          add(d, c.read_only);
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
  auto refuse = [body](Broker& self, Request& r, ErrorCode code) {
    self.respond(r, refuse_each<protocol::IncrementalAlterConfigsResponse>(body, code));
  };
  if (forward_to_controller(request, refuse)) return;
  Proposals proposals;
  auto alter_refusal = [&](int8_t type, const std::string& name) {
    return config_refusal(*request, security::AclOperation::kAlterConfigs, type, name);
  };
  auto alter_topic = [&](const auto& resource, size_t entry) -> TopicResult {
    std::vector<meta::ConfigChange> changes;
    // Values as the changes so far leave them, for APPEND/SUBTRACT.
    ConfigMap current;
    if (Topic* topic = topics_.find(resource.resource_name)) current = topic->overrides;
    for (const auto& c : resource.configs) {
      if (c.config_operation == 0) {  // SET
        if (!c.value.has_value()) return {ErrorCode::kInvalidConfig, "Null value not supported for " + c.name};
        changes.push_back(meta::ConfigChange::set(c.name, *c.value));
        current[c.name] = *c.value;
      } else if (c.config_operation == 1) {  // DELETE
        changes.push_back(meta::ConfigChange::remove(c.name));
        current.erase(c.name);
      } else if (c.config_operation == 2 || c.config_operation == 3) {  // APPEND, SUBTRACT
        if (!is_list_topic_config(c.name)) {
          return {ErrorCode::kInvalidConfig, "Config value append/subtract is not allowed for config " + c.name +
                                                 (is_topic_config(c.name) ? " as it is not of type LIST"
                                                                          : ": Unknown topic config name")};
        }
        std::string base;
        if (auto it = current.find(c.name); it != current.end()) {
          base = it->second;
        } else {
          for (const auto& d : describe_topic_configs(options_, current)) {
            if (d.name == c.name) base = d.value;
          }
        }
        std::string items = c.value.value_or("");
        std::string next = c.config_operation == 2 ? append_to_list(base, items) : subtract_from_list(base, items);
        changes.push_back(meta::ConfigChange::set(c.name, next));
        current[c.name] = next;
      } else {
        return {ErrorCode::kInvalidRequest, "Unknown config operation " + std::to_string(c.config_operation)};
      }
    }
    return alter_topic_configs(resource.resource_name, changes, body.validate_only, &proposals, entry);
  };
  // The response first: its entries fill proposals.
  auto response = alter_each<protocol::IncrementalAlterConfigsResponse>(body, alter_topic, alter_refusal);
  respond_after(std::move(request), std::move(response), std::move(proposals));
}

// AlterConfigs (API 33), the non-incremental form older tools still send:
// the given configs replace all of the resource's overrides (any override
// not named is reset to its default), as in Kafka.
void Broker::handle_alter_configs(RequestPtr request) {
  protocol::AlterConfigsRequest body;
  if (!decode(*request, &body)) return;
  auto refuse = [body](Broker& self, Request& r, ErrorCode code) {
    self.respond(r, refuse_each<protocol::AlterConfigsResponse>(body, code));
  };
  if (forward_to_controller(request, refuse)) return;
  Proposals proposals;
  auto alter_refusal = [&](int8_t type, const std::string& name) {
    return config_refusal(*request, security::AclOperation::kAlterConfigs, type, name);
  };
  auto alter_topic = [&](const auto& resource, size_t entry) -> TopicResult {
    ConfigMap wanted_configs;
    for (const auto& c : resource.configs) {
      if (!c.value.has_value()) return {ErrorCode::kInvalidRequest, "Null value not supported for : " + c.name};
      wanted_configs[c.name] = *c.value;
    }
    std::vector<meta::ConfigChange> changes;
    if (Topic* topic = topics_.find(resource.resource_name)) {
      for (const auto& [key, _value] : topic->overrides) {
        if (wanted_configs.count(key) == 0) changes.push_back(meta::ConfigChange::remove(key));
      }
    }
    for (const auto& [key, value] : wanted_configs) changes.push_back(meta::ConfigChange::set(key, value));
    return alter_topic_configs(resource.resource_name, changes, body.validate_only, &proposals, entry);
  };
  // The response first: its entries fill proposals.
  auto response = alter_each<protocol::AlterConfigsResponse>(body, alter_topic, alter_refusal);
  respond_after(std::move(request), std::move(response), std::move(proposals));
}

TopicResult Broker::alter_topic_configs(const std::string& name, const std::vector<meta::ConfigChange>& changes,
                                        bool validate_only, Proposals* proposals, size_t entry) {
  if (controller_ == nullptr || validate_only) return topics_.alter_configs(name, changes, validate_only);
  // A cluster's leader: the checks here, the change through the controller
  // log (the record carries the whole resulting set).
  TopicResult r = topics_.alter_configs(name, changes, true);
  if (!r.ok()) return r;
  const Topic* topic = topics_.find(name);
  ConfigMap next = topic->overrides;
  for (const meta::ConfigChange& c : changes) {
    if (c.op == meta::ConfigChange::Op::kSet) {
      next[c.key] = c.value;
    } else {
      next.erase(c.key);
    }
  }
  protocol::TopicConfigsRecord record;
  record.topic_id = topic->id;
  for (const auto& [key, value] : next) record.configs.push_back({key, value, {}});
  proposals->records.push_back(std::move(record));
  proposals->entries.push_back(entry);
  return r;
}

}  // namespace eddy::broker
