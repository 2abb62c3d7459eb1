#include "client/client.h"

#include "protocol/generated/metadata.h"

namespace eddy::client {

Client::Client(ClientOptions options) : options_(std::move(options)) {
  if (!options_.transport_factory) options_.transport_factory = make_tcp_transport;
}

Client::~Client() { close(); }

void Client::close() {
  if (bootstrap_) bootstrap_->close();
  for (auto& [id, conn] : nodes_) conn->close();
}

Status Client::check_idle_connections() {
  if (bootstrap_) {
    Status s = bootstrap_->check_idle();
    if (!s.ok()) return s;
  }
  for (auto& [id, conn] : nodes_) {
    Status s = conn->check_idle();
    if (!s.ok()) return s;
  }
  return Status();
}

std::unique_ptr<BrokerConnection> Client::new_connection() const {
  return std::make_unique<BrokerConnection>(options_.transport_factory(), options_.connection);
}

Status Client::bootstrap() {
  if (options_.bootstrap.empty()) return Status::error(Status::Code::kInvalidArgument, "no bootstrap servers");
  Status last;
  for (const auto& address : options_.bootstrap) {
    auto conn = new_connection();
    last = conn->open(address, Deadline::after_ms(options_.connect_timeout_ms));
    if (last.ok()) {
      bootstrap_ = std::move(conn);
      return last;
    }
  }
  return last;
}

Status Client::any_connection(BrokerConnection** out) {
  if (bootstrap_ && bootstrap_->is_open()) {
    *out = bootstrap_.get();
    return Status();
  }
  for (auto& [id, conn] : nodes_) {
    if (conn->is_open()) {
      *out = conn.get();
      return Status();
    }
  }
  // Everything closed (broker restarted, connection timed out): bootstrap again.
  Status s = bootstrap();
  if (!s.ok()) return s;
  *out = bootstrap_.get();
  return s;
}

Status Client::connection(int32_t node_id, BrokerConnection** out) {
  if (node_id < 0) return any_connection(out);
  auto it = nodes_.find(node_id);
  if (it != nodes_.end() && it->second->is_open()) {
    *out = it->second.get();
    return Status();
  }
  const BrokerNode* node = metadata_.broker(node_id);
  if (node == nullptr) {
    return Status::error(Status::Code::kNotFound, "broker " + std::to_string(node_id) + " is not in the metadata");
  }
  // The bootstrap connection often is this broker's: adopt it.
  if (bootstrap_ && bootstrap_->is_open() && bootstrap_->address() == node->address) {
    nodes_[node_id] = std::move(bootstrap_);
    *out = nodes_[node_id].get();
    return Status();
  }
  auto& slot = nodes_[node_id];
  if (!slot) slot = new_connection();
  Status s = slot->open(node->address, Deadline::after_ms(options_.connect_timeout_ms));
  if (!s.ok()) return s.with_context("broker " + std::to_string(node_id));
  *out = slot.get();
  return s;
}

Status Client::refresh_metadata(const std::vector<std::string>* topics, bool allow_auto_create) {
  protocol::MetadataResponse response;
  Status s = call<protocol::MetadataRequest>(
      -1,
      [&](protocol::MetadataRequest& request, int16_t version) {
        if (topics == nullptr) {
          request.topics.reset();  // null: all topics (v1+)
        } else {
          request.topics.emplace();
          for (const auto& name : *topics) {
            protocol::MetadataRequest::MetadataRequestTopic t;
            t.name = name;
            request.topics->push_back(std::move(t));
          }
        }
        if (version >= 4) request.allow_auto_topic_creation = allow_auto_create;
      },
      &response);
  if (!s.ok()) return s;
  metadata_.update(response, topics == nullptr);
  return s;
}

Status Client::topic_metadata(std::string_view topic, bool allow_auto_create, const TopicInfo** out) {
  std::vector<std::string> names{std::string(topic)};
  Status s = refresh_metadata(&names, allow_auto_create);
  if (!s.ok()) return s;
  const TopicInfo* info = metadata_.topic(topic);
  if (info == nullptr) {
    return Status::error(Status::Code::kProtocol, "the metadata response does not mention topic '" +
                                                    std::string(topic) + "'");
  }
  if (info->error_code != 0) {
    return protocol::broker_error(info->error_code, "topic '" + std::string(topic) + "'");
  }
  *out = info;
  return s;
}

}  // namespace eddy::client
