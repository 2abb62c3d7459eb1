// DescribeAcls, CreateAcls and DeleteAcls with Kafka's semantics (its
// AclApis and AclControlManager): the caller needs DESCRIBE (describe) or
// ALTER (create, delete) on the cluster; each creation and each deletion
// filter has its own result (INVALID_REQUEST for a binding or filter Kafka
// would refuse); changes are in the ACL store and the authorizer at once.
#include <algorithm>

#include "broker/acl_wire.h"
#include "broker/broker.h"
#include "port/log.h"
#include "protocol/errors.h"

namespace eddy::broker {

using protocol::ErrorCode;
using security::AclBinding;
using security::AclOperation;

ErrorCode Broker::acl_api_refusal(const Request& request, AclOperation needed, std::string* message) {
  if (!authorizer_) {
    *message = "No Authorizer is configured on the broker";
    return ErrorCode::kSecurityDisabled;
  }
  if (!authorized_on_cluster(request, needed)) {
    *message = "Cluster authorization failed.";
    return ErrorCode::kClusterAuthorizationFailed;
  }
  return ErrorCode::kNone;
}

void Broker::handle_describe_acls(RequestPtr request) {
  protocol::DescribeAclsRequest body;
  if (!decode(*request, &body)) return;
  protocol::DescribeAclsResponse response;
  response.error_message = std::nullopt;
  std::string message;
  ErrorCode code = acl_api_refusal(*request, AclOperation::kDescribe, &message);
  const security::AclBindingFilter filter = acl_filter_from(body);
  if (code == ErrorCode::kNone) {
    message = security::invalid_filter_reason(filter);
    if (!message.empty()) code = ErrorCode::kInvalidRequest;
  }
  if (code != ErrorCode::kNone) {
    response.error_code = protocol::to_int(code);
    response.error_message = message;
  } else {
    response.resources = describe_resources(matching_acls(authorizer_->acls(), filter));
  }
  respond(*request, response);
}

void Broker::handle_create_acls(RequestPtr request) {
  protocol::CreateAclsRequest body;
  if (!decode(*request, &body)) return;
  protocol::CreateAclsResponse response;
  response.results.resize(body.creations.size());
  std::string message;
  const ErrorCode refusal = acl_api_refusal(*request, AclOperation::kAlter, &message);
  std::vector<AclBinding> valid;
  std::vector<size_t> valid_index;  // into response.results
  for (size_t i = 0; i < body.creations.size(); ++i) {
    auto& result = response.results[i];
    result.error_message = std::nullopt;
    if (refusal != ErrorCode::kNone) {
      result.error_code = protocol::to_int(refusal);
      result.error_message = message;
      continue;
    }
    AclBinding binding = acl_binding_from(body.creations[i]);
    if (std::string why = security::invalid_binding_reason(binding); !why.empty()) {
      result.error_code = protocol::to_int(ErrorCode::kInvalidRequest);
      result.error_message = why;
      continue;
    }
    valid.push_back(std::move(binding));
    valid_index.push_back(i);
  }
  if (!valid.empty()) {
    Status s = alter_acls({}, valid);
    for (size_t i : valid_index) {
      if (s.ok()) continue;
      response.results[i].error_code = protocol::to_int(ErrorCode::kUnknownServerError);
      response.results[i].error_message = s.message();
    }
    if (!s.ok()) EDDY_LOG_ERROR("CreateAcls from {}: {}", request->client.principal, s.message());
    if (s.ok()) EDDY_LOG_INFO("{} created {} ACL(s)", request->client.principal, valid.size());
  }
  respond(*request, response);
}

void Broker::handle_delete_acls(RequestPtr request) {
  protocol::DeleteAclsRequest body;
  if (!decode(*request, &body)) return;
  protocol::DeleteAclsResponse response;
  response.filter_results.resize(body.filters.size());
  std::string message;
  const ErrorCode refusal = acl_api_refusal(*request, AclOperation::kAlter, &message);
  std::vector<AclBinding> deleted;  // every binding some filter selects
  for (size_t i = 0; i < body.filters.size(); ++i) {
    auto& result = response.filter_results[i];
    result.error_message = std::nullopt;
    const security::AclBindingFilter filter = acl_filter_from(body.filters[i]);
    std::string why = refusal != ErrorCode::kNone ? message : security::invalid_filter_reason(filter);
    if (!why.empty()) {
      result.error_code = protocol::to_int(refusal != ErrorCode::kNone ? refusal : ErrorCode::kInvalidRequest);
      result.error_message = why;
      continue;
    }
    for (const AclBinding& b : matching_acls(authorizer_->acls(), filter)) {
      result.matching_acls.push_back(deleted_acl(b));
      deleted.push_back(b);
    }
  }
  std::sort(deleted.begin(), deleted.end());
  deleted.erase(std::unique(deleted.begin(), deleted.end()), deleted.end());
  if (!deleted.empty()) {
    if (Status s = alter_acls(deleted, {}); !s.ok()) {
      EDDY_LOG_ERROR("DeleteAcls from {}: {}", request->client.principal, s.message());
      for (auto& result : response.filter_results) {
        if (result.error_code != 0) continue;
        result.error_code = protocol::to_int(ErrorCode::kUnknownServerError);
        result.error_message = s.message();
        result.matching_acls.clear();
      }
    } else {
      EDDY_LOG_INFO("{} deleted {} ACL(s)", request->client.principal, deleted.size());
    }
  }
  respond(*request, response);
}

}  // namespace eddy::broker
