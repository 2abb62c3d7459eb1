// The broker's authorization checks: one AclAuthorizer (Kafka's
// StandardAuthorizer semantics) over the ACL store's bindings, asked by
// every handler that enforces ACLs. Invariant: authorizer_ holds exactly
// the store's bindings (loaded at start, reloaded after each change).
#include <span>

#include "broker/acl_wire.h"
#include "broker/broker.h"
#include "port/log.h"
#include "port/port.h"

namespace eddy::broker {

using security::AclOperation;
using security::ResourceType;

namespace {

// Kafka's host for ACLs: the client's IP address, without the port or the
// brackets of an IPv6 address ("127.0.0.1:50312" -> "127.0.0.1").
std::string acl_host(const std::string& peer) {
  std::string host = peer;
  auto colon = host.rfind(':');
  if (colon != std::string::npos) host.resize(colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return host;
}

// Kafka's AclEntry.supportedOperations: what an authorized-operations
// bitfield can hold for a resource of the type.
std::span<const AclOperation> supported_operations(ResourceType type) {
  static constexpr AclOperation kTopic[] = {AclOperation::kRead,   AclOperation::kWrite,
                                            AclOperation::kCreate, AclOperation::kDescribe,
                                            AclOperation::kDelete, AclOperation::kAlter,
                                            AclOperation::kDescribeConfigs, AclOperation::kAlterConfigs};
  static constexpr AclOperation kGroup[] = {AclOperation::kRead, AclOperation::kDescribe, AclOperation::kDelete,
                                            AclOperation::kDescribeConfigs, AclOperation::kAlterConfigs};
  static constexpr AclOperation kCluster[] = {AclOperation::kCreate,          AclOperation::kClusterAction,
                                              AclOperation::kDescribeConfigs, AclOperation::kAlterConfigs,
                                              AclOperation::kIdempotentWrite, AclOperation::kAlter,
                                              AclOperation::kDescribe};
  static constexpr AclOperation kTransactionalId[] = {AclOperation::kDescribe, AclOperation::kWrite};
  switch (type) {
    case ResourceType::kTopic: return kTopic;
    case ResourceType::kGroup: return kGroup;
    case ResourceType::kCluster: return kCluster;
    case ResourceType::kTransactionalId: return kTransactionalId;
    default: return {};
  }
}

}  // namespace

int32_t Broker::authorized_operations(const Request& request, ResourceType type, std::string_view name) {
  int32_t bits = 0;
  for (AclOperation operation : supported_operations(type)) {
    if (authorized(request, operation, type, name, true)) bits |= int32_t{1} << static_cast<int>(operation);
  }
  return bits;
}

int32_t Broker::cluster_authorized_operations(const Request& request) {
  return authorized_on_cluster(request, AclOperation::kDescribe) ? authorized_operations(request, ResourceType::kCluster, security::kClusterResourceName) : 0;
}

Status Broker::load_acls() {
  if (!options_.authorizer.enabled) return Status();
  if (!authorizer_) {
    authorizer_ = std::make_unique<security::AclAuthorizer>(options_.authorizer.super_users,
                                                            options_.authorizer.allow_everyone_if_no_acl_found);
  }
  std::vector<meta::AclRow> rows;
  if (Status s = meta_->acls().list(&rows); !s.ok()) return s;
  std::vector<security::AclBinding> acls;
  acls.reserve(rows.size());
  for (const meta::AclRow& row : rows) acls.push_back(acl_binding_from(row));
  authorizer_->set_acls(std::move(acls));
  return Status();
}

Status Broker::alter_acls(const std::vector<security::AclBinding>& deletions,
                          const std::vector<security::AclBinding>& additions) {
  std::vector<meta::AclRow> removed, added;
  for (const auto& b : deletions) removed.push_back(acl_row_from(b));
  for (const auto& b : additions) added.push_back(acl_row_from(b));
  Status s = meta_->acls().alter(removed, added);
  // Reloaded even after a failure: the store is the truth.
  Status reloaded = load_acls();
  return s.ok() ? reloaded : s;
}

bool Broker::authorized(const Request& request, AclOperation operation, ResourceType type, std::string_view name,
                        bool quietly) {
  if (!authorizer_) return true;
  const std::string host = acl_host(request.client.peer);
  if (authorizer_->authorize({request.client.principal, host}, operation, type, name)) return true;
  if (!quietly) note_authorization_refusal(request, operation, type, name);
  return false;
}

bool Broker::authorized_on_any(const Request& request, AclOperation operation, ResourceType type) {
  if (!authorizer_) return true;
  const std::string host = acl_host(request.client.peer);
  return authorizer_->authorize_any({request.client.principal, host}, operation, type);
}

void Broker::note_authorization_refusal(const Request& request, AclOperation operation, ResourceType type,
                                        std::string_view name) {
  ++authorization_refusals_;
  const int64_t now = port::monotonic_millis();
  if (authorization_refusal_logged_ms_ >= 0 && now - authorization_refusal_logged_ms_ < 1000) {
    ++authorization_refusals_unlogged_;
    return;
  }
  authorization_refusal_logged_ms_ = now;
  EDDY_LOG_INFO("{} from {} (client id '{}') refused: principal {} may not {} {} '{}' ({} refusals not logged "
                "before this one)",
                protocol::api_name(request.api_key()), request.client.peer, request.client_id(),
                request.client.principal, security::to_string(operation), security::to_string(type), name,
                authorization_refusals_unlogged_);
  authorization_refusals_unlogged_ = 0;
}

}  // namespace eddy::broker
